// DataType and Device parsing and printing, and the errors for unparsable strings.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "ffijit/ffijit.h"

namespace ffijit {
namespace {

TEST(DataTypeTest, ParsesAndPrintsRoundTrip) {
  struct Case {
    const char* text;
    DataType expected;
  };
  const Case cases[] = {
      {"float32", DataType::Float(32)},
      {"float16", DataType::Float(16)},
      {"float64", DataType::Float(64)},
      {"bfloat16", DataType::BFloat(16)},
      {"int8x4", DataType::Int(8, 4)},
      {"int64", DataType::Int(64)},
      {"uint8", DataType::UInt(8)},
      {"uint32", DataType::UInt(32)},
      {"bool", DataType::Bool()},
      {"float32x16", DataType::Float(32, 16)},
      {"complex64", DataType(kDLComplex, 64, 1)},
      {"handle", DataType(kDLOpaqueHandle, 64, 1)},
      {"", DataType(kDLOpaqueHandle, 0, 0)},
      {"float8_e4m3fnx2", DataType(10, 8, 2)},
      {"float8_e4m3", DataType(8, 8, 1)},
      {"float8_e4m3fnuz", DataType(11, 8, 1)},
      {"float8_e4m3b11fnuz", DataType(9, 8, 1)},
      {"float8_e5m2", DataType(12, 8, 1)},
      {"float8_e8m0fnu", DataType(14, 8, 1)},
      {"float6_e3m2fn", DataType(16, 6, 1)},
      {"float4_e2m1fn", DataType(17, 4, 1)},
      {"float32xvscalex4", DataType(kDLFloat, 32, static_cast<uint16_t>(-4))},
      {"int8x32767", DataType::Int(8, 32767)},
  };
  for (const auto& c : cases) {
    DataType parsed(c.text);
    EXPECT_EQ(parsed, c.expected) << c.text;
    EXPECT_EQ(parsed.ToString(), c.text);
  }
  // TVM FFI's readings: widths a name implies, "void", both boolean encodings print as "bool".
  EXPECT_EQ(DataType("handle64"), DataType(kDLOpaqueHandle, 64, 1));
  EXPECT_EQ(DataType("int"), DataType::Int(32));
  EXPECT_EQ(DataType("uint"), DataType::UInt(32));
  EXPECT_EQ(DataType("float"), DataType::Float(32));
  EXPECT_EQ(DataType("bfloat"), DataType::BFloat(16));
  EXPECT_EQ(DataType("floatx4"), DataType::Float(32, 4));
  EXPECT_EQ(DataType("void"), DataType(kDLOpaqueHandle, 0, 0));
  EXPECT_EQ(DataType::UInt(1).ToString(), "bool");
}

TEST(DataTypeTest, UnparsableStringsAreValueErrorsQuotingTheString) {
  const char* bad[] = {"flaot32",     "int0",          "int256",       "int8x",
                       "int8x0",      "int8x70000",    "int8x32768",   "float32 ",
                       "uint-8",      "bool8",         "x86",          "float8_e4m3fn8",
                       "float8_e9m9", "int8xvscalex0", "int8xvscalex", "float32xvscale4"};
  for (const char* text : bad) {
    try {
      DataType parsed(text);
      ADD_FAILURE() << "parsed \"" << text << "\" as " << int(parsed.code());
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), "ValueError") << text;
      EXPECT_NE(e.message().find("\"" + std::string(text) + "\""), std::string::npos) << e.what();
    }
  }
}

TEST(DataTypeTest, CApiRoundTrip) {
  TVMFFIByteArray text{"bfloat16", 8};
  DLDataType dtype{};
  ASSERT_EQ(TVMFFIDataTypeFromString(&text, &dtype), 0);
  TVMFFIAny out{};
  ASSERT_EQ(TVMFFIDataTypeToString(&dtype, &out), 0);
  Any printed = Any::Adopt(out);
  EXPECT_EQ(printed.type_index(), kTVMFFIStr);  // 8 bytes: just past the inline limit
  EXPECT_EQ(printed.cast<std::string>(), "bfloat16");
  DLDataType short_name{kDLInt, 8, 1};
  ASSERT_EQ(TVMFFIDataTypeToString(&short_name, &out), 0);
  Any int8 = Any::Adopt(out);
  EXPECT_EQ(int8.type_index(), kTVMFFIStr);  // the heap form even for 4 bytes, as in TVM FFI
  EXPECT_EQ(int8.cast<std::string>(), "int8");
  ASSERT_EQ(TVMFFIDataTypeToString(nullptr, &out), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  DLDataType unknown{99, 8, 1};
  ASSERT_EQ(TVMFFIDataTypeToString(&unknown, &out), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("99"), std::string::npos);
  EXPECT_EQ(TVMFFIDataTypeFromString(nullptr, &dtype), -1);
  Error::MoveFromRaised();
}

TEST(DeviceTest, ParsesAndPrints) {
  EXPECT_EQ(Device("cpu"), Device(kDLCPU, 0));
  EXPECT_EQ(Device("cpu:0"), Device(kDLCPU, 0));
  EXPECT_EQ(Device("cuda:1"), Device(kDLCUDA, 1));
  EXPECT_EQ(Device("rocm:3"), Device(kDLROCM, 3));
  EXPECT_EQ(Device("cuda_host"), Device(kDLCUDAHost, 0));
  EXPECT_EQ(Device(kDLCUDA, 1).ToString(), "cuda:1");
  EXPECT_EQ(Device("vulkan:2").ToString(), "vulkan:2");
  TVMFFIByteArray text{"cuda:7", 6};
  DLDevice device{};
  ASSERT_EQ(FFIJITDeviceFromString(&text, &device), 0);
  TVMFFIAny out{};
  ASSERT_EQ(FFIJITDeviceToString(&device, &out), 0);
  Any printed = Any::Adopt(out);
  EXPECT_EQ(printed.type_index(), kTVMFFISmallStr);
  EXPECT_EQ(printed.cast<std::string>(), "cuda:7");
}

TEST(DeviceTest, UnparsableStringsAreValueErrorsQuotingTheString) {
  const char* bad[] = {"",       "gpu",     "cuda:", "cuda:-1",
                       "cuda:x", "cpu:0:1", "CPU",   "cuda:99999999999"};
  for (const char* text : bad) {
    try {
      Device parsed(text);
      ADD_FAILURE() << "parsed \"" << text << "\"";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), "ValueError") << text;
      EXPECT_NE(e.message().find("\"" + std::string(text) + "\""), std::string::npos) << e.what();
    }
  }
  DLDevice unknown{kDLCPU, 0};
  int32_t bogus_type = 77;  // written as bits: C callers can pass codes DLDeviceType lacks
  std::memcpy(&unknown.device_type, &bogus_type, sizeof(bogus_type));
  EXPECT_THROW(DeviceToString(unknown), Error);
}

}  // namespace
}  // namespace ffijit
