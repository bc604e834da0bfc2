// Host entry code generation: LLVM IR for one function's entry in a host language's fastcall shape
// (ffijit/jit/host_entry.h), converting the host's objects inline and calling the function's
// safe_call.
#ifndef FFIJIT_JIT_ORC_CODEGEN_HOST_ENTRY_CODEGEN_H_
#define FFIJIT_JIT_ORC_CODEGEN_HOST_ENTRY_CODEGEN_H_

#include <string>

#include "ffijit/jit/host_entry.h"
#include "plan/call_plan.h"
#include "plan/host_forms.h"

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace ffijit::orc {

// Emits the entry of the function `function` (a BoundFunction calling per `plan`) as `symbol`
// into `module`; "" on success, else the reason (and the module holds no trace of the entry).
// With model.self_function_offset >= 0 the code names no function: `function` is not read, and
// the entry serves every function of `plan`'s signature (`thunk` then loads the native from its
// handle).
// `model` has been checked complete (FFIJITHostEntryCompile).
// The entry calls `thunk`, the function's thunk as a TVMFFISafeCallType function of `module`
// (internal and always-inline, for LLVM to fold the TVMFFIAny array away).
std::string EmitHostEntry(const CallPlan& plan, const void* function, const FFIJITHostModel& model,
                          int flags, llvm::Function* thunk, llvm::Module& module,
                          const std::string& symbol);

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_CODEGEN_HOST_ENTRY_CODEGEN_H_
