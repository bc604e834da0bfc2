// binary16 / bfloat16 rounding from double and int64, and widening back to double.
#include "interpreter/float16.h"

#include <cmath>
#include <cstring>

namespace {

struct Format {
  int exp_bits;
  int man_bits;
};
constexpr Format kHalf{5, 10};
constexpr Format kBFloat{8, 7};

// x / 2^shift rounded to nearest, ties to even.
uint64_t ShiftRoundEven(uint64_t x, int shift) {
  if (shift <= 0) return x;                                 // callers never need a left shift here
  if (shift > 64) return 0;                                 // x < 2^64 < half a unit
  if (shift == 64) return x > (uint64_t{1} << 63) ? 1 : 0;  // exactly half: ties to even (0)
  uint64_t q = x >> shift;
  uint64_t rem = x & ((uint64_t{1} << shift) - 1);
  uint64_t half = uint64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;
  return q;
}

// Encodes (-1)^neg * sig * 2^exp2 (sig != 0) in `f`, rounding once to nearest even.
uint16_t Encode(bool neg, uint64_t sig, int exp2, Format f) {
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const uint16_t sign = neg ? static_cast<uint16_t>(1u << (f.exp_bits + f.man_bits)) : 0;
  const uint16_t inf = static_cast<uint16_t>(((1u << f.exp_bits) - 1) << f.man_bits);
  const int msb = 63 - __builtin_clzll(sig);
  int exponent = msb + exp2;  // value in [2^exponent, 2^(exponent+1))
  if (exponent >= 1 - bias) {
    // Normal: keep man_bits + 1 significant bits.
    int shift = msb - f.man_bits;
    uint64_t m = shift > 0 ? ShiftRoundEven(sig, shift) : sig << -shift;
    if (m >> (f.man_bits + 1)) {  // rounding carried into a new bit
      m >>= 1;
      ++exponent;
    }
    if (exponent > bias) return sign | inf;
    uint64_t bits = (static_cast<uint64_t>(exponent + bias) << f.man_bits) |
                    (m & ((uint64_t{1} << f.man_bits) - 1));
    return sign | static_cast<uint16_t>(bits);
  }
  // Subnormal: count units of 2^(1 - bias - man_bits). A carry into the exponent field encodes
  // the smallest normal number, which is exactly right.
  int shift = (1 - bias - f.man_bits) - exp2;
  uint64_t q = shift > 0 ? ShiftRoundEven(sig, shift) : sig << -shift;
  return sign | static_cast<uint16_t>(q);
}

uint16_t FromDouble(double value, Format f) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const bool neg = bits >> 63;
  const int exp = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t frac = bits & ((uint64_t{1} << 52) - 1);
  const uint16_t sign = neg ? static_cast<uint16_t>(1u << (f.exp_bits + f.man_bits)) : 0;
  const uint16_t inf = static_cast<uint16_t>(((1u << f.exp_bits) - 1) << f.man_bits);
  if (exp == 0x7ff) {
    // Infinity, or a quiet NaN (top mantissa bit set).
    return frac == 0 ? (sign | inf) : (sign | inf | static_cast<uint16_t>(1u << (f.man_bits - 1)));
  }
  if (exp == 0) {
    if (frac == 0) return sign;  // signed zero
    return Encode(neg, frac, -1074, f);
  }
  return Encode(neg, frac | (uint64_t{1} << 52), exp - 1075, f);
}

uint16_t FromInt64(int64_t value, Format f) {
  if (value == 0) return 0;
  const bool neg = value < 0;
  // Negate in unsigned arithmetic so INT64_MIN is exact.
  uint64_t magnitude = neg ? ~static_cast<uint64_t>(value) + 1 : static_cast<uint64_t>(value);
  return Encode(neg, magnitude, 0, f);
}

double ToDouble(uint16_t bits, Format f) {
  const bool neg = (bits >> (f.exp_bits + f.man_bits)) & 1;
  const int exp = (bits >> f.man_bits) & ((1 << f.exp_bits) - 1);
  const int frac = bits & ((1 << f.man_bits) - 1);
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  double magnitude;
  if (exp == (1 << f.exp_bits) - 1) {
    magnitude = frac == 0 ? INFINITY : NAN;
  } else if (exp == 0) {
    magnitude = std::ldexp(static_cast<double>(frac), 1 - bias - f.man_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(frac | (1 << f.man_bits)), exp - bias - f.man_bits);
  }
  return neg ? -magnitude : magnitude;
}

}  // namespace

extern "C" {

uint16_t FFIJITDoubleToF16Bits(double value) {
  return FromDouble(value, kHalf);
}
uint16_t FFIJITDoubleToBF16Bits(double value) {
  return FromDouble(value, kBFloat);
}
uint16_t FFIJITInt64ToF16Bits(int64_t value) {
  return FromInt64(value, kHalf);
}
uint16_t FFIJITInt64ToBF16Bits(int64_t value) {
  return FromInt64(value, kBFloat);
}
double FFIJITF16BitsToDouble(uint16_t bits) {
  return ToDouble(bits, kHalf);
}
double FFIJITBF16BitsToDouble(uint16_t bits) {
  return ToDouble(bits, kBFloat);
}

}  // extern "C"
