// DLDataType and DLDevice as C ABI functions: TVMFFIDataTypeFromString/ToString and ffijit's device
// string functions, over the parsers and printers of portable/dtype_text.cc.
#include <string>
#include <string_view>

#include "ffijit/dtype.h"
#include "ffijit/object.h"
#include "internal.h"
#include "string_internal.h"

using namespace ffijit;

namespace {

std::string_view ViewOf(const TVMFFIByteArray* str, const char* func) {
  internal::RequireNonNull(str, func, "str");
  if (str->data == nullptr && str->size != 0) {
    throw Error("ValueError", std::string(func) + ": NULL data with nonzero size");
  }
  return std::string_view(str->data, str->size);
}

}  // namespace

extern "C" {

int TVMFFIDataTypeFromString(const TVMFFIByteArray* str, DLDataType* out) {
  return internal::GuardCBoundary([&] {
    std::string_view text = ViewOf(str, "TVMFFIDataTypeFromString");
    internal::RequireNonNull(out, "TVMFFIDataTypeFromString", "out");
    *out = ParseDataType(text);
  });
}

int TVMFFIDataTypeToString(const DLDataType* dtype, TVMFFIAny* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(dtype, "TVMFFIDataTypeToString", "dtype");
    internal::RequireNonNull(out, "TVMFFIDataTypeToString", "out");
    std::string text = DataTypeToString(*dtype);
    // Always the heap form (65), even for short names, as TVM FFI returns it.
    TVMFFIObject* str = internal::NewBytesObject(kTVMFFIStr, text.data(), text.size());
    *out = TVMFFIAny{};
    out->type_index = kTVMFFIStr;
    out->v_obj = str;
  });
}

int FFIJITDeviceFromString(const TVMFFIByteArray* str, DLDevice* out) {
  return internal::GuardCBoundary([&] {
    std::string_view text = ViewOf(str, "FFIJITDeviceFromString");
    internal::RequireNonNull(out, "FFIJITDeviceFromString", "out");
    *out = ParseDevice(text);
  });
}

int FFIJITDeviceToString(const DLDevice* device, TVMFFIAny* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(device, "FFIJITDeviceToString", "device");
    internal::RequireNonNull(out, "FFIJITDeviceToString", "out");
    std::string text = DeviceToString(*device);
    internal::MakeOwnedBytes(true, text.data(), text.size(), out);
  });
}

}  // extern "C"
