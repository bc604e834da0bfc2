// The iree.abi JSON format: every bad-input class gets a clear error with its offset.
#include <gtest/gtest.h>

#include "ffijit/reflect/metadata.h"
#include "test_util.h"

namespace ffijit {
namespace {

using testing::ErrorOf;

std::string Nested(const std::string& open, const std::string& inner, const std::string& close,
                   int depth) {
  std::string out;
  for (int i = 0; i < depth; ++i) out += open;
  out += inner;
  for (int i = 0; i < depth; ++i) out += close;
  return out;
}

TEST(JsonFormat, BadInputClasses) {
  struct Case {
    const char* text;
    const char* needle;
  };
  const Case cases[] = {
      {R"({"a":["i33"],"r":[]})",
       "json: at offset 6: unsupported integer width 33 (`i33`): no C type holds it"},
      {R"({"a":["u1"],"r":[]})", "json: at offset 6: unsupported integer width 1 (`u1`)"},
      {R"({"a":[["ndarray","i4",1,2]],"r":[]})",
       "json: at offset 17: unsupported integer width 4 (`i4`)"},
      {R"({"a":[["ndarray","u128",0]],"r":[]})", "unsupported integer width 128 (`u128`)"},
      {R"({"a":["i"],"r":[]})", "json: at offset 6: unknown type name \"i\""},
      {R"({"a":["int32"],"r":[]})", "unknown type name \"int32\""},
      {R"({"a":[["nd","f32"]],"r":[]})", "json: at offset 7: unknown type record tag \"nd\""},
      {R"({"a":[["named","x"]],"r":[]})",
       "json: at offset 6: wrong arity: expected [\"named\", key, type], got 1 operand"},
      {R"({"a":[["py_homogeneous_list"]],"r":[]})", "wrong arity"},
      {R"({"a":[["py_uniform_dict","pystr"]],"r":[]})", "wrong arity"},
      {R"({"a":[["ndarray","f32"]],"r":[]})", "wrong arity"},
      {R"({"a":[["ndarray","f32",-1]],"r":[]})", "json: at offset 23: negative rank -1"},
      {R"({"a":[["ndarray","f32",2,4]],"r":[]})", "rank 2 disagrees with the 1 dim listed"},
      {R"({"a":[["ndarray","f32",0,4]],"r":[]})", "rank 0 disagrees with the 1 dim listed"},
      {R"({"a":[["ndarray","f32",null,4]],"r":[]})", "dims listed for an ndarray of unknown"},
      {R"({"a":[["ndarray","f32",1,-3]],"r":[]})", "expected a dim"},
      {R"({"a":[["ndarray","f32",1.5]],"r":[]})",
       "expected a rank (an integer or null), got a non-integer number"},
      {R"({"a":[["ndarray","q8",1,1]],"r":[]})", "unknown ndarray element type \"q8\""},
      {R"({"a":[["sdict",["k","i32"],["k","i64"]]],"r":[]})",
       "json: at offset 28: duplicate key \"k\" in sdict"},
      {R"({"a":[["sdict",["k"]]],"r":[]})", "expected a [key, type] slot of sdict"},
      {R"({"a":[["named","k","i32"],["named","k","i64"]],"r":[]})",
       "duplicate keyword argument \"k\""},
      {R"({"a":[["slist",["named","k","i32"]]],"r":[]})",
       "named is only allowed as a top-level argument"},
      {R"({"a":[],"r":[["named","k","i32"]]})", "named is only allowed as a top-level argument"},
      {R"({"a":[["sdict_kwargs",["k","i32"]],"i32"],"r":[]})",
       "sdict_kwargs is only allowed as the last"},
      {R"({"a":[["slist",["sdict_kwargs"]]],"r":[]})", "sdict_kwargs is only allowed as the last"},
      {R"({"a":[null],"r":[]})", "null (a gap) is only allowed as an slist or stuple slot"},
      {R"({"a":[],"r":[null]})", "null (a gap) is only allowed"},
      {R"({"a":[["sdict",["k",null]]],"r":[]})", "null (a gap) is only allowed"},
      {R"({"a":[["py_homogeneous_list",null]],"r":[]})", "null (a gap) is only allowed"},
      {R"({"a":[7],"r":[]})",
       "expected a type record (a string, an array or null), got an integer"},
      {R"({"a":[[]],"r":[]})", "expected a compound type record"},
      {R"({"a":[["nullable","i32"]],"r":[]})", "only str, ptr and object types can be nullable"},
      {R"({"a":{},"r":[]})", "expected \"a\" (the arguments) to be an array, got an object"},
      {R"({"r":[]})", "missing key \"a\""},
      {R"({"a":[]})", "missing key \"r\""},
      {R"({"a":[],"a":[],"r":[]})", "json: at offset 8: duplicate key \"a\""},
      {R"({"a":[],"r":[],"v":2})", "unsupported version"},
      {R"({"a":[],"r":[],"d":1})", "unknown key \"d\""},
      {R"([1,2])", "expected an iree.abi object"},
      {R"({"a":[],"r":[)", "json: at offset 13: invalid JSON"},
      {R"({"a":[]"r":[]})", "json: at offset 7: invalid JSON"},
      {"", "json: at offset 0: invalid JSON"},
      {R"({"a":[],"r":[]} x)", "invalid JSON"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    ErrorOf([&] { ParseJson(c.text); }, c.needle);
  }
}

TEST(JsonFormat, OffsetsPointAtTheOffendingValueDespiteWhitespace) {
  const std::string text = "{ \"a\" : [ \"i32\" ,\n  [ \"ndarray\" , \"f32\" , 7 ] ] , \"r\": [] }";
  const std::string message = ErrorOf([&] { ParseJson(text); }, "rank 7 disagrees");
  EXPECT_EQ(message.rfind("json: at offset " + std::to_string(text.find('7')) + ":", 0), 0u)
      << message;
}

// The two V1 forms IREE emits beyond the documented core: an element type IREE's TF importer
// could not name, and gaps in an slist ("empty slots will have a null type").
TEST(JsonFormat, UnknownElementsAndListGaps) {
  const Signature unknown =
      ParseJson(R"({"a":[["ndarray","unknown",2,null,4]],"r":[["ndarray","unknown",null]]})");
  EXPECT_EQ(CanonicalString(unknown), "(ndarray<any,[?,4]>) -> ndarray<any>");
  // "unknown" and null are the same element: any, unchecked.
  EXPECT_EQ(unknown, ParseJson(R"({"a":[["ndarray",null,2,null,4]],"r":[["ndarray",null,null]]})"));
  const Signature gaps = ParseJson(R"({"a":[["slist","i32",null,["slist",null]]],"r":[]})");
  EXPECT_EQ(CanonicalString(gaps), "(slist<i32,null,slist<null>>) -> None");
  EXPECT_EQ(PrintJson(gaps), R"({"a":[["slist","i32",null,["slist",null]]],"r":[],"v":1})");
  EXPECT_EQ(ParseJson(PrintJson(gaps)), gaps);
  // A gap is a slot of its own: slist<i32,null> and slist<i32> differ.
  EXPECT_NE(gaps, ParseJson(R"({"a":[["slist","i32",["slist"]]],"r":[]})"));
}

TEST(JsonFormat, NestingLimit) {
  const std::string ok = "{\"a\":[" + Nested("[\"slist\",", "\"i32\"", "]", 30) + "],\"r\":[]}";
  EXPECT_EQ(ParseJson(ok).args.size(), 1u);
  const std::string deep = "{\"a\":[" + Nested("[\"slist\",", "\"i32\"", "]", 40) + "],\"r\":[]}";
  ErrorOf([&] { ParseJson(deep); }, "nesting deeper than");
  // Far deeper than any stack could take: still a clean error.
  const std::string huge = Nested("[", "", "]", 200000);
  ErrorOf([&] { ParseJson(huge); }, "json: at offset 34: nesting deeper than 34 levels");
}

TEST(JsonFormat, UnsortedSdictKeysKeepTheirOrder) {
  const Signature sig = ParseJson(R"({"a":[["sdict",["b","i32"],["a","f32"]]],"r":[]})");
  EXPECT_EQ(sig.args[0]->keys, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(PrintJson(sig), R"({"a":[["sdict",["b","i32"],["a","f32"]]],"r":[],"v":1})");
}

TEST(JsonFormat, AliasesMapOntoTheModel) {
  EXPECT_EQ(ParseJson(R"({"a":[["py_uniform_list","f64"]],"r":[]})"),
            ParseJson(R"({"a":[["py_homogeneous_list","f64"]],"r":[]})"));
  EXPECT_EQ(ParseJson(R"({"a":[["pytuple","f64",null]],"r":[]})"),
            ParseJson(R"({"a":[["stuple","f64",null]],"r":[]})"));
  EXPECT_EQ(ParseJson(R"({"a":["pystr"],"r":[]})"), ParseJson(R"({"a":["str"],"r":[]})"));
  EXPECT_EQ(ParseJson(R"({"a":["i32",["sdict_kwargs",["x","i32"],["y","f32"]]],"r":[]})"),
            ParseJson(R"({"a":["i32",["named","x","i32"],["named","y","f32"]],"r":[]})"));
  EXPECT_EQ(CanonicalString(ParseJson(R"({"a":["unknown"],"r":["unknown"]})")), "(any) -> any");
}

TEST(JsonFormat, FfijitExtensionsRoundTrip) {
  const char* text =
      R"({"a":["DataType","Device","bytes",["nullable","ptr"],["nullable",["object","my.T"]],"str",)"
      R"(["ndarray",null,null],["stuple","u8",null],["py_uniform_dict","str","u64"]],"r":["object"],"v":1})";
  const Signature sig = ParseJson(text);
  EXPECT_EQ(CanonicalString(sig),
            "(DataType, Device, bytes, ptr?, object<my.T>?, str, ndarray<any>, stuple<u8,null>, "
            "dict<str,u64>) -> object");
  EXPECT_EQ(PrintJson(sig), text);
}

}  // namespace
}  // namespace ffijit
