// Native callbacks: plain C function pointers that call packed functions (qsort and friends).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ffijit/c_ext.h"
#include "ffijit/error.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "signature_fixtures.h"

namespace ffijit::testing {
namespace {

TypePtr S(ScalarKind k) {
  return Type::Scalar(k);
}

using ffijit_tests::Sig;

// A packed comparator of two `const int*`, written against the C ABI.
int CompareInts(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (num_args != 2 || args[0].type_index != kTVMFFIOpaquePtr ||
      args[1].type_index != kTVMFFIOpaquePtr) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "compare wants two pointers");
    return -1;
  }
  int a = *static_cast<const int*>(args[0].v_ptr);
  int b = *static_cast<const int*>(args[1].v_ptr);
  result->type_index = kTVMFFIInt;
  result->v_int64 = (a > b) - (a < b);
  return 0;
}

TEST(Callback, QsortComparator) {
  Function compare = Function::FromSafeCall(nullptr, &CompareInts, nullptr);
  NativeCallback callback(
      compare, Sig({Type::Simple(TypeKind::kOpaquePtr), Type::Simple(TypeKind::kOpaquePtr)},
                   {S(ScalarKind::kI32)}));
  std::vector<int> values = {5, -3, 9, 0, 9, -100, 42, 7, 1, 2};
  std::vector<int> expected = values;
  std::sort(expected.begin(), expected.end());
  std::qsort(values.data(), values.size(), sizeof(int),
             callback.as<int(const void*, const void*)>());
  EXPECT_EQ(values, expected);
}

TEST(Callback, EveryScalarAndValueKindArrivesBoxed) {
  std::vector<Any> seen;
  Function record = Function::FromPacked([&](const AnyView* args, int32_t n, Any* result) {
    for (int32_t i = 0; i < n; ++i)
      seen.push_back(Any::Adopt([&] {
        TVMFFIAny owned{};
        CheckCall(TVMFFIAnyViewToOwnedAny(&args[i].raw(), &owned));
        return owned;
      }()));
    *result = Any(2.5);
  });
  Signature sig =
      Sig({S(ScalarKind::kI8), S(ScalarKind::kU16), S(ScalarKind::kI64), S(ScalarKind::kF32),
           S(ScalarKind::kF64), S(ScalarKind::kI1), Type::Simple(TypeKind::kOpaquePtr),
           Type::Simple(TypeKind::kDataType), Type::Simple(TypeKind::kDevice), S(ScalarKind::kI32),
           S(ScalarKind::kF64), S(ScalarKind::kF64), S(ScalarKind::kF64), S(ScalarKind::kF64),
           S(ScalarKind::kF64), S(ScalarKind::kF64), S(ScalarKind::kF32)},
          {S(ScalarKind::kF64)});
  NativeCallback callback(record, sig);
  using Fn = double(int8_t, uint16_t, int64_t, float, double, bool, void*, DLDataType, DLDevice,
                    int32_t, double, double, double, double, double, double, float);
  int marker = 0;
  double r = callback.as<Fn>()(-5, 65535, INT64_MIN, 1.5f, -2.25, true, &marker,
                               DLDataType{kDLFloat, 16, 1}, DLDevice{kDLCUDA, 3}, -7, 1, 2, 3, 4, 5,
                               6, 0.125f);
  EXPECT_EQ(r, 2.5);
  ASSERT_EQ(seen.size(), 17u);
  EXPECT_EQ(seen[0].cast<int64_t>(), -5);
  EXPECT_EQ(seen[1].cast<int64_t>(), 65535);
  EXPECT_EQ(seen[2].cast<int64_t>(), INT64_MIN);
  EXPECT_EQ(seen[3].cast<double>(), 1.5);
  EXPECT_EQ(seen[4].cast<double>(), -2.25);
  EXPECT_EQ(seen[5].type_index(), kTVMFFIBool);
  EXPECT_EQ(seen[6].raw().v_ptr, &marker);
  EXPECT_EQ(seen[7].raw().v_dtype.bits, 16);
  EXPECT_EQ(seen[8].raw().v_device.device_id, 3);
  EXPECT_EQ(seen[9].cast<int64_t>(), -7);
  EXPECT_EQ(seen[15].cast<double>(), 6.0);  // the ninth vector argument went on the stack
  EXPECT_EQ(seen[16].cast<double>(), 0.125);
}

TEST(Callback, StringsBytesAndNullPointers) {
  std::string got_str, got_bytes;
  bool ptr_was_none = false;
  Function record = Function::FromPacked([&](const AnyView* args, int32_t, Any* result) {
    got_str = args[0].cast<std::string>();
    const auto* bytes = static_cast<const TVMFFIByteArray*>(args[1].raw().v_ptr);
    got_bytes.assign(bytes->data, bytes->size);
    ptr_was_none = args[2].raw().type_index == kTVMFFINone;
    *result = Any();
  });
  NativeCallback callback(record, Sig({Type::Simple(TypeKind::kStr), Type::Simple(TypeKind::kBytes),
                                       Type::Simple(TypeKind::kOpaquePtr)},
                                      {}));
  callback.as<void(const char*, TVMFFIByteArray, void*)>()("hello", TVMFFIByteArray{"a\0b", 3},
                                                           nullptr);
  EXPECT_EQ(got_str, "hello");
  EXPECT_EQ(got_bytes, std::string("a\0b", 3));
  EXPECT_TRUE(ptr_was_none);
}

// A TVMFFIByteArray that no longer fits in the integer registers (after seven integers: x7 alone
// on AArch64, which the pair then closes; the stack already on x86-64), an integer after it and a
// double: the callback reads each where the C compiler of the caller put it.
TEST(Callback, BytesSpilledToTheStackAndWhatFollows) {
  std::string got_bytes;
  int64_t got_first = 0, got_seventh = 0, got_next = 0;
  double got_d = 0;
  Function record = Function::FromPacked([&](const AnyView* args, int32_t, Any* result) {
    got_first = args[0].cast<int64_t>();
    got_seventh = args[6].cast<int64_t>();
    const auto* bytes = static_cast<const TVMFFIByteArray*>(args[7].raw().v_ptr);
    got_bytes.assign(bytes->data, bytes->size);
    got_next = args[8].cast<int64_t>();
    got_d = args[9].cast<double>();
    *result = int64_t{77};
  });
  std::vector<TypePtr> args(7, S(ScalarKind::kI64));
  args.push_back(Type::Simple(TypeKind::kBytes));
  args.push_back(S(ScalarKind::kI64));
  args.push_back(S(ScalarKind::kF64));
  NativeCallback callback(record, Sig(args, {S(ScalarKind::kI64)}));
  using Fn = int64_t(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, TVMFFIByteArray,
                     int64_t, double);
  EXPECT_EQ(callback.as<Fn>()(11, 2, 3, 4, 5, 6, 17, TVMFFIByteArray{"spill", 5}, 23, 0.25), 77);
  EXPECT_EQ(got_first, 11);
  EXPECT_EQ(got_seventh, 17);
  EXPECT_EQ(got_bytes, "spill");
  EXPECT_EQ(got_next, 23);
  EXPECT_EQ(got_d, 0.25);
}

TEST(Callback, PlainConventionErrorGivesZeroAndStaysRaised) {
  Function fail = Function::FromPacked(
      [](const AnyView*, int32_t, Any*) { throw ValueError("the packed side failed"); });
  NativeCallback callback(fail, Sig({S(ScalarKind::kI64)}, {S(ScalarKind::kI64)}));
  EXPECT_EQ(callback.as<int64_t(int64_t)>()(41), 0);
  TVMFFIObjectHandle error = nullptr;
  TVMFFIErrorMoveFromRaised(&error);
  ASSERT_NE(error, nullptr);
  Error e = Error::FromObject(error);
  TVMFFIObjectDecRef(error);
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(), "the packed side failed");
}

TEST(Callback, WrongResultTypeIsATypeErrorNamingTheCallback) {
  Function wrong = Function::FromPacked(
      [](const AnyView*, int32_t, Any* result) { *result = Any(std::string("not a number")); });
  NativeCallback callback(wrong, Sig({}, {S(ScalarKind::kI32)}));
  EXPECT_EQ(callback.as<int32_t()>()(), 0);
  Error e = Error::MoveFromRaised();
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_NE(e.message().find("callback"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("i32"), std::string::npos) << e.message();

  Function too_big = Function::FromPacked(
      [](const AnyView*, int32_t, Any* result) { *result = Any(int64_t{300}); });
  NativeCallback narrow(too_big, Sig({}, {S(ScalarKind::kU8)}));
  EXPECT_EQ(narrow.as<uint8_t()>()(), 0);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
}

TEST(Callback, StatusConventionWritesOutPointersAndReportsErrors) {
  bool fail = false;
  Function two = Function::FromPacked([&](const AnyView* args, int32_t, Any* result) {
    if (fail) throw KeyError("no such thing");
    int64_t x = args[0].cast<int64_t>();
    TVMFFIAny items[2] = {};
    items[0].type_index = kTVMFFIInt;
    items[0].v_int64 = x * 2;
    items[1].type_index = kTVMFFIFloat;
    items[1].v_float64 = static_cast<double>(x) / 4;
    TVMFFIObjectHandle array = nullptr;
    CheckCall(FFIJITArrayCreate(items, 2, &array));
    TVMFFIAny owned{};
    owned.type_index = kTVMFFIArray;
    owned.v_obj = static_cast<TVMFFIObject*>(array);
    *result = Any::Adopt(owned);
  });
  NativeCallback callback(two,
                          Sig({S(ScalarKind::kI32)}, {S(ScalarKind::kI16), S(ScalarKind::kF32)},
                              CallConvention::kStatus));
  auto* fn = callback.as<int(int32_t, int16_t*, float*)>();
  int16_t doubled = 0;
  float quarter = 0;
  ASSERT_EQ(fn(6, &doubled, &quarter), 0);
  EXPECT_EQ(doubled, 12);
  EXPECT_EQ(quarter, 1.5f);
  fail = true;
  EXPECT_EQ(fn(6, &doubled, &quarter), -1);
  Error e = Error::MoveFromRaised();
  EXPECT_EQ(e.kind(), "KeyError");
  EXPECT_EQ(e.message(), "no such thing");
}

TEST(Callback, SignaturesACallbackCannotHaveAreTypeErrors) {
  Function any_fn = Function::FromPacked([](const AnyView*, int32_t, Any*) {});
  try {
    NativeCallback bad(any_fn, Sig({}, {Type::Simple(TypeKind::kStr)}));
    ADD_FAILURE() << "a borrowed string result was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
    EXPECT_NE(e.message().find("str"), std::string::npos) << e.message();
  }
  try {
    NativeCallback bad(any_fn, Sig({Type::Sequence(TypeKind::kSList, {S(ScalarKind::kI64)})}, {}));
    ADD_FAILURE() << "a structure argument was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
  }
  try {
    NativeCallback bad(Function(), Sig({}, {}));
    ADD_FAILURE() << "a null function was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
  }
}

TEST(Callback, CodeAndReferencesAreReleased) {
  JitEngine engine;
  Function f = Function::FromPacked([](const AnyView*, int32_t, Any* r) { *r = Any(int64_t{1}); });
  for (int i = 0; i < 100; ++i) {
    NativeCallback cb(f, Sig({}, {S(ScalarKind::kI64)}), engine);
    EXPECT_EQ(cb.as<int64_t()>()(), 1);
    EXPECT_EQ(engine.Stats().live_callbacks, 1);
  }
  EXPECT_EQ(engine.Stats().live_callbacks, 0);
  EXPECT_EQ(engine.Stats().live_units, 0);
}

}  // namespace
}  // namespace ffijit::testing
