// v0.1.13's dataclass operations: ffi.ReprPrint, ffi.Recursive{Eq,Lt,Le,Gt,Ge,Hash} and
// ffi.DeepCopy (and the exported C++ functions behind them) on POD values, strings, bytes,
// containers, shapes, tensors, functions and reflected objects; e98b94e1 has none of them.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "catch_error.h"
#include "ffijit/container.h"
#include "ffijit/registry.h"
#include "ffijit/string.h"
#include "ffijit/tensor.h"
#include "runtime/modules/user_module.h"

namespace ffijit {
namespace {

using ffijit_tests::CatchError;

#if FFIJIT_TVM_FFI_HAS_DATACLASS_API

std::string Repr(const Any& value) {
  return GetGlobalFunctionOrThrow("ffi.ReprPrint")(value).cast<std::string>();
}
bool Call(const char* global, const Any& lhs, const Any& rhs) {
  return GetGlobalFunctionOrThrow(global)(lhs, rhs).cast<bool>();
}
bool Eq(const Any& lhs, const Any& rhs) {
  return Call("ffi.RecursiveEq", lhs, rhs);
}
int64_t Hash(const Any& value) {
  return GetGlobalFunctionOrThrow("ffi.RecursiveHash")(value).cast<int64_t>();
}
Any Copy(const Any& value) {
  return GetGlobalFunctionOrThrow("ffi.DeepCopy")(value);
}
bool SameObject(const Any& a, const Any& b) {
  return a.raw().v_obj == b.raw().v_obj;
}

// Two ffi.reflection.AccessPath objects (a reflected type with fields) from a structural mismatch.
Array MismatchPaths(const Any& lhs, const Any& rhs) {
  return GetGlobalFunctionOrThrow("ffi.GetFirstStructuralMismatch")(lhs, rhs, false, false)
      .cast<Array>();
}

TEST(ReprPrintTest, PodValuesStringsAndBytes) {
  EXPECT_EQ(Repr(Any()), "None");
  EXPECT_EQ(Repr(true), "True");
  EXPECT_EQ(Repr(false), "False");
  EXPECT_EQ(Repr(int64_t{-42}), "-42");
  EXPECT_EQ(Repr(1.5), "1.5");
  EXPECT_EQ(Repr(DataType::Int(32)), "int32");
  EXPECT_EQ(Repr(Device(kDLCUDA, 1)), "cuda:1");
  EXPECT_EQ(Repr(std::string("hi")), "\"hi\"");
  EXPECT_EQ(Repr(std::string("a long string \"quoted\"\n\ttab\\")),
            "\"a long string \\\"quoted\\\"\\n\\ttab\\\\\"");
  EXPECT_EQ(Repr(std::string("\x01\x7f")), "\"\\x01\\x7f\"");
  EXPECT_EQ(Repr(std::string("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80")),
            "\"\\u00e9\\u20ac\\U0001f600\"");
  EXPECT_EQ(Repr(Bytes(std::string("ab\"\x00\xff", 5))), "b\"ab\\x22\\x00\\xff\"");
  EXPECT_EQ(Repr(Bytes(std::string("longer bytes value"))), "b\"longer bytes value\"");
}

TEST(ReprPrintTest, ContainersShapesTensorsFunctionsAndObjects) {
  EXPECT_EQ(Repr(Array{int64_t{1}, std::string("x")}), "(1, \"x\")");
  EXPECT_EQ(Repr(Array{int64_t{1}}), "(1,)");
  EXPECT_EQ(Repr(Array(std::vector<Any>{})), "()");
  EXPECT_EQ(Repr(List{int64_t{1}, int64_t{2}}), "[1, 2]");
  EXPECT_EQ(Repr(Map{{std::string("k"), Array{int64_t{3}}}}), "{\"k\": (3,)}");
  EXPECT_EQ(Repr(Shape{2, 3}), "Shape(2, 3)");
  EXPECT_EQ(Repr(Tensor::Empty({2, 3}, DataType::Float(32))), "float32[2, 3]@cpu:0");
  EXPECT_EQ(Repr(Function::FromTyped([](int64_t x) { return x; })), "ffi.Function");
  // A shared element prints the same each time.
  Array inner{int64_t{7}};
  EXPECT_EQ(Repr(Array{inner, inner}), "((7,), (7,))");
  // A reflected object: its type key and fields.
  EXPECT_EQ(Repr(GetGlobalFunctionOrThrow("ffi.VisitInterrupt")(int64_t{5})),
            "ffi.VisitInterrupt(value=5)");
  // A type with an `__ffi_repr__` hook prints through it (AccessPath, as TVM FFI's does).
  Array paths = MismatchPaths(Array{int64_t{1}}, Array{int64_t{2}});
  EXPECT_EQ(Repr(paths[0]), "<root>[0]");
}

TEST(ReprPrintTest, TheExportedCppFunctionAgrees) {
  Any value = Map{{std::string("a"), List{1.5, Any()}}};
  EXPECT_EQ(ReprPrintFromCpp(value), Repr(value));
  EXPECT_EQ(ReprPrintFromCpp(value), "{\"a\": [1.5, None]}");
}

TEST(RecursiveCompareTest, EqualityFollowsStructure) {
  EXPECT_TRUE(Eq(Any(), Any()));
  EXPECT_FALSE(Eq(Any(), int64_t{0}));
  EXPECT_TRUE(Eq(int64_t{3}, int64_t{3}));
  EXPECT_FALSE(Eq(int64_t{3}, 3.0));  // different types are unequal
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(Eq(nan, nan));
  // Strings and bytes compare by content in any form (inline and heap).
  EXPECT_TRUE(Eq(std::string("a long string value"), std::string("a long string value")));
  EXPECT_FALSE(Eq(std::string("abc"), Bytes(std::string("abc"))));
  EXPECT_TRUE(
      Eq(Array{int64_t{1}, Array{std::string("x")}}, Array{int64_t{1}, Array{std::string("x")}}));
  EXPECT_FALSE(Eq(Array{int64_t{1}}, Array{int64_t{1}, int64_t{2}}));
  EXPECT_TRUE(Eq(Map{{std::string("a"), int64_t{1}}, {std::string("b"), int64_t{2}}},
                 Map{{std::string("b"), int64_t{2}}, {std::string("a"), int64_t{1}}}));
  EXPECT_FALSE(Eq(Map{{std::string("a"), int64_t{1}}}, Map{{std::string("a"), int64_t{2}}}));
  EXPECT_TRUE(Eq(Shape{1, 2}, Shape{1, 2}));
  EXPECT_FALSE(Eq(Shape{1, 2}, Shape{1, 3}));
  // Reflected objects field by field.
  Array a = MismatchPaths(Array{int64_t{1}}, Array{int64_t{2}});
  Array b = MismatchPaths(Array{int64_t{5}}, Array{int64_t{6}});
  Array c = MismatchPaths(Array{int64_t{1}, int64_t{1}}, Array{int64_t{1}, int64_t{2}});
  EXPECT_TRUE(Eq(a[0], b[0]));
  EXPECT_FALSE(Eq(a[0], c[0]));
  EXPECT_TRUE(RecursiveEqFromCpp(a[0], b[0]));
}

TEST(RecursiveCompareTest, OrderingIsLexicographicAndRejectsTheUnorderable) {
  EXPECT_TRUE(Call("ffi.RecursiveLt", int64_t{1}, int64_t{2}));
  EXPECT_TRUE(Call("ffi.RecursiveLe", int64_t{2}, int64_t{2}));
  EXPECT_TRUE(Call("ffi.RecursiveGt", std::string("b"), std::string("abc")));
  EXPECT_TRUE(Call("ffi.RecursiveGe", Array{int64_t{1}, int64_t{2}}, Array{int64_t{1}}));
  EXPECT_TRUE(
      Call("ffi.RecursiveLt", Array{int64_t{1}, int64_t{2}}, Array{int64_t{1}, int64_t{3}}));
  EXPECT_TRUE(Call("ffi.RecursiveLt", Any(), int64_t{0}));  // None orders first
  EXPECT_TRUE(Call("ffi.RecursiveLt", Shape{1}, Shape{1, 0}));
  Error types = CatchError([] { Call("ffi.RecursiveLt", int64_t{1}, std::string("x")); });
  EXPECT_EQ(types.kind(), "TypeError");
  EXPECT_EQ(types.message().rfind("Cannot compare values of different types: int vs ", 0), 0u)
      << types.message();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(CatchError([&] { Call("ffi.RecursiveLt", nan, 1.0); }).kind(), "TypeError");
  Error maps = CatchError([] {
    Call("ffi.RecursiveLt", Map{{int64_t{1}, int64_t{1}}}, Map{{int64_t{1}, int64_t{2}}});
  });
  EXPECT_EQ(maps.kind(), "TypeError");
  EXPECT_EQ(maps.message(), "Cannot order Map/Dict values");
  // The exported C++ function throws tvm::ffi::Error, whose what() is the message on v0.1.13.
  CaughtTvmError caught = RecursiveLtErrorFromCpp(int64_t{1}, std::string("x"));
  ASSERT_TRUE(caught.caught);
  EXPECT_EQ(caught.kind, "TypeError");
  EXPECT_EQ(caught.what, caught.message);
}

TEST(RecursiveHashTest, EqualValuesHashEquallyAndTheNumbersAreTvmFfis) {
  // StableHashCombine(kTVMFFIInt = 1, 5) and StableHashCombine(0, 0), as v0.1.13 computes them.
  EXPECT_EQ(static_cast<uint64_t>(Hash(int64_t{5})), 1ull ^ (5ull + 0x9e3779b9ull + (1ull << 6)));
  EXPECT_EQ(static_cast<uint64_t>(Hash(Any())), 0x9e3779b9ull);
  EXPECT_EQ(Hash(std::string("short")), Hash(std::string("short")));
  EXPECT_EQ(Hash(std::string("a long string value")), Hash(std::string("a long string value")));
  EXPECT_NE(Hash(std::string("abc")), Hash(Bytes(std::string("abc"))));
  EXPECT_EQ(Hash(0.0), Hash(-0.0));
  EXPECT_EQ(Hash(Map{{std::string("a"), int64_t{1}}, {std::string("b"), int64_t{2}}}),
            Hash(Map{{std::string("b"), int64_t{2}}, {std::string("a"), int64_t{1}}}));
  EXPECT_NE(Hash(Array{int64_t{1}, int64_t{2}}), Hash(Array{int64_t{2}, int64_t{1}}));
  EXPECT_NE(Hash(Array{int64_t{1}}), Hash(List{int64_t{1}}));
  Array a = MismatchPaths(Array{int64_t{1}}, Array{int64_t{2}});
  Array b = MismatchPaths(Array{int64_t{5}}, Array{int64_t{6}});
  EXPECT_EQ(Hash(a[0]), Hash(b[0]));
  EXPECT_EQ(RecursiveHashFromCpp(a[0]), Hash(a[0]));
}

TEST(DeepCopyTest, CopiesContainersAndKeepsImmutableLeaves) {
  EXPECT_EQ(Copy(int64_t{4}).cast<int64_t>(), 4);
  Any text = std::string("a long string, returned as it is");
  EXPECT_TRUE(SameObject(Copy(text), text));
  Any shape = Shape{1, 2};
  EXPECT_TRUE(SameObject(Copy(shape), shape));
  Array inner{std::string("x")};
  Any outer = Array{inner, inner, Map{{std::string("k"), inner}}};
  Any copy = Copy(outer);
  EXPECT_FALSE(SameObject(copy, outer));
  EXPECT_TRUE(Eq(copy, outer));
  Array copied = copy.cast<Array>();
  EXPECT_FALSE(SameObject(copied[0], Any(inner)));
  // Sharing is kept: both references reach the same copy.
  EXPECT_TRUE(SameObject(copied[0], copied[1]));
  EXPECT_TRUE(SameObject(copied[2].cast<Map>().Get(std::string("k")).value(), copied[0]));
  Any list = List{int64_t{1}, inner};
  Any list_copy = DeepCopyFromCpp(list);
  EXPECT_FALSE(SameObject(list_copy, list));
  EXPECT_TRUE(Eq(list_copy, list));
}

TEST(DeepCopyTest, ObjectsWithoutAShallowCopyAreRefused) {
  Error function = CatchError([] { Copy(Function::FromTyped([] { return 1; })); });
  EXPECT_EQ(function.kind(), "InternalError");
  EXPECT_EQ(
      function.message(),
      "Cannot deep copy object of type \"ffi.Function\" because it is not copy-constructible");
  Array paths = MismatchPaths(Array{int64_t{1}}, Array{int64_t{2}});
  EXPECT_EQ(CatchError([&] { Copy(paths[0]); }).kind(), "InternalError");
}

#else  // e98b94e1

TEST(DataclassTest, TheRevisionHasNoDataclassGlobals) {
  for (const char* name : {"ffi.ReprPrint", "ffi.RecursiveEq", "ffi.RecursiveHash", "ffi.DeepCopy",
                           "ffi.VisitErrorContext.FindAccessPaths"}) {
    EXPECT_FALSE(GetGlobalFunction(name).has_value()) << name;
  }
}

#endif

}  // namespace
}  // namespace ffijit
