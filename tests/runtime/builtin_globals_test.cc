// The built-in global functions bindings call: argument conventions, results, and bad input.
#include <gtest/gtest.h>

#include <algorithm>

#include "catch_error.h"
#include "ffijit/c_env_api.h"
#include "ffijit/module.h"
#include "ffijit/registry.h"
#include "ffijit/string.h"

namespace ffijit {
namespace {

Function G(const char* name) {
  return GetGlobalFunctionOrThrow(name);
}

using ffijit_tests::CatchError;

TEST(BuiltinGlobalsTest, StringAndBytesMakeOwnedValues) {
  TVMFFIAny raw{};
  raw.type_index = kTVMFFIRawStr;
  raw.v_c_str = "a raw string longer than seven";
  Any s = G("ffi.String").CallPacked(&raw, 1);
  EXPECT_EQ(s.type_index(), kTVMFFIStr);
  EXPECT_EQ(s.cast<std::string>(), "a raw string longer than seven");
  EXPECT_EQ(G("ffi.String")("short").cast<std::string>(), "short");
  EXPECT_EQ(CatchError([] { G("ffi.String")(1); }).kind(), "TypeError");

  TVMFFIByteArray bytes{"\0\1\2", 3};
  TVMFFIAny view{};
  view.type_index = kTVMFFIByteArrayPtr;
  view.v_ptr = &bytes;
  Any b = G("ffi.Bytes").CallPacked(&view, 1);
  EXPECT_EQ(b.cast<Bytes>().view(), std::string_view("\0\1\2", 3));
  EXPECT_EQ(CatchError([] { G("ffi.Bytes")("text"); }).kind(), "TypeError");
  EXPECT_EQ(CatchError([] { G("ffi.Bytes")(); }).kind(), "TypeError");
}

TEST(BuiltinGlobalsTest, ShapeTakesInts) {
  Shape shape = G("ffi.Shape")(2, 3, 4).cast<Shape>();
  EXPECT_EQ(shape.ToVector(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(G("ffi.Shape")().cast<Shape>().size(), 0u);
  Error error = CatchError([] { G("ffi.Shape")(2, 1.5); });
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("argument #1"), std::string::npos) << error.message();
}

TEST(BuiltinGlobalsTest, ArrayGetItemChecksBothEnds) {
  Array arr = G("ffi.Array")(1, "two", 3.0).cast<Array>();
  EXPECT_EQ(G("ffi.ArraySize")(arr).cast<int64_t>(), 3);
  EXPECT_EQ(G("ffi.ArrayGetItem")(arr, 1).cast<std::string>(), "two");
  EXPECT_DOUBLE_EQ(G("ffi.ArrayGetItem")(arr, 2).cast<double>(), 3.0);
  EXPECT_EQ(CatchError([&] { G("ffi.ArrayGetItem")(arr, 3); }).kind(), "IndexError");
  EXPECT_EQ(CatchError([&] { G("ffi.ArrayGetItem")(arr, -1); }).kind(), "IndexError");
  EXPECT_EQ(CatchError([&] { G("ffi.ArrayGetItem")(nullptr, 0); }).kind(), "TypeError");
  EXPECT_EQ(CatchError([&] { G("ffi.ArraySize")(5); }).kind(), "TypeError");
  EXPECT_EQ(G("ffi.ArraySize")(G("ffi.Array")()).cast<int64_t>(), 0);
}

// ffi.MapGetItem answers a Map and a present key itself and hands every other call to its typed
// definition: each kind of bad call keeps its own error.
TEST(BuiltinGlobalsTest, MapGetItemReportsEachBadCall) {
  Map map = G("ffi.Map")("a", 1, "long key over seven bytes", Array{Any(2)}).cast<Map>();
  EXPECT_EQ(G("ffi.MapGetItem")(map, "a").cast<int64_t>(), 1);
  Array found = G("ffi.MapGetItem")(map, String("long key over seven bytes")).cast<Array>();
  EXPECT_EQ(found.use_count(), 2u) << "the map's reference and the result's";

  Error missing = CatchError([&] { G("ffi.MapGetItem")(map, 5); });
  EXPECT_EQ(missing.kind(), "KeyError");
  EXPECT_EQ(missing.message(), "ffi.MapGetItem: key of type `int` not found");
  Error count = CatchError([&] { G("ffi.MapGetItem")(map); });
  EXPECT_EQ(count.kind(), "TypeError");
  EXPECT_NE(count.message().find("Mismatched number of arguments"), std::string::npos)
      << count.message();
  Error not_map = CatchError([&] { G("ffi.MapGetItem")(Array{Any(1)}, "a"); });
  EXPECT_EQ(not_map.kind(), "TypeError");
  EXPECT_NE(not_map.message().find("argument #0"), std::string::npos) << not_map.message();
  EXPECT_EQ(CatchError([&] { G("ffi.MapGetItem")(nullptr, "a"); }).kind(), "TypeError");

  // A malformed key is refused by name, not looked up.
  TVMFFIAny args[2] = {};
  args[0].type_index = kTVMFFIMap;
  args[0].v_obj = static_cast<TVMFFIObject*>(map.get());
  args[1].type_index = kTVMFFIStr;  // an object tag with no object
  Error malformed = CatchError([&] { G("ffi.MapGetItem").CallPacked(args, 2); });
  EXPECT_EQ(malformed.kind(), "ValueError");
  EXPECT_NE(malformed.message().find("malformed"), std::string::npos) << malformed.message();
}

// C-string keys and values around the small-string limit (7 bytes) keep their text and form.
TEST(BuiltinGlobalsTest, MapStoresCStringsByContent) {
  Map map = G("ffi.Map")("", "v0", "1234567", "seven b", "12345678", "eight by").cast<Map>();
  EXPECT_EQ(map.size(), 3);
  EXPECT_EQ(G("ffi.MapGetItem")(map, String("")).cast<std::string>(), "v0");
  EXPECT_EQ(G("ffi.MapGetItem")(map, String("1234567")).cast<std::string>(), "seven b");
  EXPECT_EQ(G("ffi.MapGetItem")(map, String("12345678")).cast<std::string>(), "eight by");
  std::vector<int32_t> key_forms;
  Function it = G("ffi.MapForwardIterFunctor")(map).cast<Function>();
  do {
    key_forms.push_back(it(0).type_index());
  } while (it(2).cast<bool>());
  EXPECT_EQ(key_forms, (std::vector<int32_t>{kTVMFFISmallStr, kTVMFFISmallStr, kTVMFFIStr}));
  EXPECT_EQ(G("ffi.MapGetItem")(map, "1234567").type_index(), kTVMFFISmallStr);
  EXPECT_EQ(G("ffi.MapGetItem")(map, "12345678").type_index(), kTVMFFIStr) << "8 bytes: an object";
}

// Short keys hash the same in every form that holds their bytes: a small bytes key is found
// through a byte-array view, and bytes are not the str of the same text.
TEST(BuiltinGlobalsTest, ShortBytesKeysMatchAcrossForms) {
  TVMFFIByteArray ab{"a\0b", 3};
  TVMFFIAny view{};
  view.type_index = kTVMFFIByteArrayPtr;
  view.v_ptr = &ab;
  Any key = G("ffi.Bytes").CallPacked(&view, 1);
  ASSERT_EQ(key.type_index(), kTVMFFISmallBytes);
  Map map = G("ffi.Map")(key, 1, "a", 2).cast<Map>();
  TVMFFIAny args[2] = {};
  args[0].type_index = kTVMFFIMap;
  args[0].v_obj = static_cast<TVMFFIObject*>(map.get());
  args[1] = view;
  EXPECT_EQ(G("ffi.MapGetItem").CallPacked(args, 2).cast<int64_t>(), 1);
  EXPECT_EQ(G("ffi.MapGetItem")(map, String("a")).cast<int64_t>(), 2);
  TVMFFIByteArray a{"a", 1};
  view.v_ptr = &a;
  args[1] = view;
  EXPECT_EQ(CatchError([&] { G("ffi.MapGetItem").CallPacked(args, 2); }).kind(), "KeyError")
      << "bytes are not the str of the same text";
}

// A constructor that fails on a later argument releases the references it took from earlier ones.
TEST(BuiltinGlobalsTest, ContainerConstructorsReleaseOnAFailedCopy) {
  Array held{Any(1)};
  TVMFFIObject* moved_slot = nullptr;  // an rvalue reference that was already taken
  TVMFFIAny args[4] = {};
  args[0].type_index = kTVMFFIArray;
  args[0].v_obj = static_cast<TVMFFIObject*>(held.get());
  args[1].type_index = kTVMFFIObjectRValueRef;
  args[1].v_ptr = &moved_slot;
  Error array_error = CatchError([&] { G("ffi.Array").CallPacked(args, 2); });
  EXPECT_EQ(array_error.kind(), "InternalError");
  EXPECT_EQ(array_error.message(), "RValueRef already moved");
  EXPECT_EQ(held.use_count(), 1u);

  // As a key, then as a value: the map holds the key when the value's copy fails.
  Error map_error = CatchError([&] { G("ffi.Map").CallPacked(args, 2); });
  EXPECT_EQ(map_error.kind(), "InternalError");
  EXPECT_EQ(held.use_count(), 1u);
  args[2] = args[0];
  args[3] = args[0];
  args[1] = args[0];
  args[3].type_index = kTVMFFIObjectRValueRef;
  args[3].v_ptr = &moved_slot;
  args[2].type_index = kTVMFFIInt;
  args[2].v_int64 = 7;
  Error second_pair = CatchError([&] { G("ffi.Map").CallPacked(args, 4); });
  EXPECT_EQ(second_pair.kind(), "InternalError");
  EXPECT_EQ(held.use_count(), 1u);
}

TEST(BuiltinGlobalsTest, MapAccessorsAndIterator) {
  Map map = G("ffi.Map")("a", 1, "b", 2, "a", 3).cast<Map>();
  EXPECT_EQ(G("ffi.MapSize")(map).cast<int64_t>(), 2);
  EXPECT_EQ(G("ffi.MapGetItem")(map, "a").cast<int64_t>(), 3) << "a repeated key keeps the last";
  EXPECT_EQ(G("ffi.MapCount")(map, "b").cast<int64_t>(), 1);
  EXPECT_EQ(G("ffi.MapCount")(map, "z").cast<int64_t>(), 0);
  EXPECT_EQ(CatchError([&] { G("ffi.MapGetItem")(map, "z"); }).kind(), "KeyError");
  EXPECT_EQ(CatchError([] { G("ffi.Map")("a"); }).kind(), "ValueError");

  Function it = G("ffi.MapForwardIterFunctor")(map).cast<Function>();
  std::vector<std::pair<std::string, int64_t>> seen;
  do {
    seen.emplace_back(it(0).cast<std::string>(), it(1).cast<int64_t>());
  } while (it(2).cast<bool>());
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, int64_t>>{{"a", 3}, {"b", 2}}));
  EXPECT_EQ(CatchError([&] { it(0); }).kind(), "IndexError") << "past the end";
  EXPECT_EQ(CatchError([&] { it(7); }).kind(), "ValueError");
  Function empty = G("ffi.MapForwardIterFunctor")(G("ffi.Map")()).cast<Function>();
  EXPECT_EQ(CatchError([&] { empty(1); }).kind(), "IndexError");
}

TEST(BuiltinGlobalsTest, GlobalNamesFunctorAndRemove) {
  SetGlobalFunction("builtin_test.f", Function::FromTyped([] { return 1; }), true);
  Function names = G("ffi.FunctionListGlobalNamesFunctor")().cast<Function>();
  const int64_t count = names(-1).cast<int64_t>();
  std::vector<std::string> listed;
  for (int64_t i = 0; i < count; ++i) listed.push_back(names(i).cast<std::string>());
  EXPECT_NE(std::find(listed.begin(), listed.end(), "builtin_test.f"), listed.end());
  EXPECT_NE(std::find(listed.begin(), listed.end(), "ffi.ModuleLoadFromFile"), listed.end());
  EXPECT_EQ(CatchError([&] { names(count); }).kind(), "IndexError");
  EXPECT_TRUE(G("ffi.FunctionRemoveGlobal")("builtin_test.f").cast<bool>());
  EXPECT_FALSE(G("ffi.FunctionRemoveGlobal")("builtin_test.f").cast<bool>());
  EXPECT_FALSE(GetGlobalFunction("builtin_test.f").has_value());
}

// The names each revision's own library registers (TVM FFI 0.1 moved testing.* into
// libtvm_ffi_testing.so and added the List/Dict globals).
const char* const kTestingNames[] = {"testing.test_raise_error",
                                     "testing.nop",
                                     "testing.echo",
                                     "testing.apply",
                                     "testing.object_use_count",
                                     "testing.run_check_signal"};
const char* const kListDictNames[] = {"ffi.List",
                                      "ffi.ListAppend",
                                      "ffi.ListClear",
                                      "ffi.ListContains",
                                      "ffi.ListErase",
                                      "ffi.ListEraseRange",
                                      "ffi.ListGetItem",
                                      "ffi.ListInsert",
                                      "ffi.ListPop",
                                      "ffi.ListReplaceSlice",
                                      "ffi.ListReverse",
                                      "ffi.ListSetItem",
                                      "ffi.ListSize",
                                      "ffi.Dict",
                                      "ffi.DictClear",
                                      "ffi.DictCount",
                                      "ffi.DictErase",
                                      "ffi.DictForwardIterFunctor",
                                      "ffi.DictGetItem",
                                      "ffi.DictGetItemOrMissing",
                                      "ffi.DictSetItem",
                                      "ffi.DictSize",
                                      "ffi.ArrayContains",
                                      "ffi.MapGetItemOrMissing",
                                      "ffi.GetInvalidObject",
                                      "ffi.ContainerFindFirstNonCPUDevice"};

TEST(BuiltinGlobalsTest, EachRevisionRegistersItsOwnNames) {
  for (const char* name : kTestingNames) {
    EXPECT_EQ(GetGlobalFunction(name).has_value(), FFIJIT_TVM_FFI_REGISTERS_TESTING_GLOBALS == 1)
        << name;
  }
  for (const char* name : kListDictNames) {
    EXPECT_EQ(GetGlobalFunction(name).has_value(), FFIJIT_TVM_FFI_HAS_LIST_DICT == 1) << name;
  }
}

// The testing.* helpers exist only where the runtime itself registers them (the seed revision);
// on TVM FFI 0.1 the test above checks they are absent.
#if FFIJIT_TVM_FFI_REGISTERS_TESTING_GLOBALS
TEST(BuiltinGlobalsTest, TestingHelpers) {
  Error raised = CatchError([] { G("testing.test_raise_error")("KeyError", "no such thing"); });
  EXPECT_EQ(raised.kind(), "KeyError");
  EXPECT_EQ(raised.message(), "no such thing");
  EXPECT_TRUE(G("testing.nop")(1, 2, 3).is_none());
  EXPECT_EQ(G("testing.echo")("hello", 2).cast<std::string>(), "hello");
  EXPECT_EQ(CatchError([] { G("testing.echo")(); }).kind(), "TypeError");
  Function add = Function::FromTyped([](int64_t a, int64_t b) { return a + b; });
  EXPECT_EQ(G("testing.apply")(add, 2, 3).cast<int64_t>(), 5);
  EXPECT_EQ(CatchError([] { G("testing.apply")(1); }).kind(), "TypeError");
  EXPECT_EQ(CatchError([] { G("testing.apply")(); }).kind(), "TypeError");
  // Passed as a view, so the count is exactly the caller's references.
  Array arr = G("ffi.Array")(1).cast<Array>();
  TVMFFIAny view{};
  view.type_index = kTVMFFIArray;
  view.v_obj = arr.get();
  EXPECT_EQ(G("testing.object_use_count").CallPacked(&view, 1).cast<int64_t>(), 1);
  Array copy = arr;
  EXPECT_EQ(G("testing.object_use_count").CallPacked(&view, 1).cast<int64_t>(), 2);
}

int signal_pending = 0;
int SignalHook() {
  return signal_pending;
}

TEST(BuiltinGlobalsTest, RunCheckSignalReturnsMinusTwoWhenTheFrontendHasASignal) {
  TVMFFIObjectHandle func = GetGlobalFunctionOrThrow("testing.run_check_signal").release();
  TVMFFIAny arg{};
  arg.type_index = kTVMFFIInt;
  arg.v_int64 = 0;
  TVMFFIAny result{};
  EXPECT_EQ(TVMFFIFunctionCall(func, &arg, 1, &result), 0);
  ASSERT_EQ(TVMFFIEnvRegisterCAPI("PyErr_CheckSignals", reinterpret_cast<void*>(SignalHook)), 0);
  signal_pending = 1;
  arg.v_int64 = 5;
  EXPECT_EQ(TVMFFIFunctionCall(func, &arg, 1, &result), -2) << "checked before each second";
  TVMFFIObjectHandle nothing = &arg;
  TVMFFIErrorMoveFromRaised(&nothing);
  EXPECT_EQ(nothing, nullptr) << "-2 leaves no error in the slot";
  arg.v_int64 = -1;
  EXPECT_EQ(TVMFFIFunctionCall(func, &arg, 1, &result), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  ASSERT_EQ(TVMFFIEnvRegisterCAPI("PyErr_CheckSignals", nullptr), 0);
  signal_pending = 0;
  TVMFFIObjectDecRef(func);
}

#endif  // FFIJIT_TVM_FFI_REGISTERS_TESTING_GLOBALS

}  // namespace
}  // namespace ffijit
