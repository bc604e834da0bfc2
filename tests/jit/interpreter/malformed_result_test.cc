// Malformed values coming back from a callee (docs/guide/05-conversion-contract.md, "Malformed
// values"): a native whose `any` result breaks the contract, on every executor (interpreter stub
// and libffi, JIT cold and hot), plain and status convention, one result or several; and a packed
// function whose result does, called through Function::operator(), Function::CallPacked and
// TypedFunction. Each error is asserted by kind and message, and each reference the callee handed
// over is released exactly once (observed through the object's strong count and its deleter), a
// NULL object never touched.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "any_fixtures.h"
#include "catch_error.h"
#include "ffijit/container.h"
#include "ffijit/function.h"
#include "ffijit/jit/typed_function.h"
#include "ffijit/tensor.h"
#include "jit/interp_test_util.h"

namespace ffijit::testing {
namespace {

using ffijit_tests::SmallStr;
using ffijit_tests::Tagged;

using ffijit_tests::CatchError;

// What the natives below hand back (tests run one at a time: plain globals suffice).
TVMFFIAny g_results[3];

TVMFFIAny ReturnAny() {
  return g_results[0];
}
int ReturnAnyStatus(TVMFFIAny* out) {
  *out = g_results[0];
  return 0;
}
void ReturnThree(TVMFFIAny* a, TVMFFIAny* b, TVMFFIAny* c) {
  *a = g_results[0];
  *b = g_results[1];
  *c = g_results[2];
}

// An opaque object that counts how often it is deleted: the test's own reference keeps it alive,
// so after a call its strong count says whether the callee's reference was released.
class Tracked {
 public:
  Tracked() {
    TVMFFIObjectHandle handle = nullptr;
    EXPECT_EQ(TVMFFIObjectCreateOpaque(&deleted_, kTVMFFIOpaquePyObject, &CountDeletion, &handle),
              0);
    obj_ = static_cast<TVMFFIObject*>(handle);
  }
  ~Tracked() {
    if (obj_ != nullptr) Release();
  }
  // One more strong reference, for a callee to hand over.
  TVMFFIObject* HandOver() {
    details::IncRef(obj_);
    return obj_;
  }
  TVMFFIObject* get() const { return obj_; }
  uint64_t strong() const { return FFIJITHeaderStrongCount(obj_); }
  int deleted() const { return deleted_; }
  // Drops the test's own reference: the object dies now if nobody else holds one.
  void Release() {
    details::DecRef(obj_);
    obj_ = nullptr;
  }

 private:
  static void CountDeletion(void* counter) { ++*static_cast<int*>(counter); }
  int deleted_ = 0;
  TVMFFIObject* obj_ = nullptr;
};

std::string Failure(const Function& f) {
  Error e = CallRawError(f, {});
  return e.kind() + ": " + e.message();
}

TypePtr AnyType() {
  return T(TypeKind::kUnknown);
}

class MalformedResultTest : public ::testing::TestWithParam<CallPath> {
 protected:
  void SetUp() override {
    for (TVMFFIAny& r : g_results) r = TVMFFIAny{};
  }
  Function Plain() { return Bind("hostile.ret", &ReturnAny, Sig({}, {AnyType()}), GetParam()); }
  Function Status() {
    return Bind("hostile.ret_status", &ReturnAnyStatus,
                Sig({}, {AnyType()}, CallConvention::kStatus), GetParam());
  }
  Function Three() {
    return Bind("hostile.ret3", &ReturnThree, Sig({}, {AnyType(), AnyType(), AnyType()}),
                GetParam());
  }
};

TEST_P(MalformedResultTest, NullObjectIsRejectedAndNotTouched) {
  g_results[0] = Tagged(kTVMFFIStr, nullptr);
  EXPECT_EQ(Failure(Plain()),
            "RuntimeError: `hostile.ret` returned a malformed value for result #0: a value tagged "
            "`str` (type index 65) with a NULL object");
  EXPECT_EQ(Failure(Status()),
            "RuntimeError: `hostile.ret_status` returned a malformed value for result #0: a value "
            "tagged `str` (type index 65) with a NULL object");
  g_results[0] = Tagged(kTVMFFIArray, nullptr);
  EXPECT_EQ(Failure(Plain()),
            "RuntimeError: `hostile.ret` returned a malformed value for result #0: a value tagged "
            "`ffi.Array` (type index 71) with a NULL object");
}

TEST_P(MalformedResultTest, TagHeaderMismatchIsRejectedAndReleasedOnce) {
  Tracked tracked;
  ASSERT_EQ(tracked.strong(), 1u);
  for (Function f : {Plain(), Status()}) {
    g_results[0] = Tagged(kTVMFFIArray, tracked.HandOver());
    ASSERT_EQ(tracked.strong(), 2u);
    Error e = CallRawError(f, {});
    EXPECT_EQ(e.kind(), "RuntimeError");
    EXPECT_NE(e.message().find("returned a malformed value for result #0: a value tagged "
                               "`ffi.Array` (type index 71) whose object is a "
                               "`ffi.OpaquePyObject` (type index 74)"),
              std::string::npos)
        << e.message();
    EXPECT_EQ(tracked.strong(), 1u) << "the native's reference must be released";
    EXPECT_EQ(tracked.deleted(), 0);
  }
  tracked.Release();
  EXPECT_EQ(tracked.deleted(), 1);
}

TEST_P(MalformedResultTest, InlineStringsAndTensorsAreChecked) {
  g_results[0] = SmallStr("abc", 99);
  EXPECT_EQ(Failure(Plain()),
            "RuntimeError: `hostile.ret` returned a malformed value for result #0: an inline `str` "
            "(type index 11) of length 99 (at most 7 fit)");
  g_results[0] = SmallStr("abcdefgh", 3);
  EXPECT_EQ(Failure(Plain()),
            "RuntimeError: `hostile.ret` returned a malformed value for result #0: an inline `str` "
            "(type index 11) whose eighth byte is not NUL");
  DLTensor borrowed{};
  borrowed.ndim = -1;
  g_results[0] = RawPtr(kTVMFFIDLTensorPtr, &borrowed);
  EXPECT_EQ(Failure(Plain()),
            "RuntimeError: `hostile.ret` returned a malformed value for result #0: an `ndarray` "
            "(type index 7) with ndim -1");

  // A Tensor object without a shape: malformed, and its reference is still released.
  Tensor tensor = Tensor::Empty({2, 3}, DataType::Float(32));
  auto* dl = reinterpret_cast<DLTensor*>(tensor.get() + 1);
  int64_t* shape = dl->shape;
  dl->shape = nullptr;
  details::IncRef(tensor.get());
  g_results[0] = Tagged(kTVMFFITensor, tensor.get());
  const std::string failure = Failure(Plain());
  dl->shape = shape;
  EXPECT_EQ(failure,
            "RuntimeError: `hostile.ret` returned a malformed value for result #0: an `ndarray` "
            "(type index 70) with ndim 2 and a NULL shape");
  EXPECT_EQ(tensor.use_count(), 1);
}

uint64_t StrongCount(const TVMFFIObject* obj) {
  return FFIJITHeaderStrongCount(obj);
}

TEST_P(MalformedResultTest, WellFormedResultsPassWithTheirReference) {
  String text("a heap string, longer than seven bytes");
  TVMFFIObject* obj = text.any().v_obj;
  details::IncRef(obj);
  g_results[0] = text.any();
  Any result = CallRaw(Plain(), {});
  EXPECT_EQ(result.cast<std::string>(), "a heap string, longer than seven bytes");
  EXPECT_EQ(StrongCount(obj), 2u);  // the test's and the result's
  result = Any();
  EXPECT_EQ(StrongCount(obj), 1u);
  g_results[0] = SmallStr("abcdefg", 7);
  EXPECT_EQ(CallRaw(Plain(), {}).cast<std::string>(), "abcdefg");
}

// With several results the first malformed one is reported; every reference the native handed
// over is released once (the boxed ones, the malformed one, those not boxed yet), NULL objects
// are left alone, and no release overwrites the raised error.
TEST_P(MalformedResultTest, SeveralResultsReleaseEveryReferenceOnce) {
  Tracked before, bad, after;
  g_results[0] = Tagged(kTVMFFIOpaquePyObject, before.HandOver());
  g_results[1] = Tagged(kTVMFFIMap, bad.HandOver());
  g_results[2] = Tagged(kTVMFFIOpaquePyObject, after.HandOver());
  Error e = CallRawError(Three(), {});
  EXPECT_EQ(e.kind(), "RuntimeError");
  EXPECT_EQ(e.message(),
            "`hostile.ret3` returned a malformed value for result #1: a value tagged `ffi.Map` "
            "(type index 72) whose object is a `ffi.OpaquePyObject` (type index 74)");
  EXPECT_EQ(before.strong(), 1u);
  EXPECT_EQ(bad.strong(), 1u);
  EXPECT_EQ(after.strong(), 1u);

  // A NULL object after the failing result: not released (and not reported instead).
  g_results[0] = Tagged(kTVMFFIStr, nullptr);
  g_results[1] = Tagged(kTVMFFIOpaquePyObject, after.HandOver());
  g_results[2] = Tagged(kTVMFFIArray, nullptr);
  e = CallRawError(Three(), {});
  EXPECT_EQ(e.kind(), "RuntimeError");
  EXPECT_EQ(e.message(),
            "`hostile.ret3` returned a malformed value for result #0: a value tagged `str` (type "
            "index 65) with a NULL object");
  EXPECT_EQ(after.strong(), 1u);

  // All well-formed: an Array holding the three.
  g_results[0] = Tagged(kTVMFFIOpaquePyObject, before.HandOver());
  g_results[1] = SmallStr("ok", 2);
  g_results[2] = TVMFFIAny{};
  Any all = CallRaw(Three(), {});
  ASSERT_EQ(all.type_index(), kTVMFFIArray);
  EXPECT_EQ(before.strong(), 2u);
  all = Any();
  EXPECT_EQ(before.strong(), 1u);
  for (Tracked* t : {&before, &bad, &after}) {
    t->Release();
    EXPECT_EQ(t->deleted(), 1);
  }
}

// The same three leaves as one structure result: the error names the leaf's place, every
// reference handed over is released once; well-formed, the structure holds the objects.
TEST_P(MalformedResultTest, StructureResultLeavesReleaseEveryReferenceOnce) {
  Function nested =
      Bind("hostile.nested", &ReturnThree,
           Sig({}, {Type::SDict({"a", "b"},
                                {Type::Sequence(TypeKind::kSTuple, {AnyType(), nullptr, AnyType()}),
                                 AnyType()})}),
           GetParam());
  Tracked before, bad, after;
  g_results[0] = Tagged(kTVMFFIOpaquePyObject, before.HandOver());
  g_results[1] = Tagged(kTVMFFIMap, bad.HandOver());
  g_results[2] = Tagged(kTVMFFIOpaquePyObject, after.HandOver());
  Error e = CallRawError(nested, {});
  EXPECT_EQ(e.kind(), "RuntimeError");
  EXPECT_EQ(e.message(),
            "`hostile.nested` returned a malformed value for result #0[\"a\"][2]: a value tagged "
            "`ffi.Map` (type index 72) whose object is a `ffi.OpaquePyObject` (type index 74)");
  EXPECT_EQ(before.strong(), 1u);
  EXPECT_EQ(bad.strong(), 1u);
  EXPECT_EQ(after.strong(), 1u);

  g_results[0] = Tagged(kTVMFFIOpaquePyObject, before.HandOver());
  g_results[1] = Tagged(kTVMFFIOpaquePyObject, after.HandOver());
  g_results[2] = SmallStr("ok", 2);
  Any all = CallRaw(nested, {});
  ASSERT_EQ(all.type_index(), kTVMFFIMap);
  Map map = all.cast<Map>();
  Array tuple = map.at(Any("a")).cast<Array>();
  ASSERT_EQ(tuple.size(), 3);
  EXPECT_EQ(tuple[0].raw().v_obj, before.get());
  EXPECT_TRUE(tuple[1].is_none());
  EXPECT_EQ(tuple[2].raw().v_obj, after.get());
  EXPECT_EQ(map.at(Any("b")).cast<std::string>(), "ok");
  EXPECT_EQ(before.strong(), 2u);
  EXPECT_EQ(after.strong(), 2u);
  tuple = Array();
  map = Map();
  all = Any();
  EXPECT_EQ(before.strong(), 1u);
  EXPECT_EQ(after.strong(), 1u);
  for (Tracked* t : {&before, &bad, &after}) {
    t->Release();
    EXPECT_EQ(t->deleted(), 1);
  }
}

INSTANTIATE_TEST_SUITE_P(AllPaths, MalformedResultTest, AllCallPaths(), PathName);

#if FFIJIT_HAVE_LLVM
// Interpreter and JIT (cold and hot) raise the same kind and message for every malformed result,
// and release the same references.
TEST(MalformedResultDifferential, InterpreterAndJitAgree) {
  String text("header says str");
  DLTensor no_shape{};
  no_shape.ndim = 3;
  Tracked tracked;
  const std::vector<TVMFFIAny> values = {Tagged(kTVMFFIStr, nullptr),
                                         Tagged(kTVMFFIBytes, nullptr),
                                         Tagged(kTVMFFITensor, nullptr),
                                         Tagged(kTVMFFIFunction, nullptr),
                                         Tagged(kTVMFFIArray, text.any().v_obj),
                                         Tagged(kTVMFFIMap, tracked.get()),
                                         SmallStr("abc", 8),
                                         SmallStr("abcdefgh", 3),
                                         RawPtr(kTVMFFIDLTensorPtr, &no_shape)};
  std::vector<Function> functions;
  for (CallPath path : {CallPath::kStub, CallPath::kLibffi, CallPath::kJit, CallPath::kHot}) {
    functions.push_back(Bind("hostile.diff", &ReturnAny, Sig({}, {AnyType()}), path));
  }
  for (TVMFFIAny value : values) {
    std::vector<Error> errors;
    for (const Function& f : functions) {
      if (value.type_index >= kTVMFFIStaticObjectBegin && value.v_obj != nullptr) {
        details::IncRef(value.v_obj);  // the reference each native hands over
      }
      g_results[0] = value;
      errors.push_back(CallRawError(f, {}));
    }
    for (const Error& e : errors) {
      EXPECT_EQ(e.kind(), "RuntimeError");
      EXPECT_EQ(e.message(), errors[0].message());
    }
  }
  EXPECT_EQ(StrongCount(text.any().v_obj), 1u);
  EXPECT_EQ(tracked.strong(), 1u);
}
#endif

// ---- A packed function's result, consumed by C++ ----

int ReturnGlobalResult(void*, const TVMFFIAny*, int32_t, TVMFFIAny* result) {
  *result = g_results[0];
  return 0;
}

TEST(MalformedPackedResult, FunctionCallRejectsAndReleases) {
  Function f = Function::FromSafeCall(nullptr, &ReturnGlobalResult, nullptr);
  g_results[0] = Tagged(kTVMFFIStr, nullptr);
  Error e = CatchError([&] { f(); });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(),
            "a called function returned a malformed value: a value tagged `str` (type index 65) "
            "with a NULL object");
  e = CatchError([&] { f.CallPacked(nullptr, 0); });
  EXPECT_EQ(e.message(),
            "a called function returned a malformed value: a value tagged `str` (type index 65) "
            "with a NULL object");
  g_results[0] = SmallStr("abc", 200);
  e = CatchError([&] { f(int64_t{1}, "x"); });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(),
            "a called function returned a malformed value: an inline `str` (type index 11) of "
            "length 200 (at most 7 fit)");

  Tracked tracked;
  g_results[0] = Tagged(kTVMFFIArray, tracked.HandOver());
  e = CatchError([&] { f(); });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(),
            "a called function returned a malformed value: a value tagged `ffi.Array` (type index "
            "71) whose object is a `ffi.OpaquePyObject` (type index 74)");
  EXPECT_EQ(tracked.strong(), 1u);
  g_results[0] = Tagged(kTVMFFIArray, tracked.HandOver());
  e = CatchError([&] { f.CallPacked(nullptr, 0); });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(tracked.strong(), 1u);

  // A well-formed result keeps its reference in the returned Any.
  g_results[0] = Tagged(kTVMFFIOpaquePyObject, tracked.HandOver());
  {
    Any ok = f();
    EXPECT_EQ(ok.type_index(), kTVMFFIOpaquePyObject);
    EXPECT_EQ(tracked.strong(), 2u);
  }
  EXPECT_EQ(tracked.strong(), 1u);
  tracked.Release();
  EXPECT_EQ(tracked.deleted(), 1);
  g_results[0] = TVMFFIAny{};
}

TEST(MalformedPackedResult, TypedFunctionRejectsBeforeCasting) {
  Function f = Function::FromSafeCall(nullptr, &ReturnGlobalResult, nullptr);
  TypedFunction<int64_t()> typed(f);
  ASSERT_FALSE(typed.is_direct());
  g_results[0] = Tagged(kTVMFFIStr, nullptr);
  Error e = CatchError([&] { typed(); });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(),
            "a called function returned a malformed value: a value tagged `str` (type index 65) "
            "with a NULL object");
  g_results[0].type_index = kTVMFFIInt;
  g_results[0].v_int64 = 42;
  EXPECT_EQ(typed(), 42);
  g_results[0] = TVMFFIAny{};
}

}  // namespace
}  // namespace ffijit::testing
