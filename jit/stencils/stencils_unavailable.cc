// The stencil tier's entry points in a build without it (no JIT, no clang-19 or Python at build
// time, or an architecture without stencils): nothing is ever made, so every function takes the
// path it would take without the tier, and libffijit_jit exports the same names in every build.
#include "ffijit/error.h"
#include "stencils/entries/host_stencil_entry.h"
#include "stencils/thunks/stencil_tier.h"

namespace ffijit::stencils {

bool AttachStencilTier(BoundFunction*, const JitOptions&) {
  return false;
}

void SetStencilHotCountHook(HotCountHook) {}

StencilCounters Counters() {
  return {};
}

FFIJITHostEntry* MakeStencilHostEntry(const BoundFunction*, const FFIJITHostModel&, int) {
  throw RuntimeError(
      "FFIJITHostEntryCompile: no stencil host entry: a build without the stencil tier");
}

}  // namespace ffijit::stencils
