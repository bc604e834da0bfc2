// The stencil tier's step of the registration-time attach hook (stencil_tier.h's
// AttachStencilTier): a thunk made and installed at once, held by the function's PendingTier.
// Apart from stencil_tier.cc so that the tier itself links without the interpreter (the smoke
// test of tests/jit/stencils stands in for it).
#include "interpreter/bound_function.h"
#include "settings/jit_settings.h"
#include "stencils/thunks/stencil_tier.h"

namespace ffijit::stencils {

bool AttachStencilTier(BoundFunction* fn, const JitOptions& options) {
  if (options.policy == JitPolicy::kNever || !options.stencils) return false;
  const int64_t hot_after = HotAfterCalls(options);
  std::string why;
  StencilThunk* thunk = MakeStencilThunk(fn, hot_after > 0, &why);
  if (thunk == nullptr) return false;  // not covered (or no memory): the LLVM tiers' path
  auto* pending = new PendingTier();
  pending->hot_after = hot_after;
  pending->early.entry = StencilThunkEntry(thunk);
  pending->early.code = thunk;
  pending->early.release = [](void* code) {
    ReleaseStencilThunk(static_cast<StencilThunk*>(code));
  };
  fn->tier_state = pending;
  fn->release_tier_state = &ReleasePendingTier;
  fn->calls_until_hot.store(hot_after, std::memory_order_relaxed);
  SetSafeCall(fn, pending->early.entry);
  return true;
}

}  // namespace ffijit::stencils
