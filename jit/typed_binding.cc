// DirectNativeTarget: whether a TypedFunction (include/ffijit/typed_function.h) may call a bound
// native directly, decided once when the handle is made.
#include "bound_function.h"
#include "ffijit/typed_function.h"

namespace ffijit::details {
namespace {

// Conversions of C++ types kDirectCallable admits: none can fail for a value of the exact type.
bool CannotFail(Conversion c) {
  switch (c) {
    case Conversion::kBool:
    case Conversion::kI8:
    case Conversion::kI16:
    case Conversion::kI32:
    case Conversion::kI64:
    case Conversion::kU8:
    case Conversion::kU16:
    case Conversion::kU32:
    case Conversion::kF32:
    case Conversion::kF64:
    case Conversion::kOpaquePtr:
    case Conversion::kDataType:
    case Conversion::kDevice:
      return true;
    default:
      return false;
  }
}

}  // namespace

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
    if (!CannotFail(p.conversion) || p.path_size != 0) return nullptr;
  }
  if (plan.results.size() > 1) return nullptr;
  for (const ResultSlot& r : plan.results) {
    if (!r.by_return || !CannotFail(r.conversion)) return nullptr;
  }
  return fn->target;
}

}  // namespace ffijit::details
