// Thunk code generation: LLVM IR for one CallPlan's packed entry point (TVMFFISafeCallType).
//
// The thunk checks the arity and that every argument has one of the common forms, then converts
// each TVMFFIAny inline, loads the target from handle + 40, calls it with every value in the
// register or stack slot the plan's AbiLocation names, and boxes the result. Rare forms and errors
// run the interpreter instead (it converts and raises exactly as the thunk must); boxing beyond the
// common kinds goes through the shared helpers of jit/bound_function.h (FFIJITBoxResult...).
#ifndef FFIJIT_JIT_ORC_THUNK_CODEGEN_H_
#define FFIJIT_JIT_ORC_THUNK_CODEGEN_H_

#include <string>

#include "call_plan.h"
#include "orc/engine.h"

namespace llvm {
class Module;
}

namespace ffijit::orc {

// Bumped whenever the generated code changes: part of every persistent-cache key.
inline constexpr const char* kThunkCodegenVersion = "thunk-v3";

// "" when EmitThunk can compile `plan`, otherwise why not (the function stays interpreted).
std::string ThunkUnsupportedReason(const CallPlan& plan);

// "" when LLVM's System V lowering of the IR types the JIT passes (i64 per integer register or
// slot, double per vector register or float slot, two i64 per register pair, a byval copy per
// stack pair) places every parameter where the plan's AbiLocation says.
std::string CheckAbiAgreement(const CallPlan& plan);

// Emits the thunk for `plan` as `symbol` into `module`; "" on success, else the reason.
std::string EmitThunk(const CallPlan& plan, llvm::Module& module, const std::string& symbol);

// The runtime functions generated thunks call, by the names EmitThunk declares them under.
OrcEngine::SymbolTable ThunkRuntimeSymbols();

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_THUNK_CODEGEN_H_
