// Inlined hot thunks: the body of a native given as LLVM IR (a JIT module's, jit_module.h) copied
// into the hot tier's module beside the thunk, so the O2 pipeline can inline it.
//
// Only what the native needs is copied, all of it internal: the native, the module-internal
// functions it calls, the module-internal constants it reads. Every other symbol it uses -- the
// module's exported functions and variables, other modules', the process's -- stays a declaration
// that the hot unit's link order (the module's dylib first) resolves as the module's own code
// does, so no state is duplicated and nothing is defined twice.
// What cannot be copied that way (module-internal mutable or address-compared variables,
// thread-locals, exceptions, a parameter list that does not travel the way the thunk passes it)
// is refused with the reason; the hot tier then calls the native by its address instead.
#ifndef FFIJIT_JIT_ORC_CODEGEN_INLINE_NATIVE_H_
#define FFIJIT_JIT_ORC_CODEGEN_INLINE_NATIVE_H_

#include <string>
#include <vector>

#include "plan/call_plan.h"

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace ffijit::orc {

struct LinkedNative {
  // Of NativeCallType(plan): the function the thunk calls (ThunkOptions::native). It converts
  // each value from the way the thunk passes it to the native's own IR parameter types and
  // calls the copy of the native; both are internal and always-inline.
  llvm::Function* adapter = nullptr;
  // The copy's name in the module: when no function of that name is left after optimisation,
  // every call of it was inlined.
  std::string native_name;
  std::string adapter_name;
  // Set once `module` has been changed: a failure after that leaves it unusable for the thunk.
  bool module_changed = false;
};

// Copies the IR function `function` of `bitcode` into `module` (see the file comment) and makes
// the adapter for `plan`. On failure returns false with the reason; `module` is unchanged unless
// linked->module_changed says otherwise (then it must be discarded).
bool LinkNativeForInlining(const CallPlan& plan, llvm::Module& module, const std::string& bitcode,
                           const std::string& function, LinkedNative* linked, std::string* why);

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_CODEGEN_INLINE_NATIVE_H_
