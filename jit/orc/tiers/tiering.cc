// Tiering: the registration-time attach hook (the stencil tier first, where it covers the plan),
// the hot-count reports of cold-tier and stencil thunks, and the default engine.

#include <mutex>

#include "orc/codegen/thunk_codegen.h"
#include "orc/tiers/jit_engine_impl.h"
#include "settings/jit_settings.h"
#include "stencils/thunks/stencil_tier.h"

namespace ffijit {
namespace {

// The engine that compiled fn's cold-tier thunk, else the default one.
details::JitEngineImpl* EngineOf(const orc::TierState* state) {
  if (orc::ThunkEntry* entry = state->entry.load(std::memory_order_acquire)) return entry->owner;
  return details::JitEngineAccess::Of(JitEngine::Default());
}

// A count reached zero: on the interpreter, the cold tier is next; a function already on its
// cold-tier thunk (counted again by the interpreter when the thunk falls back to it) or on its
// stencil thunk goes hot.
void OnHot(BoundFunction* fn) {
  auto* state = static_cast<orc::TierState*>(fn->tier_state);
  if (state->entry.load(std::memory_order_acquire) == nullptr && state->early.entry == nullptr) {
    details::JitEngineAccess::Of(JitEngine::Default())->Enqueue(fn);
  } else if (state->hot_after > 0) {
    EngineOf(state)->EnqueueHot(fn);
  }
}

}  // namespace

// Runs inside BindFunction for every function that may be compiled, before it is published.
void orc::AttachTier(BoundFunction* fn) {
  auto* state = new orc::TierState();
  fn->tier_state = state;
  fn->release_tier_state = &orc::ReleaseTierState;
  JitOptions options = JitOptionsForNewFunction();
  state->hot_after = HotAfterCalls(options);
  if (options.policy == JitPolicy::kNever) return;
  // The stencil tier replaces the state just made with the PendingTier that holds its thunk.
  fn->tier_state = nullptr;
  fn->release_tier_state = nullptr;
  if (stencils::AttachStencilTier(fn, options)) {
    delete state;
    return;
  }
  fn->tier_state = state;
  fn->release_tier_state = &orc::ReleaseTierState;
  // Not even a thunk already compiled: the policy keeps functions off the LLVM tiers.
  if (options.policy == JitPolicy::kStencils) return;
  details::JitEngineImpl* impl = details::JitEngineAccess::Of(JitEngine::Default());
  if (impl->TryInstallCached(fn)) return;
  if (options.policy == JitPolicy::kEager || options.after_calls <= 1) {
    impl->Enqueue(fn);
    return;
  }
  fn->calls_until_hot.store(options.after_calls, std::memory_order_relaxed);
  fn->on_hot = &OnHot;
}

namespace {

// Installed when jit/orc loads (with libffijit_jit, or as its plugin on the first need of LLVM,
// replacing libffijit_jit's lazy hook); the unit compiler itself is built on the first compile.
const bool kHookInstalled = [] {
  stencils::SetStencilHotCountHook(
      [](void* handle) { orc::OnHotOfPendingTier(static_cast<BoundFunction*>(handle)); });
  SetTierAttachHook(&orc::AttachTier);
  return true;
}();

}  // namespace

void orc::AdoptPendingTier(BoundFunction* fn) {
  std::lock_guard<std::mutex> lock(PendingTierMutex());
  if (fn->release_tier_state != &ReleasePendingTier || fn->tier_state == nullptr) return;
  auto* pending = static_cast<PendingTier*>(fn->tier_state);
  auto* state = new TierState();
  state->hot_after = pending->hot_after;
  state->early = pending->early;  // the thunk goes with it
  pending->early = EarlyThunk{};
  fn->tier_state = state;
  fn->release_tier_state = &ReleaseTierState;
  ReleasePendingTier(pending);
}

void orc::OnHotOfPendingTier(BoundFunction* fn) {
  AdoptPendingTier(fn);
  OnHot(fn);
}

namespace orc {

void ThunkReachedHotCount(void* handle) {
  auto* fn = static_cast<BoundFunction*>(handle);
  // Only a function the attach hook saw can have a counting thunk installed; a thunk called
  // directly on another BoundFunction (a test comparing executors) has nothing to report to.
  if (fn->release_tier_state != &ReleaseTierState || fn->tier_state == nullptr) return;
  auto* state = static_cast<TierState*>(fn->tier_state);
  if (state->hot_after > 0) EngineOf(state)->EnqueueHot(fn);
}

void ReleaseTierState(void* opaque) {
  auto* state = static_cast<TierState*>(opaque);
  if (HotThunk* hot = state->hot.load(std::memory_order_acquire)) hot->owner->ReleaseHot(hot);
  if (ThunkEntry* entry = state->entry.load(std::memory_order_acquire)) {
    entry->owner->ReleaseEntry(entry);
  }
  if (state->early.release != nullptr) state->early.release(state->early.code);
  delete state;
}

void AddStencilStats(JitStats* stats) {
  const stencils::StencilCounters counters = stencils::Counters();
  stats->stencil_thunks_made = counters.made;
  stats->stencil_thunks_live = counters.live;
}

}  // namespace orc

JitEngine& JitEngine::Default() {
  // Immortal: functions and the background thread may outlive static destruction.
  static JitEngine* engine = [] {
    JitEngineOptions options = DefaultEngineOptions();
    auto* made = new JitEngine(std::move(options));
    // A program may exit while the background thread compiles (a hot-tier thunk arrives at any
    // time): the engine stops its thread at exit (see JitEngineImpl::Compiler).
    details::JitEngineAccess::Of(*made)->stop_at_exit = true;
    return made;
  }();
  return *engine;
}

}  // namespace ffijit
