// Thunk code generation: LLVM IR for one CallPlan's packed entry point (TVMFFISafeCallType).
//
// One emitter serves both tiers (ThunkOptions): the cold tier's thunk is shared by every function
// of a signature and compiled at -O0; the hot tier's is specialised for one function (its native a
// constant or an IR definition in the same module, the error paths marked cold) and optimised.
//
// The thunk checks the arity and that every argument has one of the common forms, then converts
// each TVMFFIAny inline, loads the target from handle + 40, calls it with every value in the
// register or stack slot the plan's AbiLocation names (as the IR types of orc/abi_ir.h, checked
// against the target by its ABI probe), and boxes the result. Rare forms and errors
// run the interpreter instead (it converts and raises exactly as the thunk must); boxing beyond the
// common kinds goes through the shared helpers of jit/interpreter/bound_function.h
// (FFIJITBoxResult...).
#ifndef FFIJIT_JIT_ORC_CODEGEN_THUNK_CODEGEN_H_
#define FFIJIT_JIT_ORC_CODEGEN_THUNK_CODEGEN_H_

#include <string>

#include "orc/codegen/compile_request.h"
#include "plan/call_plan.h"

namespace llvm {
class Function;
class FunctionType;
class Module;
}  // namespace llvm

namespace ffijit::orc {

// Bumped whenever the generated code changes: part of every persistent-cache key.
inline constexpr const char* kThunkCodegenVersion = "thunk-v10";

// How EmitThunk specialises the thunk. The defaults make the cold tier's shared thunk.
struct ThunkOptions {
  // The native's address, a constant in the code (one function's thunk), instead of the target
  // loaded from handle + 40 (a signature's thunk). Ignored when `native` is set.
  void* target = nullptr;
  // The native as a function of `module` (a declaration or an IR definition the optimizer may
  // inline); its type must be the one the plan calls it with, else EmitThunk fails and says so.
  llvm::Function* native = nullptr;
  // Branch weights send the fallback, raised errors and the hot-count report out of the common
  // path (the optimizer lays them out of line).
  bool cold_error_paths = false;
  // Count calls down at handle + 56 (BoundFunction::calls_until_hot); the call that reaches zero
  // takes the fallback, which calls ThunkReachedHotCount: how a function on the cold tier asks
  // for the hot one. A function that never goes hot gets a signature's thunk without the count.
  bool count_calls = true;
  // The code goes through the optimizing pipeline. The emitter then branches where the cold tier
  // selects or leaves for the fallback: at -O0 every block boundary costs spills of the live
  // values, while optimized code pays nothing for a predicted branch, and a select puts both sides
  // (the arity's safe-array pick) on the critical path. An Int for a float parameter converts
  // behind such a branch, and a tensor arrives as an object or a DLTensorPtr on either side of
  // one; the cold tier leaves the Int and the DLTensorPtr to the fallback.
  bool optimized = false;
};

// The options of the hot tier's thunk for the native at `target`.
inline ThunkOptions HotThunkOptions(void* target) {
  ThunkOptions options;
  options.target = target;
  options.cold_error_paths = true;
  options.count_calls = false;
  options.optimized = true;
  return options;
}

// "" when EmitThunk can compile `plan`, otherwise why not (the function stays interpreted).
std::string ThunkUnsupportedReason(const CallPlan& plan);

// Emits the thunk for `plan` as `symbol` into `module`; "" on success, else the reason (and the
// module holds no trace of the thunk).
std::string EmitThunk(const CallPlan& plan, llvm::Module& module, const std::string& symbol,
                      const ThunkOptions& options = {});

// The IR function type the thunk calls the native with (what ThunkOptions::native must have).
llvm::FunctionType* NativeCallType(const CallPlan& plan, llvm::Module& module);

// Called by a thunk's fallback when the function's count (ThunkOptions::count_calls) has run out;
// defined by the tiering (jit/orc/tiering.cc), which queues the hot-tier compile once.
void ThunkReachedHotCount(void* handle);

// The runtime functions generated thunks call, by the names EmitThunk declares them under.
SymbolTable ThunkRuntimeSymbols();

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_CODEGEN_THUNK_CODEGEN_H_
