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
  uint8_t default_bits;  // the width a name without digits means ("int" is int32)
};
// Longest prefixes first so "bfloat" is not read as "b" + "float", nor "float8_e4m3fn" as
// "float8_e4m3". The sub-byte float formats (DLPack 1.1 codes 7-17) name their width, so they take
// no digits and print none; their spellings and codes are TVM FFI's (apache/tvm-ffi e98b94e1).
constexpr CodeName kTypeCodes[] = {
    {"float8_e4m3b11fnuz", 9, 8}, {"float8_e4m3fnuz", 11, 8},     {"float8_e5m2fnuz", 13, 8},
    {"float8_e8m0fnu", 14, 8},    {"float8_e4m3fn", 10, 8},       {"float6_e2m3fn", 15, 6},
    {"float6_e3m2fn", 16, 6},     {"float4_e2m1fn", 17, 4},       {"float8_e3m4", 7, 8},
    {"float8_e4m3", 8, 8},        {"float8_e5m2", 12, 8},         {"bfloat", kDLBfloat, 16},
    {"float", kDLFloat, 32},      {"uint", kDLUInt, 32},          {"int", kDLInt, 32},
    {"complex", kDLComplex, 64},  {"handle", kDLOpaqueHandle, 64}};
constexpr uint8_t kFirstNamedWidthCode = 7;

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
  return Error("ValueError", "cannot parse data type \"" + Excerpt(text) + "\": " + why);
}

}  // namespace

DLDataType ParseDataType(std::string_view text) {
  // The void type: TVM FFI prints it as "" and reads both spellings.
  if (text.empty() || text == "void") return DLDataType{kDLOpaqueHandle, 0, 0};
  if (text == "bool") return DLDataType{FFIJIT_DL_BOOL_CODE, 8, 1};
  const CodeName* match = nullptr;
  for (const auto& entry : kTypeCodes) {
    if (text.substr(0, std::strlen(entry.name)) == entry.name) {
      match = &entry;
      break;
    }
  }
  if (match == nullptr) throw BadDataType(text, "unknown type code");
  std::string_view rest = text.substr(std::strlen(match->name));
  // <bits>, then x<lanes> (fixed vector) or xvscalex<n> (scalable vector, lanes = -n as int16).
  std::string_view bits_text = rest, lanes_text;
  bool scalable = false;
  if (size_t x = rest.find('x'); x != std::string_view::npos) {
    bits_text = rest.substr(0, x);
    lanes_text = rest.substr(x + 1);
    if (lanes_text.substr(0, 7) == "vscalex") {
      scalable = true;
      lanes_text.remove_prefix(7);
    }
  }
  uint64_t bits = match->default_bits;
  if (!bits_text.empty()) {
    if (match->code >= kFirstNamedWidthCode) {
      throw BadDataType(text, "this type names its bit width; no digits may follow");
    }
    if (!ParseNumber(bits_text, 255, &bits) || bits == 0) {
      throw BadDataType(text, "expected a bit width from 1 to 255 after the type code");
    }
  }
  uint64_t lanes = 1;
  if (rest.find('x') != std::string_view::npos) {
    // Lanes are 16 bits read as signed: a negative count is a scalable vector's multiplier.
    if (!ParseNumber(lanes_text, 32768, &lanes) || lanes == 0 || (!scalable && lanes == 32768)) {
      throw BadDataType(text, scalable ? "expected a multiplier from 1 to 32768 after 'xvscalex'"
                                       : "expected a lane count from 1 to 32767 after 'x'");
    }
    if (scalable) lanes = static_cast<uint16_t>(-static_cast<int32_t>(lanes));
  }
  return DLDataType{match->code, static_cast<uint8_t>(bits), static_cast<uint16_t>(lanes)};
}

std::string DataTypeToString(DLDataType dtype) {
  // Both boolean encodings print as "bool": DLPack 1.0's bool (what ffijit and PyTorch use) and
  // TVM FFI's uint1.
  if (dtype.lanes == 1 && ((dtype.code == FFIJIT_DL_BOOL_CODE && dtype.bits == 8) ||
                           (dtype.code == kDLUInt && dtype.bits == 1))) {
    return "bool";
  }
  if (dtype.code == kDLOpaqueHandle && dtype.bits == 0 && dtype.lanes == 0) return "";
  const CodeName* match = nullptr;
  for (const auto& entry : kTypeCodes) {
    if (entry.code == dtype.code) match = &entry;
  }
  std::string text;
  if (match != nullptr) {
    text = match->name;
  } else if (dtype.code == FFIJIT_DL_BOOL_CODE) {
    text = "bool";
  } else {
    throw Error("ValueError", "unknown data type code " + std::to_string(dtype.code));
  }
  // A handle prints without its width, as TVM FFI prints it ("handle" reads back as 64 bits).
  if (dtype.code == kDLOpaqueHandle) return text;
  if (dtype.code < kFirstNamedWidthCode) text += std::to_string(dtype.bits);
  const auto lanes = static_cast<int16_t>(dtype.lanes);
  if (lanes < 0) {
    text += "xvscalex";
    text += std::to_string(-static_cast<int32_t>(lanes));
  } else if (lanes != 1) {
    text += 'x';
    text += std::to_string(lanes);
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
      throw Error("ValueError", "cannot parse device \"" + Excerpt(text) +
                                    "\": expected a device id from 0 to 2147483647 after ':'");
    }
    return DLDevice{static_cast<DLDeviceType>(entry.type), static_cast<int32_t>(id)};
  }
  throw Error("ValueError", "cannot parse device \"" + Excerpt(text) +
                                "\": unknown device type \"" + Excerpt(name) + "\"");
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
