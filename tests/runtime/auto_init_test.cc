// TVM FFI 0.1's automatic __ffi_init__ (ffi.GetKwargsObject, ffi._RegisterFFIInit: positional and
// keyword arguments, InitOff/KwOnly fields, defaults, TVM FFI's errors, malformed arguments),
// ffi.GetGlobalFuncMetadata, and methods registered once per overload all staying recorded.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "catch_error.h"
#include "ffijit/ffijit.h"
#include "reflected_types.h"

namespace ffijit {
namespace {

using ffijit_tests::CatchError;
using reflected_test::FieldSpec;
using reflected_test::RegisterSlotType;

TVMFFIByteArray Bytes(std::string_view text) {
  return TVMFFIByteArray{text.data(), text.size()};
}

std::string Str(const TVMFFIByteArray& bytes) {
  return bytes.data == nullptr ? std::string() : std::string(bytes.data, bytes.size);
}

// The globals exist exactly where the revision has them (TVM FFI 0.1 added them).
TEST(AutoInitGlobals, ExistOnlyAtTheRevisionsThatHaveThem) {
  EXPECT_EQ(GetGlobalFunction("ffi.GetKwargsObject").has_value(),
            FFIJIT_TVM_FFI_HAS_AUTO_INIT == 1);
  EXPECT_EQ(GetGlobalFunction("ffi._RegisterFFIInit").has_value(),
            FFIJIT_TVM_FFI_HAS_AUTO_INIT == 1);
  EXPECT_EQ(GetGlobalFunction("ffi.GetGlobalFuncMetadata").has_value(),
            FFIJIT_TVM_FFI_HAS_GLOBAL_FUNC_METADATA == 1);
}

// Methods registered under one name: every overload (its own metadata) is kept; repeating a name
// with the same metadata (a reloaded module) replaces that entry.
TEST(Overloads, EveryOverloadedSignatureIsRecorded) {
  TVMFFIByteArray key = Bytes("autoinit.Overloaded");
  int32_t type = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, kTVMFFIObject);
  ASSERT_GE(type, kTVMFFIDynObjectBegin);
  Function dispatcher = Function::FromTyped([](int64_t x) { return x + 1; });
  Function reloaded = Function::FromTyped([](int64_t x) { return x + 2; });
  const std::string int_schema = R"({"type_schema":"int"})";
  const std::string float_schema = R"({"type_schema":"float"})";
  auto register_method = [&](const Function& func, const std::string& metadata) {
    TVMFFIMethodInfo method{};
    method.name = Bytes("add_one");
    method.flags = kTVMFFIFieldFlagBitMaskIsStaticMethod;
    method.FFIJIT_MEMBER_METADATA = Bytes(metadata);
    method.method.type_index = kTVMFFIFunction;
    method.method.v_obj = func.get();
    return TVMFFITypeRegisterMethod(type, &method);
  };
  ASSERT_EQ(register_method(dispatcher, int_schema), 0);
  ASSERT_EQ(register_method(dispatcher, float_schema), 0);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type);
  ASSERT_EQ(info->num_methods, 2);
  EXPECT_EQ(Str(info->methods[0].name), "add_one");
  EXPECT_EQ(Str(info->methods[1].name), "add_one");
  EXPECT_EQ(Str(info->methods[0].FFIJIT_MEMBER_METADATA), int_schema);
  EXPECT_EQ(Str(info->methods[1].FFIJIT_MEMBER_METADATA), float_schema);
  // The same signature again replaces its own entry only.
  ASSERT_EQ(register_method(reloaded, float_schema), 0);
  info = TVMFFIGetTypeInfo(type);
  ASSERT_EQ(info->num_methods, 2);
  EXPECT_EQ(info->methods[0].method.v_obj, dispatcher.get());
  EXPECT_EQ(info->methods[1].method.v_obj, reloaded.get());
}

#if FFIJIT_TVM_FFI_HAS_GLOBAL_FUNC_METADATA
std::string GlobalMetadata(const std::string& name) {
  return GetGlobalFunctionOrThrow("ffi.GetGlobalFuncMetadata")(name).cast<std::string>();
}

TEST(GlobalFuncMetadata, ReturnsTheRegisteredMetadata) {
  Function func = Function::FromTyped([](int64_t x) { return x; });
  const std::string metadata = R"({"type_schema":"{\"type\":\"ffi.Function\"}"})";
  TVMFFIMethodInfo info{};
  info.name = Bytes("autoinit.with_metadata");
  info.FFIJIT_MEMBER_METADATA = Bytes(metadata);
  info.method.type_index = kTVMFFIFunction;
  info.method.v_obj = func.get();
  ASSERT_EQ(TVMFFIFunctionSetGlobalFromMethodInfo(&info, 0), 0);
  EXPECT_EQ(GlobalMetadata("autoinit.with_metadata"), metadata);
  // Registered without metadata: the empty string.
  SetGlobalFunction("autoinit.without_metadata", func);
  EXPECT_EQ(GlobalMetadata("autoinit.without_metadata"), "");
  // An override replaces the metadata with the new registration's (none here).
  SetGlobalFunction("autoinit.with_metadata", func, true);
  EXPECT_EQ(GlobalMetadata("autoinit.with_metadata"), "");
}

TEST(GlobalFuncMetadata, BadInputIsAnError) {
  Error unknown = CatchError([] { GlobalMetadata("autoinit.no_such_global"); });
  EXPECT_EQ(unknown.kind(), "RuntimeError");
  EXPECT_EQ(unknown.message(), "Global Function is not found: autoinit.no_such_global");
  Error not_a_name =
      CatchError([] { GetGlobalFunctionOrThrow("ffi.GetGlobalFuncMetadata")(int64_t{3}); });
  EXPECT_EQ(not_a_name.kind(), "TypeError");
  Function func = Function::FromTyped([] { return 0; });
  TVMFFIMethodInfo info{};
  info.name = Bytes("autoinit.bad_metadata");
  info.FFIJIT_MEMBER_METADATA = TVMFFIByteArray{nullptr, 4};
  info.method.type_index = kTVMFFIFunction;
  info.method.v_obj = func.get();
  EXPECT_EQ(TVMFFIFunctionSetGlobalFromMethodInfo(&info, 0), -1);
  Error bad = Error::MoveFromRaised();
  EXPECT_EQ(bad.kind(), "ValueError");
  EXPECT_NE(bad.message().find("NULL data"), std::string::npos) << bad.message();
  EXPECT_FALSE(GetGlobalFunction("autoinit.bad_metadata").has_value());
}
#endif  // FFIJIT_TVM_FFI_HAS_GLOBAL_FUNC_METADATA

#if FFIJIT_TVM_FFI_HAS_AUTO_INIT
ObjectRef Kwargs() {
  return GetGlobalFunctionOrThrow("ffi.GetKwargsObject")().cast<ObjectRef>();
}

Any IntAny(int64_t value) {
  TVMFFIAny raw{};
  raw.type_index = kTVMFFIInt;
  raw.v_int64 = value;
  return Any::Adopt(raw);
}

// Registers the automatic init of `type` and returns it (its __ffi_init__ attribute).
Function RegisterInit(int32_t type) {
  GetGlobalFunctionOrThrow("ffi._RegisterFFIInit")(type);
  TVMFFIByteArray name = Bytes("__ffi_init__");
  const TVMFFITypeAttrColumn* column = TVMFFIGetTypeAttrColumn(&name);
  EXPECT_NE(column, nullptr);
  if (column == nullptr) return Function();
  const TVMFFIAny* entry = FFIJITTypeAttrColumnEntry(column, type);
  EXPECT_TRUE(entry != nullptr && entry->type_index == kTVMFFIFunction);
  if (entry == nullptr || entry->type_index != kTVMFFIFunction) return Function();
  return Function(ObjectPtr<>::Borrow(entry->v_obj));
}

// This file's own creators (reflected_types.h's are shared by every suite of the binary): one per
// type registered through RegisterInitType, which reads its type index from InitTypes().
std::vector<int32_t>& InitTypes() {
  static std::vector<int32_t> types;
  return types;
}

template <int N>
int CreateInitObj(TVMFFIObjectHandle* out) {
  auto* obj =
      static_cast<reflected_test::SlotObj*>(std::calloc(1, sizeof(reflected_test::SlotObj)));
  obj->header.type_index = InitTypes().at(N);
  FFIJITHeaderSetCounts(&obj->header, 1, 1);
  obj->header.deleter = reflected_test::SlotObjDeleter;
  *out = obj;
  return 0;
}

constexpr TVMFFIObjectCreator kInitCreators[] = {CreateInitObj<0>, CreateInitObj<1>,
                                                 CreateInitObj<2>, CreateInitObj<3>};

// A SlotObj type (see reflected_types.h) with a creator from this file.
int32_t RegisterInitType(const std::string& key, const std::vector<FieldSpec>& fields,
                         int32_t parent = kTVMFFIObject) {
  int32_t index = RegisterSlotType(key, -1, fields, parent);
  if (InitTypes().size() >= std::size(kInitCreators)) {
    ADD_FAILURE() << "too many types for kInitCreators";
    return index;
  }
  InitTypes().push_back(index);
  TVMFFITypeMetadata metadata{};
  metadata.total_size = sizeof(reflected_test::SlotObj);
  metadata.structural_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  metadata.creator = kInitCreators[InitTypes().size() - 1];
  CheckCall(TVMFFITypeRegisterMetadata(index, &metadata));
  return index;
}

// The slots of a SlotObj as ints (-1 for a slot that holds no int).
std::vector<int64_t> Ints(const Any& obj) {
  const TVMFFIAny& raw = obj.raw();
  EXPECT_GE(raw.type_index, kTVMFFIStaticObjectBegin);
  if (raw.type_index < kTVMFFIStaticObjectBegin) return {};
  const auto* slots = reinterpret_cast<const reflected_test::SlotObj*>(raw.v_obj);
  std::vector<int64_t> out;
  for (const TVMFFIAny& slot : slots->slots) {
    out.push_back(slot.type_index == kTVMFFIInt ? slot.v_int64 : -1);
  }
  return out;
}

// autoinit.T: a (int, required), b (outside init, default 42), c (keyword-only, required),
// d (default 99) in slots 0-3, like TVM FFI's own test type.
struct AutoInitType {
  TVMFFIAny b_default = IntAny(42).release();
  TVMFFIAny d_default = IntAny(99).release();
  int32_t index = -1;
  Function init;
  AutoInitType() {
    index = RegisterInitType(
        "autoinit.T",
        {FieldSpec{"a", 0, kTVMFFIInt},
         FieldSpec{"b", kTVMFFIFieldFlagBitMaskInitOff, kTVMFFIAny, &b_default},
         FieldSpec{"c", kTVMFFIFieldFlagBitMaskKwOnly}, FieldSpec{"d", 0, kTVMFFIAny, &d_default}});
    init = RegisterInit(index);
  }
};

const AutoInitType& T() {
  static AutoInitType type;
  return type;
}

TEST(AutoInit, KwargsObjectIsOneProcessWideObject) {
  ObjectRef first = Kwargs();
  ASSERT_TRUE(first.defined());
  EXPECT_EQ(first.get()->type_index, kTVMFFIObject);
  EXPECT_EQ(Kwargs().get(), first.get());
#if FFIJIT_TVM_FFI_HAS_LIST_DICT
  EXPECT_NE(GetGlobalFunctionOrThrow("ffi.GetInvalidObject")().cast<ObjectRef>().get(),
            first.get());
#endif
}

TEST(AutoInit, PositionalThenKeywordArguments) {
  const Function& init = T().init;
  EXPECT_EQ(Ints(init(int64_t{1}, int64_t{3}, Kwargs(), "c", int64_t{2})),
            (std::vector<int64_t>{1, 42, 2, 3}));
  EXPECT_EQ(Ints(init(int64_t{10}, Kwargs(), "c", int64_t{20})),
            (std::vector<int64_t>{10, 42, 20, 99}));
  EXPECT_EQ(Ints(init(Kwargs(), "d", int64_t{25}, "c", int64_t{15}, "a", int64_t{5})),
            (std::vector<int64_t>{5, 42, 15, 25}));
  Any made = init(int64_t{1}, Kwargs(), "c", int64_t{2});
  EXPECT_EQ(made.raw().type_index, T().index);
}

TEST(AutoInit, WrongArgumentsAreTvmFfisTypeErrors) {
  const Function& init = T().init;
  ObjectRef kw = Kwargs();
  struct Case {
    std::function<void()> call;
    std::string message;
  };
  const std::string p = "autoinit.T.__ffi_init__() ";
  const Case cases[] = {
      {[&] { init(int64_t{1}); }, p + "missing required keyword-only argument: 'c'"},
      {[&] { init(); }, p + "missing required argument: 'a'"},
      {[&] { init(kw, "c", int64_t{1}); }, p + "missing required argument: 'a'"},
      {[&] { init(int64_t{1}, int64_t{2}, int64_t{3}); },
       p + "takes at most 2 positional argument(s), but 3 were given"},
      {[&] { init(int64_t{1}, int64_t{2}, int64_t{3}, kw, "c", int64_t{4}); },
       p + "takes at most 2 positional argument(s), but 3 were given"},
      {[&] { init(kw, "a"); }, p + "KWARGS requires an even number of key-value arguments"},
      {[&] { init(int64_t{1}, kw, "c", int64_t{2}, "d"); },
       p + "KWARGS requires an even number of key-value arguments"},
      {[&] { init(kw, "a", int64_t{1}, "z", int64_t{2}, "c", int64_t{3}); },
       p + "got an unexpected keyword argument 'z'"},
      {[&] { init(kw, "a", int64_t{1}, "b", int64_t{2}, "c", int64_t{3}); },
       p + "got an unexpected keyword argument 'b'"},  // outside init
      {[&] { init(int64_t{1}, kw, "a", int64_t{2}, "c", int64_t{3}); },
       p + "got multiple values for argument 'a'"},
      {[&] { init(kw, "c", int64_t{1}, "c", int64_t{2}); },
       p + "got multiple values for argument 'c'"},
      {[&] { init(kw, int64_t{5}, int64_t{1}); },
       p + "keyword argument names must be strings, but argument #1 is a `int`"},
      {[&] { init(kw, kw, int64_t{1}); },
       p + "keyword argument names must be strings, but argument #1 is a `ffi.Object`"},
      // The setter's error keeps its kind and is nested under the field's name.
      {[&] { init("not an int", kw, "c", int64_t{1}); },
       p + "field 'a':\n  an int field must be set to an int"},
  };
  for (const Case& c : cases) {
    Error error = CatchError(c.call);
    EXPECT_EQ(error.kind(), "TypeError") << c.message;
    EXPECT_EQ(error.message(), c.message);
  }
}

TEST(AutoInit, MalformedArgumentsAreValueErrors) {
  const Function& init = T().init;
  TVMFFIAny args[4]{};
  args[0].type_index = kTVMFFIInt;
  args[0].v_int64 = 1;
  ObjectRef kw = Kwargs();
  args[1].type_index = kTVMFFIObject;
  args[1].v_obj = kw.get();
  args[2].type_index = kTVMFFIStr;  // a string with no object
  args[2].v_obj = nullptr;
  args[3].type_index = kTVMFFIInt;
  Error null_key = CatchError([&] { init.CallPacked(args, 4); });
  EXPECT_EQ(null_key.kind(), "ValueError");
  EXPECT_NE(null_key.message().find("autoinit.T.__ffi_init__() argument #2"), std::string::npos)
      << null_key.message();
  EXPECT_NE(null_key.message().find("malformed value"), std::string::npos) << null_key.message();
  // A value tagged as an object type its object is not.
  Function func = Function::FromTyped([] { return 0; });
  TVMFFIAny mistagged[1]{};
  mistagged[0].type_index = kTVMFFIArray;
  mistagged[0].v_obj = func.get();
  Error mismatch = CatchError([&] { init.CallPacked(mistagged, 1); });
  EXPECT_EQ(mismatch.kind(), "ValueError");
  EXPECT_NE(mismatch.message().find("argument #0"), std::string::npos) << mismatch.message();
}

TEST(AutoInit, RequiredPositionalFieldsComeFirstAndAncestorsFieldsBeforeOwn) {
  TVMFFIAny five = IntAny(5).release();
  int32_t parent =
      RegisterInitType("autoinit.Parent", {FieldSpec{"x", 0, kTVMFFIAny, &five}, FieldSpec{"y"}});
  int32_t child = RegisterInitType(
      "autoinit.Child", {FieldSpec{"z"}, FieldSpec{"w", kTVMFFIFieldFlagBitMaskKwOnly}}, parent);
  Function parent_init = RegisterInit(parent);
  // y is required, so it takes the first positional argument; x keeps its default.
  EXPECT_EQ(Ints(parent_init(int64_t{7})), (std::vector<int64_t>{5, 7, -1, -1}));
  EXPECT_EQ(Ints(parent_init(int64_t{7}, int64_t{8})), (std::vector<int64_t>{8, 7, -1, -1}));
  Function child_init = RegisterInit(child);
  // Positional order: y, z (required), then x (default).
  EXPECT_EQ(Ints(child_init(int64_t{1}, int64_t{2}, Kwargs(), "w", int64_t{4})),
            (std::vector<int64_t>{5, 1, 2, 4}));
  EXPECT_EQ(Ints(child_init(int64_t{1}, int64_t{2}, int64_t{3}, Kwargs(), "w", int64_t{4})),
            (std::vector<int64_t>{3, 1, 2, 4}));
  Error missing = CatchError([&] { child_init(int64_t{1}, int64_t{2}); });
  EXPECT_EQ(missing.message(),
            "autoinit.Child.__ffi_init__() missing required keyword-only argument: 'w'");
}

TEST(AutoInit, RegistrationErrors) {
  Function register_init = GetGlobalFunctionOrThrow("ffi._RegisterFFIInit");
  Error twice = CatchError([&] { register_init(T().index); });
  EXPECT_EQ(twice.kind(), "RuntimeError");
  EXPECT_NE(twice.message().find("__ffi_init__"), std::string::npos) << twice.message();
  for (int32_t bad : {-1, int32_t{kTVMFFIInt}, 16000}) {
    Error error = CatchError([&] { register_init(bad); });
    EXPECT_EQ(error.kind(), "ValueError") << bad;
    EXPECT_EQ(error.message(),
              "ffi._RegisterFFIInit: no object type is registered at index " + std::to_string(bad));
  }
  Error not_an_index = CatchError([&] { register_init("autoinit.T"); });
  EXPECT_EQ(not_an_index.kind(), "TypeError");
}

TEST(AutoInit, TypeWithoutCreatorCannotBeInitialised) {
  int32_t type = RegisterSlotType("autoinit.NoCreator", -1, {FieldSpec{"x"}});
  Function init = RegisterInit(type);
  Error error = CatchError([&] { init(int64_t{1}); });
  EXPECT_EQ(error.kind(), "RuntimeError");
  EXPECT_EQ(error.message(),
            "Type `autoinit.NoCreator` does not support reflection creation (no native creator "
            "or __ffi_new__ type attr)");
}
#endif  // FFIJIT_TVM_FFI_HAS_AUTO_INIT

}  // namespace
}  // namespace ffijit
