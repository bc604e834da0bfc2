// Every scalar kind as argument and result, through both call paths; range and type errors.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "jit/interp_test_util.h"

namespace ffijit::testing {
namespace {

// Natives that return what they received, widened so a wrong extension or register shows.
extern "C" {
int64_t widen_bool(bool v) {
  return v ? 1 : 0;
}
int64_t widen_i8(int8_t v) {
  return v;
}
int64_t widen_i16(int16_t v) {
  return v;
}
int64_t widen_i32(int32_t v) {
  return v;
}
int64_t widen_i64(int64_t v) {
  return v;
}
int64_t widen_u8(uint8_t v) {
  return v;
}
int64_t widen_u16(uint16_t v) {
  return v;
}
int64_t widen_u32(uint32_t v) {
  return v;
}
uint64_t widen_u64(uint64_t v) {
  return v;
}
double widen_f32(float v) {
  return v;
}
double widen_f64(double v) {
  return v;
}
bool id_bool(bool v) {
  return v;
}
int8_t neg_i8(int8_t v) {
  return static_cast<int8_t>(-v);
}
int16_t neg_i16(int16_t v) {
  return static_cast<int16_t>(-v);
}
int32_t neg_i32(int32_t v) {
  return -v;
}
uint8_t inc_u8(uint8_t v) {
  return static_cast<uint8_t>(v + 1);
}
uint16_t inc_u16(uint16_t v) {
  return static_cast<uint16_t>(v + 1);
}
uint32_t inc_u32(uint32_t v) {
  return v + 1;
}
uint64_t inc_u64(uint64_t v) {
  return v + 1;
}
float half_f32(float v) {
  return v / 2;
}
}

class ScalarTest : public ::testing::TestWithParam<CallPath> {};

template <typename F>
Function Unary(const char* name, F* fn, ScalarKind arg, ScalarKind result, CallPath path) {
  return Bind(name, fn, Sig({S(arg)}, {S(result)}), path, {"x"});
}

TEST_P(ScalarTest, IntegersArriveSignOrZeroExtended) {
  const CallPath path = GetParam();
  EXPECT_EQ(
      Call(Unary("w", widen_i8, ScalarKind::kI8, ScalarKind::kI64, path), {-128}).cast<int64_t>(),
      -128);
  EXPECT_EQ(Call(Unary("w", widen_i16, ScalarKind::kI16, ScalarKind::kI64, path), {-32768})
                .cast<int64_t>(),
            -32768);
  EXPECT_EQ(Call(Unary("w", widen_i32, ScalarKind::kI32, ScalarKind::kI64, path), {INT32_MIN})
                .cast<int64_t>(),
            INT32_MIN);
  EXPECT_EQ(Call(Unary("w", widen_i64, ScalarKind::kI64, ScalarKind::kI64, path), {INT64_MIN})
                .cast<int64_t>(),
            INT64_MIN);
  EXPECT_EQ(
      Call(Unary("w", widen_u8, ScalarKind::kU8, ScalarKind::kI64, path), {255}).cast<int64_t>(),
      255);
  EXPECT_EQ(Call(Unary("w", widen_u16, ScalarKind::kU16, ScalarKind::kI64, path), {65535})
                .cast<int64_t>(),
            65535);
  EXPECT_EQ(
      Call(Unary("w", widen_u32, ScalarKind::kU32, ScalarKind::kI64, path), {int64_t{UINT32_MAX}})
          .cast<int64_t>(),
      int64_t{UINT32_MAX});
  EXPECT_EQ(Call(Unary("w", widen_u64, ScalarKind::kU64, ScalarKind::kU64, path), {INT64_MAX})
                .cast<int64_t>(),
            INT64_MAX);
}

TEST_P(ScalarTest, IntegerResultsAreTruncatedToTheirWidth) {
  const CallPath path = GetParam();
  EXPECT_EQ(Call(Unary("n", neg_i8, ScalarKind::kI8, ScalarKind::kI8, path), {5}).cast<int64_t>(),
            -5);
  EXPECT_EQ(
      Call(Unary("n", neg_i16, ScalarKind::kI16, ScalarKind::kI16, path), {300}).cast<int64_t>(),
      -300);
  EXPECT_EQ(
      Call(Unary("n", neg_i32, ScalarKind::kI32, ScalarKind::kI32, path), {70000}).cast<int64_t>(),
      -70000);
  EXPECT_EQ(Call(Unary("i", inc_u8, ScalarKind::kU8, ScalarKind::kU8, path), {255}).cast<int64_t>(),
            0);
  EXPECT_EQ(
      Call(Unary("i", inc_u16, ScalarKind::kU16, ScalarKind::kU16, path), {65535}).cast<int64_t>(),
      0);
  EXPECT_EQ(
      Call(Unary("i", inc_u32, ScalarKind::kU32, ScalarKind::kU32, path), {int64_t{UINT32_MAX}})
          .cast<int64_t>(),
      0);
  EXPECT_EQ(
      Call(Unary("i", inc_u64, ScalarKind::kU64, ScalarKind::kU64, path), {41}).cast<int64_t>(),
      42);
}

TEST_P(ScalarTest, U64ResultAboveInt64MaxIsAValueError) {
  Function f = Unary("inc_u64", inc_u64, ScalarKind::kU64, ScalarKind::kU64, GetParam());
  Error e = CallError(f, {INT64_MAX});
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(),
            "Out of range result #0 of `inc_u64(x: u64) -> u64`: 9223372036854775808 does not fit "
            "an Int (int64)");
}

TEST_P(ScalarTest, BoolAcceptsBoolAndIntAndReturnsBool) {
  Function w = Unary("w", widen_bool, ScalarKind::kI1, ScalarKind::kI64, GetParam());
  EXPECT_EQ(Call(w, {true}).cast<int64_t>(), 1);
  EXPECT_EQ(Call(w, {false}).cast<int64_t>(), 0);
  EXPECT_EQ(Call(w, {7}).cast<int64_t>(), 1);
  EXPECT_EQ(Call(w, {0}).cast<int64_t>(), 0);
  Function id = Unary("id", id_bool, ScalarKind::kI1, ScalarKind::kI1, GetParam());
  Any r = Call(id, {5});
  EXPECT_EQ(r.type_index(), kTVMFFIBool);
  EXPECT_TRUE(r.cast<bool>());
  Error e = CallError(id, {1.0});
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(),
            "Mismatched type on argument #0 when calling: `id(x: i1) -> i1`. Expected `i1` but "
            "got `float`");
}

TEST_P(ScalarTest, IntegersAcceptBool) {
  Function w = Unary("w", widen_u8, ScalarKind::kU8, ScalarKind::kI64, GetParam());
  EXPECT_EQ(Call(w, {true}).cast<int64_t>(), 1);
}

TEST_P(ScalarTest, EveryIntegerKindChecksItsRange) {
  struct Case {
    ScalarKind kind;
    void* fn;
    int64_t lo, hi;  // first values out of range below / above
    const char* name;
  };
  const Case cases[] = {
      {ScalarKind::kI8, reinterpret_cast<void*>(widen_i8), -129, 128, "i8"},
      {ScalarKind::kI16, reinterpret_cast<void*>(widen_i16), -32769, 32768, "i16"},
      {ScalarKind::kI32, reinterpret_cast<void*>(widen_i32), int64_t{INT32_MIN} - 1,
       int64_t{INT32_MAX} + 1, "i32"},
      {ScalarKind::kU8, reinterpret_cast<void*>(widen_u8), -1, 256, "u8"},
      {ScalarKind::kU16, reinterpret_cast<void*>(widen_u16), -1, 65536, "u16"},
      {ScalarKind::kU32, reinterpret_cast<void*>(widen_u32), -1, int64_t{UINT32_MAX} + 1, "u32"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    RegisterOptions options;
    options.interpret_only = true;
    options.arg_names = {"v"};
    Function f = MakeFunctionWithFlags("f", c.fn, Sig({S(c.kind)}, {S(ScalarKind::kI64)}), options,
                                       GetParam() == CallPath::kLibffi ? kBoundUseLibffi : 0u);
    EXPECT_EQ(Call(f, {c.lo + 1}).cast<int64_t>(), c.lo + 1);
    EXPECT_EQ(Call(f, {c.hi - 1}).cast<int64_t>(), c.hi - 1);
    for (int64_t bad : {c.lo, c.hi}) {
      Error e = CallError(f, {bad});
      EXPECT_EQ(e.kind(), "ValueError");
      EXPECT_EQ(e.message(),
                "Out of range value on argument #0 when calling: `f(v: " + std::string(c.name) +
                    ") -> i64`. " + std::to_string(bad) + " does not fit `" + c.name + "`");
    }
  }
  Function u64 = Unary("u", widen_u64, ScalarKind::kU64, ScalarKind::kU64, GetParam());
  EXPECT_EQ(CallError(u64, {-1}).kind(), "ValueError");
}

TEST_P(ScalarTest, IntegersRejectEveryOtherType) {
  Function f = Unary("f", widen_i32, ScalarKind::kI32, ScalarKind::kI64, GetParam());
  for (Any bad : {Any(1.5), Any("text"), Any(nullptr), Any(DataType::Int(8))}) {
    Error e = CallError(f, {bad});
    EXPECT_EQ(e.kind(), "TypeError") << e.message();
  }
  EXPECT_EQ(CallError(f, {"seven"}).message(),
            "Mismatched type on argument #0 when calling: `f(x: i32) -> i64`. Expected `i32` but "
            "got `str`");
}

TEST_P(ScalarTest, FloatsAcceptFloatIntBool) {
  Function f64 = Unary("f", widen_f64, ScalarKind::kF64, ScalarKind::kF64, GetParam());
  EXPECT_EQ(Call(f64, {2.5}).cast<double>(), 2.5);
  EXPECT_EQ(Call(f64, {-3}).cast<double>(), -3.0);
  EXPECT_EQ(Call(f64, {true}).cast<double>(), 1.0);
  Function f32 = Unary("f", widen_f32, ScalarKind::kF32, ScalarKind::kF64, GetParam());
  EXPECT_EQ(Call(f32, {0.1}).cast<double>(), static_cast<double>(0.1f));
  // 2^24 + 1 is not a float: one rounding, ties to even, gives 2^24.
  EXPECT_EQ(Call(f32, {int64_t{16777217}}).cast<double>(), 16777216.0);
  // An int64 rounds once, straight to float (through double it would round twice).
  const int64_t tricky = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;
  EXPECT_EQ(Call(f32, {tricky}).cast<double>(), static_cast<double>(static_cast<float>(tricky)));
  Function half = Unary("h", half_f32, ScalarKind::kF32, ScalarKind::kF32, GetParam());
  EXPECT_EQ(Call(half, {3.0}).cast<double>(), 1.5);
  Error e = CallError(f64, {"x"});
  EXPECT_EQ(e.message(),
            "Mismatched type on argument #0 when calling: `f(x: f64) -> f64`. Expected `f64` but "
            "got `str`");
}

TEST_P(ScalarTest, NanAndInfinityPassThrough) {
  Function f32 = Unary("f", widen_f32, ScalarKind::kF32, ScalarKind::kF64, GetParam());
  EXPECT_TRUE(std::isnan(Call(f32, {std::nan("")}).cast<double>()));
  EXPECT_EQ(Call(f32, {1e300}).cast<double>(), INFINITY);
}

INSTANTIATE_TEST_SUITE_P(Paths, ScalarTest, AllCallPaths(), PathName);

}  // namespace
}  // namespace ffijit::testing
