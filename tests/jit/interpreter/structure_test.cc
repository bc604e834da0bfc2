// Structures (slist, stuple, sdict) flattened slot by slot, nested two deep, and their errors.
#include <string>

#include "jit/interp_test_util.h"

namespace ffijit::testing {
namespace {

extern "C" {
// ((a, b), c) -> a * 100 + b * 10 + c
int64_t nested_digits(int64_t a, int64_t b, int64_t c) {
  return a * 100 + b * 10 + c;
}
// {"x": i64, "inner": [f64, str]} then an i32: checks every slot it got.
double dict_mix(int64_t x, double y, const char* s, int32_t k) {
  return static_cast<double>(x) * 1000 + y + static_cast<double>(std::string(s).size()) * 10 + k;
}
int64_t list_length(TVMFFIObject* array) {
  return reinterpret_cast<const FFIJITArrayCell*>(array + 1)->size;
}
}

class StructureTest : public ::testing::TestWithParam<CallPath> {
 protected:
  // slist<slist<i64,i64>,i64>
  Function NestedList() {
    auto inner = Type::Sequence(TypeKind::kSList, {S(ScalarKind::kI64), S(ScalarKind::kI64)});
    auto outer = Type::Sequence(TypeKind::kSList, {inner, S(ScalarKind::kI64)});
    return Bind("nested", nested_digits, Sig({outer}, {S(ScalarKind::kI64)}), GetParam());
  }
  // sdict<x:i64, inner:stuple<f64,str>>, i32
  Function DictTuple() {
    auto inner = Type::Sequence(TypeKind::kSTuple, {S(ScalarKind::kF64), T(TypeKind::kStr)});
    auto dict = Type::SDict({"x", "inner"}, {S(ScalarKind::kI64), inner});
    return Bind("mix", dict_mix, Sig({dict, S(ScalarKind::kI32)}, {S(ScalarKind::kF64)}),
                GetParam());
  }
};

TEST_P(StructureTest, NestedListsFlattenInOrder) {
  Function f = NestedList();
  EXPECT_EQ(Call(f, {Array{Array{1, 2}, 3}}).cast<int64_t>(), 123);
}

TEST_P(StructureTest, DictOfTupleFlattensByKey) {
  Function f = DictTuple();
  Map arg{{"inner", Array{0.5, "abcd"}}, {"x", 7}};  // key order does not matter
  EXPECT_EQ(Call(f, {arg, 3}).cast<double>(), 7000 + 0.5 + 40 + 3);
}

TEST_P(StructureTest, TupleGapIsCountedButNotPassed) {
  auto tuple =
      Type::Sequence(TypeKind::kSTuple, {S(ScalarKind::kI64), nullptr, S(ScalarKind::kI64)});
  Function f = Bind("gap", nested_digits, Sig({tuple, S(ScalarKind::kI64)}, {S(ScalarKind::kI64)}),
                    GetParam());
  EXPECT_EQ(Call(f, {Array{1, "ignored", 2}, 3}).cast<int64_t>(), 123);
  EXPECT_EQ(CallError(f, {Array{1, 2}, 3}).kind(), "ValueError");
}

// IREE's V1 spec allows gaps in lists too; a list gap behaves as a tuple gap does.
TEST_P(StructureTest, ListGapIsCountedButNotPassed) {
  auto list = Type::Sequence(TypeKind::kSList, {nullptr, S(ScalarKind::kI64), S(ScalarKind::kI64)});
  Function f = Bind("list_gap", nested_digits,
                    Sig({list, S(ScalarKind::kI64)}, {S(ScalarKind::kI64)}), GetParam());
  EXPECT_EQ(Call(f, {Array{"ignored", 4, 5}, 6}).cast<int64_t>(), 456);
  EXPECT_EQ(CallError(f, {Array{4, 5}, 6}).message(),
            "Mismatched length on argument #0 when calling: `list_gap(slist<null,i64,i64>, i64) -> "
            "i64`. Expected `slist<null,i64,i64>` with 3 elements but got 2");
}

TEST_P(StructureTest, WrongContainerType) {
  Function f = NestedList();
  EXPECT_EQ(CallError(f, {5}).message(),
            "Mismatched type on argument #0 when calling: `nested(slist<slist<i64,i64>,i64>) -> "
            "i64`. Expected `slist<slist<i64,i64>,i64>` but got `int`");
  Error inner = CallError(f, {Array{Map{{"a", 1}}, 3}});
  EXPECT_EQ(inner.kind(), "TypeError");
  EXPECT_EQ(inner.message(),
            "Mismatched type on argument #0[0] when calling: `nested(slist<slist<i64,i64>,i64>) -> "
            "i64`. Expected `slist<i64,i64>` but got `ffi.Map`");
}

TEST_P(StructureTest, WrongLength) {
  Function f = NestedList();
  Error e = CallError(f, {Array{Array{1, 2, 9}, 3}});
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(
      e.message(),
      "Mismatched length on argument #0[0] when calling: `nested(slist<slist<i64,i64>,i64>) -> "
      "i64`. Expected `slist<i64,i64>` with 2 elements but got 3");
}

TEST_P(StructureTest, WrongLeafNamesThePath) {
  Function f = NestedList();
  EXPECT_EQ(CallError(f, {Array{Array{1, "two"}, 3}}).message(),
            "Mismatched type on argument #0[0][1] when calling: `nested(slist<slist<i64,i64>,i64>) "
            "-> i64`. Expected `i64` but got `str`");
  Function g = DictTuple();
  Error range = CallError(g, {Map{{"x", 1}, {"inner", Array{1.0, "s"}}}, int64_t{1} << 40});
  EXPECT_EQ(range.kind(), "ValueError");
  EXPECT_EQ(CallError(g, {Map{{"x", 1}, {"inner", Array{1.0, 2}}}, 0}).message(),
            "Mismatched type on argument #0[\"inner\"][1] when calling: "
            "`mix(sdict<x:i64,inner:stuple<f64,str>>, i32) -> f64`. Expected `str` but got `int`");
}

TEST_P(StructureTest, MissingDictKeyIsAKeyError) {
  Function f = DictTuple();
  Error e = CallError(f, {Map{{"x", 1}}, 0});
  EXPECT_EQ(e.kind(), "KeyError");
  EXPECT_EQ(e.message(),
            "Missing key `inner` on argument #0 when calling: "
            "`mix(sdict<x:i64,inner:stuple<f64,str>>, i32) -> f64`. Expected "
            "`sdict<x:i64,inner:stuple<f64,str>>`");
  EXPECT_EQ(CallError(f, {Array{1, 2}, 0}).kind(), "TypeError");
}

TEST_P(StructureTest, HomogeneousListPassesTheArray) {
  Function f = Bind("len", list_length,
                    Sig({Type::List(S(ScalarKind::kI64))}, {S(ScalarKind::kI64)}), GetParam());
  EXPECT_EQ(Call(f, {Array{1, 2, 3, 4}}).cast<int64_t>(), 4);
  EXPECT_EQ(CallError(f, {Map{}}).kind(), "TypeError");
}

INSTANTIATE_TEST_SUITE_P(Paths, StructureTest, AllCallPaths(), PathName);

}  // namespace
}  // namespace ffijit::testing
