// TypedFunction: direct calls to bound natives of exactly matching C++ types; the packed fallback
// for everything else, with the packed call's results and errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <typeinfo>
#include <vector>

#include "catch_error.h"
#include "ffijit/ffijit.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "ffijit/jit/typed_function.h"

namespace ffijit::testing {
namespace {

using ffijit_tests::CatchError;

int direct_calls = 0;  // counts calls that reached the natives below

int64_t TfWeigh(int64_t a, int32_t b, int8_t c) {
  ++direct_calls;
  return a * 100 + int64_t{b} * 10 + c;
}
double TfMix(float x, double y, bool flip, uint16_t k) {
  ++direct_calls;
  return (flip ? -1.0 : 1.0) * (static_cast<double>(x) + y) + k;
}
int64_t TfDevice(DLDevice dev, DLDataType dtype, void* p) {
  ++direct_calls;
  return dev.device_type * 1000 + dev.device_id * 100 + dtype.bits + (p ? 1 : 0);
}
void TfSet(void* out, int32_t v) {
  ++direct_calls;
  *static_cast<int32_t*>(out) = v;
}
uint64_t TfBig(uint64_t v) {
  return v;
}
int64_t TfLength(const char* s) {
  return static_cast<int64_t>(std::string(s).size());
}

// A function bound as `fn` with a signature deduced from it (interpreted or compiled alike: the
// direct call does not look at the tier).
template <typename F>
Function Bound(const char* name, F* fn) {
  ScopedJitOptions never({JitPolicy::kNever, 0, 0});
  return MakeFunction(name, fn);
}

TEST(TypedFunction, MatchingNativesAreCalledDirectly) {
  TypedFunction<int64_t(int64_t, int32_t, int8_t)> weigh(Bound("weigh", &TfWeigh));
  ASSERT_TRUE(weigh.is_direct());
  direct_calls = 0;
  EXPECT_EQ(weigh(1, 2, 3), 123);
  EXPECT_EQ(weigh(-1, INT32_MIN, INT8_MIN), -100 + 10LL * INT32_MIN + INT8_MIN);
  EXPECT_EQ(direct_calls, 2);

  TypedFunction<double(float, double, bool, uint16_t)> mix(Bound("mix", &TfMix));
  ASSERT_TRUE(mix.is_direct());
  EXPECT_DOUBLE_EQ(mix(1.5f, 2.25, true, 65535), -3.75 + 65535);

  TypedFunction<int64_t(DLDevice, DLDataType, void*)> dev(Bound("dev", &TfDevice));
  ASSERT_TRUE(dev.is_direct());
  int x = 0;
  EXPECT_EQ(dev(DLDevice{kDLCUDA, 3}, DLDataType{kDLFloat, 16, 1}, &x), 2000 + 300 + 16 + 1);

  TypedFunction<void(void*, int32_t)> set(Bound("set", &TfSet));
  ASSERT_TRUE(set.is_direct());
  int32_t out = 0;
  set(&out, -7);
  EXPECT_EQ(out, -7);
}

TEST(TypedFunction, ACompiledFunctionIsCalledDirectlyToo) {
  Function f = Bound("weigh", &TfWeigh);
  if (JitAvailable()) JitEngine::Default().CompileNow(f);
  TypedFunction<int64_t(int64_t, int32_t, int8_t)> weigh(f);
  EXPECT_TRUE(weigh.is_direct());
  EXPECT_EQ(weigh(4, 5, 6), 456);
}

TEST(TypedFunction, MismatchedTypesFallBackToThePackedCall) {
  Function weigh = Bound("weigh", &TfWeigh);
  // Wider, narrower, other signedness, another result: each packed, each still correct.
  TypedFunction<int64_t(int64_t, int64_t, int64_t)> wider(weigh);
  TypedFunction<int64_t(int64_t, int32_t, uint8_t)> unsigned_last(weigh);
  TypedFunction<double(int64_t, int32_t, int8_t)> double_result(weigh);
  TypedFunction<int64_t(int64_t, int32_t)> fewer(weigh);
  EXPECT_FALSE(wider.is_direct());
  EXPECT_FALSE(unsigned_last.is_direct());
  EXPECT_FALSE(double_result.is_direct());
  EXPECT_FALSE(fewer.is_direct());
  direct_calls = 0;
  EXPECT_EQ(wider(1, 2, 3), 123);
  EXPECT_EQ(unsigned_last(1, 2, 3), 123);
  EXPECT_EQ(direct_calls, 2);  // the native ran, through the packed call

  // The packed call's errors, as Function::operator() raises them.
  Error range = CatchError([&] { wider(1, int64_t{1} << 40, 3); });
  Error range_packed = CatchError([&] { weigh(1, int64_t{1} << 40, 3); });
  EXPECT_EQ(range.kind(), "ValueError");
  EXPECT_EQ(range.message(), range_packed.message());
  Error arity = CatchError([&] { fewer(1, 2); });
  EXPECT_EQ(arity.kind(), "TypeError");
  EXPECT_EQ(arity.message(), CatchError([&] { weigh(1, 2); }).message());
  // The result is an Int, and R is double: Any's cast decides, as it would for operator().
  Any packed_result = weigh(1, 2, 3);
  try {
    double expected = packed_result.cast<double>();
    EXPECT_DOUBLE_EQ(double_result(1, 2, 3), expected);
  } catch (const Error& e) {
    Error typed = CatchError([&] { double_result(1, 2, 3); });
    EXPECT_EQ(typed.kind(), e.kind());
    EXPECT_EQ(typed.message(), e.message());
  }
}

TEST(TypedFunction, TypesWhoseConversionCanFailAreNeverDirect) {
  // u64: above INT64_MAX the packed call raises, so the typed handle must too.
  Function big = Bound("big", &TfBig);
  TypedFunction<uint64_t(uint64_t)> typed_big(big);
  EXPECT_FALSE(typed_big.is_direct());
  EXPECT_EQ(typed_big(42u), 42u);
  Error too_big = CatchError([&] { typed_big(uint64_t{1} << 63); });
  EXPECT_EQ(too_big.kind(), CatchError([&] { big(uint64_t{1} << 63); }).kind());
  // Strings: a NULL or a non-string is the packed call's to reject.
  TypedFunction<int64_t(const char*)> length(Bound("length", &TfLength));
  EXPECT_FALSE(length.is_direct());
  EXPECT_EQ(length("four"), 4);
  Error null = CatchError([&] { length(nullptr); });
  EXPECT_EQ(null.kind(), "TypeError");
}

TEST(TypedFunction, NonNativeFunctionsArePacked) {
  Function typed = Function::FromTyped([](int64_t a, int64_t b) { return a - b; }, "minus");
  TypedFunction<int64_t(int64_t, int64_t)> minus(typed);
  EXPECT_FALSE(minus.is_direct());
  EXPECT_EQ(minus(10, 4), 6);
  Function packed = Function::FromPacked(
      [](const AnyView*, int32_t, Any*) { throw Error("KeyError", "nothing here"); });
  TypedFunction<void(int32_t)> fails(packed);
  EXPECT_FALSE(fails.is_direct());
  Error e = CatchError([&] { fails(1); });
  EXPECT_EQ(e.kind(), "KeyError");
  EXPECT_EQ(e.message(), "nothing here");
  // A null handle: packed, and the packed call's error.
  TypedFunction<int64_t(int64_t)> none;
  EXPECT_FALSE(none.is_direct());
  Error null = CatchError([&] { none(1); });
  EXPECT_EQ(null.kind(), "ValueError");
  EXPECT_EQ(null.message(), "cannot call a null Function");
}

// The packed fallback converts the callee's result without an Any when it is a scalar form; every
// form and every R must still come out as Function::operator()'s cast would make it, value or
// error, and a result that is not converted must still be released.
template <typename R>
void ExpectFallbackLikeCast(const Any& result) {
  Function returns =
      Function::FromPacked([result](const AnyView*, int32_t, Any* out) { *out = result; });
  TypedFunction<R()> typed(returns);
  ASSERT_FALSE(typed.is_direct());
  const std::string what = "R=" + std::string(typeid(R).name()) + " result " + result.type_name();
  try {
    const R expected = returns().template cast<R>();
    R got = typed();
    EXPECT_EQ(std::memcmp(&got, &expected, sizeof(R)), 0) << what;
  } catch (const Error& cast_error) {
    Error typed_error = CatchError([&] { typed(); });
    EXPECT_EQ(typed_error.kind(), cast_error.kind()) << what;
    EXPECT_EQ(typed_error.message(), cast_error.message()) << what;
  }
}

TEST(TypedFunction, ThePackedFallbackConvertsEveryResultFormAsCastDoes) {
  int cell = 0;
  const std::vector<Any> results = {
      Any(),
      Any(int64_t{7}),
      Any(int64_t{1} << 40),
      Any(int64_t{-1}),
      Any(true),
      Any(2.5),
      Any(static_cast<void*>(&cell)),
      Any(DataType(kDLFloat, 32, 4)),
      Any(DLDevice{kDLCUDA, 3}),
      Any(std::string("short")),
      Any(std::string(64, 'x')),
      Any(Array({Any(int64_t{1})})),
  };
  for (const Any& result : results) {
    ExpectFallbackLikeCast<int64_t>(result);
    ExpectFallbackLikeCast<int32_t>(result);
    ExpectFallbackLikeCast<uint8_t>(result);
    ExpectFallbackLikeCast<bool>(result);
    ExpectFallbackLikeCast<double>(result);
    ExpectFallbackLikeCast<float>(result);
    ExpectFallbackLikeCast<void*>(result);
    ExpectFallbackLikeCast<DLDataType>(result);
    ExpectFallbackLikeCast<DLDevice>(result);
  }
  // Non-scalar results: checked and owned, as operator() does.
  TypedFunction<std::string()> text(Function::FromTyped([] { return std::string(40, 'y'); }));
  EXPECT_EQ(text(), std::string(40, 'y'));
}

TEST(TypedFunction, ThePackedFallbackReleasesAResultItDoesNotReturn) {
  Any held(std::string(64, 'z'));  // a heap String: its header counts the references
  const TVMFFIObject* header = held.raw().v_obj;
  ASSERT_NE(header, nullptr);
  Function returns =
      Function::FromPacked([held](const AnyView*, int32_t, Any* out) { *out = held; });
  const uint64_t before = FFIJITHeaderStrongCount(header);
  TypedFunction<int64_t()> as_int(returns);
  EXPECT_EQ(CatchError([&] { as_int(); }).kind(), "TypeError");
  TypedFunction<void()> as_void(returns);
  as_void();
  EXPECT_EQ(FFIJITHeaderStrongCount(header), before);
}

// A status-convention native reports errors through its status: always packed.
TEST(TypedFunction, StatusConventionNativesArePacked) {
  Signature sig = SignatureOf<int (*)(int64_t)>();
  sig.results.clear();
  sig.convention = CallConvention::kStatus;
  ScopedJitOptions never({JitPolicy::kNever, 0, 0});
  Function status = MakeFunction(
      "status", reinterpret_cast<void*>(+[](int64_t v) -> int { return v == 0 ? 0 : 1; }), sig);
  TypedFunction<int(int64_t)> as_int(status);
  EXPECT_FALSE(as_int.is_direct());
  TypedFunction<void(int64_t)> as_void(status);
  EXPECT_FALSE(as_void.is_direct());
  EXPECT_NO_THROW(as_void(0));
  EXPECT_EQ(CatchError([&] { as_void(1); }).kind(), "RuntimeError");
}

}  // namespace
}  // namespace ffijit::testing
