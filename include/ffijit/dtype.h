// DataType and Device: DLPack's DLDataType/DLDevice with string parsing and printing.
//
// Strings follow TVM FFI's grammar: "float32", "bfloat16", "int8x4" (4 lanes), "float32xvscalex4"
// (scalable), "int"/"float" (32 bits), "float8_e4m3fn" and the other sub-byte floats, "bool",
// "handle", "" or "void"; devices "cpu", "cpu:0", "cuda:1". An unparsable string is a ValueError
// that quotes it. "bool" is DLPack's bool (code 6, 8 bits) on both revisions. e98b94e1 also
// prints uint1 as "bool"; v0.1.13 prints it "uint1" and reads the short aliases (i32, u8, f16,
// bf16, fp8_/f8_, fp6_/f6_, fp4_/f4_) and "float4_e2m1fn_x2".
#ifndef FFIJIT_DTYPE_H_
#define FFIJIT_DTYPE_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "ffijit/c_api.h"
#include "ffijit/c_ext.h"
#include "ffijit/error.h"

namespace ffijit {

// The device type as a plain integer: devices from C may carry codes outside DLDeviceType's
// enumerators, and loading such a value as the enum type is undefined behaviour in C++.
inline int32_t RawDeviceType(const DLDevice& device) noexcept {
  int32_t code;
  std::memcpy(&code, &device.device_type, sizeof(code));
  return code;
}

FFIJIT_API DLDataType ParseDataType(std::string_view text);
FFIJIT_API std::string DataTypeToString(DLDataType dtype);
FFIJIT_API DLDevice ParseDevice(std::string_view text);
FFIJIT_API std::string DeviceToString(DLDevice device);

class DataType {
 public:
  DataType() noexcept : value_{kDLOpaqueHandle, 0, 0} {}
  DataType(DLDataType value) noexcept : value_(value) {}  // NOLINT: implicit by design
  DataType(uint8_t code, uint8_t bits, uint16_t lanes = 1) noexcept : value_{code, bits, lanes} {}
  explicit DataType(std::string_view text) : value_(ParseDataType(text)) {}

  static DataType Int(int bits, int lanes = 1) { return DataType(kDLInt, bits, lanes); }
  static DataType UInt(int bits, int lanes = 1) { return DataType(kDLUInt, bits, lanes); }
  static DataType Float(int bits, int lanes = 1) { return DataType(kDLFloat, bits, lanes); }
  static DataType BFloat(int bits, int lanes = 1) { return DataType(kDLBfloat, bits, lanes); }
  static DataType Bool() { return DataType(FFIJIT_DL_BOOL_CODE, 8, 1); }

  uint8_t code() const noexcept { return value_.code; }
  uint8_t bits() const noexcept { return value_.bits; }
  uint16_t lanes() const noexcept { return value_.lanes; }
  operator DLDataType() const noexcept { return value_; }  // NOLINT
  std::string ToString() const { return DataTypeToString(value_); }

  friend bool operator==(const DataType& a, const DataType& b) noexcept {
    return a.value_.code == b.value_.code && a.value_.bits == b.value_.bits &&
           a.value_.lanes == b.value_.lanes;
  }
  friend bool operator!=(const DataType& a, const DataType& b) noexcept { return !(a == b); }

 private:
  DLDataType value_;
};

class Device {
 public:
  Device() noexcept : value_{kDLCPU, 0} {}
  Device(DLDevice value) noexcept : value_(value) {}  // NOLINT: implicit by design
  Device(DLDeviceType type, int32_t id) noexcept : value_{type, id} {}
  explicit Device(std::string_view text) : value_(ParseDevice(text)) {}

  DLDeviceType device_type() const noexcept { return value_.device_type; }
  int32_t device_id() const noexcept { return value_.device_id; }
  operator DLDevice() const noexcept { return value_; }  // NOLINT
  std::string ToString() const { return DeviceToString(value_); }

  friend bool operator==(const Device& a, const Device& b) noexcept {
    return a.value_.device_type == b.value_.device_type && a.value_.device_id == b.value_.device_id;
  }
  friend bool operator!=(const Device& a, const Device& b) noexcept { return !(a == b); }

 private:
  DLDevice value_;
};

}  // namespace ffijit

#endif  // FFIJIT_DTYPE_H_
