// DLDataType and DLDevice: parsing from and printing to strings ("float32", "int8x4", "cuda:1").
// Plain text work, shared by ffijit's runtime and the add-on over TVM FFI's (runtime/portable/).
#include <cstring>
#include <string>
#include <string_view>

#include "ffijit/dtype.h"
#include "ffijit/error.h"

namespace ffijit {
namespace {

// The DLPack 1.1 codes of the sub-byte float formats: the installed dlpack.h may predate them.
enum SubByteFloatCode : uint8_t {
  kFloat8E3M4 = 7,
  kFloat8E4M3 = 8,
  kFloat8E4M3B11Fnuz = 9,
  kFloat8E4M3Fn = 10,
  kFloat8E4M3Fnuz = 11,
  kFloat8E5M2 = 12,
  kFloat8E5M2Fnuz = 13,
  kFloat8E8M0Fnu = 14,
  kFloat6E2M3Fn = 15,
  kFloat6E3M2Fn = 16,
  kFloat4E2M1Fn = 17,
};
constexpr uint8_t kFirstNamedWidthCode = kFloat8E3M4;

struct CodeName {
  const char* name;
  uint8_t code;
  uint8_t default_bits;  // the width a name without digits means ("int" is int32)
};
// Longest prefixes first so "bfloat" is not read as "b" + "float", nor "float8_e4m3fn" as
// "float8_e4m3". The sub-byte float formats name their width, so they take no digits and print
// none; their spellings and codes are TVM FFI's.
constexpr CodeName kTypeCodes[] = {
    {"float8_e4m3b11fnuz", kFloat8E4M3B11Fnuz, 8},
    {"float8_e4m3fnuz", kFloat8E4M3Fnuz, 8},
    {"float8_e5m2fnuz", kFloat8E5M2Fnuz, 8},
    {"float8_e8m0fnu", kFloat8E8M0Fnu, 8},
    {"float8_e4m3fn", kFloat8E4M3Fn, 8},
    {"float6_e2m3fn", kFloat6E2M3Fn, 6},
    {"float6_e3m2fn", kFloat6E3M2Fn, 6},
    {"float4_e2m1fn", kFloat4E2M1Fn, 4},
    {"float8_e3m4", kFloat8E3M4, 8},
    {"float8_e4m3", kFloat8E4M3, 8},
    {"float8_e5m2", kFloat8E5M2, 8},
    {"bfloat", kDLBfloat, 16},
    {"float", kDLFloat, 32},
    {"uint", kDLUInt, 32},
    {"int", kDLInt, 32},
    {"complex", kDLComplex, 64},
    {"handle", kDLOpaqueHandle, 64},
#if FFIJIT_TVM_FFI_DTYPE_BOOL_IS_DLBOOL
    // v0.1.13 reads "bool" like any other code: 8 bits unless digits follow, lanes allowed.
    {"bool", FFIJIT_DL_BOOL_CODE, 8},
#endif
};

#if FFIJIT_TVM_FFI_DTYPE_BOOL_IS_DLBOOL
// The most lanes a fixed-length vector may have: v0.1.13 takes the whole uint16 range.
constexpr uint64_t kMaxFixedLanes = 65535;
#else
// e98b94e1's ffijit reads lanes as int16, so that no fixed count prints as a scalable one.
constexpr uint64_t kMaxFixedLanes = 32767;
#endif
// A scalable vector stores -multiplier as int16.
constexpr uint64_t kMaxScalableMultiplier = 32768;

#if FFIJIT_TVM_FFI_DTYPE_BOOL_IS_DLBOOL
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

// v0.1.13's short spellings and their long ones. A prefix that is only a letter (i, u, f, bf)
// counts only when a digit follows, so "int", "uint", "float" and "bfloat" stay themselves.
struct ShortAlias {
  const char* prefix;
  const char* expansion;
  bool needs_digit;
};
constexpr ShortAlias kShortAliases[] = {
    {"fp8_", "float8_", false}, {"fp6_", "float6_", false}, {"fp4_", "float4_", false},
    {"f8_", "float8_", false},  {"f6_", "float6_", false},  {"f4_", "float4_", false},
    {"bf", "bfloat", true},     {"i", "int", true},         {"u", "uint", true},
    {"f", "float", true},
};

// `text` with a short prefix replaced by its long spelling ("i32" -> "int32", "fp8_e5m2" ->
// "float8_e5m2"); `text` itself when it has none. `storage` holds a rewritten spelling.
std::string_view ExpandShortAlias(std::string_view text, std::string* storage) {
  for (const auto& alias : kShortAliases) {
    const std::string_view prefix = alias.prefix;
    if (text.substr(0, prefix.size()) != prefix) continue;
    if (alias.needs_digit && (text.size() == prefix.size() || !IsDigit(text[prefix.size()]))) {
      continue;
    }
    *storage = alias.expansion;
    storage->append(text.substr(prefix.size()));
    return *storage;
  }
  return text;
}
#endif

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
                                   {"cuda_managed", kDLCUDAManaged},
                                   // DLPack 1.0 and 1.2 codes, which dlpack.h 0.6 lacks.
                                   {"oneapi", 14},
                                   {"webgpu", 15},
                                   {"hexagon", 16},
                                   {"maia", 17},
                                   {"trn", 18}};

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

Error BadDataType(std::string_view text, std::string_view why) {
  return Error("ValueError",
               "cannot parse data type \"" + Excerpt(text) + "\": " + std::string(why));
}

}  // namespace

DLDataType ParseDataType(std::string_view text) {
  // The void type: TVM FFI prints it as "" and reads both spellings.
  if (text.empty() || text == "void") return DLDataType{kDLOpaqueHandle, 0, 0};
  std::string_view spelled = text;  // `text` with any short alias expanded
#if FFIJIT_TVM_FFI_DTYPE_BOOL_IS_DLBOOL
  std::string expanded;
  spelled = ExpandShortAlias(text, &expanded);
#else
  if (text == "bool") return DLDataType{FFIJIT_DL_BOOL_CODE, 8, 1};
#endif
  const CodeName* match = nullptr;
  for (const auto& entry : kTypeCodes) {
    if (spelled.substr(0, std::strlen(entry.name)) == entry.name) {
      match = &entry;
      break;
    }
  }
  if (match == nullptr) throw BadDataType(text, "unknown type code");
  const bool names_width = match->code >= kFirstNamedWidthCode;
  std::string_view rest = spelled.substr(std::strlen(match->name));
#if FFIJIT_TVM_FFI_DTYPE_BOOL_IS_DLBOOL
  // v0.1.13 also spells float4 vectors with an underscore: "float4_e2m1fn_x2".
  if (match->code == kFloat4E2M1Fn && rest.size() >= 2 && rest[0] == '_' && rest[1] == 'x') {
    rest.remove_prefix(1);
  }
  // Scalable vectors of the sub-byte float formats do not exist in v0.1.13.
  const bool allows_scalable = !names_width;
#else
  const bool allows_scalable = true;
#endif
  // <bits>, then x<lanes> (fixed vector) or xvscalex<n> (scalable vector, lanes = -n as int16).
  std::string_view bits_text = rest, lanes_text;
  bool scalable = false;
  const size_t x = rest.find('x');
  if (x != std::string_view::npos) {
    bits_text = rest.substr(0, x);
    lanes_text = rest.substr(x + 1);
    if (lanes_text.substr(0, 7) == "vscalex") {
      if (!allows_scalable) throw BadDataType(text, "this type has no scalable vectors");
      scalable = true;
      lanes_text.remove_prefix(7);
    }
  }
  uint64_t bits = match->default_bits;
  if (!bits_text.empty()) {
    if (names_width) {
      throw BadDataType(text, "this type names its bit width; no digits may follow");
    }
    if (!ParseNumber(bits_text, 255, &bits) || bits == 0) {
      throw BadDataType(text, "expected a bit width from 1 to 255 after the type code");
    }
  }
  uint64_t lanes = 1;
  if (x != std::string_view::npos) {
    const uint64_t limit = scalable ? kMaxScalableMultiplier : kMaxFixedLanes;
    if (!ParseNumber(lanes_text, limit, &lanes) || lanes == 0) {
      throw BadDataType(
          text, scalable ? std::string("expected a multiplier from 1 to 32768 after 'xvscalex'")
                         : "expected a lane count from 1 to " + std::to_string(kMaxFixedLanes) +
                               " after 'x'");
    }
    if (scalable) lanes = static_cast<uint16_t>(-static_cast<int32_t>(lanes));
  }
  return DLDataType{match->code, static_cast<uint8_t>(bits), static_cast<uint16_t>(lanes)};
}

std::string DataTypeToString(DLDataType dtype) {
  const bool is_dl_bool = dtype.code == FFIJIT_DL_BOOL_CODE;
  if (is_dl_bool && dtype.bits == 8 && dtype.lanes == 1) return "bool";
#if !FFIJIT_TVM_FFI_DTYPE_BOOL_IS_DLBOOL
  // e98b94e1's TVM FFI bool is uint1, which ffijit prints as "bool" too; v0.1.13 says "uint1".
  if (dtype.code == kDLUInt && dtype.bits == 1 && dtype.lanes == 1) return "bool";
#endif
  if (dtype.code == kDLOpaqueHandle && dtype.bits == 0 && dtype.lanes == 0) return "";
  const CodeName* match = nullptr;
  for (const auto& entry : kTypeCodes) {
    if (entry.code == dtype.code) match = &entry;
  }
  std::string text;
  if (match != nullptr) {
    text = match->name;
  } else if (is_dl_bool) {
    text = "bool";
  } else {
    throw Error("ValueError", "unknown data type code " + std::to_string(dtype.code));
  }
  // A handle prints without its width, as TVM FFI prints it ("handle" reads back as 64 bits).
  if (dtype.code == kDLOpaqueHandle) return text;
#if FFIJIT_TVM_FFI_DTYPE_BOOL_IS_DLBOOL
  // v0.1.13's bool is 8 bits unless it says otherwise ("boolx4", "bool16").
  const bool prints_bits = dtype.code < kFirstNamedWidthCode && !(is_dl_bool && dtype.bits == 8);
#else
  const bool prints_bits = dtype.code < kFirstNamedWidthCode;
#endif
  if (prints_bits) text += std::to_string(dtype.bits);
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
