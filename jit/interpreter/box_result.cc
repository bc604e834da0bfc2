// Boxing native results into owned TVMFFIAny values (one result, several as an Array, or the
// structure a structure result describes).
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "ffijit/any.h"
#include "ffijit/c_ext.h"
#include "interpreter/bound_function.h"
#include "interpreter/float16.h"
#include "interpreter/marshal.h"

namespace ffijit {
namespace {

int RaiseResultError(const char* kind, const std::string& message) noexcept {
  TVMFFIErrorSetRaisedFromCStr(kind, message.c_str());
  return -1;
}

void SetInt(TVMFFIAny* out, int32_t type_index, int64_t v) {
  *out = TVMFFIAny{};
  out->type_index = type_index;
  out->v_int64 = v;
}

void SetFloat(TVMFFIAny* out, double v) {
  *out = TVMFFIAny{};
  out->type_index = kTVMFFIFloat;
  out->v_float64 = v;
}

template <typename T>
T Low(const uint64_t raw[2]) {
  T v;
  std::memcpy(&v, raw, sizeof v);
  return v;
}

// Releases the reference an `any` result holds, if it holds one: an object tag with a non-NULL
// object. Malformed values too (an object under the wrong tag still counts its references in its
// own header); a NULL object holds nothing and is not touched.
void ReleaseAnyResult(const TVMFFIAny& any) {
  if (any.type_index >= kTVMFFIStaticObjectBegin && any.v_obj != nullptr) {
    details::DecRef(any.v_obj);
  }
}

// Releases a reference that a native handed over but that will not be boxed (error paths).
void ReleaseRaw(Conversion c, const uint64_t raw[2]) {
  if (c == Conversion::kObject || c == Conversion::kTensor) {
    auto* obj = Low<TVMFFIObject*>(raw);
    if (obj != nullptr) details::DecRef(obj);
  } else if (c == Conversion::kAnyView) {
    ReleaseAnyResult(Low<TVMFFIAny>(raw));
  }
}

int BoxObject(const BoundFunction* fn, int32_t index, TVMFFIObject* obj, TVMFFIAny* out) {
  const ResultSlot& slot = fn->plan->results[static_cast<size_t>(index)];
  *out = TVMFFIAny{};
  if (obj == nullptr) return 0;  // None
  const int32_t want = slot.conversion == Conversion::kTensor
                           ? int32_t{kTVMFFITensor}
                           : ObjectTypeIndexOf(slot.object_type_index, slot.object_type_key);
  if (obj->type_index < kTVMFFIStaticObjectBegin || want == kUnresolvedTypeIndex ||
      (want != kTVMFFIObject && obj->type_index != want &&
       !FFIJITObjectIsInstance(obj->type_index, want))) {
    int32_t got = obj->type_index;
    TVMFFIObjectDecRef(obj);
    return RaiseResultError("RuntimeError", "`" + fn->plan->function_name +
                                                "` returned an object of type index " +
                                                std::to_string(got) + " for result " + slot.label +
                                                " of type `" + slot.type_text + "`");
  }
  out->type_index = obj->type_index;
  out->v_obj = obj;
  return 0;
}

// Builds the subtree of shape[*node] into *out, a leaf from items[its index], an argument node
// from args[its index] (both borrowed: stored as the item or argument itself, which the caller
// owns). A container comes back owned; its children's references are the container's own. -1
// with an error raised when a container or key cannot be made; whatever this call made is
// released.
int Assemble(const std::vector<ResultNode>& shape, size_t* node, const TVMFFIAny* items,
             const TVMFFIAny* args, TVMFFIAny* out) {
  const ResultNode& n = shape[(*node)++];
  *out = TVMFFIAny{};
  if (n.kind == ResultNode::kLeaf) {
    *out = items[n.index];
    return 0;
  }
  if (n.kind == ResultNode::kArgument) {
    *out = args[n.index];
    return 0;
  }
  if (n.kind == ResultNode::kGap) return 0;
  const size_t size = static_cast<size_t>(n.size);
  std::vector<TVMFFIAny> values, keys;
  std::vector<char> owned;
  try {
    values.reserve(size);
    owned.reserve(size);
    if (n.kind == ResultNode::kMap) keys.reserve(size);
  } catch (const std::bad_alloc&) {
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "out of memory building a structure result");
    return -1;
  }
  int status = 0;
  for (size_t i = 0; i < size && status == 0; ++i) {
    owned.push_back(shape[*node].kind == ResultNode::kArray ||
                    shape[*node].kind == ResultNode::kMap);
    values.emplace_back();
    status = Assemble(shape, node, items, args, &values.back());
    if (status == 0 && n.kind == ResultNode::kMap) {
      keys.emplace_back();
      TVMFFIByteArray key{n.keys[i].data(), n.keys[i].size()};
      status = TVMFFIStringFromByteArray(&key, &keys.back());
    }
  }
  if (status == 0) {
    TVMFFIObjectHandle made = nullptr;
    const auto count = static_cast<int64_t>(values.size());
    if (n.kind == ResultNode::kArray) {
      status = FFIJITArrayCreate(values.data(), count, &made);
    } else {
      status = FFIJITMapCreate(keys.data(), values.data(), count, &made);
    }
    if (status == 0) {
      out->type_index = n.kind == ResultNode::kArray ? kTVMFFIArray : kTVMFFIMap;
      out->v_obj = static_cast<TVMFFIObject*>(made);
    }
  }
  // The container holds its own references; a failed child made nothing.
  for (size_t i = 0; i < values.size(); ++i) {
    if (owned[i]) details::ReleaseAny(&values[i]);
  }
  for (TVMFFIAny& key : keys) details::ReleaseAny(&key);
  return status;
}

}  // namespace
}  // namespace ffijit

using ffijit::BoundFunction;
using ffijit::Conversion;

extern "C" {

int FFIJITBoxResult(const BoundFunction* fn, int32_t index, const uint64_t raw[2], TVMFFIAny* out) {
  using ffijit::Low;
  const ffijit::ResultSlot& slot = fn->plan->results[static_cast<size_t>(index)];
  switch (slot.conversion) {
    case Conversion::kBool:
      ffijit::SetInt(out, kTVMFFIBool, Low<uint8_t>(raw) != 0);
      return 0;
    case Conversion::kI8:
      ffijit::SetInt(out, kTVMFFIInt, Low<int8_t>(raw));
      return 0;
    case Conversion::kI16:
      ffijit::SetInt(out, kTVMFFIInt, Low<int16_t>(raw));
      return 0;
    case Conversion::kI32:
      ffijit::SetInt(out, kTVMFFIInt, Low<int32_t>(raw));
      return 0;
    case Conversion::kI64:
      ffijit::SetInt(out, kTVMFFIInt, Low<int64_t>(raw));
      return 0;
    case Conversion::kU8:
      ffijit::SetInt(out, kTVMFFIInt, Low<uint8_t>(raw));
      return 0;
    case Conversion::kU16:
      ffijit::SetInt(out, kTVMFFIInt, Low<uint16_t>(raw));
      return 0;
    case Conversion::kU32:
      ffijit::SetInt(out, kTVMFFIInt, Low<uint32_t>(raw));
      return 0;
    case Conversion::kU64: {
      uint64_t v = Low<uint64_t>(raw);
      if (v > static_cast<uint64_t>(INT64_MAX)) {
        return ffijit::RaiseResultError(
            "ValueError", "Out of range result " + slot.label + " of `" + fn->plan->declaration +
                              "`: " + std::to_string(v) + " does not fit an Int (int64)");
      }
      ffijit::SetInt(out, kTVMFFIInt, static_cast<int64_t>(v));
      return 0;
    }
    case Conversion::kF16:
      ffijit::SetFloat(out, FFIJITF16BitsToDouble(Low<uint16_t>(raw)));
      return 0;
    case Conversion::kBF16:
      ffijit::SetFloat(out, FFIJITBF16BitsToDouble(Low<uint16_t>(raw)));
      return 0;
    case Conversion::kF32:
      ffijit::SetFloat(out, Low<float>(raw));
      return 0;
    case Conversion::kF64:
      ffijit::SetFloat(out, Low<double>(raw));
      return 0;
    case Conversion::kOpaquePtr: {
      void* p = Low<void*>(raw);
      *out = TVMFFIAny{};
      if (p != nullptr) {
        out->type_index = kTVMFFIOpaquePtr;
        out->v_ptr = p;
      }
      return 0;
    }
    case Conversion::kStr: {
      const char* s = Low<const char*>(raw);
      *out = TVMFFIAny{};
      if (s == nullptr) return 0;
      TVMFFIByteArray bytes{s, std::strlen(s)};
      return TVMFFIStringFromByteArray(&bytes, out);
    }
    case Conversion::kBytes: {
      TVMFFIByteArray bytes = Low<TVMFFIByteArray>(raw);
      *out = TVMFFIAny{};
      if (bytes.data == nullptr && bytes.size != 0) {
        return ffijit::RaiseResultError("RuntimeError", "`" + fn->plan->function_name +
                                                            "` returned bytes with a NULL data "
                                                            "pointer and size " +
                                                            std::to_string(bytes.size));
      }
      return TVMFFIBytesFromByteArray(&bytes, out);
    }
    case Conversion::kObject:
    case Conversion::kTensor:
      return ffijit::BoxObject(fn, index, Low<TVMFFIObject*>(raw), out);
    case Conversion::kDataType:
      *out = TVMFFIAny{};
      out->type_index = kTVMFFIDataType;
      out->v_dtype = Low<DLDataType>(raw);
      return 0;
    case Conversion::kDevice:
      *out = TVMFFIAny{};
      out->type_index = kTVMFFIDevice;
      out->v_device = Low<DLDevice>(raw);
      return 0;
    case Conversion::kAnyView: {
      TVMFFIAny any = Low<TVMFFIAny>(raw);
      const ffijit::details::AnyDefect defect = ffijit::details::FindAnyDefect(any);
      if (__builtin_expect(defect != ffijit::details::AnyDefect::kNone, 0)) {
        // Not handed on: a caller would read through it. The text reads the object's header, so
        // it is built before the reference the native handed over is released.
        const int status = ffijit::RaiseResultError(
            "RuntimeError", "`" + fn->plan->function_name +
                                "` returned a malformed value for result " + slot.label + ": " +
                                ffijit::details::AnyDefectText(any, defect));
        ffijit::ReleaseAnyResult(any);
        return status;
      }
      if (any.type_index == kTVMFFIRawStr || any.type_index == kTVMFFIByteArrayPtr ||
          any.type_index == kTVMFFIDLTensorPtr || any.type_index == kTVMFFIObjectRValueRef) {
        // Borrowed forms cannot be handed over: keep an owned copy.
        return TVMFFIAnyViewToOwnedAny(&any, out);
      }
      *out = any;
      return 0;
    }
  }
  *out = TVMFFIAny{};
  return 0;
}

int FFIJITBoxResults(const BoundFunction* fn, const uint64_t (*raw)[2], TVMFFIAny* out,
                     const TVMFFIAny* args) {
  const auto& results = fn->plan->results;
  const int64_t n = static_cast<int64_t>(results.size());
  TVMFFIAny small[8];
  TVMFFIAny* items = n <= 8 ? small : new (std::nothrow) TVMFFIAny[static_cast<size_t>(n)];
  if (items == nullptr) {
    for (int64_t k = 0; k < n; ++k)
      ffijit::ReleaseRaw(results[static_cast<size_t>(k)].conversion, raw[k]);
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "out of memory boxing results");
    return -1;
  }
  int status = 0;
  int64_t boxed = 0;
  for (; boxed < n; ++boxed) {
    if (FFIJITBoxResult(fn, static_cast<int32_t>(boxed), raw[boxed], &items[boxed]) != 0) {
      status = -1;
      break;
    }
  }
  if (status != 0) {
    // The failing result released its own reference; release the rest.
    for (int64_t k = boxed + 1; k < n; ++k) {
      ffijit::ReleaseRaw(results[static_cast<size_t>(k)].conversion, raw[k]);
    }
  } else if (!fn->plan->result_shape.empty()) {
    size_t node = 0;
    status = ffijit::Assemble(fn->plan->result_shape, &node, items, args, out);
    // A root that is no container (the one result, written into an argument's storage) is
    // borrowed: the packed result takes a reference of its own.
    const ffijit::ResultNode::Kind root = fn->plan->result_shape[0].kind;
    if (status == 0 && root != ffijit::ResultNode::kArray && root != ffijit::ResultNode::kMap) {
      const TVMFFIAny view = *out;
      status = TVMFFIAnyViewToOwnedAny(&view, out);
    }
  } else {
    TVMFFIObjectHandle array = nullptr;
    status = FFIJITArrayCreate(items, n, &array);
    if (status == 0) {
      *out = TVMFFIAny{};
      out->type_index = kTVMFFIArray;
      out->v_obj = static_cast<TVMFFIObject*>(array);
    }
  }
  // The Array (or the structure) holds its own references to the items.
  for (int64_t k = 0; k < boxed; ++k) ffijit::details::ReleaseAny(&items[k]);
  if (items != small) delete[] items;
  return status;
}

}  // extern "C"
