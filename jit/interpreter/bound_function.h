// BoundFunction: a native function bound to its CallPlan, as a real TVMFFIObject of type Function.
//
// TVMFFIFunctionCall passes the object itself as `handle`, so an executor (the interpreter entry or
// a shared JIT thunk) finds the target and the plan at fixed offsets. Also declares the C-callable
// helpers both executors share, so that they raise byte-identical errors.
#ifndef FFIJIT_JIT_INTERPRETER_BOUND_FUNCTION_H_
#define FFIJIT_JIT_INTERPRETER_BOUND_FUNCTION_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "base/plugin_export.h"
#include "ffijit/c_api.h"
#include "ffijit/jit/bridge.h"
#include "plan/call_plan.h"

namespace ffijit {

struct LibffiCall;     // interpreter/libffi_call.h
struct InterpProgram;  // interpreter/interp_program.h

struct BoundFunction {
  TVMFFIObject header;  // type_index = kTVMFFIFunction; deleter frees everything below
  // safe_call starts at the interpreter entry (InterpreterSafeCall); the JIT swaps in a thunk with
  // an atomic release store (see SetSafeCall). cpp_call is the C++ entry for code compiled from
  // TVM FFI's headers (FFIJITFunctionCppCallEntry), which runs whichever safe_call is current.
  TVMFFIFunctionCell cell;
  void* target;          // the native function's address
  const CallPlan* plan;  // owned by this object; immutable after binding
  // Counted down by the interpreter entry while `on_hot` is set; the call that brings it to 0
  // invokes on_hot once (the JIT's "compile after N calls" policy).
  std::atomic<int64_t> calls_until_hot;
  void (*on_hot)(BoundFunction* fn);
  // Owned by the JIT (e.g. a reference to the shared compiled thunk); released with
  // release_tier_state(tier_state) when this object dies, if both are set.
  void* tier_state;
  void (*release_tier_state)(void* tier_state);
  // Bit flags (BoundFunctionFlags).
  uint32_t flags;
  // The interpreter's prepared libffi call (kBoundUseLibffi, or platforms without a stub); NULL
  // otherwise. Owned.
  LibffiCall* libffi;
  // The plan compiled into the interpreter's compact form (built at binding). Owned.
  InterpProgram* program;
  // One strong reference to the object that owns the target's code (the JIT module a native of
  // LLVM IR lives in), released after everything above; NULL for natives of the process.
  TVMFFIObject* owner;
};

enum BoundFunctionFlags : uint32_t {
  // Never hand this function to the JIT (registration option; also set when the caller forces the
  // interpreter, e.g. to compare executors in tests).
  kBoundInterpretOnly = 1u << 0,
  // The interpreter performs the call through libffi instead of the register stub (tests use it
  // to prove both call paths agree; it is the only path on platforms without a stub).
  kBoundUseLibffi = 1u << 1,
};

static_assert(offsetof(BoundFunction, cell) == 24, "Function cell right after the header");
static_assert(offsetof(BoundFunction, target) == 40, "thunks read target at handle + 40");
static_assert(offsetof(BoundFunction, plan) == 48, "thunks read plan at handle + 48");

// Makes a new BoundFunction (one strong reference, owned by the caller) calling `target` per
// `plan`, with `flags` (BoundFunctionFlags). Runs the tier hook unless kBoundInterpretOnly.
// Throws ffijit::Error (e.g. kBoundUseLibffi with a signature libffi cannot express).
BoundFunction* BindFunction(void* target, CallPlan plan, uint32_t flags);
// The same for a native whose code `owner` holds (see BoundFunction::owner): the new function
// takes a strong reference to `owner` before the tier hook sees it.
BoundFunction* BindFunction(void* target, CallPlan plan, uint32_t flags, TVMFFIObject* owner);
// True when `obj` is a BoundFunction (made by BindFunction), whatever its current safe_call.
FFIJIT_JIT_PLUGIN_API bool IsBoundFunction(const TVMFFIObject* obj);

// The interpreter's packed entry point: `handle` is the BoundFunction.
FFIJIT_JIT_PLUGIN_API int InterpreterSafeCall(void* handle, const TVMFFIAny* args, int32_t num_args,
                                              TVMFFIAny* result);

// Publishes a new entry point (a JIT thunk) for every later call; release order, so a caller that
// sees the new pointer also sees whatever the thunk reads.
inline void SetSafeCall(BoundFunction* fn, TVMFFISafeCallType call) {
  reinterpret_cast<std::atomic<TVMFFISafeCallType>*>(&fn->cell.safe_call)
      ->store(call, std::memory_order_release);
}

// A hook the JIT installs (once, when it is built in and initialized); BindFunction calls it for
// every new function without kBoundInterpretOnly, after the object is complete and before anyone
// else can see it. The hook may set on_hot/calls_until_hot/tier_state or swap safe_call at once.
// Without a hook every function stays on the interpreter, fully functional.
using TierAttachHook = void (*)(BoundFunction* fn);

// A thunk made at registration without LLVM (jit/stencils/), owned by the function's tier state
// (PendingTier, then the plugin's orc::TierState) and released with it.
struct EarlyThunk {
  TVMFFISafeCallType entry = nullptr;  // the safe_call installed, or nullptr: no such thunk
  void* code = nullptr;
  void (*release)(void* code) = nullptr;
};
FFIJIT_JIT_PLUGIN_API void SetTierAttachHook(TierAttachHook hook);
TierAttachHook GetTierAttachHook();

// The tier state libffijit_jit's own attach hook gives a function while its LLVM plugin is not
// loaded (plugin/orc_plugin.cc): what jit/orc's hook would have read at registration, so
// that the plugin, once loaded, attaches the function as if it had seen it then
// (orc::AdoptPendingTier). release_tier_state is ReleasePendingTier. It also carries the thunk
// a tier without LLVM made at registration (the stencil tier's), which the plugin adopts with it.
struct PendingTier {
  int64_t hot_after = 0;  // JitOptions::hot_after_calls at registration (0: never hot)
  EarlyThunk early;
};
FFIJIT_JIT_PLUGIN_API void ReleasePendingTier(void* pending);
// Held while a PendingTier is replaced by the plugin's state (orc::AdoptPendingTier) and while the
// tier query reads one (TierOf), so that the query never reads a PendingTier being freed.
FFIJIT_JIT_PLUGIN_API std::mutex& PendingTierMutex();

// The tier `fn` runs on now. A function whose tier state is no PendingTier but jit/orc's own
// (orc::TierState) is answered by OrcTierOf; any other is answered here, without LLVM.
FFIJITTier TierOf(BoundFunction* fn);
// jit/orc's answer for such a function: defined by jit/orc (in its plugin, and in the tests of
// internals that link it), by libffijit_jit's plugin seam (forwarding to the loaded plugin), and
// in a build without LLVM (where no function has such a state).
FFIJITTier OrcTierOf(BoundFunction* fn);

}  // namespace ffijit

// ---- Shared helpers with a plain C ABI: called by the interpreter and by JIT-generated code. ----
// Each Raise* stores the error as the thread's raised error and returns -1, so a thunk can
// `return FFIJITRaise...(...)`. `param` indexes plan->params; `step` indexes the param's path.
// They are no public API: ORC receives the addresses of the ones thunks call as absolute symbols
// (orc::ThunkRuntimeSymbols), so no symbol lookup in the process is needed; the few jit/orc's own
// code calls are exported for the LLVM plugin alone (FFIJIT_JIT_PLUGIN_API).
extern "C" {

// TypeError: Mismatched number of arguments when calling: `decl`. Expected N but got M arguments
int FFIJITRaiseArityError(const ffijit::BoundFunction* fn, int32_t got);
// TypeError: Mismatched type on argument #k when calling: `decl`. Expected `T` but got `G`
// (`got` is the value the parameter read, after its path).
int FFIJITRaiseArgumentError(const ffijit::BoundFunction* fn, int32_t param, const TVMFFIAny* got);
// ValueError: the integer `got` does not fit the parameter's type.
int FFIJITRaiseRangeError(const ffijit::BoundFunction* fn, int32_t param, const TVMFFIAny* got);
// ValueError: a string that does not parse as the parameter's DataType / Device.
int FFIJITRaiseParseError(const ffijit::BoundFunction* fn, int32_t param, const TVMFFIAny* got);
// ValueError: a SmallStr or Str with a NUL inside for a `str` parameter (a C string, which the
// NUL would cut short).
int FFIJITRaiseInnerNulError(const ffijit::BoundFunction* fn, int32_t param, const TVMFFIAny* got);
// ValueError: the tensor's element type, rank or a static dim differs from the parameter's.
int FFIJITRaiseTensorError(const ffijit::BoundFunction* fn, int32_t param, const DLTensor* got);
// ValueError: `got` breaks the value-validity contract (details::FindAnyDefect). `steps` is the
// number of structure steps taken to reach it (the parameter's whole path for a leaf).
int FFIJITRaiseMalformedError(const ffijit::BoundFunction* fn, int32_t param, int32_t steps,
                              const TVMFFIAny* got);
// ValueError: the Array `array` reached after `steps` structure steps has an element store that
// contradicts itself (ffijit::FindArrayStoreDefect), e.g. a NULL data pointer with elements.
int FFIJITRaiseMalformedArrayError(const ffijit::BoundFunction* fn, int32_t param, int32_t steps,
                                   const TVMFFIAny* array);
// A structure step failed: TypeError when the container has the wrong type, ValueError when an
// Array has the wrong length, KeyError when a Map lacks the key.
int FFIJITRaisePathError(const ffijit::BoundFunction* fn, int32_t param, int32_t step,
                         const TVMFFIAny* container);
// RuntimeError: a status-convention native returned nonzero without raising an error.
int FFIJITRaiseStatusWithoutError(const ffijit::BoundFunction* fn, int32_t status);
// A status-convention native returned nonzero `status`: keeps the error it raised for the caller,
// or raises FFIJITRaiseStatusWithoutError's. Returns -1.
FFIJIT_JIT_PLUGIN_API int FFIJITPropagateStatus(const ffijit::BoundFunction* fn, int32_t status);

// Follows the param's path from `arg` (the packed argument at its position). Returns the element
// (borrowed) or NULL after raising the path error.
FFIJIT_JIT_PLUGIN_API const TVMFFIAny* FFIJITResolvePath(const ffijit::BoundFunction* fn,
                                                         int32_t param, const TVMFFIAny* arg);
// Converts `value` (already resolved) for plan->params[param] into out[0] (and out[1] for a
// 16-byte kBytes value), exactly as the interpreter does: all checks, all errors. The slow path a
// thunk may call for rare forms (strings parsed as DataType/Device, subtype checks, ...).
int FFIJITConvertParam(const ffijit::BoundFunction* fn, int32_t param, const TVMFFIAny* value,
                       uint64_t out[2]);
// Boxes the native result `raw` (the integer or vector result register's word, the integer pair,
// or an out-pointer buffer) of plan->results[index] into `out` (an owned Any). 0, or -1 after
// raising.
FFIJIT_JIT_PLUGIN_API int FFIJITBoxResult(const ffijit::BoundFunction* fn, int32_t index,
                                          const uint64_t raw[2], TVMFFIAny* out);
// Boxes every result (each raw buffer 16 bytes, results in order) into `out`: an Array of them,
// or, when the plan has a result_shape, the structure it describes (whatever the number of
// results, 0 included), its output-storage results read from the call's packed `args`. Any native
// reference not boxed is released on failure. 0, or -1 after raising. Every executor calls it
// when CallPlan::packs_results().
FFIJIT_JIT_PLUGIN_API int FFIJITBoxResults(const ffijit::BoundFunction* fn,
                                           const uint64_t (*raw)[2], TVMFFIAny* out,
                                           const TVMFFIAny* args);

}  // extern "C"

#endif  // FFIJIT_JIT_INTERPRETER_BOUND_FUNCTION_H_
