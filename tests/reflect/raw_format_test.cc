// The raw mangled signature: mangler coverage, readable form and bad input.
#include <gtest/gtest.h>

#include "ffijit/reflect/metadata.h"
#include "test_util.h"

namespace ffijit {
namespace {

using testing::ErrorOf;

TEST(RawFormat, ManglesEveryElementCode) {
  const char* readable[] = {"float32", "float16", "float64", "bfloat16", "sint8",  "sint16",
                            "sint32",  "sint64",  "uint8",   "uint16",   "uint32", "uint64"};
  for (int code = 0; code < 12; ++code) {
    Signature sig;
    sig.args.push_back(Type::Scalar(static_cast<ScalarKind>(code)));
    sig.results.push_back(Type::NDArray(static_cast<ScalarKind>(code), 1, {-1}));
    const std::string raw = PrintRaw(sig);
    EXPECT_EQ(ParseRaw(raw), sig) << raw;
    EXPECT_EQ(ReadableRaw(raw),
              std::string("(") + readable[code] + ") -> (Buffer<" + readable[code] + "[?]>)");
  }
}

TEST(RawFormat, BoolIsWrittenAsSint8) {
  Signature sig;
  sig.args.push_back(Type::Scalar(ScalarKind::kI1));
  EXPECT_EQ(PrintRaw(sig), "I6!S3!t4R1!");
  EXPECT_EQ(ReadableRaw("I4!U1!R6!B3!t6"), "(Unrecognized) -> (Buffer<sint32[]>)");
}

TEST(RawFormat, TypesWithoutRawFormAreNamed) {
  struct Case {
    TypePtr type;
    const char* needle;
  };
  const Case cases[] = {
      {Type::Simple(TypeKind::kStr), "argument #0 (`str`) has no raw form"},
      {Type::Simple(TypeKind::kDevice), "(`Device`) has no raw form"},
      {Type::Object("my.T"), "(`object<my.T>`) has no raw form"},
      {Type::NDArray(ScalarKind::kF32, -1, {}), "(`ndarray<f32>`) has no raw form"},
      {Type::NDArray(ScalarKind::kAny, 1, {-1}), "(`ndarray<any,1>`) has no raw form"},
      {Type::Named("k", Type::Scalar(ScalarKind::kI32)), "(`k: i32`) has no raw form"},
      {Type::List(Type::Scalar(ScalarKind::kI32)), "(`list<i32>`) has no raw form"},
  };
  for (const Case& c : cases) {
    Signature sig;
    sig.args.push_back(c.type);
    ErrorOf([&] { PrintRaw(sig); }, c.needle);
  }
  Signature result;
  result.results.push_back(Type::Simple(TypeKind::kBytes));
  ErrorOf([&] { PrintRaw(result); }, "raw signature: result #0 (`bytes`) has no raw form");
}

TEST(RawFormat, BadInputClasses) {
  struct Case {
    const char* text;
    const char* needle;
  };
  const Case cases[] = {
      {"I99!S3!t6R1!xxxxxxxx",
       "raw signature: at offset 1: span length 99 runs past the end of input (20 bytes)"},
      {"", "raw signature: at offset 0: expected the inputs span"},
      {"R1!I1!", "at offset 0: expected the inputs span"},
      {"I1!", "at offset 3: expected the results span"},
      {"I1!R1!R1!", "at offset 6: expected the end of the signature"},
      {"I1!R1!_", "at offset 7: expected a decimal integer"},
      {"I4!X1!R1!", "at offset 3: expected a B, S, O or U type span, got 'X'"},
      {"I4!_1R1!", "expected a B, S, O or U type span, got '_'"},
      {"I7!B4!t12R1!", "at offset 6: element code t12 is not one of t0..t11"},
      {"I7!B4!t-1R1!", "element code t-1"},
      {"I8!B5!d2t6R1!", "the element code `t` must come once, before any dims"},
      {"I8!B5!t6t6R1!", "the element code `t` must come once"},
      {"I7!B4!d-2R1!", "dim -2 must be >= 0, or -1 for dynamic"},
      {"I6!S3!d1R1!", "unexpected token 'd' in a scalar (expected t)"},
      {"I6!B3!x1R1!", "unexpected token 'x' in a buffer"},
      {"I5!O2!xR1!", "at offset 6: expected an empty O span"},
      {"I5!U2!xR1!", "expected an empty U span"},
      {"I6!B9!d1R1!",
       "at offset 4: span length 9 runs past the end of its enclosing span (offset 8)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    ErrorOf([&] { ParseRaw(c.text); }, c.needle);
    ErrorOf([&] { ReadableRaw(c.text); }, c.needle);
  }
}

}  // namespace
}  // namespace ffijit
