// DirectNativeTarget: whether a TypedFunction (include/ffijit/jit/typed_function.h) may call a
// bound native directly, decided once when the handle is made.
#include "ffijit/jit/typed_function.h"
#include "interpreter/bound_function.h"

namespace ffijit::details {

void* DirectNativeTarget(TVMFFIObjectHandle function, const Signature& signature) {
  const auto* obj = static_cast<const TVMFFIObject*>(function);
  if (!IsBoundFunction(obj)) return nullptr;
  const auto* fn = reinterpret_cast<const BoundFunction*>(obj);
  const CallPlan& plan = *fn->plan;
  if (plan.convention != CallConvention::kPlain || !plan.path_steps.empty()) return nullptr;
  if (plan.canonical != CanonicalString(signature)) return nullptr;
  // The canonical text alone already pins these; the plan is checked too, so that a lowering
  // which ever passed one of them differently cannot make a direct call wrong.
  for (const NativeParam& p : plan.params) {
    if (!InfoOf(p.conversion).direct_from_cpp || p.path_size != 0) return nullptr;
  }
  if (plan.packs_results()) return nullptr;
  for (const ResultSlot& r : plan.results) {
    if (!r.by_return || !InfoOf(r.conversion).direct_from_cpp) return nullptr;
  }
  return fn->target;
}

}  // namespace ffijit::details
