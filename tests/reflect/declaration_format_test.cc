// The iree.abi.declaration format: IREE's emitted declarations (corpus), every type and attribute
// form, the async fences, the printer and round trip, and a clear refusal for everything else.
#include <gtest/gtest.h>

#include "ffijit/reflect/metadata.h"
#include "test_util.h"

namespace ffijit {
namespace {

using nlohmann::json;
using testing::ErrorOf;

std::string Canon(const std::string& text) {
  return CanonicalString(ParseDeclaration(text));
}

// Parse, print, parse again: the same Signature, and the printer is a fixed point.
void ExpectRoundTrip(const std::string& text) {
  SCOPED_TRACE(text);
  std::string name;
  const Signature sig = ParseDeclaration(text, &name);
  const std::string printed = PrintDeclaration(sig, name);
  std::string name2;
  EXPECT_EQ(ParseDeclaration(printed, &name2), sig) << printed;
  EXPECT_EQ(name2, name);
  EXPECT_EQ(PrintDeclaration(ParseDeclaration(printed), name), printed);
}

TEST(DeclarationCorpus, EveryEntryReadsAsItsSourceSays) {
  const json entries = testing::LoadCorpus("iree_declarations.json");
  ASSERT_EQ(entries.size(), 10u);
  int accepted = 0;
  for (const json& e : entries) {
    const std::string text = e["text"];
    SCOPED_TRACE(text);
    ASSERT_TRUE(e.contains("source"));
    if (e["verdict"] == "reject") {
      const std::string message = ErrorOf([&] { ParseDeclaration(text); }, e["error"]);
      EXPECT_EQ(message.rfind(e["error"].get<std::string>(), 0), 0u) << message;
      // The same refusal through auto-detection in the reflection dict IREE attaches it in.
      const std::string dict = json{{"iree.abi.declaration", text}}.dump();
      ErrorOf([&] { ParseMetadata(dict); }, "(in the reflection dict's \"iree.abi.declaration\")");
      continue;
    }
    ++accepted;
    std::string name;
    const Signature sig = ParseDeclaration(text, &name);
    EXPECT_EQ(CanonicalString(sig), e["canonical"].get<std::string>());
    EXPECT_EQ(ParseMetadata(text), sig);
    EXPECT_EQ(ParseMetadata(text, MetadataFormat::kDeclaration), sig);
    EXPECT_EQ(ParseMetadata(json{{"iree.abi.declaration", text}}.dump()), sig);
    ExpectRoundTrip(text);
    if (e["reprints"].get<bool>()) {
      EXPECT_EQ(PrintDeclaration(sig, name), text);
    }
  }
  EXPECT_EQ(accepted, 9);
}

TEST(Declaration, TensorShapesAndElementTypes) {
  EXPECT_EQ(Canon("sync func @f(%input0: tensor<?x8xf32>) -> ()"), "(ndarray<f32,[?,8]>) -> None");
  EXPECT_EQ(Canon("sync func @f(%input0: tensor<f32>) -> ()"), "(ndarray<f32,0>) -> None");
  EXPECT_EQ(Canon("sync func @f(%input0: tensor<*xf32>) -> ()"), "(ndarray<f32>) -> None");
  EXPECT_EQ(Canon("sync func @f(%input0: tensor<?x?xi8>) -> ()"), "(ndarray<i8,2>) -> None");
  EXPECT_EQ(Canon("sync func @f() -> (%output0: tensor<2x3x4xbf16>)"),
            "() -> ndarray<bf16,[2,3,4]>");
  const char* elements[][2] = {
      {"i1", "i1"},    {"i8", "i8"},    {"i16", "i16"},   {"i32", "i32"},  {"i64", "i64"},
      {"si8", "i8"},   {"si16", "i16"}, {"si32", "i32"},  {"si64", "i64"}, {"ui8", "u8"},
      {"ui16", "u16"}, {"ui32", "u32"}, {"ui64", "u64"},  {"f16", "f16"},  {"bf16", "bf16"},
      {"f32", "f32"},  {"f64", "f64"},  {"index", "i64"},
  };
  for (const auto& e : elements) {
    SCOPED_TRACE(e[0]);
    EXPECT_EQ(Canon(std::string("sync func @f(%input0: tensor<4x") + e[0] + ">) -> ()"),
              std::string("(ndarray<") + e[1] + ",[4]>) -> None");
    EXPECT_EQ(Canon(std::string("sync func @f(%input0: ") + e[0] + ") -> (%output0: " + e[0] + ")"),
              std::string("(") + e[1] + ") -> " + e[1]);
  }
}

TEST(Declaration, ReferenceTypesNamesAndAttributes) {
  // A buffer view carries its shape and element type at run time.
  EXPECT_EQ(Canon("sync func @f(%input0: !hal.buffer_view) -> (%output0: !hal.buffer_view)"),
            "(ndarray<any>) -> ndarray<any>");
  EXPECT_EQ(Canon("sync func @f(%x: i32, %input1: f64, %scale: f32) -> ()"),
            "(x: i32, f64, scale: f32) -> None");
  // input<N> at another position is a name of its own.
  EXPECT_EQ(Canon("sync func @f(%input1: i32) -> ()"), "(input1: i32) -> None");
  EXPECT_EQ(Canon("sync func @f(%output0: i32) -> (%input0: i32)"), "(output0: i32) -> i32");
  // Attribute values are skipped whatever they hold, balanced; only the encoding is read.
  EXPECT_EQ(Canon("sync func @f(%input0: tensor<4xf32> {iree.abi.affinity = "
                  "#hal.device.promise<@device_a>}) -> (%output0: tensor<4xf32> "
                  "{iree.abi.affinity = #hal.device.promise<@device_a>, x = \"a}b,c>\", "
                  "m = affine_map<(d0) -> (d0)>, unit})"),
            "(ndarray<f32,[4]>) -> ndarray<f32,[4]>");
  EXPECT_EQ(Canon("sync func @f(%input0: tensor<?xf32> {a = [1, {b = 2}], iree.abi.encoding = "
                  "tensor<?xi8>}) -> ()"),
            "(ndarray<i8,1>) -> None");
  EXPECT_EQ(Canon("sync func @f(%input0: i32 {}) -> ()"), "(i32) -> None");
  // Symbol names MLIR prints quoted, and `$` in names.
  std::string name;
  ParseDeclaration("sync func @\"my fn\"() -> ()", &name);
  EXPECT_EQ(name, "my fn");
  ParseDeclaration("sync func @main$async() -> ()", &name);
  EXPECT_EQ(name, "main$async");
  // Whitespace between tokens is free.
  EXPECT_EQ(Canon("  sync  func @f ( %input0 : i32 , %input1:i64 )->( %output0 : i64 )  "),
            "(i32, i64) -> i64");
}

TEST(Declaration, AsyncAppendsTheWaitAndSignalFences) {
  EXPECT_EQ(Canon("async func @main(%input0: tensor<8xf32>, %input1: tensor<8xf32>) -> "
                  "(%output0: tensor<8xf32>)"),
            "(ndarray<f32,[8]>, ndarray<f32,[8]>, ptr, ptr) -> ndarray<f32,[8]>");
  EXPECT_EQ(Canon("async func @bare() -> ()"), "(ptr, ptr) -> None");
  // An older wrapper declared its own fences: they are ptrs too, then two more.
  EXPECT_EQ(Canon("async func @main$async(%input0: !hal.buffer_view, %input1: !hal.fence, "
                  "%input2: !hal.fence) -> (%output0: !hal.buffer_view)"),
            "(ndarray<any>, ptr, ptr, ptr, ptr) -> ndarray<any>");
  ExpectRoundTrip("async func @main(%input0: tensor<8xf32>) -> (%output0: tensor<8xf32>)");
  EXPECT_EQ(PrintDeclaration(ParseDeclaration("async func @g(%input0: i32) -> ()"), "g"),
            "async func @g(%input0: i32) -> ()");
  // Two trailing ptrs always print as async; the Signature is the same either way.
  EXPECT_EQ(PrintDeclaration(ParseDeclaration("sync func @g(%input0: !hal.fence, %input1: "
                                              "!hal.fence) -> ()"),
                             "g"),
            "async func @g() -> ()");
}

TEST(Declaration, PrinterRoundTripsAndRefusesWhatItCannotSpell) {
  for (const char* text : {
           "sync func @f() -> ()",
           "sync func @f(%input0: tensor<?x8xf32>, %input1: tensor<f64>) -> (%output0: i1)",
           "sync func @f(%a: tensor<*xui16>, %input1: index) -> (%output0: tensor<3xi64>, "
           "%output1: !hal.buffer_view)",
           "sync func @f(%input0: !hal.fence) -> ()",
       }) {
    ExpectRoundTrip(text);
  }
  EXPECT_EQ(PrintDeclaration(ParseJson(R"({"a":["u8",["named","k","f16"]],"r":["i1"]})"), "h"),
            "sync func @h(%input0: ui8, %k: f16) -> (%output0: i1)");
  ErrorOf([] { PrintDeclaration(ParseJson(R"({"a":["str"],"r":[]})"), "f"); },
          "declaration: argument 0 `str` has no declaration form");
  ErrorOf([] { PrintDeclaration(ParseJson(R"({"a":[],"r":[["slist","i32"]]})"), "f"); },
          "declaration: result 0 `slist<i32>` has no declaration form");
  ErrorOf(
      [] { PrintDeclaration(ParseJson(R"({"a":[["ndarray",null,2,null,null]],"r":[]})"), "f"); },
      "`ndarray<any,2>` has no declaration form");
  ErrorOf([] { PrintDeclaration(ParseJson(R"({"a":[["named","a b","i32"]],"r":[]})"), "f"); },
          "keyword `a b` is not a value name");
  ErrorOf([] { PrintDeclaration(ParseJson(R"({"a":[["named","input0","i32"]],"r":[]})"), "f"); },
          "would read back positional");
  ErrorOf(
      [] { PrintDeclaration(ParseJson(R"({"a":["i32",["named","input0","i32"]],"r":[]})"), "f"); },
      "name `%input0` is used twice");
  ErrorOf([] { PrintDeclaration(Signature{}, "bad name"); }, "is not an identifier");
  ErrorOf([] { PrintDeclaration(Signature{}, ""); }, "is not an identifier");
}

// IREE's `iree.abi.output = N`: the argument is the storage result N is written into. It reads as
// an ndarray of result N's type, and the Signature records which result it stores.
TEST(Declaration, OutputStorage) {
  const std::string iree =
      "sync func @outputStorage(%input0: tensor<?x8x8x3xf32>, %input1: !hal.buffer "
      "{iree.abi.output = 1 : index}) -> (%output0: tensor<?x8x8x3xf32>, %output1: "
      "tensor<?x8x8x3xf32>)";
  std::string name;
  const Signature sig = ParseDeclaration(iree, &name);
  EXPECT_EQ(name, "outputStorage");
  EXPECT_EQ(sig.output_storage, (std::vector<int32_t>{-1, 1}));
  EXPECT_EQ(TypeToString(*sig.args[1]), "ndarray<f32,[?,8,8,3]>");
  EXPECT_EQ(OutputStorageDefect(sig), "");
  EXPECT_EQ(PrintDeclaration(sig, name), iree);
  ExpectRoundTrip(iree);
  // The same types without the storage are another signature.
  Signature plain = sig;
  plain.output_storage.clear();
  EXPECT_NE(plain, sig);
  EXPECT_NE(CanonicalString(plain), CanonicalString(sig));

  // IREE also takes a buffer view or a tensor as storage (it passes a tensor as a buffer view);
  // the index may be an integer of any type, or untyped; a name of its own makes a keyword.
  EXPECT_EQ(Canon("sync func @f(%dst: tensor<4xf32> {iree.abi.output = 0 : index}) -> "
                  "(%output0: tensor<4xf32>)"),
            "(dst: ndarray<f32,[4]>) -> ndarray<f32,[4]> [arg 0 stores result 0]");
  EXPECT_EQ(Canon("sync func @f(%input0: !hal.buffer_view {iree.abi.output = 0}) -> (%output0: "
                  "tensor<?xi8>)"),
            "(ndarray<i8,1>) -> ndarray<i8,1> [arg 0 stores result 0]");
  EXPECT_EQ(Canon("sync func @f(%input0: !hal.buffer {iree.abi.affinity = #hal.device.promise<@a>, "
                  "iree.abi.output = 1 : i64}, %input1: !hal.buffer {\"iree.abi.output\" = 0 : "
                  "i32}) -> (%output0: tensor<2xf64>, %output1: tensor<3xi32> "
                  "{iree.abi.encoding = tensor<3xui32>})"),
            "(ndarray<u32,[3]>, ndarray<f64,[2]>) -> (ndarray<f64,[2]>, ndarray<u32,[3]>) "
            "[arg 0 stores result 1, arg 1 stores result 0]");
  // With async the fences follow; a result's iree.abi.output means nothing to IREE and is skipped.
  const Signature async = ParseDeclaration(
      "async func @g(%input0: !hal.buffer {iree.abi.output = 0 : index}) -> (%output0: "
      "tensor<8xf32> {iree.abi.output = 7 : index})");
  EXPECT_EQ(CanonicalString(async),
            "(ndarray<f32,[8]>, ptr, ptr) -> ndarray<f32,[8]> [arg 0 stores result 0]");
  EXPECT_EQ(PrintDeclaration(async, "g"),
            "async func @g(%input0: !hal.buffer {iree.abi.output = 0 : index}) -> (%output0: "
            "tensor<8xf32>)");
  // Formats without IREE's attribute cannot state it.
  ErrorOf([&] { PrintJson(sig); },
          "json: the iree.abi JSON has no way to say that argument #1 is the output storage of "
          "result 1");
  ErrorOf([&] { PrintRaw(sig); },
          "raw signature: a raw signature has no way to say that argument #1 is the output "
          "storage of result 1");
}

TEST(Declaration, OutputStorageRefusals) {
  struct Case {
    const char* text;
    const char* message;  // the whole message's start
  };
  const Case cases[] = {
      {"sync func @f(%input0: !hal.buffer) -> ()",
       "declaration: at offset 22: `!hal.buffer` without `{iree.abi.output = N : index}`: ffijit "
       "reads a buffer argument only as the caller-provided storage of result N"},
      {"sync func @f(%input0: !hal.buffer {iree.abi.affinity = 1}) -> ()",
       "declaration: at offset 22: `!hal.buffer` without `{iree.abi.output"},
      {"sync func @f(%input0: !hal.buffer {iree.abi.output = 5 : index}) -> (%output0: "
       "tensor<4xf32>)",
       "declaration: at offset 35: iree.abi.output = 5 names result 5, but the function has 1 "
       "results"},
      {"sync func @f(%input0: !hal.buffer {iree.abi.output = 0 : index}) -> ()",
       "declaration: at offset 35: iree.abi.output = 0 names result 0, but the function has 0 "
       "results"},
      {"sync func @f(%a: !hal.buffer {iree.abi.output = 0 : index}, %b: !hal.buffer "
       "{iree.abi.output = 0 : index}) -> (%output0: tensor<4xf32>)",
       "declaration: at offset 77: iree.abi.output = 0: result 0 already has its storage in "
       "argument #0"},
      {"sync func @f(%input0: i32 {iree.abi.output = 0 : index}) -> (%output0: i32)",
       "declaration: at offset 27: iree.abi.output on an argument of type `i32`: output storage "
       "is a !hal.buffer, a !hal.buffer_view or a tensor"},
      {"sync func @f(%input0: !hal.fence {iree.abi.output = 0 : index}) -> (%output0: "
       "tensor<4xf32>)",
       "declaration: at offset 34: iree.abi.output on an argument of type `ptr`"},
      {"sync func @f(%input0: !hal.buffer {iree.abi.output = 0 : index}) -> (%output0: i32)",
       "declaration: at offset 35: iree.abi.output = 0 names result 0 of type `i32`: output "
       "storage holds a tensor"},
      {"sync func @f(%input0: tensor<4xf32> {iree.abi.output = 0 : index}) -> (%output0: "
       "tensor<4xi32>)",
       "declaration: at offset 22: the storage argument's type `ndarray<f32,[4]>` differs from "
       "result 0's `ndarray<i32,[4]>`: the storage comes back as that result"},
      {"sync func @f(%input0: !hal.buffer {iree.abi.output}) -> ()",
       "declaration: at offset 35: iree.abi.output needs the index of the result it stores"},
      {"sync func @f(%input0: !hal.buffer {iree.abi.output = -1 : index}) -> ()",
       "declaration: at offset 53: expected iree.abi.output's result index, got `-1"},
      {"sync func @f(%input0: !hal.buffer {iree.abi.output = 1.0}) -> ()",
       "declaration: at offset 54: expected `,` or `}` in the attributes"},
      {"sync func @f(%input0: !hal.buffer {iree.abi.output = 0 : f32}) -> ()",
       "declaration: at offset 57: iree.abi.output's result index has type `f32`: expected "
       "`index` or an integer type"},
      {"sync func @f(%input0: !hal.buffer {iree.abi.output = 99999999999 : index}) -> ()",
       "declaration: at offset 53: iree.abi.output's result index is too large"},
      {"sync func @f(%input0: !hal.buffer {iree.abi.output = 0, iree.abi.output = 0}) -> ()",
       "declaration: at offset 56: iree.abi.output given twice"},
      {"sync func @f(%input0: !hal.buffer {iree.abi.encoding = tensor<4xf32>, iree.abi.output = "
       "0}) -> (%output0: tensor<4xf32>)",
       "declaration: at offset 22: iree.abi.encoding on a `!hal.buffer`"},
      {"sync func @f(%input0: tensor<4xf32> {iree.abi.encoding = !hal.buffer}) -> ()",
       "declaration: at offset 57: unsupported reference type `!hal.buffer`"},
      {"sync func @f() -> (%output0: !hal.buffer)",
       "declaration: at offset 29: a `!hal.buffer` result: a buffer is only caller-provided "
       "output storage"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string message = ErrorOf([&] { ParseDeclaration(c.text); }, c.message);
    EXPECT_EQ(message.rfind(c.message, 0), 0u) << message;
  }
}

// A hand-made Signature's output_storage is checked where it is printed or lowered; each defect
// names what is wrong.
TEST(Declaration, OutputStorageDefects) {
  const TypePtr f4 = Type::NDArray(ScalarKind::kF32, 1, {4});
  Signature sig;
  sig.args = {f4, Type::Named("out", f4)};
  sig.results = {f4};
  sig.output_storage = {-1, 0};
  EXPECT_EQ(OutputStorageDefect(sig), "");
  EXPECT_EQ(PrintDeclaration(sig, "f"),
            "sync func @f(%input0: tensor<4xf32>, %out: !hal.buffer {iree.abi.output = 0 : "
            "index}) -> (%output0: tensor<4xf32>)");
  const std::pair<std::vector<int32_t>, const char*> defects[] = {
      {{0}, "output_storage has 1 entries for 2 arguments"},
      {{-1, -1}, "output_storage names no result (an empty list says that)"},
      {{-1, 1}, "argument #1 is the output storage of result 1, but there are 1 results"},
      {{-1, -2}, "argument #1 is the output storage of result -2, but there are 1 results"},
      {{0, 0}, "result 0 has two output storage arguments, #0 and #1"},
  };
  for (const auto& [storage, message] : defects) {
    Signature bad = sig;
    bad.output_storage = storage;
    EXPECT_EQ(OutputStorageDefect(bad), message);
    ErrorOf([&] { PrintDeclaration(bad, "f"); }, std::string("declaration: ") + message);
  }
  Signature scalar = sig;
  scalar.args[1] = Type::Scalar(ScalarKind::kI32);
  EXPECT_EQ(OutputStorageDefect(scalar), "argument #1 `i32` is output storage but not an ndarray");
  Signature other = sig;
  other.results = {Type::NDArray(ScalarKind::kF32, 1, {-1})};
  EXPECT_EQ(OutputStorageDefect(other),
            "argument #1 `ndarray<f32,[4]>` is the output storage of result 0 `ndarray<f32,1>`: "
            "their types must be the same");
  Signature ordered = sig;
  ordered.result_leaf_order = {0};
  EXPECT_EQ(OutputStorageDefect(ordered), "output storage together with a result leaf order");
}

TEST(Declaration, RefusalsNameWhatIsWrong) {
  struct Case {
    const char* text;
    const char* message;  // the whole message's start
  };
  const Case cases[] = {
      {"", "declaration: at offset 0: expected `sync func @NAME(...) -> (...)`"},
      {"def f(x: int) -> int", "declaration: at offset 0: expected `sync func"},
      {"synchronous func @f() -> ()", "declaration: at offset 0: expected `sync func"},
      {"sync fn @f() -> ()", "declaration: at offset 5: expected `func` after `sync`"},
      {"sync func f() -> ()", "declaration: at offset 10: expected `@` and the function name"},
      {"sync func @() -> ()", "declaration: at offset 11: expected the function name after `@`"},
      {"sync func @f", "declaration: at offset 12: expected `(`"},
      {"sync func @f(%input0 i32) -> ()", "declaration: at offset 21: expected `:`"},
      {"sync func @f(input0: i32) -> ()", "declaration: at offset 13: expected `%name`"},
      {"sync func @f(%: i32) -> ()", "declaration: at offset 14: expected a name after `%`"},
      {"sync func @f(%a: i32, %a: i32) -> ()", "declaration: at offset 22: duplicate name `%a`"},
      {"sync func @f(%input0: i32)", "declaration: at offset 26: expected `->`"},
      {"sync func @f() -> i32",
       "declaration: at offset 18: expected `(`: the results are always "
       "parenthesised"},
      {"sync func @f() -> (i32)", "declaration: at offset 19: expected `%name`"},
      {"sync func @f() -> () trailing", "declaration: at offset 21: unexpected text after"},
      {"sync func @f(%input0: i32", "declaration: at offset 25: expected `,` or `)`"},
      {"sync func @f(%input0: i4) -> ()",
       "declaration: at offset 22: unsupported integer width 4 (`i4`): no C type holds it"},
      {"sync func @f(%input0: tensor<2xi128>) -> ()",
       "declaration: at offset 31: unsupported integer width 128 (`i128`)"},
      {"sync func @f(%input0: ui1) -> ()", "unsupported integer width 1 (`ui1`)"},
      {"sync func @f(%input0: si24) -> ()", "unsupported integer width 24 (`si24`)"},
      {"sync func @f(%input0: tensor<4xcomplex<f32>>) -> ()",
       "declaration: at offset 31: complex element types have no ffijit dtype"},
      {"sync func @f(%input0: complex<f32>) -> ()", "complex element types have no ffijit dtype"},
      {"sync func @f(%input0: f8E4M3FN) -> ()",
       "declaration: at offset 22: unsupported type `f8E4M3FN`"},
      {"sync func @f(%input0: none) -> ()", "type `none` carries no value"},
      {"sync func @f(%input0: !hal.buffer<4>) -> ()",
       "declaration: at offset 22: unsupported reference type `!hal.buffer<...>`: ffijit maps "
       "only !hal.buffer_view (an ndarray), !hal.fence (a ptr) and !hal.buffer with "
       "iree.abi.output (output storage)"},
      {"sync func @f(%input0: !hal.device) -> ()", "unsupported reference type `!hal.device`"},
      {"sync func @f() -> (%output0: !util.list<?>)",
       "declaration: at offset 29: unsupported reference type `!util.list<...>`"},
      {"sync func @f(%input0: !iree.variant) -> ()", "unsupported reference type `!iree.variant`"},
      {"sync func @f(%input0: tensor<4xf32, #enc>) -> ()",
       "declaration: at offset 34: tensor encodings"},
      {"sync func @f(%input0: tensor<4x>) -> ()", "declaration: at offset 31: expected a type"},
      {"sync func @f(%input0: tensor<4f32>) -> ()",
       "declaration: at offset 29: expected `x` after a tensor dim"},
      {"sync func @f(%input0: tensor<99999999999999999999xf32>) -> ()",
       "declaration: at offset 29: tensor dim too large"},
      {"sync func @f(%input0: tensor<*f32>) -> ()", "expected `x` after `*`"},
      {"sync func @f(%input0: tensor<4xf32) -> ()", "expected `>` closing the tensor type"},
      {"sync func @f(%input0: tensor) -> ()", "declaration: at offset 22: expected `tensor<...>`"},
      {"sync func @f(%input0: i32 {a = (}) -> ()", "declaration: at offset 32: unbalanced `}`"},
      {"sync func @f(%input0: i32 {a = \"x}) -> ()",
       "declaration: at offset 31: unterminated string"},
      {"sync func @f(%input0: i32 {a = [1, 2) -> ()", "unbalanced `)`"},
      {"sync func @f(%input0: i32 {a = <1}) -> ()", "unbalanced `}`"},
      {"sync func @f(%input0: i32 {a = }) -> ()",
       "declaration: at offset 31: expected an attribute value"},
      {"sync func @f(%input0: i32 {a = [[", "declaration: at offset 31: unterminated attribute"},
      {"sync func @f(%input0: i32 {= 1}) -> ()", "expected an attribute name"},
      {"sync func @f(%input0: i32 {a b}) -> ()", "expected `,` or `}` in the attributes"},
      {"sync func @f(%input0: i32 {iree.abi.encoding = i4}) -> ()", "unsupported integer width 4"},
      {"sync func @f(%input0: i32 {iree.abi.encoding = i64, iree.abi.encoding = i64}) -> ()",
       "iree.abi.encoding given twice"},
      {"sync func @\"f() -> ()", "declaration: at offset 11: unterminated string"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string message = ErrorOf([&] { ParseDeclaration(c.text); }, c.message);
    if (std::string(c.message).rfind("declaration: ", 0) == 0) {
      EXPECT_EQ(message.rfind(c.message, 0), 0u) << message;
    }
  }
  // Deep attribute nesting is refused, not recursed into.
  std::string deep = "sync func @f(%input0: i32 {a = ";
  for (int i = 0; i < 100; ++i) deep += '[';
  ErrorOf([&] { ParseDeclaration(deep); }, "attribute value nested deeper than 32");
}

TEST(Declaration, DetectionAndTheReflectionDict) {
  const std::string text = "sync func @f(%input0: i32) -> (%output0: f64)";
  EXPECT_EQ(DetectMetadataFormat(text), MetadataFormat::kDeclaration);
  EXPECT_EQ(DetectMetadataFormat("\n async\tfunc @f() -> ()"), MetadataFormat::kDeclaration);
  EXPECT_EQ(DetectMetadataFormat("I6!S3!t6R1!"), MetadataFormat::kRaw);
  EXPECT_EQ(DetectMetadataFormat("syncfunc"), MetadataFormat::kRaw);
  EXPECT_EQ(CanonicalString(ParseMetadata(text)), "(i32) -> f64");
  // IREE's reflection dict holds the declaration next to other keys, which are ignored.
  const std::string dict =
      R"x({"iree.abi.declaration":"sync func @f(%input0: i32) -> (%output0: f64)",)x"
      R"x("iree.abi.model":"coarse-fences"})x";
  EXPECT_EQ(DetectMetadataFormat(dict), MetadataFormat::kDeclaration);
  EXPECT_EQ(ParseMetadata(dict), ParseDeclaration(text));
  EXPECT_EQ(ParseMetadata(dict, MetadataFormat::kDeclaration), ParseDeclaration(text));
  // The machine-readable forms win over the declaration when both are there.
  EXPECT_EQ(
      CanonicalString(ParseMetadata(
          R"({"iree.abi.declaration":"some free text","iree.abi":"{\"a\":[\"i8\"],\"r\":[]}"})")),
      "(i8) -> None");
  EXPECT_EQ(CanonicalString(
                ParseMetadata(R"({"iree.abi.declaration":"some free text","f":"I6!S3!t6R1!"})")),
            "(i32) -> None");
  ErrorOf([] { ParseMetadata(R"({"iree.abi.declaration":"free text"})"); },
          "declaration: at offset 0: expected `sync func @NAME(...) -> (...)` or `async func "
          "@NAME(...) -> (...)`: this is not an IREE signature declaration (a frontend may write "
          "free text there) (in the reflection dict's \"iree.abi.declaration\")");
  ErrorOf([] { ParseMetadata(R"({"f":"I1!R1!"})", MetadataFormat::kDeclaration); },
          "reflection dict: at offset 0: missing \"iree.abi.declaration\"");
  ErrorOf([] { ParseMetadata(R"({"iree.abi.declaration":3})"); },
          "expected \"iree.abi.declaration\" to be a string, got an integer");
  ErrorOf([] { ParseMetadata("free text", MetadataFormat::kDeclaration); },
          "declaration: at offset 0: expected `sync func");
}

}  // namespace
}  // namespace ffijit
