// Arity 0..12 (stack arguments), mixed int/float beyond the registers, multi-result, status.
#include <string>
#include <vector>

#include "jit/interp_test_util.h"

namespace ffijit::testing {
namespace {

extern "C" {
int64_t arity0() {
  return 99;
}
// Weighted sums: every position contributes differently, so a swapped or lost argument shows.
int64_t sum1(int64_t a) {
  return a;
}
int64_t sum6(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f) {
  return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f;
}
int64_t sum7(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g) {
  return sum6(a, b, c, d, e, f) + 7 * g;
}
int64_t sum12(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g,
              int64_t h, int64_t i, int64_t j, int64_t k, int64_t l) {
  return sum7(a, b, c, d, e, f, g) + 8 * h + 9 * i + 10 * j + 11 * k + 12 * l;
}
// 10 doubles and 8 ints interleaved: xmm0..7 and rdi..r9 fill, the rest go to the stack in order.
double mixed18(double f0, int64_t i0, double f1, int32_t i1, double f2, int8_t i2, double f3,
               uint16_t i3, double f4, int64_t i4, float f5, int64_t i5, double f6, int64_t i6,
               double f7, int64_t i7, double f8, float f9) {
  double fs = f0 + 2 * f1 + 3 * f2 + 4 * f3 + 5 * f4 + 6 * f5 + 7 * f6 + 8 * f7 + 9 * f8 + 10 * f9;
  double is =
      static_cast<double>(i0 + 2 * i1 + 3 * i2 + 4 * i3 + 5 * i4 + 6 * i5 + 7 * i6 + 8 * i7);
  return fs * 1000 + is;
}
void nothing(int64_t) {}
// Status convention: divides; b == 0 raises.
int divide(int64_t a, int64_t b, int64_t* quotient, int64_t* remainder) {
  if (b == 0) {
    TVMFFIErrorSetRaisedFromCStr("ZeroDivisionError", "divide: b is zero");
    return -1;
  }
  *quotient = a / b;
  *remainder = a % b;
  return 0;
}
int fails_silently(int64_t) {
  return 3;
}
int status_one(double x, double* out) {
  *out = x * 2;
  return 0;
}
// Plain convention, several results: trailing out-pointers.
void split(double x, int64_t* whole, double* frac, const char** label) {
  *whole = static_cast<int64_t>(x);
  *frac = x - static_cast<double>(*whole);
  *label = "split result label";
}
void two_objects(TVMFFIObject* a, TVMFFIObject** out_a, uint64_t* out_u) {
  TVMFFIObjectIncRef(a);
  *out_a = a;
  *out_u = UINT64_MAX;  // does not fit an Int: boxing fails after the object was handed over
}
}

std::vector<TypePtr> I64s(int n) {
  return std::vector<TypePtr>(static_cast<size_t>(n), S(ScalarKind::kI64));
}

class CallShapeTest : public ::testing::TestWithParam<CallPath> {};

TEST_P(CallShapeTest, ZeroToTwelveArguments) {
  EXPECT_EQ(
      Call(Bind("a0", arity0, Sig({}, {S(ScalarKind::kI64)}), GetParam()), {}).cast<int64_t>(), 99);
  EXPECT_EQ(
      Call(Bind("a1", sum1, Sig(I64s(1), {S(ScalarKind::kI64)}), GetParam()), {5}).cast<int64_t>(),
      5);
  EXPECT_EQ(
      Call(Bind("a6", sum6, Sig(I64s(6), {S(ScalarKind::kI64)}), GetParam()), {1, 1, 1, 1, 1, 1})
          .cast<int64_t>(),
      21);
  EXPECT_EQ(
      Call(Bind("a7", sum7, Sig(I64s(7), {S(ScalarKind::kI64)}), GetParam()), {1, 1, 1, 1, 1, 1, 1})
          .cast<int64_t>(),
      28);
  Function f12 = Bind("a12", sum12, Sig(I64s(12), {S(ScalarKind::kI64)}), GetParam());
  EXPECT_EQ(Call(f12, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}).cast<int64_t>(), 650);
  EXPECT_EQ(Call(f12, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1}).cast<int64_t>(), -12);
}

TEST_P(CallShapeTest, MixedIntAndFloatBeyondTheRegisters) {
  Signature sig =
      Sig({S(ScalarKind::kF64), S(ScalarKind::kI64), S(ScalarKind::kF64), S(ScalarKind::kI32),
           S(ScalarKind::kF64), S(ScalarKind::kI8), S(ScalarKind::kF64), S(ScalarKind::kU16),
           S(ScalarKind::kF64), S(ScalarKind::kI64), S(ScalarKind::kF32), S(ScalarKind::kI64),
           S(ScalarKind::kF64), S(ScalarKind::kI64), S(ScalarKind::kF64), S(ScalarKind::kI64),
           S(ScalarKind::kF64), S(ScalarKind::kF32)},
          {S(ScalarKind::kF64)});
  Function f = Bind("mixed", mixed18, sig, GetParam());
  std::vector<Any> args = {1.0, 1,   1.0, -1,  1.0, -1,  1.0, 65535, 1.0,
                           1,   1.0, 1,   1.0, 1,   1.0, 1,   1.0,   1.0};
  double fs = 55;
  double is = 1 - 2 - 3 + 4 * 65535 + 5 + 6 + 7 + 8;
  EXPECT_EQ(Call(f, args).cast<double>(), fs * 1000 + is);
}

TEST_P(CallShapeTest, ArityErrorsNameTheSignature) {
  Function add = Bind("add", sum1, Sig(I64s(2), {S(ScalarKind::kI64)}), GetParam(), {"a", "b"});
  Error e = CallError(add, {1, 2, 3});
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(),
            "Mismatched number of arguments when calling: `add(a: i64, b: i64) -> i64`. Expected 2 "
            "but got 3 arguments");
  EXPECT_EQ(CallError(add, {}).message(),
            "Mismatched number of arguments when calling: `add(a: i64, b: i64) -> i64`. Expected 2 "
            "but got 0 arguments");
}

TEST_P(CallShapeTest, VoidResultIsNone) {
  Function f = Bind("n", nothing, Sig(I64s(1), {}), GetParam());
  EXPECT_EQ(Call(f, {1}).type_index(), kTVMFFINone);
}

TEST_P(CallShapeTest, StatusConventionResultsAndErrors) {
  Function f =
      Bind("divide", divide,
           Sig(I64s(2), {S(ScalarKind::kI64), S(ScalarKind::kI64)}, CallConvention::kStatus),
           GetParam());
  Array r(Call(f, {17, 5}).cast<Array>());
  ASSERT_EQ(r.size(), 2);
  EXPECT_EQ(r[0].cast<int64_t>(), 3);
  EXPECT_EQ(r[1].cast<int64_t>(), 2);
  Error e = CallError(f, {1, 0});
  EXPECT_EQ(e.kind(), "ZeroDivisionError");
  EXPECT_EQ(e.message(), "divide: b is zero");

  Function silent =
      Bind("silent", fails_silently, Sig(I64s(1), {}, CallConvention::kStatus), GetParam());
  Error s = CallError(silent, {1});
  EXPECT_EQ(s.kind(), "RuntimeError");
  EXPECT_EQ(s.message(), "`silent` returned status 3 without raising an error");

  Function one =
      Bind("one", status_one,
           Sig({S(ScalarKind::kF64)}, {S(ScalarKind::kF64)}, CallConvention::kStatus), GetParam());
  EXPECT_EQ(Call(one, {1.25}).cast<double>(), 2.5);
}

TEST_P(CallShapeTest, SeveralResultsComeBackAsAnArray) {
  Function f = Bind(
      "split", split,
      Sig({S(ScalarKind::kF64)}, {S(ScalarKind::kI64), S(ScalarKind::kF64), T(TypeKind::kStr)}),
      GetParam());
  Array r(Call(f, {3.25}).cast<Array>());
  ASSERT_EQ(r.size(), 3);
  EXPECT_EQ(r[0].cast<int64_t>(), 3);
  EXPECT_EQ(r[1].cast<double>(), 0.25);
  EXPECT_EQ(r[2].cast<std::string>(), "split result label");
}

TEST_P(CallShapeTest, FailedBoxingReleasesHandedOverObjects) {
  Function f = Bind("two", two_objects,
                    Sig({Type::Object()}, {Type::Object(), S(ScalarKind::kU64)}), GetParam());
  Array a{1};
  Error e = CallError(f, {a});
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(FFIJITHeaderStrongCount(a.get()), 1u);
}

INSTANTIATE_TEST_SUITE_P(Paths, CallShapeTest, AllCallPaths(), PathName);

}  // namespace
}  // namespace ffijit::testing
