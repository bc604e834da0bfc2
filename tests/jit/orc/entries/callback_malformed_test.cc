// Native callbacks whose packed function returns a malformed value
// (docs/guide/05-conversion-contract.md, "Malformed values"): a NULL object under an object tag, a
// tag its object's header disagrees with, an inline string longer than 7 bytes, a malformed item in
// the Array of several results, an Array of results whose element store contradicts itself. Each is
// a ValueError naming the callback and the result, on the plain convention (zero returned, error
// left raised) and the status convention (-1); the reference the packed function handed over is
// released exactly once, and a NULL object is never touched.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "any_fixtures.h"
#include "ffijit/c_ext.h"
#include "ffijit/error.h"
#include "ffijit/function.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "signature_fixtures.h"

namespace ffijit::testing {
namespace {

using ffijit_tests::SmallStr;
using ffijit_tests::Tagged;

using ffijit_tests::Sig;

// What the packed function returns next (a raw value, handed over as is).
TVMFFIAny g_result;

int ReturnRaw(void*, const TVMFFIAny*, int32_t, TVMFFIAny* result) {
  *result = g_result;
  return 0;
}

uint64_t StrongCount(const TVMFFIObject* obj) {
  return FFIJITHeaderStrongCount(obj);
}

// An opaque object that counts its deletions; the test holds one reference of its own.
struct Tracked {
  Tracked() {
    TVMFFIObjectHandle handle = nullptr;
    EXPECT_EQ(TVMFFIObjectCreateOpaque(&deleted, kTVMFFIOpaquePyObject, &CountDeletion, &handle),
              0);
    obj = static_cast<TVMFFIObject*>(handle);
  }
  TVMFFIObject* HandOver() const {
    details::IncRef(obj);
    return obj;
  }
  static void CountDeletion(void* counter) { ++*static_cast<int*>(counter); }
  int deleted = 0;
  TVMFFIObject* obj = nullptr;
};

// The error a plain-convention callback left in the thread's slot.
std::string Raised() {
  Error e = Error::MoveFromRaised();
  return e.kind() + ": " + e.message();
}

class CallbackMalformed : public ::testing::Test {
 protected:
  void SetUp() override { g_result = TVMFFIAny{}; }
  Function packed_ = Function::FromSafeCall(nullptr, &ReturnRaw, nullptr);
};

TEST_F(CallbackMalformed, NullObjectIsAValueErrorOnBothConventions) {
  NativeCallback plain(packed_, Sig({}, {Type::Scalar(ScalarKind::kI64)}));
  NativeCallback status(packed_,
                        Sig({}, {Type::Scalar(ScalarKind::kI64)}, CallConvention::kStatus));
  const std::string what =
      "returned a malformed value for result #0: a value tagged `str` (type index 65) with a NULL "
      "object";
  g_result = Tagged(kTVMFFIStr, nullptr);
  EXPECT_EQ(plain.as<int64_t()>()(), 0);
  EXPECT_EQ(Raised(), "ValueError: Callback `callback() -> i64` " + what);
  int64_t out = 7;
  EXPECT_EQ(status.as<int(int64_t*)>()(&out), -1);
  EXPECT_EQ(Raised(), "ValueError: Callback `callback() -> i64` " + what);
  EXPECT_EQ(out, 7) << "a failed call writes no result";
}

// The contract comes before the result's type check: a `ptr` result reports the malformed inline
// string, not a type mismatch.
TEST_F(CallbackMalformed, MalformedValuesAreReportedBeforeTypeMismatches) {
  NativeCallback pointer(packed_, Sig({}, {Type::Simple(TypeKind::kOpaquePtr)}));
  g_result = SmallStr("abc", 99);
  EXPECT_EQ(pointer.as<void*()>()(), nullptr);
  EXPECT_EQ(Raised(),
            "ValueError: Callback `callback() -> ptr` returned a malformed value for result #0: "
            "an inline `str` (type index 11) of length 99 (at most 7 fit)");
  NativeCallback device(packed_, Sig({}, {Type::Simple(TypeKind::kDevice)}));
  g_result = SmallStr("cpu:0abc", 3);  // eighth byte not NUL: no string ends inside the value
  device.as<DLDevice()>()();
  EXPECT_EQ(Raised(),
            "ValueError: Callback `callback() -> Device` returned a malformed value for result #0: "
            "an inline `str` (type index 11) whose eighth byte is not NUL");
}

TEST_F(CallbackMalformed, TagHeaderMismatchIsReleasedExactlyOnce) {
  Tracked tracked;
  NativeCallback plain(packed_, Sig({}, {Type::Scalar(ScalarKind::kI32)}));
  NativeCallback status(packed_,
                        Sig({}, {Type::Scalar(ScalarKind::kI32)}, CallConvention::kStatus));
  const std::string message =
      "ValueError: Callback `callback() -> i32` returned a malformed value for result #0: a value "
      "tagged `ffi.Array` (type index 71) whose object is a `ffi.OpaquePyObject` (type index 74)";
  g_result = Tagged(kTVMFFIArray, tracked.HandOver());
  EXPECT_EQ(plain.as<int32_t()>()(), 0);
  EXPECT_EQ(Raised(), message);
  EXPECT_EQ(StrongCount(tracked.obj), 1u);
  g_result = Tagged(kTVMFFIArray, tracked.HandOver());
  int32_t out = 0;
  EXPECT_EQ(status.as<int(int32_t*)>()(&out), -1);
  EXPECT_EQ(Raised(), message);
  EXPECT_EQ(StrongCount(tracked.obj), 1u);
  // A well-formed object of the wrong type: a TypeError, and released as well.
  g_result = Tagged(kTVMFFIOpaquePyObject, tracked.HandOver());
  EXPECT_EQ(plain.as<int32_t()>()(), 0);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "TypeError");
  EXPECT_EQ(StrongCount(tracked.obj), 1u);
  EXPECT_EQ(tracked.deleted, 0);
  details::DecRef(tracked.obj);
  EXPECT_EQ(tracked.deleted, 1);
}

TEST_F(CallbackMalformed, SeveralResultsCheckTheArrayAndEachItem) {
  NativeCallback two(packed_,
                     Sig({}, {Type::Scalar(ScalarKind::kI64), Type::Scalar(ScalarKind::kF64)},
                         CallConvention::kStatus));
  auto* fn = two.as<int(int64_t*, double*)>();
  int64_t first = 0;
  double second = 0;

  g_result = Tagged(kTVMFFIArray, nullptr);
  EXPECT_EQ(fn(&first, &second), -1);
  EXPECT_EQ(Raised(),
            "ValueError: Callback `callback() -> (i64, f64)` returned a malformed value for result "
            "#0: a value tagged `ffi.Array` (type index 71) with a NULL object");

  // An item made malformed after the Array was built (the Array checked it on the way in).
  TVMFFIAny items[2] = {};
  items[0].type_index = kTVMFFIInt;
  items[0].v_int64 = 5;
  items[1].type_index = kTVMFFIFloat;
  items[1].v_float64 = 2.5;
  TVMFFIObjectHandle array = nullptr;
  ASSERT_EQ(FFIJITArrayCreate(items, 2, &array), 0);
  auto* cell = reinterpret_cast<FFIJITArrayCell*>(static_cast<TVMFFIObject*>(array) + 1);
  cell->data[1] = Tagged(kTVMFFIStr, nullptr);
  details::IncRef(static_cast<TVMFFIObject*>(array));  // the packed function hands one over
  g_result = Tagged(kTVMFFIArray, static_cast<TVMFFIObject*>(array));
  EXPECT_EQ(fn(&first, &second), -1);
  EXPECT_EQ(Raised(),
            "ValueError: Callback `callback() -> (i64, f64)` returned a malformed value for result "
            "#1: a value tagged `str` (type index 65) with a NULL object");
  EXPECT_EQ(StrongCount(static_cast<TVMFFIObject*>(array)), 1u);

  cell->data[1] = items[1];
  details::IncRef(static_cast<TVMFFIObject*>(array));
  ASSERT_EQ(fn(&first, &second), 0);
  EXPECT_EQ(first, 5);

  // An Array whose store says two elements at a NULL data pointer: refused before any read.
  ffijit_tests::ForgedArray forged(2);
  forged.cell()->data = nullptr;
  g_result = forged.any();
  details::IncRef(g_result.v_obj);
  first = 0;
  EXPECT_EQ(fn(&first, &second), -1);
  EXPECT_EQ(Raised(),
            "ValueError: Callback `callback() -> (i64, f64)` returned a malformed Array of "
            "results: an `ffi.Array` (type index 71) of size 2 with a NULL data pointer");
  EXPECT_EQ(StrongCount(g_result.v_obj), 1u);

  g_result = Tagged(kTVMFFIArray, static_cast<TVMFFIObject*>(array));
  details::IncRef(static_cast<TVMFFIObject*>(array));
  ASSERT_EQ(fn(&first, &second), 0);
  EXPECT_EQ(first, 5);
  EXPECT_EQ(second, 2.5);
  EXPECT_EQ(StrongCount(static_cast<TVMFFIObject*>(array)), 1u);
  TVMFFIObjectDecRef(array);
}

}  // namespace
}  // namespace ffijit::testing
