// The value-validity contract (docs/guide/05-conversion-contract.md, "Malformed values") on every
// call path: object tags with NULL or mismatched objects, oversized inline strings, tensors without
// a shape, inside and outside structures, for the interpreter (stub and libffi) and the JIT thunk
// alike, plus the C and C++ entry points that read incoming values.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "any_fixtures.h"
#include "catch_error.h"
#include "ffijit/c_env_api.h"
#include "ffijit/container.h"
#include "ffijit/function.h"
#include "ffijit/reflect/metadata.h"
#include "jit/interp_test_util.h"

namespace ffijit::testing {
namespace {

using ffijit_tests::ForgedArray;
using ffijit_tests::SmallStr;
using ffijit_tests::Tagged;

using ffijit_tests::CatchError;

int64_t TakeStr(const char* s) {
  return static_cast<int64_t>(std::strlen(s));
}
int64_t TakeBytes(TVMFFIByteArray b) {
  return static_cast<int64_t>(b.size);
}
int64_t TakeTensor(DLTensor* t) {
  return t->ndim;
}
int64_t TakeObject(TVMFFIObject* o) {
  return o == nullptr ? -1 : o->type_index;
}
int64_t TakeAny(const TVMFFIAny* a) {
  return a->type_index;
}
int64_t TakeInt(int64_t v) {
  return v;
}
int64_t TakeTwo(int64_t a, int64_t b) {
  return a * 10 + b;
}
int64_t TakeThree(int64_t a, int64_t b, int64_t c) {
  return a * 100 + b * 10 + c;
}
// A data deleter for element storage the test owns: the forged store says who frees it.
void KeepData(void*) {}

// The error kind and message of one raw call.
std::string Failure(const Function& f, std::vector<TVMFFIAny> args) {
  Error e = CallRawError(f, std::move(args));
  return e.kind() + ": " + e.message();
}

class MalformedTest : public ::testing::TestWithParam<CallPath> {
 protected:
  Function Str() {
    return Bind("hostile.str", &TakeStr, Sig({T(TypeKind::kStr)}, {S(ScalarKind::kI64)}),
                GetParam());
  }
  Function Bytes() {
    return Bind("hostile.bytes", &TakeBytes, Sig({T(TypeKind::kBytes)}, {S(ScalarKind::kI64)}),
                GetParam());
  }
  Function Tensor() {
    return Bind("hostile.tensor", &TakeTensor,
                Sig({Type::NDArray(ScalarKind::kAny, -1, {})}, {S(ScalarKind::kI64)}), GetParam());
  }
  Function Object(const std::string& key = "") {
    return Bind("hostile.object", &TakeObject, Sig({Type::Object(key)}, {S(ScalarKind::kI64)}),
                GetParam());
  }
  Function AnyParam() {
    return Bind("hostile.any", &TakeAny, Sig({T(TypeKind::kUnknown)}, {S(ScalarKind::kI64)}),
                GetParam());
  }
  Function Int() {
    return Bind("hostile.int", &TakeInt, Sig({S(ScalarKind::kI64)}, {S(ScalarKind::kI64)}),
                GetParam());
  }
  Function Pair() {
    return Bind("hostile.pair", &TakeTwo,
                Sig({Type::Sequence(TypeKind::kSList, {S(ScalarKind::kI64), S(ScalarKind::kI64)})},
                    {S(ScalarKind::kI64)}),
                GetParam());
  }
  Function Nested() {
    const TypePtr pair =
        Type::Sequence(TypeKind::kSList, {S(ScalarKind::kI64), S(ScalarKind::kI64)});
    return Bind(
        "hostile.nested", &TakeThree,
        Sig({Type::Sequence(TypeKind::kSList, {pair, S(ScalarKind::kI64)})}, {S(ScalarKind::kI64)}),
        GetParam());
  }
  Function Dict() {
    return Bind("hostile.dict", &TakeTwo,
                Sig({Type::SDict({"a", "b"}, {S(ScalarKind::kI64), S(ScalarKind::kI64)})},
                    {S(ScalarKind::kI64)}),
                GetParam());
  }
};

TEST_P(MalformedTest, ObjectTagWithNullObjectIsRejected) {
  EXPECT_EQ(Failure(Str(), {Tagged(kTVMFFIStr, nullptr)}),
            "ValueError: Malformed value on argument #0 when calling: `hostile.str(str) -> i64`. "
            "Got a value tagged `str` (type index 65) with a NULL object");
  EXPECT_EQ(Failure(Bytes(), {Tagged(kTVMFFIBytes, nullptr)}),
            "ValueError: Malformed value on argument #0 when calling: `hostile.bytes(bytes) -> "
            "i64`. Got a value tagged `bytes` (type index 66) with a NULL object");
  EXPECT_EQ(
      Failure(Tensor(), {Tagged(kTVMFFITensor, nullptr)}),
      "ValueError: Malformed value on argument #0 when calling: `hostile.tensor(ndarray<any>) -> "
      "i64`. Got a value tagged `ndarray` (type index 70) with a NULL object");
  // A generic object parameter no longer passes the NULL on.
  EXPECT_EQ(Failure(Object(), {Tagged(kTVMFFIArray, nullptr)}),
            "ValueError: Malformed value on argument #0 when calling: `hostile.object(object) -> "
            "i64`. Got a value tagged `ffi.Array` (type index 71) with a NULL object");
  EXPECT_EQ(Failure(AnyParam(), {Tagged(kTVMFFIMap, nullptr)}),
            "ValueError: Malformed value on argument #0 when calling: `hostile.any(any) -> i64`. "
            "Got a value tagged `ffi.Map` (type index 72) with a NULL object");
  // The contract comes before the type check: an i64 parameter reports the malformed value too.
  EXPECT_EQ(Failure(Int(), {Tagged(kTVMFFIStr, nullptr)}),
            "ValueError: Malformed value on argument #0 when calling: `hostile.int(i64) -> i64`. "
            "Got a value tagged `str` (type index 65) with a NULL object");
}

TEST_P(MalformedTest, TagAndHeaderMustAgree) {
  String text("a string object, not an array");
  TVMFFIObject* str_obj = text.any().v_obj;
  const std::string got_str =
      "Got a value tagged `ffi.Array` (type index 71) whose object is a `ffi.String` "
      "(type index 65)";
  EXPECT_EQ(Failure(Object(), {Tagged(kTVMFFIArray, str_obj)}),
            "ValueError: Malformed value on argument #0 when calling: `hostile.object(object) -> "
            "i64`. " +
                got_str);
  EXPECT_EQ(Failure(Object("ffi.Array"), {Tagged(kTVMFFIArray, str_obj)}),
            "ValueError: Malformed value on argument #0 when calling: "
            "`hostile.object(object<ffi.Array>) -> i64`. " +
                got_str);
  EXPECT_EQ(Failure(Pair(), {Tagged(kTVMFFIArray, str_obj)}),
            "ValueError: Malformed value on argument #0 when calling: "
            "`hostile.pair(slist<i64,i64>) -> i64`. " +
                got_str);
  Array array = Array({Any(int64_t{1})});
  EXPECT_EQ(Failure(Str(), {Tagged(kTVMFFIStr, array.get())}),
            "ValueError: Malformed value on argument #0 when calling: `hostile.str(str) -> i64`. "
            "Got a value tagged `str` (type index 65) whose object is a `ffi.Array` (type index "
            "71)");
  // A header that is a subtype of the tag is well-formed: an Array passed under the Object tag.
  EXPECT_EQ(CallRaw(Object(), {Tagged(kTVMFFIObject, array.get())}).cast<int64_t>(), kTVMFFIArray);
  // And the well-formed value itself still converts.
  EXPECT_EQ(CallRaw(Str(), {Tagged(kTVMFFIStr, str_obj)}).cast<int64_t>(),
            static_cast<int64_t>(text.size()));
}

TEST_P(MalformedTest, InlineStringsHoldAtMostSevenBytes) {
  EXPECT_EQ(Failure(Str(), {SmallStr("abc", 99)}),
            "ValueError: Malformed value on argument #0 when calling: `hostile.str(str) -> i64`. "
            "Got an inline `str` (type index 11) of length 99 (at most 7 fit)");
  EXPECT_EQ(Failure(Bytes(), {SmallStr("abc", 8)}),
            "ValueError: Malformed value on argument #0 when calling: `hostile.bytes(bytes) -> "
            "i64`. Got an inline `str` (type index 11) of length 8 (at most 7 fit)");
  TVMFFIAny small_bytes = SmallStr("xy", 200);
  small_bytes.type_index = kTVMFFISmallBytes;
  EXPECT_EQ(Failure(Bytes(), {small_bytes}),
            "ValueError: Malformed value on argument #0 when calling: `hostile.bytes(bytes) -> "
            "i64`. Got an inline `bytes` (type index 12) of length 200 (at most 7 fit)");
  EXPECT_EQ(Failure(Str(), {SmallStr("abcdefgh", 7)}),
            "ValueError: Malformed value on argument #0 when calling: `hostile.str(str) -> i64`. "
            "Got an inline `str` (type index 11) whose eighth byte is not NUL");
  // Seven bytes and a NUL is the longest well-formed inline string.
  EXPECT_EQ(CallRaw(Str(), {SmallStr("abcdefg", 7)}).cast<int64_t>(), 7);
  small_bytes.small_str_len = 2;
  EXPECT_EQ(CallRaw(Bytes(), {small_bytes}).cast<int64_t>(), 2);
}

TEST_P(MalformedTest, TensorsWithDimensionsHaveAShape) {
  DLTensor t{};
  t.ndim = 2;
  t.shape = nullptr;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  EXPECT_EQ(
      Failure(Tensor(), {RawPtr(kTVMFFIDLTensorPtr, &t)}),
      "ValueError: Malformed value on argument #0 when calling: `hostile.tensor(ndarray<any>) -> "
      "i64`. Got an `ndarray` (type index 7) with ndim 2 and a NULL shape");
  t.ndim = -1;
  EXPECT_EQ(
      Failure(Tensor(), {RawPtr(kTVMFFIDLTensorPtr, &t)}),
      "ValueError: Malformed value on argument #0 when calling: `hostile.tensor(ndarray<any>) -> "
      "i64`. Got an `ndarray` (type index 7) with ndim -1");
  t.ndim = 0;  // a scalar needs no shape
  EXPECT_EQ(CallRaw(Tensor(), {RawPtr(kTVMFFIDLTensorPtr, &t)}).cast<int64_t>(), 0);
}

int64_t TakeFloatMatrix(DLTensor* t) {
  return t->shape[0] * t->shape[1];
}

// A tensor mismatch names what the check read and no more: a huge ndim (whose shape, owned by the
// caller, has only two elements here) is reported by its ndim, and the shape is quoted only when
// the rank is the signature's, then at most 8 dims of it.
TEST_P(MalformedTest, TensorMismatchMessagesAreBounded) {
  Function matrix =
      Bind("hostile.matrix", &TakeFloatMatrix,
           Sig({Type::NDArray(ScalarKind::kF32, 2, {-1, 3})}, {S(ScalarKind::kI64)}), GetParam());
  Function any_rank =
      Bind("hostile.any_rank", &TakeTensor,
           Sig({Type::NDArray(ScalarKind::kF32, -1, {})}, {S(ScalarKind::kI64)}), GetParam());
  std::vector<int64_t> dims(10, 1);
  dims[9] = 4;
  Function rank10 =
      Bind("hostile.rank10", &TakeTensor,
           Sig({Type::NDArray(ScalarKind::kF32, 10, dims)}, {S(ScalarKind::kI64)}), GetParam());
  auto shape = std::make_unique<int64_t[]>(2);  // on the heap: ASan sees any read past it
  shape[0] = 2;
  shape[1] = 3;
  DLTensor huge{};
  huge.ndim = 1 << 30;
  huge.shape = shape.get();
  huge.dtype = DLDataType{kDLFloat, 32, 1};
  EXPECT_EQ(Failure(matrix, {RawPtr(kTVMFFIDLTensorPtr, &huge)}),
            "ValueError: Mismatched tensor on argument #0 when calling: "
            "`hostile.matrix(ndarray<f32,[?,3]>) -> i64`. Expected `ndarray<f32,[?,3]>` but got an "
            "ndarray of float32 with ndim 1073741824");
  huge.dtype = DLDataType{kDLInt, 8, 1};
  EXPECT_EQ(Failure(any_rank, {RawPtr(kTVMFFIDLTensorPtr, &huge)}),
            "ValueError: Mismatched tensor on argument #0 when calling: "
            "`hostile.any_rank(ndarray<f32>) -> i64`. Expected `ndarray<f32>` but got an ndarray "
            "of int8 with ndim 1073741824");
  // The signature's rank: its dims are quoted.
  huge.ndim = 2;
  huge.dtype = DLDataType{kDLFloat, 32, 1};
  shape[1] = 4;
  EXPECT_EQ(Failure(matrix, {RawPtr(kTVMFFIDLTensorPtr, &huge)}),
            "ValueError: Mismatched tensor on argument #0 when calling: "
            "`hostile.matrix(ndarray<f32,[?,3]>) -> i64`. Expected `ndarray<f32,[?,3]>` but got an "
            "ndarray of float32 with shape (2, 4)");
  // A long (signature) rank: the first 8 dims, then the ndim.
  std::vector<int64_t> ten(10, 1);
  DLTensor wide{};
  wide.ndim = 10;
  wide.shape = ten.data();
  wide.dtype = DLDataType{kDLFloat, 32, 1};
  const std::string failure = Failure(rank10, {RawPtr(kTVMFFIDLTensorPtr, &wide)});
  EXPECT_NE(failure.find("but got an ndarray of float32 with shape (1, 1, 1, 1, 1, 1, 1, 1, "
                         "\xe2\x80\xa6) of ndim 10"),
            std::string::npos)
      << failure;
  ten[9] = 4;
  EXPECT_EQ(CallRaw(rank10, {RawPtr(kTVMFFIDLTensorPtr, &wide)}).cast<int64_t>(), 10);
}

TEST_P(MalformedTest, StructuresCheckContainersAndElements) {
  EXPECT_EQ(Failure(Pair(), {Tagged(kTVMFFIArray, nullptr)}),
            "ValueError: Malformed value on argument #0 when calling: "
            "`hostile.pair(slist<i64,i64>) -> i64`. Got a value tagged `ffi.Array` (type index "
            "71) with a NULL object");
  EXPECT_EQ(Failure(Dict(), {Tagged(kTVMFFIMap, nullptr)}),
            "ValueError: Malformed value on argument #0 when calling: "
            "`hostile.dict(sdict<a:i64,b:i64>) -> i64`. Got a value tagged `ffi.Map` (type index "
            "72) with a NULL object");
  // An element turned malformed after the Array was built (the Array checked it on the way in).
  Array array = Array({Any(int64_t{1}), Any(int64_t{2})});
  auto* cell = reinterpret_cast<FFIJITArrayCell*>(array.get() + 1);
  cell->data[1] = Tagged(kTVMFFIStr, nullptr);
  TVMFFIAny arg = Tagged(kTVMFFIArray, array.get());
  EXPECT_EQ(Failure(Pair(), {arg}),
            "ValueError: Malformed value on argument #0[1] when calling: "
            "`hostile.pair(slist<i64,i64>) -> i64`. Got a value tagged `str` (type index 65) with "
            "a NULL object");
  cell->data[1] = TVMFFIAny{};
  cell->data[1].type_index = kTVMFFIInt;
  cell->data[1].v_int64 = 2;
  EXPECT_EQ(CallRaw(Pair(), {arg}).cast<int64_t>(), 12);
}

// An Array whose element store contradicts itself is malformed before any element is read: a NULL
// data pointer was taken for "an error is already set" and the call failed with no error.
TEST_P(MalformedTest, ArrayElementStoreMustBeConsistent) {
  const std::string pair_call =
      "ValueError: Malformed value on argument #0 when calling: "
      "`hostile.pair(slist<i64,i64>) -> i64`. Got an `ffi.Array` (type index 71) of size ";
  ForgedArray forged(2);
  forged.cell()->data = nullptr;
  EXPECT_EQ(Failure(Pair(), {forged.any()}), pair_call + "2 with a NULL data pointer");
  // Malformed comes before the length check.
  forged.cell()->size = 3;
  EXPECT_EQ(Failure(Pair(), {forged.any()}), pair_call + "3 with a NULL data pointer");
  forged.cell()->size = -1;
  EXPECT_EQ(Failure(Pair(), {forged.any()}), pair_call + "-1");
  // Inline storage holds `capacity` elements, no more.
  forged.cell()->data = forged.inline_items();
  forged.cell()->size = 2;
  forged.cell()->capacity = 1;
  EXPECT_EQ(Failure(Pair(), {forged.any()}), pair_call + "2 and capacity 1");
  // Storage elsewhere is the Array's only if a data deleter frees it.
  TVMFFIAny outside[2] = {};
  outside[0].type_index = outside[1].type_index = kTVMFFIInt;
  outside[0].v_int64 = 3;
  outside[1].v_int64 = 4;
  forged.cell()->data = outside;
  forged.cell()->capacity = 2;
  EXPECT_EQ(Failure(Pair(), {forged.any()}),
            pair_call +
                "2 whose data pointer is neither its inline elements nor freed by a data "
                "deleter");
  forged.cell()->data_deleter = &KeepData;
  EXPECT_EQ(CallRaw(Pair(), {forged.any()}).cast<int64_t>(), 34);
  forged.cell()->data = nullptr;
  EXPECT_EQ(Failure(Pair(), {forged.any()}), pair_call + "2 with a NULL data pointer");
  forged.cell()->data = forged.inline_items();
  forged.cell()->data_deleter = nullptr;
  EXPECT_EQ(CallRaw(Pair(), {forged.any()}).cast<int64_t>(), 12);

  // Inside a structure: the label names the step that reached the forged Array.
  ForgedArray inner(2, 5);
  inner.cell()->data = nullptr;
  Array outer = Array({AnyView(inner.any()), Any(int64_t{7})});
  EXPECT_EQ(Failure(Nested(), {Tagged(kTVMFFIArray, outer.get())}),
            "ValueError: Malformed value on argument #0[0] when calling: "
            "`hostile.nested(slist<slist<i64,i64>,i64>) -> i64`. Got an `ffi.Array` (type index "
            "71) of size 2 with a NULL data pointer");
  inner.cell()->data = inner.inline_items();
  EXPECT_EQ(CallRaw(Nested(), {Tagged(kTVMFFIArray, outer.get())}).cast<int64_t>(), 567);
}

// Every failure of a packed call raises: -1 always comes with an error in the slot.
TEST_P(MalformedTest, EveryFailureRaises) {
  Function pair = Pair();
  Array short_array = Array({Any(int64_t{1})});
  ForgedArray null_data(2);
  null_data.cell()->data = nullptr;
  std::vector<std::vector<TVMFFIAny>> bad = {
      {Tagged(kTVMFFIArray, nullptr)},
      {Tagged(kTVMFFIArray, short_array.get())},
      {Tagged(kTVMFFIMap, nullptr)},
      {SmallStr("a", 50)},
      {null_data.any()},
  };
  for (auto& args : bad) {
    TVMFFIAny result{};
    ASSERT_EQ(TVMFFIFunctionCall(pair.get(), args.data(), 1, &result), -1);
    TVMFFIObjectHandle error = nullptr;
    TVMFFIErrorMoveFromRaised(&error);
    ASSERT_NE(error, nullptr);
    TVMFFIObjectDecRef(error);
  }
}

INSTANTIATE_TEST_SUITE_P(AllPaths, MalformedTest, AllCallPaths(), PathName);

#if FFIJIT_HAVE_LLVM
// The interpreter and the JIT thunk answer every malformed value with the same kind and message.
TEST(MalformedDifferential, InterpreterAndJitAgree) {
  String text("header says str");
  Array array = Array({Any(int64_t{1}), Any(int64_t{2})});
  DLTensor no_shape{};
  no_shape.ndim = 3;
  std::vector<TVMFFIAny> values = {Tagged(kTVMFFIStr, nullptr),
                                   Tagged(kTVMFFIBytes, nullptr),
                                   Tagged(kTVMFFITensor, nullptr),
                                   Tagged(kTVMFFIArray, nullptr),
                                   Tagged(kTVMFFIMap, nullptr),
                                   Tagged(kTVMFFIArray, text.any().v_obj),
                                   Tagged(kTVMFFIStr, array.get()),
                                   Tagged(kTVMFFITensor, text.any().v_obj),
                                   SmallStr("abc", 8),
                                   SmallStr("abcdefgh", 3),
                                   RawPtr(kTVMFFIDLTensorPtr, &no_shape)};
  std::vector<std::pair<Signature, void*>> functions = {
      {Sig({T(TypeKind::kStr)}, {S(ScalarKind::kI64)}), reinterpret_cast<void*>(&TakeStr)},
      {Sig({T(TypeKind::kBytes)}, {S(ScalarKind::kI64)}), reinterpret_cast<void*>(&TakeBytes)},
      {Sig({Type::NDArray(ScalarKind::kAny, -1, {})}, {S(ScalarKind::kI64)}),
       reinterpret_cast<void*>(&TakeTensor)},
      {Sig({Type::Object()}, {S(ScalarKind::kI64)}), reinterpret_cast<void*>(&TakeObject)},
      {Sig({T(TypeKind::kUnknown)}, {S(ScalarKind::kI64)}), reinterpret_cast<void*>(&TakeAny)},
      {Sig({Type::Sequence(TypeKind::kSList, {S(ScalarKind::kI64), S(ScalarKind::kI64)})},
           {S(ScalarKind::kI64)}),
       reinterpret_cast<void*>(&TakeTwo)},
  };
  for (auto& [sig, target] : functions) {
    Function interp =
        Bind("hostile.diff", reinterpret_cast<int64_t (*)(int64_t)>(target), sig, CallPath::kStub);
    Function jit =
        Bind("hostile.diff", reinterpret_cast<int64_t (*)(int64_t)>(target), sig, CallPath::kJit);
    for (const TVMFFIAny& value : values) {
      Error a = CallRawError(interp, {value});
      Error b = CallRawError(jit, {value});
      EXPECT_EQ(a.kind(), "ValueError");
      EXPECT_EQ(a.kind(), b.kind());
      EXPECT_EQ(a.message(), b.message());
    }
  }
}

// A structure argument whose Array has an inconsistent element store: the same error from the
// interpreter (stub, libffi) and the JIT (cold and hot thunks).
TEST(MalformedDifferential, ForgedArrayStoreAgreesEverywhere) {
  const Signature sig =
      Sig({Type::Sequence(TypeKind::kSList, {S(ScalarKind::kI64), S(ScalarKind::kI64)})},
          {S(ScalarKind::kI64)});
  std::vector<Function> paths;
  for (CallPath path : {CallPath::kStub, CallPath::kLibffi, CallPath::kJit, CallPath::kHot}) {
    paths.push_back(Bind("hostile.forged", &TakeTwo, sig, path));
  }
  TVMFFIAny outside[2] = {};
  std::vector<void (*)(FFIJITArrayCell*, TVMFFIAny*)> forgeries = {
      [](FFIJITArrayCell* c, TVMFFIAny*) { c->data = nullptr; },
      [](FFIJITArrayCell* c, TVMFFIAny*) { c->size = -3; },
      [](FFIJITArrayCell* c, TVMFFIAny*) { c->capacity = 0; },
      [](FFIJITArrayCell* c, TVMFFIAny* elsewhere) { c->data = elsewhere; },
  };
  for (auto forge : forgeries) {
    ffijit_tests::ForgedArray forged(2);
    forge(forged.cell(), outside);
    Error first = CallRawError(paths[0], {forged.any()});
    EXPECT_EQ(first.kind(), "ValueError");
    EXPECT_NE(first.message().find("Malformed value on argument #0 when calling"),
              std::string::npos)
        << first.message();
    for (size_t i = 1; i < paths.size(); ++i) {
      Error other = CallRawError(paths[i], {forged.any()});
      EXPECT_EQ(other.kind(), first.kind()) << "path " << i;
      EXPECT_EQ(other.message(), first.message()) << "path " << i;
    }
  }
}
#endif

// ---- The C API accessors and the C++ conversions obey the same contract ----

TEST(MalformedRuntime, ContainersRejectMalformedItemsAndKeys) {
  TVMFFIObjectHandle out = nullptr;
  TVMFFIAny items[2] = {SmallStr("ok", 2), SmallStr("no", 77)};
  EXPECT_EQ(FFIJITArrayCreate(items, 2, &out), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");

  TVMFFIAny keys[1] = {Tagged(kTVMFFIStr, nullptr)};
  TVMFFIAny values[1] = {SmallStr("v", 1)};
  EXPECT_EQ(FFIJITMapCreate(keys, values, 1, &out), -1);
  EXPECT_EQ(Error::MoveFromRaised().message(),
            "FFIJITMapCreate: malformed value: a value tagged `str` (type index 65) with a NULL "
            "object");

  keys[0] = SmallStr("k", 1);
  ASSERT_EQ(FFIJITMapCreate(keys, values, 1, &out), 0);
  const TVMFFIAny* found = nullptr;
  TVMFFIAny null_key = Tagged(kTVMFFIStr, nullptr);
  EXPECT_EQ(FFIJITMapGet(out, &null_key, &found), -1);
  EXPECT_EQ(Error::MoveFromRaised().message(),
            "FFIJITMapGet: malformed value: a value tagged `str` (type index 65) with a NULL "
            "object");
  ASSERT_EQ(FFIJITMapGet(out, &keys[0], &found), 0);
  ASSERT_NE(found, nullptr);
  TVMFFIObjectDecRef(out);
}

TEST(MalformedRuntime, TypedConversionsAndFunctionCallRejectMalformedValues) {
  // Function::operator() enters safe_call directly: the callee's conversions check the value.
  Function typed =
      Function::FromTyped([](std::string s) { return static_cast<int64_t>(s.size()); });
  TVMFFIAny null_str = Tagged(kTVMFFIStr, nullptr);
  Error e = CatchError([&] { typed(AnyView(null_str)); });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_NE(e.message().find("malformed value: a value tagged `str` (type index 65) with a NULL "
                             "object"),
            std::string::npos)
      << e.message();
  Function bound = Bind("hostile.cxx", &TakeStr, Sig({T(TypeKind::kStr)}, {S(ScalarKind::kI64)}));
  e = CatchError([&] { bound(AnyView(SmallStr("abc", 40))); });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(),
            "Malformed value on argument #0 when calling: `hostile.cxx(str) -> i64`. Got an "
            "inline `str` (type index 11) of length 40 (at most 7 fit)");
  e = CatchError([&] { AnyView(Tagged(kTVMFFIArray, nullptr)).cast<Array>(); });
  EXPECT_EQ(e.kind(), "ValueError");
  // A typed callable taking AnyView is checked like a native `any` parameter.
  Function raw_view = Function::FromTyped(
      [](AnyView v) { return static_cast<int64_t>(v.type_index()); }, "hostile.view");
  e = CatchError([&] { raw_view(AnyView(Tagged(kTVMFFIArray, nullptr))); });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(),
            "Mismatched type on argument #0 when calling `hostile.view`: malformed value: a value "
            "tagged `ffi.Array` (type index 71) with a NULL object");
  EXPECT_EQ(raw_view(int64_t{3}).cast<int64_t>(), kTVMFFIInt);
}

}  // namespace
}  // namespace ffijit::testing

namespace ffijit::testing {
namespace {

// ---- Type indices, opaque objects and inputs quoted in errors ----

int32_t AllocType(const std::string& key, int32_t depth, int32_t parent) {
  TVMFFIByteArray bytes{key.data(), key.size()};
  return TVMFFITypeGetOrAllocIndex(&bytes, -1, depth, 0, 1, parent);
}

// Naming object type keys nobody registered allocates nothing: after 100,000 functions that name
// 100,000 distinct unknown keys, a new type still gets an index, and a key registered later is
// resolved on the next call.
TEST(MalformedTypes, UnknownTypeKeysAllocateNothing) {
  std::vector<Function> functions;
  functions.reserve(100000);
  for (int i = 0; i < 100000; ++i) {
    functions.push_back(
        Bind("hostile.unknown", &TakeObject,
             Sig({Type::Object("hostile.never." + std::to_string(i))}, {S(ScalarKind::kI64)})));
  }
  const int32_t fresh = AllocType("hostile.after_many_unknown", 1, kTVMFFIObject);
  ASSERT_GE(fresh, kTVMFFIDynObjectBegin);

  Function lazy = Bind("hostile.lazy", &TakeObject,
                       Sig({Type::Object("hostile.lazy_type")}, {S(ScalarKind::kI64)}));
  TVMFFIObjectHandle opaque = nullptr;
  ASSERT_EQ(FFIJITObjectCreateOpaqueOfType(nullptr, fresh, nullptr, &opaque), 0);
  TVMFFIAny arg = Tagged(fresh, static_cast<TVMFFIObject*>(opaque));
  // Before the key exists no object is an instance of it.
  EXPECT_EQ(CallRawError(lazy, {arg}).kind(), "TypeError");
  const int32_t lazy_index = AllocType("hostile.lazy_type", 1, kTVMFFIObject);
  ASSERT_GE(lazy_index, kTVMFFIDynObjectBegin);
  TVMFFIObjectHandle lazy_obj = nullptr;
  ASSERT_EQ(FFIJITObjectCreateOpaqueOfType(nullptr, lazy_index, nullptr, &lazy_obj), 0);
  EXPECT_EQ(
      CallRaw(lazy, {Tagged(lazy_index, static_cast<TVMFFIObject*>(lazy_obj))}).cast<int64_t>(),
      lazy_index);
  EXPECT_EQ(CallRawError(lazy, {arg}).kind(), "TypeError");
  TVMFFIObjectDecRef(opaque);
  TVMFFIObjectDecRef(lazy_obj);
}

TEST(MalformedTypes, OpaqueObjectsTakeOnlyOpaqueTypes) {
  TVMFFIObjectHandle out = nullptr;
  for (int32_t builtin : {kTVMFFIStr, kTVMFFIBytes, kTVMFFIFunction, kTVMFFITensor, kTVMFFIArray,
                          kTVMFFIMap, kTVMFFIError}) {
    EXPECT_EQ(FFIJITObjectCreateOpaqueOfType(nullptr, builtin, nullptr, &out), -1) << builtin;
    Error e = Error::MoveFromRaised();
    EXPECT_EQ(e.kind(), "ValueError");
    EXPECT_NE(e.message().find("is not an opaque type"), std::string::npos) << e.message();
  }
  ASSERT_EQ(FFIJITObjectCreateOpaqueOfType(nullptr, kTVMFFIOpaquePyObject, nullptr, &out), 0);
  TVMFFIObjectDecRef(out);
}

TEST(MalformedTypes, ErrorsQuoteABoundedExcerpt) {
  const std::string huge(1 << 20, 'q');
  Error e = CatchError([&] { ParseJson("{\"a\":[\"" + huge + "\"],\"r\":[]}"); });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_LT(e.message().size(), 400u) << e.message().size();
  EXPECT_NE(e.message().find("\xe2\x80\xa6 (1048576 bytes)"), std::string::npos);
  e = CatchError([&] { ParseDataType(huge); });
  EXPECT_LT(e.message().size(), 400u);
  EXPECT_EQ(Excerpt("short"), "short");
  EXPECT_EQ(Excerpt(std::string(201, 'x')), std::string(200, 'x') + "\xe2\x80\xa6 (201 bytes)");
}

// Names and keys a caller passes are quoted as bounded excerpts in the runtime's errors too.
TEST(MalformedTypes, RuntimeErrorsQuoteBoundedNames) {
  const std::string huge(1 << 20, 'k');
  const TVMFFIByteArray name{huge.data(), huge.size()};
  EXPECT_EQ(FFIJITFunctionRemoveGlobal(&name), -1);
  ffijit_tests::ExpectRaisedExcerpt("FFIJITFunctionRemoveGlobal");
  Error e = CatchError([&] { ParseDevice(huge + ":0"); });
  EXPECT_LT(e.message().size(), 600u);
}

}  // namespace
}  // namespace ffijit::testing
