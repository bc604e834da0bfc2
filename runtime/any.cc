// Out-of-line helpers of any.h: type names and the conversion errors.
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
    return TypeIndexToKey(any.type_index);
  } catch (const Error&) {
    return "object#" + std::to_string(any.type_index);
  }
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
