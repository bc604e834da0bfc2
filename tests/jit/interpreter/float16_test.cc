// binary16 / bfloat16 rounding (ties to even, subnormals, overflow, NaN) and f16/bf16 calls.
#include <cmath>
#include <cstring>

#include "interpreter/float16.h"
#include "jit/interp_test_util.h"

namespace ffijit::testing {
namespace {

TEST(Float16, ExactValuesAndSpecials) {
  EXPECT_EQ(FFIJITDoubleToF16Bits(1.0), 0x3c00);
  EXPECT_EQ(FFIJITDoubleToF16Bits(-2.0), 0xc000);
  EXPECT_EQ(FFIJITDoubleToF16Bits(65504.0), 0x7bff);  // largest finite
  EXPECT_EQ(FFIJITDoubleToF16Bits(0.0), 0x0000);
  EXPECT_EQ(FFIJITDoubleToF16Bits(-0.0), 0x8000);
  EXPECT_EQ(FFIJITDoubleToF16Bits(INFINITY), 0x7c00);
  EXPECT_EQ(FFIJITDoubleToF16Bits(-INFINITY), 0xfc00);
  EXPECT_EQ(FFIJITDoubleToF16Bits(std::nan("")) & 0x7e00, 0x7e00);
  EXPECT_EQ(FFIJITDoubleToF16Bits(std::ldexp(1.0, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(FFIJITDoubleToF16Bits(std::ldexp(1.0, -14)), 0x0400);  // smallest normal
}

TEST(Float16, RoundsToNearestTiesToEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
  EXPECT_EQ(FFIJITDoubleToF16Bits(1.0 + std::ldexp(1.0, -11)), 0x3c00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  EXPECT_EQ(FFIJITDoubleToF16Bits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02);
  // Just above the halfway point rounds up.
  EXPECT_EQ(FFIJITDoubleToF16Bits(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)), 0x3c01);
  // 65520 is halfway between 65504 and 65536 (overflow): ties to even is infinity.
  EXPECT_EQ(FFIJITDoubleToF16Bits(65519.0), 0x7bff);
  EXPECT_EQ(FFIJITDoubleToF16Bits(65520.0), 0x7c00);
  // Half the smallest subnormal ties to 0; a bit more rounds to the smallest subnormal.
  EXPECT_EQ(FFIJITDoubleToF16Bits(std::ldexp(1.0, -25)), 0x0000);
  EXPECT_EQ(FFIJITDoubleToF16Bits(std::ldexp(1.5, -25)), 0x0001);
  EXPECT_EQ(FFIJITDoubleToF16Bits(1e-300), 0x0000);
}

TEST(Float16, BFloat16RoundsFromTheExactInput) {
  EXPECT_EQ(FFIJITDoubleToBF16Bits(1.0), 0x3f80);
  EXPECT_EQ(FFIJITDoubleToBF16Bits(-1.0), 0xbf80);
  EXPECT_EQ(FFIJITDoubleToBF16Bits(INFINITY), 0x7f80);
  EXPECT_EQ(FFIJITDoubleToBF16Bits(std::nan("")) & 0x7fc0, 0x7fc0);
  // 1 + 2^-8 ties to even (1.0); 1 + 3 * 2^-8 ties to 1 + 2^-6.
  EXPECT_EQ(FFIJITDoubleToBF16Bits(1.0 + std::ldexp(1.0, -8)), 0x3f80);
  EXPECT_EQ(FFIJITDoubleToBF16Bits(1.0 + 3 * std::ldexp(1.0, -8)), 0x3f82);
  // Just above a tie, by less than a float ulp: going through float would round to the tie and
  // then to even; a single rounding goes up.
  EXPECT_EQ(FFIJITDoubleToBF16Bits(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)), 0x3f81);
}

TEST(Float16, Int64RoundsOnce) {
  EXPECT_EQ(FFIJITInt64ToF16Bits(0), 0x0000);
  EXPECT_EQ(FFIJITInt64ToF16Bits(2049), 0x6800);  // 2048 + 1: tie, to even
  EXPECT_EQ(FFIJITInt64ToF16Bits(2051), 0x6802);  // 2048 + 3: tie, to even (2052)
  EXPECT_EQ(FFIJITInt64ToF16Bits(-70000), 0xfc00);
  EXPECT_EQ(FFIJITInt64ToBF16Bits(INT64_MIN), 0xdf00);  // -2^63 exactly
  // 2^60 + 2^52 + 1: just above a bf16 tie; through double the +1 would be lost.
  EXPECT_EQ(FFIJITInt64ToBF16Bits((int64_t{1} << 60) + (int64_t{1} << 52) + 1), 0x5d81);
}

TEST(Float16, WidensBackExactly) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto b = static_cast<uint16_t>(bits);
    const double h = FFIJITF16BitsToDouble(b);
    if (!std::isnan(h)) {
      ASSERT_EQ(FFIJITDoubleToF16Bits(h), b) << bits;
    }
    const double bf = FFIJITBF16BitsToDouble(b);
    if (!std::isnan(bf)) {
      ASSERT_EQ(FFIJITDoubleToBF16Bits(bf), b) << bits;
    }
  }
}

// The C half type: g++ 12 knows _Float16 in C++ on x86-64 only; AArch64's __fp16 is the same
// IEEE half, passed and returned in the low 16 bits of a vector register (h0) like _Float16.
#if defined(__aarch64__)
using Half = __fp16;
#else
using Half = _Float16;
#endif

extern "C" {
double f16_to_double(Half x) {
  return static_cast<double>(x);
}
Half f16_halve(Half x) {
  return x / static_cast<Half>(2);
}
// bf16 arrives like a half (the low 16 bits of a vector register); g++ 12 has no __bf16.
uint16_t bf16_bits(Half x) {
  uint16_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}
Half bf16_from_bits(uint16_t bits) {
  Half x;
  std::memcpy(&x, &bits, sizeof bits);
  return x;
}
double mixed_halves(Half a, double b, Half c) {
  return static_cast<double>(a) + b + static_cast<double>(c);
}
// Two results through out-pointers: x / 2 as f16 and x / 4 as bf16 (written as its bits).
void split_halves(double x, Half* half, uint16_t* quarter_bf16) {
  *half = static_cast<Half>(x / 2);
  *quarter_bf16 = FFIJITDoubleToBF16Bits(x / 4);
}
int halve_status(double x, Half* out) {
  *out = static_cast<Half>(x / 2);
  return 0;
}
}

TEST(Float16Call, F16ArgumentsAndResults) {
  Function to_double =
      Bind("f", f16_to_double, Sig({S(ScalarKind::kF16)}, {S(ScalarKind::kF64)}), CallPath::kStub);
  EXPECT_EQ(Call(to_double, {1.5}).cast<double>(), 1.5);
  EXPECT_EQ(Call(to_double, {3}).cast<double>(), 3.0);
  EXPECT_EQ(Call(to_double, {1.0 + std::ldexp(1.0, -11)}).cast<double>(), 1.0);
  Function halve =
      Bind("h", f16_halve, Sig({S(ScalarKind::kF16)}, {S(ScalarKind::kF16)}), CallPath::kStub);
  EXPECT_EQ(Call(halve, {5.0}).cast<double>(), 2.5);
  Function mixed = Bind(
      "m", mixed_halves,
      Sig({S(ScalarKind::kF16), S(ScalarKind::kF64), S(ScalarKind::kF16)}, {S(ScalarKind::kF64)}),
      CallPath::kStub);
  EXPECT_EQ(Call(mixed, {0.5, 10.0, 0.25}).cast<double>(), 10.75);
}

TEST(Float16Call, BF16ArgumentsAndResults) {
  Function bits =
      Bind("b", bf16_bits, Sig({S(ScalarKind::kBF16)}, {S(ScalarKind::kU16)}), CallPath::kStub);
  EXPECT_EQ(Call(bits, {1.0}).cast<int64_t>(), 0x3f80);
  EXPECT_EQ(Call(bits, {-2}).cast<int64_t>(), 0xc000);
  Function from_bits = Bind("fb", bf16_from_bits,
                            Sig({S(ScalarKind::kU16)}, {S(ScalarKind::kBF16)}), CallPath::kStub);
  EXPECT_EQ(Call(from_bits, {0x4040}).cast<double>(), 3.0);
}

// libffi cannot describe a 16-bit float passed or returned by value: refused at registration.
TEST(Float16Call, LibffiRefusesHalfFloatArgumentsAndByValueResults) {
  const std::string refusal =
      "libffi has no 16-bit float type: cannot pass an f16/bf16 argument or return one by value "
      "(through an out-pointer it can)";
  for (const Signature& sig : {Sig({S(ScalarKind::kF16)}, {S(ScalarKind::kF64)}),
                               Sig({S(ScalarKind::kBF16)}, {S(ScalarKind::kU16)}),
                               Sig({S(ScalarKind::kU16)}, {S(ScalarKind::kBF16)}),
                               Sig({S(ScalarKind::kF16)}, {S(ScalarKind::kF16)})}) {
    try {
      Bind("f", f16_to_double, sig, CallPath::kLibffi);
      ADD_FAILURE() << "bound " << DeclarationString("f", sig);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), "TypeError");
      EXPECT_EQ(e.message(), refusal);
    }
  }
}

// Through an out-pointer an f16/bf16 result is only a pointer to libffi: accepted, and the call
// agrees with the call stub's.
TEST(Float16Call, LibffiWritesHalfFloatResultsThroughOutPointers) {
  for (CallPath path : {CallPath::kStub, CallPath::kLibffi}) {
    Function split =
        Bind("split", split_halves,
             Sig({S(ScalarKind::kF64)}, {S(ScalarKind::kF16), S(ScalarKind::kBF16)}), path);
    Any result = Call(split, {3.0});
    Array parts = result.cast<Array>();
    ASSERT_EQ(parts.size(), 2);
    EXPECT_EQ(parts[0].cast<double>(), 1.5);
    EXPECT_EQ(parts[1].cast<double>(), 0.75);
    Function status =
        Bind("halve_status", halve_status,
             Sig({S(ScalarKind::kF64)}, {S(ScalarKind::kF16)}, CallConvention::kStatus), path);
    EXPECT_EQ(Call(status, {5.0}).cast<double>(), 2.5);
  }
}

}  // namespace
}  // namespace ffijit::testing
