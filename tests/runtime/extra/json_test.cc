// JSON text <-> values: the globals ffi.json.Parse / ffi.json.Stringify, and the C++ functions
// tvm::ffi::json::Parse / Stringify that code compiled from TVM FFI's headers links against
// (called here through test-side declarations with the same mangled names and argument layouts).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "ffijit/ffijit.h"
#include "runtime/tvm_header_style.h"

namespace ffijit {
namespace {

Any ParseViaGlobal(const std::string& text) {
  return GetGlobalFunctionOrThrow("ffi.json.Parse")(text);
}
std::string StringifyViaGlobal(const Any& value, Any indent = Any()) {
  return GetGlobalFunctionOrThrow("ffi.json.Stringify")(value, indent).cast<std::string>();
}

TEST(Json, ParsesEveryKindOfValue) {
  Any doc = ParseViaGlobal(
      R"({"b": [1, -2.5, true, null, "x\n\u00e9\ud83d\ude04"], "a": {"k": 9223372036854775807},)"
      R"( "n": NaN, "i": -Infinity, "e": 1e3})");
  Map map = doc.cast<Map>();
  ASSERT_EQ(map.size(), 5);
  EXPECT_EQ(map.ItemAt(0).first.cast<std::string>(), "b");  // insertion order
  Array list = map.at(Any("b")).cast<Array>();
  ASSERT_EQ(list.size(), 5);
  EXPECT_EQ(list[0].raw().type_index, kTVMFFIInt);
  EXPECT_EQ(list[1].cast<double>(), -2.5);
  EXPECT_EQ(list[2].raw().type_index, kTVMFFIBool);
  EXPECT_TRUE(list[3].is_none());
  EXPECT_EQ(list[4].cast<std::string>(), "x\n\xc3\xa9\xf0\x9f\x98\x84");
  EXPECT_EQ(map.at(Any("a")).cast<Map>().at(Any("k")).cast<int64_t>(),
            std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(std::isnan(map.at(Any("n")).cast<double>()));
  EXPECT_EQ(map.at(Any("i")).cast<double>(), -HUGE_VAL);
  EXPECT_EQ(map.at(Any("e")).raw().type_index, kTVMFFIFloat);
}

TEST(Json, SyntaxErrorsNameWhatAndWhere) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"", "Expecting value: line 1 column 1 (char 0)"},
      {"\n\nfx", "Expecting value: line 3 column 1 (char 2)"},
      {"123.456.789", "Expecting value: line 1 column 1 (char 0)"},
      {"[1,]", "Expecting value: line 1 column 4 (char 3)"},
      {"[1a", "Expecting ',' delimiter: line 1 column 3 (char 2)"},
      {"[1]  a", "Extra data: line 1 column 6 (char 5)"},
      {"{", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"},
      {"{\"incomplete\"", "Expecting ':' delimiter: line 1 column 14 (char 13)"},
      {"\"hello", "Unterminated string starting at: line 1 column 1 (char 0)"},
      {"\"hello\x01\"", "Invalid control character at: line 1 column 7 (char 6)"},
      {"\"hello\\uxx\"", "Invalid \\uXXXX escape: line 1 column 8 (char 7)"},
      {"\"hello\\uDC00\\uDE04\"",
       "Invalid surrogate pair of \\uXXXX escapes: line 1 column 8 (char 7)"},
      {"\"hello\\a\"", "Invalid \\escape: line 1 column 8 (char 7)"},
  };
  for (const Case& c : cases) {
    try {
      ParseViaGlobal(c.text);
      ADD_FAILURE() << "no error for " << c.text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), "ValueError");
      EXPECT_EQ(e.message(), c.message) << "for " << c.text;
    }
  }
}

TEST(Json, StringifiesCompactAndIndented) {
  Map map{{"key", Array{int64_t{1}, 2.5, 5.0, "a/\"b\"\x01", Any()}}, {"t", true}};
  EXPECT_EQ(StringifyViaGlobal(Any(map)), R"({"key":[1,2.5,5.0,"a\/\"b\"\u0001",null],"t":true})");
  EXPECT_EQ(StringifyViaGlobal(Any(map), Any(int64_t{2})),
            "{\n  \"key\": [\n    1,\n    2.5,\n    5.0,\n    \"a\\/\\\"b\\\"\\u0001\",\n"
            "    null\n  ],\n  \"t\": true\n}");
  EXPECT_EQ(StringifyViaGlobal(Any(2e-8)), "2e-08");
  EXPECT_EQ(StringifyViaGlobal(Any(-std::numeric_limits<double>::infinity())), "-Infinity");
  try {
    StringifyViaGlobal(Any(Map{{int64_t{1}, int64_t{2}}}));
    ADD_FAILURE() << "a non-string key was written";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "ValueError");
    EXPECT_EQ(e.message(), "Expect key to be string, got `int`");
  }
}

TEST(Json, RoundTripsThroughTheExportedCxxFunctions) {
  tvm::ffi::String text(R"({"a":[1,2,{"b":"long enough string"}],"c":-0.5})");
  tvm::ffi::String error;
  tvm::ffi::Any value = tvm::ffi::json::Parse(text, &error);
  EXPECT_EQ(error.str(), "");
  EXPECT_EQ(value.data_.type_index, kTVMFFIMap);
  tvm::ffi::String back = tvm::ffi::json::Stringify(value, std::optional<int>());
  EXPECT_EQ(back.str(), text.str());
  tvm::ffi::String indented = tvm::ffi::json::Stringify(value, std::optional<int>(1));
  EXPECT_NE(indented.str().find("\n \"c\": -0.5"), std::string::npos) << indented.str();
}

TEST(Json, CxxParseReportsErrorsThroughTheMessageOrThrows) {
  tvm::ffi::String bad("[1,2,3");
  tvm::ffi::String error("previous contents of the caller's string");
  tvm::ffi::Any none = tvm::ffi::json::Parse(bad, &error);
  EXPECT_EQ(none.data_.type_index, kTVMFFINone);
  EXPECT_EQ(error.str(), "Expecting ',' delimiter: line 1 column 7 (char 6)");
  try {
    tvm::ffi::json::Parse(bad, nullptr);
    FAIL() << "expected tvm::ffi::Error";
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.kind(), "ValueError");
    EXPECT_EQ(e.message(), "Expecting ',' delimiter: line 1 column 7 (char 6)");
  }
}

}  // namespace
}  // namespace ffijit
