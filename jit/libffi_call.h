// The interpreter's libffi call path: one prepared ffi_cif per bound function.
//
// Used where no register stub exists (non-x86-64 platforms) and, on request, to cross-check the
// stub in tests. The arguments are read from the same register/stack arrays the stub consumes, at
// the locations the CallPlan assigned, so both paths share every conversion.
#ifndef FFIJIT_JIT_LIBFFI_CALL_H_
#define FFIJIT_JIT_LIBFFI_CALL_H_

#include <cstdint>

#include "call_plan.h"

namespace ffijit {

struct LibffiCall;

// Prepares the cif for `plan`; throws ffijit::Error for a plan libffi cannot express (f16/bf16,
// which libffi has no type for).
LibffiCall* PrepareLibffiCall(const CallPlan& plan);
void DestroyLibffiCall(LibffiCall* call);

// Calls `target` with the values the interpreter placed in regs[0..5] (integer registers),
// regs[6..13] (vector registers) and stack[]; writes rax, rdx, xmm0, xmm1 equivalents to ret[0..3]
// (the integer result in ret[0], a two-eightbyte struct in ret[0..1], a float in ret[2]).
void CallLibffi(const LibffiCall* call, void* target, uint64_t* regs, uint64_t* stack,
                uint64_t ret[4]);

}  // namespace ffijit

#endif  // FFIJIT_JIT_LIBFFI_CALL_H_
