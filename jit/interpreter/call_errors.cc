// The error messages of a packed call, raised through the C ABI; shared by interpreter and thunks.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "ffijit/any.h"
#include "ffijit/c_ext.h"
#include "interpreter/bound_function.h"
#include "interpreter/marshal.h"

namespace ffijit {
namespace {

// The one spelling of a value's type, shared with the runtime's own messages.
std::string GotTypeName(const TVMFFIAny* got) {
  return details::AnyTypeName(*got);
}

std::string DataTypeText(DLDataType t) {
  const char* code = "code";
  switch (t.code) {
    case kDLInt:
      code = "int";
      break;
    case kDLUInt:
      code = "uint";
      break;
    case kDLFloat:
      code = "float";
      break;
    case kDLBfloat:
      code = "bfloat";
      break;
    case FFIJIT_DL_BOOL_CODE:
      code = "bool";
      break;
    default:
      break;
  }
  std::string out = code;
  if (std::strcmp(code, "code") == 0) out += std::to_string(t.code) + "_";
  out += std::to_string(t.bits);
  if (t.lanes != 1) out += "x" + std::to_string(t.lanes);
  return out;
}

// "#1" or "#1[0][\"k\"]": the packed position, then the structure steps taken so far.
std::string ArgumentLabel(const CallPlan& plan, int32_t param, int32_t steps) {
  const NativeParam& p = plan.params[static_cast<size_t>(param)];
  // Appends only: GCC 12 at -O3 misreports `"literal" + std::string` as an overlapping memcpy.
  std::string out = "#";
  out += std::to_string(p.position);
  for (int32_t s = 0; s < steps; ++s) {
    const PathStep& step = plan.path_steps[static_cast<size_t>(p.path_begin + s)];
    if (step.kind == PathStep::kArrayIndex) {
      out += '[';
      out += std::to_string(step.index);
      out += ']';
    } else {
      out += "[\"";
      out += step.key;
      out += "\"]";
    }
  }
  return out;
}

// The shape of a mismatched tensor as the check saw it, reading no shape element the check did
// not have the right to compare: "shape (2, 3)" when the tensor has the rank the signature asks
// for (then its dims, at most kShownDims of them), else "ndim 5" (the caller's ndim may be huge, or
// its shape shorter than it claims: only a signature's own rank bounds what is read).
std::string TensorShapeText(const TensorCheck& check, const DLTensor& got) {
  constexpr int32_t kShownDims = 8;
  if (check.rank < 0 || got.ndim != check.rank) return "ndim " + std::to_string(got.ndim);
  std::string out = "shape (";
  const int32_t shown = got.ndim < kShownDims ? got.ndim : kShownDims;
  for (int32_t i = 0; i < shown; ++i) {
    if (i) out += ", ";
    out += std::to_string(got.shape[i]);
  }
  if (shown < got.ndim) {
    out += ", \xe2\x80\xa6) of ndim ";
    out += std::to_string(got.ndim);
    return out;
  }
  out += got.ndim == 1 ? ",)" : ")";
  return out;
}

std::string FullLabel(const CallPlan& plan, int32_t param) {
  return ArgumentLabel(plan, param, plan.params[static_cast<size_t>(param)].path_size);
}

// Raises kind/message; never lets an exception (out of memory) escape into C or JIT code.
template <typename Build>
int Raise(const char* kind, Build&& build) noexcept {
  try {
    std::string message = build();
    TVMFFIErrorSetRaisedFromCStr(kind, message.c_str());
  } catch (...) {
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "out of memory while formatting an error");
  }
  return -1;
}

}  // namespace

std::string ArrayStoreDefectText(const TVMFFIAny& array, ArrayStoreDefect defect) {
  const FFIJITArrayCell* cell = CellOf<FFIJITArrayCell>(array.v_obj);
  std::string out = "an `" + details::AnyTypeName(array) + "` (type index " +
                    std::to_string(array.type_index) + ") of size " + std::to_string(cell->size);
  switch (defect) {
    case ArrayStoreDefect::kNullData:
      out += " with a NULL data pointer";
      break;
    case ArrayStoreDefect::kOverCapacity:
      out += " and capacity " + std::to_string(cell->capacity);
      break;
    case ArrayStoreDefect::kStrayData:
      out += " whose data pointer is neither its inline elements nor freed by a data deleter";
      break;
    case ArrayStoreDefect::kNegativeSize:  // the size says it all
    case ArrayStoreDefect::kNone:
      break;
  }
  return out;
}

}  // namespace ffijit

using ffijit::BoundFunction;
using ffijit::CallPlan;

extern "C" {

int FFIJITRaiseArityError(const BoundFunction* fn, int32_t got) {
  return ffijit::Raise("TypeError", [&] {
    const CallPlan& plan = *fn->plan;
    return "Mismatched number of arguments when calling: `" + plan.declaration + "`. Expected " +
           std::to_string(plan.args.size()) + " but got " + std::to_string(got) + " arguments";
  });
}

int FFIJITRaiseArgumentError(const BoundFunction* fn, int32_t param, const TVMFFIAny* got) {
  return ffijit::Raise("TypeError", [&] {
    const CallPlan& plan = *fn->plan;
    return "Mismatched type on argument " + ffijit::FullLabel(plan, param) + " when calling: `" +
           plan.declaration + "`. Expected `" + plan.params[static_cast<size_t>(param)].type_text +
           "` but got `" + ffijit::GotTypeName(got) + "`";
  });
}

int FFIJITRaiseRangeError(const BoundFunction* fn, int32_t param, const TVMFFIAny* got) {
  return ffijit::Raise("ValueError", [&] {
    const CallPlan& plan = *fn->plan;
    return "Out of range value on argument " + ffijit::FullLabel(plan, param) + " when calling: `" +
           plan.declaration + "`. " + std::to_string(got->v_int64) + " does not fit `" +
           plan.params[static_cast<size_t>(param)].type_text + "`";
  });
}

int FFIJITRaiseParseError(const BoundFunction* fn, int32_t param, const TVMFFIAny* got) {
  return ffijit::Raise("ValueError", [&] {
    const CallPlan& plan = *fn->plan;
    // Quoted from a view: only the excerpt is copied, however long the string.
    const std::string_view text = ffijit::details::IsStrForm(got->type_index)
                                      ? ffijit::details::ViewChars(*got)
                                      : std::string_view();
    return "Invalid value on argument " + ffijit::FullLabel(plan, param) + " when calling: `" +
           plan.declaration + "`. Expected `" + plan.params[static_cast<size_t>(param)].type_text +
           "` but got \"" + ffijit::Excerpt(text) + "\"";
  });
}

int FFIJITRaiseInnerNulError(const BoundFunction* fn, int32_t param, const TVMFFIAny* got) {
  return ffijit::Raise("ValueError", [&] {
    const CallPlan& plan = *fn->plan;
    const std::string_view text = ffijit::details::ViewChars(*got);
    return "Invalid value on argument " + ffijit::FullLabel(plan, param) + " when calling: `" +
           plan.declaration + "`. The str contains a NUL character (at byte " +
           std::to_string(text.find('\0')) + " of " + std::to_string(text.size()) +
           "), which a `str` parameter (a C string) would cut short; pass bytes to a `bytes` "
           "parameter instead";
  });
}

int FFIJITRaiseTensorError(const BoundFunction* fn, int32_t param, const DLTensor* got) {
  return ffijit::Raise("ValueError", [&] {
    const CallPlan& plan = *fn->plan;
    const ffijit::NativeParam& p = plan.params[static_cast<size_t>(param)];
    return "Mismatched tensor on argument " + ffijit::FullLabel(plan, param) + " when calling: `" +
           plan.declaration + "`. Expected `" + p.type_text + "` but got an ndarray of " +
           ffijit::DataTypeText(got->dtype) + " with " + ffijit::TensorShapeText(p.tensor, *got);
  });
}

int FFIJITRaiseMalformedError(const BoundFunction* fn, int32_t param, int32_t steps,
                              const TVMFFIAny* got) {
  return ffijit::Raise("ValueError", [&] {
    const CallPlan& plan = *fn->plan;
    return "Malformed value on argument " + ffijit::ArgumentLabel(plan, param, steps) +
           " when calling: `" + plan.declaration + "`. Got " +
           ffijit::details::AnyDefectText(*got, ffijit::details::FindAnyDefect(*got));
  });
}

int FFIJITRaiseMalformedArrayError(const BoundFunction* fn, int32_t param, int32_t steps,
                                   const TVMFFIAny* array) {
  return ffijit::Raise("ValueError", [&] {
    const CallPlan& plan = *fn->plan;
    return "Malformed value on argument " + ffijit::ArgumentLabel(plan, param, steps) +
           " when calling: `" + plan.declaration + "`. Got " +
           ffijit::ArrayStoreDefectText(*array, ffijit::FindArrayStoreDefect(array->v_obj));
  });
}

int FFIJITRaisePathError(const BoundFunction* fn, int32_t param, int32_t step,
                         const TVMFFIAny* container) {
  const CallPlan& plan = *fn->plan;
  const ffijit::NativeParam& p = plan.params[static_cast<size_t>(param)];
  const ffijit::PathStep& s = plan.path_steps[static_cast<size_t>(p.path_begin + step)];
  const bool wrong_type = s.kind == ffijit::PathStep::kArrayIndex
                              ? container->type_index != kTVMFFIArray
                              : container->type_index != kTVMFFIMap;
  if (wrong_type) {
    return ffijit::Raise("TypeError", [&] {
      return "Mismatched type on argument " + ffijit::ArgumentLabel(plan, param, step) +
             " when calling: `" + plan.declaration + "`. Expected `" + s.container_type +
             "` but got `" + ffijit::GotTypeName(container) + "`";
    });
  }
  if (s.kind == ffijit::PathStep::kArrayIndex) {
    return ffijit::Raise("ValueError", [&] {
      const auto* cell = reinterpret_cast<const FFIJITArrayCell*>(container->v_obj + 1);
      return "Mismatched length on argument " + ffijit::ArgumentLabel(plan, param, step) +
             " when calling: `" + plan.declaration + "`. Expected `" + s.container_type +
             "` with " + std::to_string(s.expected_size) + " elements but got " +
             std::to_string(cell->size);
    });
  }
  return ffijit::Raise("KeyError", [&] {
    return "Missing key `" + s.key + "` on argument " + ffijit::ArgumentLabel(plan, param, step) +
           " when calling: `" + plan.declaration + "`. Expected `" + s.container_type + "`";
  });
}

int FFIJITRaiseStatusWithoutError(const BoundFunction* fn, int32_t status) {
  return ffijit::Raise("RuntimeError", [&] {
    return "`" + fn->plan->function_name + "` returned status " + std::to_string(status) +
           " without raising an error";
  });
}

int FFIJITPropagateStatus(const BoundFunction* fn, int32_t status) {
  TVMFFIObjectHandle error = nullptr;
  TVMFFIErrorMoveFromRaised(&error);
  if (error == nullptr) return FFIJITRaiseStatusWithoutError(fn, status);
  TVMFFIErrorSetRaised(error);
  TVMFFIObjectDecRef(error);
  return -1;
}

}  // extern "C"
