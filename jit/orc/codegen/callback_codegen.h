// Callback code generation: a native function with a CallPlan's C signature that spills its
// parameters into an array of words and hands them to the shared C++ boxer
// (orc/entries/native_callback.cc).
#ifndef FFIJIT_JIT_ORC_CODEGEN_CALLBACK_CODEGEN_H_
#define FFIJIT_JIT_ORC_CODEGEN_CALLBACK_CODEGEN_H_

#include <cstdint>
#include <string>

#include "orc/codegen/compile_request.h"
#include "plan/call_plan.h"

namespace llvm {
class Module;
}

namespace ffijit::orc {

// The generated function calls this with its state, 2 words per native parameter (argument
// parameters, then out-pointers) and a 2-word buffer for the returned value. 0, or -1 with the
// error raised.
using CallbackInvokeFn = int (*)(void* state, const uint64_t* words, uint64_t* returned);
inline constexpr const char* kCallbackInvokeSymbol = "ffijit_orc_callback_invoke";

// "" when EmitCallback can produce `plan`'s native function, otherwise why not.
std::string CallbackUnsupportedReason(const CallPlan& plan);

// Emits `symbol`, a function of `plan`'s native C type that calls the invoke function with
// `state` (an address baked into the code: callbacks are never cached on disk).
std::string EmitCallback(const CallPlan& plan, void* state, llvm::Module& module,
                         const std::string& symbol);

// The runtime functions generated callbacks call.
SymbolTable CallbackRuntimeSymbols();

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_CODEGEN_CALLBACK_CODEGEN_H_
