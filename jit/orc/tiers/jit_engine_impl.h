// details::JitEngineImpl, JitEngine's private state: the thunk cache (one refcounted thunk per
// signature, the cold tier), the hot tier's per-function thunks, the background compile queues,
// and the per-function tier state the attach hook creates. JitEngineAccess is how the rest of
// jit/orc reaches an engine's state.
#ifndef FFIJIT_JIT_ORC_TIERS_JIT_ENGINE_IMPL_H_
#define FFIJIT_JIT_ORC_TIERS_JIT_ENGINE_IMPL_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ffijit/jit/jit.h"
#include "interpreter/bound_function.h"
#include "orc/tiers/unit_compiler.h"
#include "settings/jit_settings.h"

namespace ffijit {
namespace orc {

// One compiled signature. `users` counts the functions whose safe_call points at `thunk`.
struct ThunkEntry {
  std::string key;
  TVMFFISafeCallType thunk = nullptr;
  CodeUnit* unit = nullptr;
  int64_t users = 0;
  details::JitEngineImpl* owner = nullptr;
};

// One function's hot-tier thunk: its own code unit, freed with the function.
struct HotThunk {
  TVMFFISafeCallType thunk = nullptr;
  CodeUnit* unit = nullptr;
  details::JitEngineImpl* owner = nullptr;
  // One strong reference to the JIT module the native's code lives in (BoundFunction::owner),
  // or nullptr: the thunk calls the native, or holds its body and the module's addresses, so the
  // module must outlive it.
  TVMFFIObject* native_module = nullptr;
  // The native's body was inlined into the thunk (a native of LLVM IR, inline_native.h).
  bool native_inlined = false;
};

// Hung on BoundFunction::tier_state by the attach hook.
struct TierState {
  std::atomic<ThunkEntry*> entry{nullptr};  // set once, when a cold-tier thunk is installed
  std::atomic<HotThunk*> hot{nullptr};      // set once, when the hot-tier thunk is installed
  std::atomic<bool> queued{false};          // a background cold compile is pending
  // The count asked for the hot tier: set once, never cleared, so that a compile refused by the
  // cap or failed is not asked for again by every later fallback (CompileHotNow still works).
  std::atomic<bool> hot_requested{false};
  // Calls on the cold tier before the hot compile is queued (JitOptions::hot_after_calls at
  // registration); 0: never.
  int64_t hot_after = 0;
  // The stencil thunk installed at registration (jit/stencils/), adopted from the PendingTier
  // with the state; freed with it.
  EarlyThunk early;
};

void ReleaseTierState(void* state);
// The stencil tier's counters added to `stats` (tiering.cc: the one file of jit/orc that knows
// the stencil tier).
void AddStencilStats(JitStats* stats);
// The function's TierState when it is a BoundFunction the attach hook saw, else nullptr (with the
// reason in *why).
TierState* TierStateOf(TVMFFIObjectHandle function, BoundFunction** bound, std::string* why);
// Whether fn's cold-tier thunk counts its calls (ThunkOptions::count_calls): only a function that
// may go hot pays for the count.
bool CountsCalls(const BoundFunction* fn);
// The cache key: codegen version, convention, canonical signature, resolved object type indices,
// and whether the thunk counts calls.
std::string ThunkKey(const CallPlan& plan, bool count_calls);

}  // namespace orc

struct details::JitEngineImpl {
  explicit JitEngineImpl(JitEngineOptions options);
  ~JitEngineImpl();

  // The unit compiler, built on first use; nullptr (and *why) when LLVM cannot be set up.
  orc::UnitCompiler* Compiler(std::string* why);

  // Installs a cached thunk if the signature has one (no LLVM work). Thread-safe.
  bool TryInstallCached(BoundFunction* fn);
  // Compiles what is missing, in one module, and installs. Returns one reason per function
  // ("" when installed).
  std::vector<std::string> CompileAndInstall(const std::vector<BoundFunction*>& fns);
  // Queues a background compile (takes a reference on fn until done). Never blocks on LLVM.
  void Enqueue(BoundFunction* fn);
  // Compiles fn's hot-tier thunk and installs it, blocking; "" when installed (now or before),
  // else why fn stays where it is.
  std::string CompileHotAndInstall(BoundFunction* fn);
  // Queues a background hot compile, like Enqueue.
  void EnqueueHot(BoundFunction* fn);
  void ReleaseHot(orc::HotThunk* hot);
  void WaitIdle();
  // Stops the background thread for good: the compile under way finishes, queued ones are
  // dropped, later requests are ignored. Run at exit for the default engine, before LLVM's own
  // static objects are destroyed under a running compile.
  void StopWorker();
  void ReleaseEntry(orc::ThunkEntry* entry);
  JitStats Stats() const;

  void CallbackCreated() { live_callbacks.fetch_add(1, std::memory_order_relaxed); }
  void CallbackDestroyed() { live_callbacks.fetch_sub(1, std::memory_order_relaxed); }

 private:
  // Points fn at entry (which carries one reference for fn); drops it if fn already has a thunk.
  void Install(BoundFunction* fn, orc::ThunkEntry* entry);
  void WorkerLoop();

  // The compiler if Compiler() has created it, else nullptr; never creates one. Read under the lock
  // Compiler() writes it under (Stats may run on any thread while another creates the compiler).
  orc::UnitCompiler* CreatedCompiler() const;

  JitEngineOptions options_;
  mutable std::mutex compiler_mutex_;
  std::unique_ptr<orc::UnitCompiler> compiler_;
  bool compiler_tried_ = false;
  std::string compiler_error_;

  mutable std::mutex cache_mutex_;
  std::unordered_map<std::string, orc::ThunkEntry*> cache_;
  std::unordered_map<std::string, std::string> failed_;  // key -> why it stays interpreted

  std::mutex queue_mutex_;
  std::condition_variable queue_cv_, idle_cv_;
  std::deque<BoundFunction*> queue_;
  std::deque<BoundFunction*> hot_queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::thread worker_;

  std::atomic<int64_t> cache_hits_{0}, installs_{0}, fallbacks_{0};
  // Hot thunks live (or being compiled: a slot is reserved first, so the cap holds under races),
  // compiled, and refused by the cap or failed.
  std::atomic<int64_t> hot_live_{0}, hot_compiled_{0}, hot_refused_{0};
  // Hot thunks compiled with their native's body inlined.
  std::atomic<int64_t> hot_inlined_{0};

 public:
  std::atomic<int64_t> live_callbacks{0};
  // Set for the default engine before its first use: when the unit compiler is built, one compile
  // at each code generation level makes LLVM's lazily built static objects, then StopWorker is
  // registered with atexit -- after them, so it runs before they are destroyed and no background
  // compile is left running on destroyed LLVM state.
  bool stop_at_exit = false;
};

// JitEngine's friend: the one door from jit/orc's internals to an engine's private state.
struct details::JitEngineAccess {
  static JitEngineImpl* Of(JitEngine& engine) { return engine.impl_.get(); }
};

namespace orc {

// The tier attach hook (tiering.cc), installed when jit/orc is loaded.
void AttachTier(BoundFunction* fn);
// A function attached before jit/orc was loaded (libffijit_jit's lazy hook, orc_plugin.cc)
// carries a PendingTier: gives it the TierState AttachTier would have given it. Idempotent and
// thread-safe; a no-op for every other function.
void AdoptPendingTier(BoundFunction* fn);
// The count's report for such a function: adopts it, then goes on as AttachTier's own report.
void OnHotOfPendingTier(BoundFunction* fn);

// NativeCallback's members (entries/native_callback.cc), as functions libffijit_jit's
// forwarders reach through the plugin's table too.
void MakeNativeCallback(const Function& function, const Signature& signature, JitEngine& engine,
                        void** pointer, details::NativeCallbackState** state);
void SetUnreportedErrorHandler(details::NativeCallbackState* state,
                               void (*handler)(void* data, const char* declaration), void* data);
void DestroyNativeCallback(details::NativeCallbackState* state);

}  // namespace orc

}  // namespace ffijit

#endif  // FFIJIT_JIT_ORC_TIERS_JIT_ENGINE_IMPL_H_
