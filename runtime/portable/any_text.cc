// Out-of-line helpers of any.h: type names, the conversion errors and the malformed-value text.
#include <cstdio>
#include <string>

#include "ffijit/any.h"

namespace ffijit::details {

// Spelled as the signature metadata spells types (ptr, ndarray, str, bytes, DataType, Device; an
// object by its type key, as in `object<ffi.Array>`), so a message's "expected" and "got" read
// alike; the plain values name their kind (int, float, bool, None).
std::string AnyTypeName(const TVMFFIAny& any) {
  switch (any.type_index) {
    case kTVMFFINone:
      return "None";
    case kTVMFFIInt:
      return "int";
    case kTVMFFIBool:
      return "bool";
    case kTVMFFIFloat:
      return "float";
    case kTVMFFIOpaquePtr:
      return "ptr";
    case kTVMFFIDataType:
      return "DataType";
    case kTVMFFIDevice:
      return "Device";
    case kTVMFFIDLTensorPtr:
    case kTVMFFITensor:
      return "ndarray";
    case kTVMFFIRawStr:
      return any.v_c_str == nullptr ? "None" : "str";  // a NULL RawStr is treated as None
    case kTVMFFISmallStr:
    case kTVMFFIStr:
      return "str";
    case kTVMFFIByteArrayPtr:
    case kTVMFFISmallBytes:
    case kTVMFFIBytes:
      return "bytes";
    default:
      break;
  }
  if (any.type_index < kTVMFFIStaticObjectBegin) return "type#" + std::to_string(any.type_index);
  try {
    return Excerpt(TypeIndexToKey(any.type_index));
  } catch (const Error&) {
    return "object#" + std::to_string(any.type_index);
  }
}

namespace {

// The type key of a header's type index, or "object#N" for an index nobody registered.
std::string HeaderTypeName(int32_t index) {
  try {
    return "`" + Excerpt(TypeIndexToKey(index)) + "`";
  } catch (const Error&) {
    return "object#" + std::to_string(index);
  }
}

}  // namespace

std::string AnyDefectText(const TVMFFIAny& any, AnyDefect defect) {
  const std::string tag =
      "`" + AnyTypeName(any) + "` (type index " + std::to_string(any.type_index) + ")";
  switch (defect) {
    case AnyDefect::kNone:
      return "a well-formed " + tag;
    case AnyDefect::kNullObject:
      return "a value tagged " + tag + " with a NULL object";
    case AnyDefect::kObjectMismatch:
      return "a value tagged " + tag + " whose object is a " +
             HeaderTypeName(any.v_obj->type_index) + " (type index " +
             std::to_string(any.v_obj->type_index) + ")";
    case AnyDefect::kSmallLength:
      return "an inline " + tag + " of length " + std::to_string(any.small_str_len) +
             " (at most 7 fit)";
    case AnyDefect::kSmallUnterminated:
      return "an inline " + tag + " whose eighth byte is not NUL";
    case AnyDefect::kTensorNdim:
    case AnyDefect::kTensorShape: {
      const DLTensor& t = any.type_index == kTVMFFIDLTensorPtr
                              ? *static_cast<const DLTensor*>(any.v_ptr)
                              : *reinterpret_cast<const DLTensor*>(any.v_obj + 1);
      return defect == AnyDefect::kTensorNdim
                 ? "an " + tag + " with ndim " + std::to_string(t.ndim)
                 : "an " + tag + " with ndim " + std::to_string(t.ndim) + " and a NULL shape";
    }
  }
  return tag;
}

void ThrowMalformed(const char* where, const TVMFFIAny& any, AnyDefect defect) {
  std::string message = where == nullptr ? std::string() : std::string(where) + ": ";
  message += "malformed value: ";
  message += AnyDefectText(any, defect);
  throw Error("ValueError", message);
}

void ThrowMalformedResult(const TVMFFIAny& owned, AnyDefect defect) {
  Error error("ValueError",
              "a called function returned a malformed value: " + AnyDefectText(owned, defect));
  if (owned.type_index >= kTVMFFIStaticObjectBegin && owned.v_obj != nullptr) {
    DecRef(owned.v_obj);
  }
  throw error;
}

void ThrowMismatch(const char* expected, const TVMFFIAny& got) {
  throw Error("TypeError",
              std::string("expected `") + expected + "` but got `" + AnyTypeName(got) + "`");
}

void ThrowOutOfRange(const TVMFFIAny& got, const char* type) {
  std::string value;
  if (got.type_index == kTVMFFIFloat) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.17g", got.v_float64);
    value = buffer;
  } else {
    value = std::to_string(got.v_int64);
  }
  throw Error("ValueError", "value " + value + " is out of range for `" + type + "`");
}

}  // namespace ffijit::details
