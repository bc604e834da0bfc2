// The shared conversion entry points: structure paths, slow string forms, whole-parameter convert.
#include <cstring>
#include <string_view>

#include "ffijit/c_ext.h"
#include "ffijit/dtype.h"
#include "interpreter/bound_function.h"
#include "interpreter/marshal.h"

namespace ffijit {
namespace {

// The characters of a string-form Any (RawStr, SmallStr, Str).
TVMFFIByteArray StringView(const TVMFFIAny* v) {
  switch (v->type_index) {
    case kTVMFFIRawStr:
      return {v->v_c_str, v->v_c_str == nullptr ? 0 : std::strlen(v->v_c_str)};
    case kTVMFFISmallStr:
      return {v->v_bytes, v->small_str_len};
    default: {
      const FFIJITBytesCell* cell = CellOf<FFIJITBytesCell>(v->v_obj);
      return {cell->data, cell->size};
    }
  }
}

// Drops the error a failed parse raised: the caller reports its own, with the call's context.
void DiscardRaised() {
  TVMFFIObjectHandle error = nullptr;
  TVMFFIErrorMoveFromRaised(&error);
  if (error != nullptr) TVMFFIObjectDecRef(error);
}

}  // namespace

int32_t ResolveTypeKey(const std::string& key) noexcept {
  TVMFFIByteArray bytes{key.data(), key.size()};
  int32_t index = kUnresolvedTypeIndex;
  if (TVMFFITypeKeyToIndex(&bytes, &index) != 0) {
    DiscardRaised();
    return kUnresolvedTypeIndex;
  }
  return index;
}

ArrayStoreDefect FindArrayStoreDefect(TVMFFIObject* array) noexcept {
  const FFIJITArrayCell* cell = CellOf<FFIJITArrayCell>(array);
  if (cell->size < 0) return ArrayStoreDefect::kNegativeSize;
  if (cell->size == 0) return ArrayStoreDefect::kNone;  // nothing is read through `data`
  if (cell->data == nullptr) return ArrayStoreDefect::kNullData;
  if (cell->size > cell->capacity) return ArrayStoreDefect::kOverCapacity;
  // Storage elsewhere is an Array's own only when its deleter frees it. A subtype's object may
  // be larger than an Array's, so only an exact Array is held to the inline offset.
  if (cell->data != InlineArrayItems(array) && cell->data_deleter == nullptr &&
      array->type_index == kTVMFFIArray) {
    return ArrayStoreDefect::kStrayData;
  }
  return ArrayStoreDefect::kNone;
}

ConvertStatus ConvertDataTypeString(const TVMFFIAny* value, uint64_t out[2]) {
  TVMFFIByteArray text = StringView(value);
  DLDataType dtype;
  // ffijit's grammar (portable/dtype_text.cc) in both builds, not the runtime's C function: over
  // TVM FFI's own library the conversion contract stays ffijit's.
  try {
    dtype = ParseDataType(std::string_view(text.data, text.size));
  } catch (const Error&) {
    return ConvertStatus::kBadString;
  }
  uint32_t bits;
  std::memcpy(&bits, &dtype, sizeof bits);
  out[0] = bits;
  return ConvertStatus::kOk;
}

ConvertStatus ConvertDeviceString(const TVMFFIAny* value, uint64_t out[2]) {
  TVMFFIByteArray text = StringView(value);
  DLDevice device;
  if (FFIJITDeviceFromString(&text, &device) != 0) {
    DiscardRaised();
    return ConvertStatus::kBadString;
  }
  out[0] = 0;
  std::memcpy(out, &device, sizeof device);
  return ConvertStatus::kOk;
}

}  // namespace ffijit

using ffijit::BoundFunction;
using ffijit::ConvertStatus;
using ffijit::NativeParam;
using ffijit::PathStep;

extern "C" {

const TVMFFIAny* FFIJITResolvePath(const BoundFunction* fn, int32_t param, const TVMFFIAny* arg) {
  const ffijit::CallPlan& plan = *fn->plan;
  const NativeParam& p = plan.params[static_cast<size_t>(param)];
  const TVMFFIAny* current = arg;
  for (int32_t s = 0; s < p.path_size; ++s) {
    const PathStep& step = plan.path_steps[static_cast<size_t>(p.path_begin + s)];
    // A container is read through: it must be well-formed before its tag is believed.
    if (ffijit::details::FindAnyDefect(*current) != ffijit::details::AnyDefect::kNone) {
      FFIJITRaiseMalformedError(fn, param, s, current);
      return nullptr;
    }
    if (step.kind == PathStep::kArrayIndex) {
      if (current->type_index != kTVMFFIArray) {
        FFIJITRaisePathError(fn, param, s, current);
        return nullptr;
      }
      const auto* cell = ffijit::CellOf<FFIJITArrayCell>(current->v_obj);
      if (__builtin_expect(!ffijit::IsPlainArrayStore(current->v_obj, step.expected_size), 0)) {
        // The store is checked before its length: a length is only believed of a sound store.
        if (ffijit::FindArrayStoreDefect(current->v_obj) != ffijit::ArrayStoreDefect::kNone) {
          FFIJITRaiseMalformedArrayError(fn, param, s, current);
          return nullptr;
        }
        if (cell->size != step.expected_size) {
          FFIJITRaisePathError(fn, param, s, current);
          return nullptr;
        }
        // Otherwise elements stored elsewhere and owned through the data deleter.
      }
      current = cell->data + step.index;
    } else {
      if (current->type_index != kTVMFFIMap) {
        FFIJITRaisePathError(fn, param, s, current);
        return nullptr;
      }
      TVMFFIAny key{};
      key.type_index = kTVMFFIRawStr;
      key.v_c_str = step.key.c_str();
      const TVMFFIAny* value = nullptr;
      if (FFIJITMapGet(current->v_obj, &key, &value) != 0) return nullptr;
      if (value == nullptr) {
        FFIJITRaisePathError(fn, param, s, current);
        return nullptr;
      }
      current = value;
    }
  }
  return current;
}

int FFIJITConvertParam(const BoundFunction* fn, int32_t param, const TVMFFIAny* value,
                       uint64_t out[2]) {
  const NativeParam& p = fn->plan->params[static_cast<size_t>(param)];
  switch (ffijit::ConvertValue(p, value, out)) {
    case ConvertStatus::kOk:
      return 0;
    case ConvertStatus::kBadType:
      return FFIJITRaiseArgumentError(fn, param, value);
    case ConvertStatus::kBadRange:
      return FFIJITRaiseRangeError(fn, param, value);
    case ConvertStatus::kBadTensor:
      return FFIJITRaiseTensorError(fn, param,
                                    value->type_index == kTVMFFITensor
                                        ? ffijit::CellOf<DLTensor>(value->v_obj)
                                        : static_cast<const DLTensor*>(value->v_ptr));
    case ConvertStatus::kBadString:
      return FFIJITRaiseParseError(fn, param, value);
    case ConvertStatus::kMalformed:
      return FFIJITRaiseMalformedError(fn, param, p.path_size, value);
    case ConvertStatus::kInnerNul:
      return FFIJITRaiseInnerNulError(fn, param, value);
  }
  return FFIJITRaiseArgumentError(fn, param, value);
}

}  // extern "C"
