// Object-graph serialization: ffi.ToJSONGraph / ffi.FromJSONGraph and their string forms, and the
// C++ functions tvm::ffi::ToJSONGraph / FromJSONGraph called by their mangled names.
#include <gtest/gtest.h>

#include <string>

#include "ffijit/ffijit.h"
#include "runtime/tvm_header_style.h"

namespace ffijit {
namespace {

Any Call(const char* name, const Any& a) {
  return GetGlobalFunctionOrThrow(name)(a);
}

TEST(JsonGraph, NodesComeBeforeTheirUsersAndEqualValuesShareOne) {
  Any graph = GetGlobalFunctionOrThrow("ffi.ToJSONGraphString")(
      Any(Array{int64_t{1}, "a", int64_t{1}}), Any(Map{{"v", int64_t{2}}}));
  EXPECT_EQ(graph.cast<std::string>(),
            R"({"root_index":2,"nodes":[{"type":"int","data":1},{"type":"ffi.String","data":"a"},)"
            R"({"type":"ffi.Array","data":[0,1,0]}],"metadata":{"v":2}})");
}

TEST(JsonGraph, RoundTripsEveryValueKind) {
  TVMFFIAny dtype{}, device{}, bytes{};
  dtype.type_index = kTVMFFIDataType;
  dtype.v_dtype = DLDataType{kDLFloat, 16, 4};
  device.type_index = kTVMFFIDevice;
  device.v_device = DLDevice{kDLCUDA, 3};
  TVMFFIByteArray raw{"\x00\x01\xfe binary", 10};
  ASSERT_EQ(TVMFFIBytesFromByteArray(&raw, &bytes), 0);
  Array shared{int64_t{7}};
  Any value(Map{{"items", Array{Any(), true, 2.5, "long string value", shared, shared}},
                {"dtype", Any::Adopt(dtype)},
                {"device", Any::Adopt(device)},
                {"bytes", Any::Adopt(bytes)},
                {"shape", Shape{2, 3, 4}}});
  Any text = GetGlobalFunctionOrThrow("ffi.ToJSONGraphString")(value);
  Any back = Call("ffi.FromJSONGraphString", text);
  Map map = back.cast<Map>();
  Array items = map.at(Any("items")).cast<Array>();
  EXPECT_TRUE(items[0].is_none());
  EXPECT_EQ(items[1].raw().type_index, kTVMFFIBool);
  EXPECT_EQ(items[2].cast<double>(), 2.5);
  EXPECT_EQ(items[3].cast<std::string>(), "long string value");
  EXPECT_EQ(items[4].raw().v_obj, items[5].raw().v_obj) << "a shared node decodes once";
  EXPECT_EQ(map.at(Any("dtype")).raw().v_dtype.bits, 16);
  EXPECT_EQ(map.at(Any("dtype")).raw().v_dtype.lanes, 4);
  EXPECT_EQ(map.at(Any("device")).raw().v_device.device_id, 3);
  std::string_view decoded;
  const auto* cell = reinterpret_cast<const TVMFFIByteArray*>(map.at(Any("bytes")).raw().v_obj + 1);
  decoded = std::string_view(cell->data, cell->size);
  EXPECT_EQ(decoded, std::string_view("\x00\x01\xfe binary", 10));
  EXPECT_EQ(map.at(Any("shape")).cast<Shape>()[2], 4);
  // The JSON-value form round-trips too.
  Any graph = GetGlobalFunctionOrThrow("ffi.ToJSONGraph")(value, Any());
  EXPECT_EQ(Call("ffi.FromJSONGraph", graph).cast<Map>().size(), 5);
}

TEST(JsonGraph, UnsupportedValuesAndMalformedGraphsAreErrors) {
  Function f = Function::FromTyped([] { return 1; });
  try {
    GetGlobalFunctionOrThrow("ffi.ToJSONGraph")(Any(Array{Any(f)}), Any());
    ADD_FAILURE() << "a Function was serialized";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
    EXPECT_NE(e.message().find("`ffi.Function`"), std::string::npos) << e.message();
  }
  const char* bad[] = {
      "[]",
      R"({"root_index": 0})",
      R"({"root_index": 3, "nodes": []})",
      R"({"root_index": 0, "nodes": [{"type": "ffi.Array", "data": [0]}]})",
      R"({"root_index": 0, "nodes": [{"type": "int", "data": "x"}]})",
      R"({"root_index": 0, "nodes": [{"type": "ffi.Bytes", "data": "abc"}]})",
      R"({"root_index": 0, "nodes": [{"type": "testing.Unknown", "data": {}}]})",
  };
  for (const char* text : bad) {
    EXPECT_THROW(Call("ffi.FromJSONGraphString", Any(text)), Error) << text;
  }
}

TEST(JsonGraph, CxxFunctionsRoundTripAndThrowTvmErrors) {
  TVMFFIAny owned{};
  Any value(Array{int64_t{1}, "two"});
  TVMFFIAnyViewToOwnedAny(&value.raw(), &owned);
  tvm::ffi::Any input(owned);
  tvm::ffi::Any none;
  tvm::ffi::Any graph = tvm::ffi::ToJSONGraph(input, none);
  EXPECT_EQ(graph.data_.type_index, kTVMFFIMap);
  tvm::ffi::Any back = tvm::ffi::FromJSONGraph(graph);
  ASSERT_EQ(back.data_.type_index, kTVMFFIArray);
  EXPECT_EQ(reinterpret_cast<const FFIJITArrayCell*>(back.data_.v_obj + 1)->size, 2);
  tvm::ffi::Any bad;
  bad.data_.type_index = kTVMFFIInt;
  EXPECT_THROW(tvm::ffi::FromJSONGraph(bad), tvm::ffi::Error);
}

}  // namespace
}  // namespace ffijit
