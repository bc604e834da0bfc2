// Tiering: the registration-time attach hook (the stencil tier first, where it applies), the
// hot-count report of cold-tier and stencil thunks, and the default engine.

#include "orc/codegen/thunk_codegen.h"
#include "orc/tiers/jit_engine_impl.h"
#include "settings/jit_settings.h"
#if FFIJIT_HAVE_STENCILS
#include "stencils/stencil_tier.h"
#endif

namespace ffijit {
namespace {

// The engine that compiled fn's cold-tier thunk, else the default one.
details::JitEngineImpl* EngineOf(const orc::TierState* state) {
  if (orc::ThunkEntry* entry = state->entry.load(std::memory_order_acquire)) return entry->owner;
  return details::JitEngineAccess::Of(JitEngine::Default());
}

// The interpreter's count reached zero: on the interpreter, the cold tier is next; a function
// already on its cold-tier thunk (counted again by the interpreter when the thunk falls back to
// it) goes hot.
void OnHot(BoundFunction* fn) {
  auto* state = static_cast<orc::TierState*>(fn->tier_state);
  if (state->entry.load(std::memory_order_acquire) == nullptr) {
    details::JitEngineAccess::Of(JitEngine::Default())->Enqueue(fn);
  } else if (state->hot_after > 0) {
    EngineOf(state)->EnqueueHot(fn);
  }
}

// The stencil tier: a thunk made now, by copying and patching, if the plan allows. It counts the
// calls that lead to the hot tier, as a cold-tier thunk does; its fallback reports the count.
bool InstallStencil(BoundFunction* fn, orc::TierState* state) {
#if FFIJIT_HAVE_STENCILS
  std::string why;
  stencils::StencilThunk* thunk = stencils::MakeStencilThunk(fn, state->hot_after > 0, &why);
  if (thunk == nullptr) return false;  // unsupported (or no memory): today's path
  state->stencil = thunk;
  fn->calls_until_hot.store(state->hot_after, std::memory_order_relaxed);
  orc::NoteLiveThunk(reinterpret_cast<void*>(stencils::StencilThunkEntry(thunk)), 1);
  SetSafeCall(fn, stencils::StencilThunkEntry(thunk));
  return true;
#else
  (void)fn;
  (void)state;
  return false;
#endif
}

// Runs inside BindFunction for every function that may be compiled, before it is published.
void AttachTier(BoundFunction* fn) {
  auto* state = new orc::TierState();
  fn->tier_state = state;
  fn->release_tier_state = &orc::ReleaseTierState;
  JitOptions options = JitOptionsForNewFunction();
  state->hot_after = options.hot_after_calls > 0 ? options.hot_after_calls : 0;
  if (options.policy == JitPolicy::kNever) return;
  if (options.stencils && InstallStencil(fn, state)) return;
  details::JitEngineImpl* impl = details::JitEngineAccess::Of(JitEngine::Default());
  if (impl->TryInstallCached(fn)) return;
  if (options.policy == JitPolicy::kEager || options.after_calls <= 1) {
    impl->Enqueue(fn);
    return;
  }
  fn->calls_until_hot.store(options.after_calls, std::memory_order_relaxed);
  fn->on_hot = &OnHot;
}

// Installed when the library loads; the unit compiler itself is built on the first compile.
const bool kHookInstalled = [] {
#if FFIJIT_HAVE_STENCILS
  stencils::SetStencilHotCountHook(&orc::ThunkReachedHotCount);
#endif
  SetTierAttachHook(&AttachTier);
  return true;
}();

}  // namespace

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
#if FFIJIT_HAVE_STENCILS
  if (state->stencil != nullptr) {
    NoteLiveThunk(reinterpret_cast<void*>(stencils::StencilThunkEntry(state->stencil)), -1);
    stencils::ReleaseStencilThunk(state->stencil);
  }
#endif
  delete state;
}

TVMFFISafeCallType StencilEntryOf(const TierState* state) {
#if FFIJIT_HAVE_STENCILS
  if (state->stencil != nullptr) return stencils::StencilThunkEntry(state->stencil);
#else
  (void)state;
#endif
  return nullptr;
}

void AddStencilStats(JitStats* stats) {
#if FFIJIT_HAVE_STENCILS
  stencils::StencilCounters counters = stencils::Counters();
  stats->stencil_thunks_made = counters.made;
  stats->stencil_thunks_live = counters.live;
#else
  (void)stats;
#endif
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
