// The JIT tier: when registered functions move from the interpreter to compiled thunks, how to
// force and observe it, the persistent object cache, and native callbacks into packed functions.
//
// Implemented by jit/orc/, which is built only with LLVM (FFIJIT_ENABLE_JIT=ON, and then
// ffijit::jit defines FFIJIT_HAVE_LLVM=1). Without it everything here still links: functions stay
// interpreted, JitAvailable() is false, CompileNow says why, and NativeCallback throws.
//
// Functions are the ffijit::Function objects made by MakeFunction/Register (register.h) or
// FFIJITMakeFunction/FFIJITRegister (bridge.h). Failures are ffijit::Error exceptions, except in
// the batch CompileNow, which reports one reason per function instead (see there).
#ifndef FFIJIT_JIT_JIT_H_
#define FFIJIT_JIT_JIT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ffijit/c_api.h"
#include "ffijit/export.h"
#include "ffijit/function.h"
#include "ffijit/jit/bridge.h"
#include "ffijit/reflect/signature.h"

namespace ffijit {

namespace details {
struct JitEngineImpl;        // the engine's state (internal to libffijit_jit)
struct JitEngineAccess;      // how libffijit_jit's internals reach it
struct NativeCallbackState;  // a callback's state (internal to libffijit_jit)
// Frees an engine's state where it was made (libffijit_jit's LLVM plugin, loaded on first need).
struct JitEngineImplDelete {
  void operator()(JitEngineImpl* impl) const;
};
}  // namespace details

// When a newly registered function gets its thunk. Compiles run on a background thread; the
// function keeps working on the interpreter meanwhile and its safe_call is swapped atomically.
// A signature whose thunk is already compiled is installed at registration under kEager and
// kAfterCalls alike (the compile cost the call count amortizes is already paid).
enum class JitPolicy : uint8_t {
  kEager,       // queue the compile at registration
  kAfterCalls,  // queue it when the function has been called `after_calls` times
  kNever,       // stay interpreted (CompileNow still works)
  // The stencil thunk at registration where the stencil tier covers the plan, else the
  // interpreter; no LLVM compile is ever queued (neither tier, whatever `hot_after_calls` says),
  // so the LLVM plugin is loaded only by what asks for it (JitAvailable, JitEngine, a JitModule, a
  // NativeCallback). CompileNow and CompileHotNow still work.
  kStencils,
};

// The hot tier: a function that keeps being called on its shared (cold-tier) thunk is recompiled
// in the background as a thunk of its own -- its native's address a constant, the error paths out
// of line, LLVM's O2 pipeline; a native of LLVM IR (a JIT module's) inlined into it -- and
// swapped in atomically. `hot_after_calls` counts calls on the
// cold tier (0: never go hot). The default engine keeps at most JitEngineOptions::max_hot_thunks.
//
// The stencil tier comes first: unless the policy is kNever, a function whose plan the
// copy-and-patch tier covers (scalars, pointers, strings, objects in registers; see the guide's
// tiering chapter) gets a stencil thunk at registration, made in microseconds without LLVM; it
// counts `hot_after_calls` calls for the hot tier. Such a function never takes the cold tier
// (JitEngine::CompileNow still installs one). `stencils = false` skips the stencil tier.
struct JitOptions {
  JitPolicy policy = JitPolicy::kAfterCalls;
  int64_t after_calls = 100;
  int64_t hot_after_calls = 100000;
  bool stencils = true;
};

// Whether this build includes the ORC JIT.
FFIJIT_JIT_API bool JitAvailable();

// The policy for functions registered from now on (initially from the FFIJIT_JIT environment
// variable: "eager", "never", "stencils", "after:N"; otherwise after 100 calls; and from
// FFIJIT_JIT_HOT for the hot tier: "never" or "after:N"; otherwise after 100000 calls on the cold
// tier).
FFIJIT_JIT_API void SetDefaultJitOptions(const JitOptions& options);
FFIJIT_JIT_API JitOptions DefaultJitOptions();

// Overrides the policy for functions registered on this thread while the scope lives (the per-
// registration policy), e.g. `ScopedJitOptions eager({JitPolicy::kEager});`.
class FFIJIT_JIT_API ScopedJitOptions {
 public:
  explicit ScopedJitOptions(const JitOptions& options);
  ~ScopedJitOptions();
  ScopedJitOptions(const ScopedJitOptions&) = delete;
  ScopedJitOptions& operator=(const ScopedJitOptions&) = delete;

 private:
  JitOptions saved_;
  bool had_saved_;
};

// Counters of one engine; "thunks" are distinct compiled signatures, "units" loaded objects.
struct JitStats {
  int64_t live_thunks = 0;  // signatures with a thunk some function still uses
  int64_t live_units = 0;   // loaded objects (each a batch of thunks or one callback)
  int64_t units_created = 0;
  int64_t units_removed = 0;
  int64_t modules_compiled = 0;  // LLVM compiles (a batch is one)
  int64_t thunks_compiled = 0;
  int64_t disk_hits = 0;   // thunks loaded from the persistent cache
  int64_t cache_hits = 0;  // functions given an already compiled thunk
  int64_t installs = 0;    // safe_call swaps
  int64_t fallbacks = 0;   // compiles that failed or were unsupported (function interpreted)
  int64_t live_callbacks = 0;
  int64_t object_bytes_live = 0;  // size of the loaded object files
  int64_t cache_errors = 0;       // persistent cache entries found damaged or not saved (logged)
  int64_t hot_thunks_live = 0;    // functions running a hot-tier thunk
  int64_t hot_compiled = 0;       // hot-tier thunks compiled
  int64_t hot_refused = 0;        // hot compiles refused by the cap or failed (logged)
  int64_t hot_inlined = 0;        // hot-tier thunks compiled with their native's body inlined
  // The stencil tier (process-wide, whichever engine): thunks made, and not yet released.
  int64_t stencil_thunks_made = 0;
  int64_t stencil_thunks_live = 0;
};

struct JitEngineOptions {
  // Persistent object cache directory ("" = none). Keys include the LLVM version and host CPU.
  std::string cache_dir;
  // At most this many functions run a hot-tier thunk at once (each is its own loaded code unit,
  // about 8 KiB resident); past it a function stays on its cold-tier thunk. The default engine
  // reads FFIJIT_JIT_HOT_MAX.
  int64_t max_hot_thunks = 256;
};

// The outcome of a batch CompileNow, one entry per function given, in order.
struct CompileResults {
  int64_t installed = 0;  // how many of the functions now run a compiled thunk
  // Why each function stays interpreted; "" for each installed one.
  std::vector<std::string> reasons;
};

// One compiler with its thunk cache. The default engine serves registration-time tiering; tests
// and tools may make more (e.g. two engines sharing a cache directory). An engine must outlive
// every function it installed a thunk into and every callback it made.
class FFIJIT_JIT_API JitEngine {
 public:
  explicit JitEngine(JitEngineOptions options = {});
  ~JitEngine();
  JitEngine(const JitEngine&) = delete;
  JitEngine& operator=(const JitEngine&) = delete;

  // The engine behind registration-time tiering (configured by FFIJIT_JIT_CACHE_DIR).
  static JitEngine& Default();

  // Compiles (or finds) `function`'s thunk and installs it, blocking; a function that already
  // runs its thunk is left as it is. Throws ffijit::Error of kind RuntimeError saying why the
  // function stays interpreted: not made by ffijit's registration (or null), registered
  // interpret-only, a build without LLVM, a signature the JIT does not compile, a compile failure.
  void CompileNow(const Function& function);
  // The same for many functions at once: their new signatures compile in one LLVM module. A
  // function that stays interpreted does not stop the others, so nothing is thrown for it: the
  // result counts the installed functions and gives each other one its reason (the message the
  // single-function CompileNow would throw).
  CompileResults CompileNow(const std::vector<Function>& functions);
  // Compiles `function`'s hot-tier thunk and installs it, blocking (as the hot policy would in
  // the background after enough calls); a function already hot is left as it is. Throws
  // ffijit::Error of kind RuntimeError saying why not: the reasons of CompileNow, or the cap of
  // JitEngineOptions::max_hot_thunks.
  void CompileHotNow(const Function& function);
  // Blocks until the background queues are empty and no compile runs.
  void WaitIdle();

  JitStats Stats() const;

 private:
  friend struct details::JitEngineAccess;
  std::unique_ptr<details::JitEngineImpl, details::JitEngineImplDelete> impl_;
};

// The tier `function` runs on now (FFIJITTier, bridge.h; its name: TierName). Loads no LLVM.
// Throws ffijit::Error: ValueError for a null Function, TypeError for a function not made by
// ffijit's registration.
FFIJIT_JIT_API FFIJITTier Tier(const Function& function);
// The tier's name: "interpreted", "stencil", "llvm", "hot" or "hot_inlined" (what the Python
// property Function.tier and `ffijit call --describe` say). ValueError for another number.
FFIJIT_JIT_API const char* TierName(FFIJITTier tier);
// True when `function` currently runs compiled code: any tier but the interpreter, the stencil
// tier included (false for a function not made by ffijit's registration, and for a null Function).
FFIJIT_JIT_API bool IsJitCompiled(const Function& function);
// True when `function` currently runs its own hot-tier thunk (kFFIJITTierHot or
// kFFIJITTierHotInlined).
FFIJIT_JIT_API bool IsHotCompiled(const Function& function);
// True when `function` runs its own hot-tier thunk with its native's body inlined: a native of
// LLVM IR (JitModule::MakeNative, jit_module.h) whose IR could be compiled into the thunk. When it
// could not, the hot thunk calls the native by its address and the JIT log says why.
FFIJIT_JIT_API bool IsHotInlined(const Function& function);

// Where JIT fallbacks and cache problems are reported. The default writes one line per distinct
// signature to stderr unless FFIJIT_JIT_LOG=0. Pass nullptr to restore it.
FFIJIT_JIT_API void SetJitLogSink(std::function<void(const std::string&)> sink);

// A plain native function pointer with the C signature `signature` describes, which boxes its
// arguments into TVMFFIAny, calls `function` through TVMFFIFunctionCall and unboxes the result.
// Supported: scalar, pointer, string, bytes, tensor, DataType, Device, object and any arguments;
// void, bool, integer, float, pointer, DataType and Device results.
//
// Errors never unwind through the caller's C frames. With CallConvention::kStatus the function
// returns 0, or -1 with the error raised (TVMFFIErrorMoveFromRaised). With kPlain it returns a
// zero value and leaves the error raised in the thread's error slot; a caller that cares checks
// TVMFFIErrorMoveFromRaised after the call.
class FFIJIT_JIT_API NativeCallback {
 public:
  // Keeps a reference to `function` while the callback lives. Throws ffijit::Error: TypeError for
  // a null function or a signature a callback cannot have, RuntimeError when the JIT is
  // unavailable or fails.
  NativeCallback(const Function& function, const Signature& signature,
                 JitEngine& engine = JitEngine::Default());
  ~NativeCallback();
  NativeCallback(const NativeCallback&) = delete;
  NativeCallback& operator=(const NativeCallback&) = delete;

  void* pointer() const { return pointer_; }
  // With the plain convention, `handler(data, declaration)` runs on the calling thread after a
  // failed call, the error still raised (the handler may take it and raise it again): where the
  // caller cannot be told, the handler reports it (Python's front end to sys.unraisablehook).
  // nullptr: none. Not for the status convention, whose caller sees -1.
  void SetUnreportedErrorHandler(void (*handler)(void* data, const char* declaration), void* data);
  template <typename F>
  F* as() const {
    return reinterpret_cast<F*>(pointer_);
  }

 private:
  void* pointer_ = nullptr;
  details::NativeCallbackState* state_ = nullptr;
};

}  // namespace ffijit

#endif  // FFIJIT_JIT_JIT_H_
