// TVM FFI 0.1's binding globals (ffi.GetRegisteredTypeKeys, ffi.FunctionFromExternC,
// ffi.MakeField{Getter,Setter}, ffi.ModuleGlobals{Add,Remove}, ffi.StructuralEqual), the enum types
// and their JSON graph form, ffi.VisitErrorContext's reflection, and the `__ffi_repr__` of access
// paths. Only on revisions that have them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "catch_error.h"
#include "ffijit/ffijit.h"

#if FFIJIT_TVM_FFI_HAS_BINDING_GLOBALS_0_1 && FFIJIT_TVM_FFI_HAS_ENUM
namespace ffijit {
namespace {

using ffijit_tests::CatchError;

Function G(const char* name) {
  return GetGlobalFunctionOrThrow(name);
}

int32_t IndexOf(const std::string& key) {
  TVMFFIByteArray bytes{key.data(), key.size()};
  int32_t index = -1;
  CheckCall(TVMFFITypeKeyToIndex(&bytes, &index));
  return index;
}

std::vector<std::string> FieldNames(const std::string& key) {
  std::vector<std::string> names;
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(IndexOf(key));
  for (int32_t i = 0; i < info->num_fields; ++i) {
    names.emplace_back(info->fields[i].name.data, info->fields[i].name.size);
  }
  return names;
}

// ---- ffi.GetRegisteredTypeKeys ----

TEST(BindingGlobalsTest, RegisteredTypeKeysListTheTypeTableInIndexOrder) {
  Array keys = G("ffi.GetRegisteredTypeKeys")().cast<Array>();
  std::vector<std::string> names;
  for (int64_t i = 0; i < keys.size(); ++i) names.push_back(keys[i].cast<std::string>());
  for (const char* expected : {"ffi.Object", "ffi.String", "ffi.Enum", "ffi.IntEnum", "ffi.StrEnum",
                               "ffi.EnumState", "ffi.VisitErrorContext"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
  auto at = [&](const char* key) { return std::find(names.begin(), names.end(), key); };
  EXPECT_LT(at("ffi.Object"), at("ffi.String"));  // 64 before 65
}

// ---- ffi.FunctionFromExternC ----

int AddOne(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add_one takes one int");
    return -1;
  }
  *result = TVMFFIAny{};
  result->type_index = kTVMFFIInt;
  result->v_int64 = args[0].v_int64 + *static_cast<int64_t*>(self);
  return 0;
}

int deleted_count = 0;
void CountDelete(void*) {
  ++deleted_count;
}

TEST(BindingGlobalsTest, FunctionFromExternCWrapsASafeCallAndRunsItsDeleter) {
  static int64_t increment = 1;
  deleted_count = 0;
  {
    Function f = G("ffi.FunctionFromExternC")(static_cast<void*>(&increment),
                                              reinterpret_cast<void*>(&AddOne),
                                              reinterpret_cast<void*>(&CountDelete))
                     .cast<Function>();
    EXPECT_EQ(f(41).cast<int64_t>(), 42);
    Error error = CatchError([&] { f("x"); });
    EXPECT_EQ(error.kind(), "TypeError");
    EXPECT_EQ(deleted_count, 0);
  }
  EXPECT_EQ(deleted_count, 1);
}

TEST(BindingGlobalsTest, FunctionFromExternCRejectsANullSafeCall) {
  Error error = CatchError([] {
    G("ffi.FunctionFromExternC")
    (static_cast<void*>(nullptr), static_cast<void*>(nullptr), static_cast<void*>(nullptr));
  });
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("safe_call"), std::string::npos) << error.message();
}

// ---- ffi.MakeFieldGetter / ffi.MakeFieldSetter ----

TVMFFIFieldGetter GetterFor(int32_t type_index) {
  int64_t bits = G("ffi.MakeFieldGetter")(type_index).cast<int64_t>();
  EXPECT_NE(bits, 0);
  return reinterpret_cast<TVMFFIFieldGetter>(bits);
}

TEST(BindingGlobalsTest, FieldGettersReadEachStorageKind) {
  int64_t i = -7;
  double d = 2.5;
  bool b = true;
  TVMFFIAny out{};
  ASSERT_EQ(GetterFor(kTVMFFIInt)(&i, &out), 0);
  EXPECT_EQ(Any::Adopt(out).cast<int64_t>(), -7);
  ASSERT_EQ(GetterFor(kTVMFFIFloat)(&d, &out), 0);
  EXPECT_EQ(Any::Adopt(out).cast<double>(), 2.5);
  ASSERT_EQ(GetterFor(kTVMFFIBool)(&b, &out), 0);
  EXPECT_EQ(Any::Adopt(out).cast<bool>(), true);

  Any text(std::string("a string longer than seven bytes"));
  ASSERT_EQ(text.type_index(), kTVMFFIStr);
  TVMFFIObject* object = text.raw().v_obj;
  ASSERT_EQ(GetterFor(kTVMFFIStr)(&object, &out), 0);
  EXPECT_EQ(Any::Adopt(out).cast<std::string>(), "a string longer than seven bytes");
  TVMFFIObject* none = nullptr;
  ASSERT_EQ(GetterFor(kTVMFFIStr)(&none, &out), 0);
  EXPECT_EQ(out.type_index, kTVMFFINone);

  TVMFFIAny cell = Any(int64_t{5}).raw();
  ASSERT_EQ(GetterFor(kTVMFFIAny)(&cell, &out), 0);
  EXPECT_EQ(Any::Adopt(out).cast<int64_t>(), 5);
}

TEST(BindingGlobalsTest, FieldGetterRejectsAnUnsupportedTypeIndex) {
  Error error = CatchError([] { G("ffi.MakeFieldGetter")(int32_t{kTVMFFIRawStr}); });
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("Unsupported field type index for getter"), std::string::npos)
      << error.message();
}

// A converter that doubles ints and fails on anything else.
int DoubleInts(void*, const TVMFFIAny* value, TVMFFIAny* out) {
  if (value->type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "the converter wants an int");
    return -1;
  }
  *out = *value;
  out->v_int64 *= 2;
  return 0;
}

TEST(BindingGlobalsTest, FieldSetterConvertsThenStores) {
  Function setter = G("ffi.MakeFieldSetter")(int32_t{kTVMFFIInt}, int64_t{0},
                                             reinterpret_cast<int64_t>(&DoubleInts))
                        .cast<Function>();
  int64_t field = 0;
  setter(static_cast<void*>(&field), 21);
  EXPECT_EQ(field, 42);
  Error error = CatchError([&] { setter(static_cast<void*>(&field), "no"); });
  EXPECT_EQ(error.kind(), "TypeError");
  EXPECT_EQ(error.message(), "the converter wants an int");
  EXPECT_EQ(field, 42);
}

TEST(BindingGlobalsTest, FieldSetterRejectsBadArguments) {
  EXPECT_EQ(CatchError([] {
              G("ffi.MakeFieldSetter")(int32_t{kTVMFFIInt}, int64_t{0}, int64_t{0});
            }).kind(),
            "ValueError");
  EXPECT_EQ(CatchError([] {
              G("ffi.MakeFieldSetter")
              (int32_t{kTVMFFIRawStr}, int64_t{0}, reinterpret_cast<int64_t>(&DoubleInts));
            }).kind(),
            "ValueError");
}

// ---- ffi.ModuleGlobalsAdd / Remove, ffi.StructuralEqual ----

TEST(BindingGlobalsTest, ModuleGlobalsRejectNonModules) {
  Error error = CatchError([] { G("ffi.ModuleGlobalsAdd")(Array{1}); });
  EXPECT_EQ(error.kind(), "TypeError");
  EXPECT_NE(error.message().find("ffi.Module"), std::string::npos) << error.message();
  EXPECT_EQ(CatchError([] { G("ffi.ModuleGlobalsRemove")(1); }).kind(), "TypeError");
}

TEST(BindingGlobalsTest, StructuralEqualComparesStructure) {
  EXPECT_TRUE(G("ffi.StructuralEqual")(Array{1, 2}, Array{1, 2}).cast<bool>());
  EXPECT_FALSE(G("ffi.StructuralEqual")(Array{1, 2}, Array{1, 3}).cast<bool>());
  EXPECT_TRUE(G("ffi.StructuralEqual")(Array{1}, Array{1}, false, false).cast<bool>());
  EXPECT_EQ(CatchError([] { G("ffi.StructuralEqual")(1); }).kind(), "TypeError");
}

// ---- Reflection of ffi.VisitErrorContext and the enum types ----

TEST(BindingGlobalsTest, VisitErrorContextAndEnumTypesAreReflected) {
  EXPECT_EQ(FieldNames("ffi.VisitErrorContext"),
            (std::vector<std::string>{"reverse_visit_pattern", "prev_error_context"}));
  EXPECT_EQ(FieldNames("ffi.Enum"), (std::vector<std::string>{"_int_index", "_str_index"}));
  EXPECT_EQ(FieldNames("ffi.IntEnum"), std::vector<std::string>{"value"});
  EXPECT_EQ(FieldNames("ffi.StrEnum"), std::vector<std::string>{"value"});
  EXPECT_EQ(FieldNames("ffi.EnumState"), (std::vector<std::string>{"entries", "indexes", "attrs"}));
  const TVMFFITypeInfo* int_enum = TVMFFIGetTypeInfo(IndexOf("ffi.IntEnum"));
  ASSERT_EQ(int_enum->type_depth, 2);
  EXPECT_EQ(int_enum->type_ancestors[1]->type_index, IndexOf("ffi.Enum"));
}

TEST(BindingGlobalsTest, AnEmptyVisitErrorContextIsCreatedAndFindsNothing) {
  const TVMFFITypeMetadata* metadata =
      TVMFFIGetTypeInfo(IndexOf("ffi.VisitErrorContext"))->metadata;
  ASSERT_NE(metadata, nullptr);
  ASSERT_NE(metadata->creator, nullptr);
  TVMFFIObjectHandle made = nullptr;
  ASSERT_EQ(metadata->creator(&made), 0);
  TVMFFIAny owned{};
  owned.type_index = static_cast<TVMFFIObject*>(made)->type_index;
  owned.v_obj = static_cast<TVMFFIObject*>(made);
  Any context = Any::Adopt(owned);
  ASSERT_EQ(context.type_index(), IndexOf("ffi.VisitErrorContext"));
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(context.type_index());
  ASSERT_EQ(info->num_fields, 2);
  for (int32_t i = 0; i < info->num_fields; ++i) {
    TVMFFIAny value{};
    void* field = reinterpret_cast<char*>(context.raw().v_obj) + info->fields[i].offset;
    ASSERT_EQ(info->fields[i].getter(field, &value), 0);
    EXPECT_EQ(value.type_index, kTVMFFINone) << i;
  }
  Array paths = G("ffi.VisitErrorContext.FindAccessPaths")(Array{1, 2}, context).cast<Array>();
  EXPECT_EQ(paths.size(), 0);
  // The members are read-only, so reflection cannot make one: both are required.
  Function make = G("ffi.MakeObjectFromPackedArgs");
  Error error = CatchError([&] { make(std::string("ffi.VisitErrorContext")); });
  EXPECT_EQ(error.kind(), "TypeError");
  EXPECT_NE(error.message().find("reverse_visit_pattern"), std::string::npos) << error.message();
}

// ---- Enum singletons in the JSON graph ----

// One enum type with singletons, made as EnumDef does: objects of the type with their indices, and
// an ffi.EnumState in the type's `__ffi_enum__` entry. Everything lives for the whole process.
struct EnumLayout {
  TVMFFIObject header;
  int64_t int_index;
  TVMFFIAny str_index;
};
struct EnumStateLayout {
  TVMFFIObject header;
  TVMFFIObject* entries;
  TVMFFIObject* indexes;
  TVMFFIObject* attrs;
};

void NeverFreed(void*, int) {}

int32_t MakeEnumType(const char* key, const char* parent_key,
                     const std::vector<std::pair<int64_t, std::string>>& members) {
  TVMFFIByteArray bytes{key, std::strlen(key)};
  const int32_t parent = IndexOf(parent_key);
  const int32_t depth = TVMFFIGetTypeInfo(parent)->type_depth + 1;
  int32_t type_index = TVMFFITypeGetOrAllocIndex(&bytes, -1, depth, 0, 1, parent);
  EXPECT_GE(type_index, 0) << key;
  std::vector<std::pair<Any, Any>> indexes;
  std::vector<Any> entries;
  for (const auto& [int_index, str_index] : members) {
    auto* obj = new EnumLayout{};
    FFIJITHeaderInit(&obj->header, type_index, NeverFreed);
    obj->int_index = int_index;
    obj->str_index = String(str_index).release();  // owned by the never-freed singleton
    ObjectRef ref(ObjectPtr<>::Borrow(&obj->header));
    entries.emplace_back(ref);
    indexes.emplace_back(Any(int_index), Any(ref));
    indexes.emplace_back(Any(str_index), Any(ref));
  }
  auto* state = new EnumStateLayout{};
  FFIJITHeaderInit(&state->header, IndexOf("ffi.EnumState"), NeverFreed);
  state->entries = static_cast<TVMFFIObject*>(List(entries).release());
  state->indexes = static_cast<TVMFFIObject*>(Dict(indexes).release());
  state->attrs = static_cast<TVMFFIObject*>(Dict(std::vector<std::pair<Any, Any>>{}).release());
  TVMFFIByteArray column{"__ffi_enum__", std::strlen("__ffi_enum__")};
  TVMFFIAny value{};
  value.type_index = state->header.type_index;
  value.v_obj = &state->header;
  CheckCall(TVMFFITypeRegisterAttr(type_index, &column, &value));
  return type_index;
}

Any Singleton(int32_t type_index, const AnyView& index) {
  TVMFFIByteArray column{"__ffi_enum__", std::strlen("__ffi_enum__")};
  const TVMFFIAny* entry = FFIJITTypeAttrColumnEntry(TVMFFIGetTypeAttrColumn(&column), type_index);
  const auto* state = reinterpret_cast<const EnumStateLayout*>(entry->v_obj);
  return Dict(ObjectPtr<>::Borrow(state->indexes)).Get(index)->ToOwned();
}

Map Node(const Any& graph) {
  Map map = graph.cast<Map>();
  return map.Get(Any("nodes"))->cast<Array>()[0].cast<Map>();
}

TEST(EnumJSONGraphTest, IntEnumWritesItsIntegerAndReadsBackTheSingleton) {
  static const int32_t type_index =
      MakeEnumType("test.binding_globals.Level", "ffi.IntEnum", {{3, "High"}, {1, "Low"}});
  Any high = Singleton(type_index, Any(int64_t{3}));
  Any graph = G("ffi.ToJSONGraph")(high);
  Map node = Node(graph);
  EXPECT_EQ(node.Get(Any("type"))->cast<std::string>(), "test.binding_globals.Level");
  EXPECT_EQ(node.Get(Any("data"))->cast<int64_t>(), 3);
  Any back = G("ffi.FromJSONGraph")(graph);
  EXPECT_EQ(back.raw().v_obj, high.raw().v_obj);  // the same singleton, not a copy
}

TEST(EnumJSONGraphTest, PlainEnumWritesItsStringAndReadsBackTheSingleton) {
  static const int32_t type_index =
      MakeEnumType("test.binding_globals.Color", "ffi.Enum", {{0, "Red"}, {1, "Green"}});
  Any green = Singleton(type_index, Any("Green"));
  std::string text = G("ffi.ToJSONGraphString")(green).cast<std::string>();
  EXPECT_NE(text.find("\"Green\""), std::string::npos) << text;
  Any back = G("ffi.FromJSONGraphString")(text);
  EXPECT_EQ(back.raw().v_obj, green.raw().v_obj);

  Error missing = CatchError([] {
    G("ffi.FromJSONGraphString")
    (std::string(R"({"root_index":0,"nodes":[{"type":"test.binding_globals.Color",)"
                 R"("data":"Blue"}]})"));
  });
  EXPECT_EQ(missing.kind(), "ValueError");
  EXPECT_NE(missing.message().find("has no instance with index \"Blue\""), std::string::npos)
      << missing.message();
  Error wrong_kind = CatchError([] {
    G("ffi.FromJSONGraphString")
    (std::string(R"({"root_index":0,"nodes":[{"type":"test.binding_globals.Color","data":1}]})"));
  });
  EXPECT_EQ(wrong_kind.kind(), "TypeError");
  EXPECT_NE(wrong_kind.message().find("must be a str index"), std::string::npos)
      << wrong_kind.message();
}

// ---- `__ffi_repr__` of access paths ----

std::string Repr(const Any& value) {
  return G("ffi.ReprPrint")(value).cast<std::string>();
}

Any LhsPath(const Any& lhs, const Any& rhs) {
  Any pair = G("ffi.GetFirstStructuralMismatch")(lhs, rhs);
  return pair.cast<Array>()[0].ToOwned();
}

TEST(AccessPathReprTest, PathsPrintAsRootThenSteps) {
  EXPECT_EQ(Repr(LhsPath(Array{1, Array{2, 3}}, Array{1, Array{2, 4}})), "<root>[1][1]");
  EXPECT_EQ(Repr(LhsPath(Map{{Any("key"), Any(1)}}, Map{{Any("key"), Any(2)}})), "<root>[\"key\"]");
}

TEST(AccessPathReprTest, MissingItemsAreMarked) {
  std::string repr = Repr(LhsPath(Array{1}, Array{1, 2}));
  EXPECT_EQ(repr, "<root>[<missing:1>]");
}

}  // namespace
}  // namespace ffijit
#endif
