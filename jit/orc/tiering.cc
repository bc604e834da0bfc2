// Tiering: the registration-time attach hook and the default engine.
#include <cstdlib>

#include "jit_settings.h"
#include "orc/jit_engine_impl.h"

namespace ffijit {
namespace {

void OnHot(BoundFunction* fn) {
  details::JitEngineAccess::Of(JitEngine::Default())->Enqueue(fn);
}

// Runs inside BindFunction for every function that may be compiled, before it is published.
void AttachTier(BoundFunction* fn) {
  fn->tier_state = new orc::TierState();
  fn->release_tier_state = &orc::ReleaseTierState;
  JitOptions options = JitOptionsForNewFunction();
  if (options.policy == JitPolicy::kNever) return;
  details::JitEngineImpl* impl = details::JitEngineAccess::Of(JitEngine::Default());
  if (impl->TryInstallCached(fn)) return;
  if (options.policy == JitPolicy::kEager || options.after_calls <= 1) {
    impl->Enqueue(fn);
    return;
  }
  fn->calls_until_hot.store(options.after_calls, std::memory_order_relaxed);
  fn->on_hot = &OnHot;
}

// Installed when the library loads; the LLVM engine itself is built on the first compile.
const bool kHookInstalled = [] {
  SetTierAttachHook(&AttachTier);
  return true;
}();

}  // namespace

namespace orc {

void ReleaseTierState(void* opaque) {
  auto* state = static_cast<TierState*>(opaque);
  if (ThunkEntry* entry = state->entry.load(std::memory_order_acquire)) {
    entry->owner->ReleaseEntry(entry);
  }
  delete state;
}

}  // namespace orc

JitEngine& JitEngine::Default() {
  // Immortal: functions and the background thread may outlive static destruction.
  static JitEngine* engine = [] {
    JitEngineOptions options;
    if (const char* dir = std::getenv("FFIJIT_JIT_CACHE_DIR")) options.cache_dir = dir;
    return new JitEngine(std::move(options));
  }();
  return *engine;
}

}  // namespace ffijit
