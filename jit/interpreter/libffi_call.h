// The interpreter's libffi call path: one prepared ffi_cif per bound function.
//
// Used where no register stub exists (platforms other than x86-64 System V and Linux AArch64)
// and, on request, to cross-check the stub in tests. The arguments are read from the same
// register/stack arrays the stub consumes, at the locations the CallPlan assigned, so both paths
// share every conversion.
#ifndef FFIJIT_JIT_INTERPRETER_LIBFFI_CALL_H_
#define FFIJIT_JIT_INTERPRETER_LIBFFI_CALL_H_

#include <cstdint>

#include "plan/call_plan.h"
#include "platform/abi.h"

namespace ffijit {

struct LibffiCall;

// Prepares the cif for `plan`; throws ffijit::Error for a plan libffi cannot express (f16/bf16,
// which libffi has no type for).
LibffiCall* PrepareLibffiCall(const CallPlan& plan);
void DestroyLibffiCall(LibffiCall* call);

// Calls `target` with the values the interpreter placed in its frame (the host layout of
// platform/abi.h); writes the result words as the register stub does (platform::kRetGpr: an
// integer or a 16-byte pair, platform::kRetFpr: a float).
void CallLibffi(const LibffiCall* call, void* target, uint64_t* frame,
                uint64_t ret[platform::kRetWords]);

}  // namespace ffijit

#endif  // FFIJIT_JIT_INTERPRETER_LIBFFI_CALL_H_
