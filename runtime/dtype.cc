// DLDataType and DLDevice: parsing from and printing to strings ("float32", "int8x4", "cuda:1").
#include <cstring>
#include <string>
#include <string_view>

#include "ffijit/dtype.h"
#include "ffijit/object.h"
#include "internal.h"

namespace ffijit {
namespace {

struct CodeName {
  const char* name;
  uint8_t code;
};
// Longest prefixes first so "bfloat" is not read as "b" + "float".
constexpr CodeName kTypeCodes[] = {{"bfloat", kDLBfloat},   {"float", kDLFloat},
                                   {"uint", kDLUInt},       {"int", kDLInt},
                                   {"complex", kDLComplex}, {"handle", kDLOpaqueHandle}};

struct DeviceName {
  const char* name;
  int32_t type;
};
constexpr DeviceName kDevices[] = {{"cpu", kDLCPU},
                                   {"cuda", kDLCUDA},
                                   {"cuda_host", kDLCUDAHost},
                                   {"opencl", kDLOpenCL},
                                   {"vulkan", kDLVulkan},
                                   {"metal", kDLMetal},
                                   {"vpi", kDLVPI},
                                   {"rocm", kDLROCM},
                                   {"rocm_host", kDLROCMHost},
                                   {"ext_dev", kDLExtDev},
                                   {"cuda_managed", kDLCUDAManaged}};

// Parses a decimal number that fills `text` entirely; false on anything else or overflow.
bool ParseNumber(std::string_view text, uint64_t limit, uint64_t* out) {
  if (text.empty() || text.size() > 19) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > limit) return false;
  *out = value;
  return true;
}

Error BadDataType(std::string_view text, const char* why) {
  return Error("ValueError", "cannot parse data type \"" + std::string(text) + "\": " + why);
}

}  // namespace

DLDataType ParseDataType(std::string_view text) {
  if (text == "bool") return DLDataType{FFIJIT_DL_BOOL_CODE, 8, 1};
  if (text == "void") return DLDataType{kDLOpaqueHandle, 0, 0};
  const CodeName* match = nullptr;
  for (const auto& entry : kTypeCodes) {
    if (text.substr(0, std::strlen(entry.name)) == entry.name) {
      match = &entry;
      break;
    }
  }
  if (match == nullptr) throw BadDataType(text, "unknown type code");
  std::string_view rest = text.substr(std::strlen(match->name));
  std::string_view bits_text = rest, lanes_text;
  if (size_t x = rest.find('x'); x != std::string_view::npos) {
    bits_text = rest.substr(0, x);
    lanes_text = rest.substr(x + 1);
  }
  uint64_t bits = match->code == kDLOpaqueHandle ? 64 : 0;
  if (!bits_text.empty() || match->code != kDLOpaqueHandle) {
    if (!ParseNumber(bits_text, 255, &bits) || bits == 0) {
      throw BadDataType(text, "expected a bit width from 1 to 255 after the type code");
    }
  }
  uint64_t lanes = 1;
  if (rest.find('x') != std::string_view::npos &&
      (!ParseNumber(lanes_text, 65535, &lanes) || lanes == 0)) {
    throw BadDataType(text, "expected a lane count from 1 to 65535 after 'x'");
  }
  return DLDataType{match->code, static_cast<uint8_t>(bits), static_cast<uint16_t>(lanes)};
}

std::string DataTypeToString(DLDataType dtype) {
  if (dtype.code == FFIJIT_DL_BOOL_CODE && dtype.bits == 8 && dtype.lanes == 1) return "bool";
  if (dtype.code == kDLOpaqueHandle && dtype.bits == 0 && dtype.lanes == 0) return "void";
  const char* name = nullptr;
  for (const auto& entry : kTypeCodes) {
    if (entry.code == dtype.code) name = entry.name;
  }
  std::string text;
  if (name != nullptr) {
    text = name;
  } else if (dtype.code == FFIJIT_DL_BOOL_CODE) {
    text = "bool";
  } else {
    throw Error("ValueError", "unknown data type code " + std::to_string(dtype.code));
  }
  text += std::to_string(dtype.bits);
  if (dtype.lanes != 1) {
    text += 'x';
    text += std::to_string(dtype.lanes);
  }
  return text;
}

DLDevice ParseDevice(std::string_view text) {
  std::string_view name = text, id_text;
  size_t colon = text.find(':');
  if (colon != std::string_view::npos) {
    name = text.substr(0, colon);
    id_text = text.substr(colon + 1);
  }
  for (const auto& entry : kDevices) {
    if (name != entry.name) continue;
    uint64_t id = 0;
    if (colon != std::string_view::npos && !ParseNumber(id_text, INT32_MAX, &id)) {
      throw Error("ValueError", "cannot parse device \"" + std::string(text) +
                                    "\": expected a device id from 0 to 2147483647 after ':'");
    }
    return DLDevice{static_cast<DLDeviceType>(entry.type), static_cast<int32_t>(id)};
  }
  throw Error("ValueError", "cannot parse device \"" + std::string(text) +
                                "\": unknown device type \"" + std::string(name) + "\"");
}

std::string DeviceToString(DLDevice device) {
  for (const auto& entry : kDevices) {
    if (entry.type == RawDeviceType(device)) {
      return std::string(entry.name) + ":" + std::to_string(device.device_id);
    }
  }
  throw Error("ValueError", "unknown device type " + std::to_string(RawDeviceType(device)));
}

}  // namespace ffijit

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
