// The type table with reflection, the way a module compiled against TVM FFI's headers uses it:
// index allocation with child slots and overflow (and v0.1.13's query-only mode), IsInstance as
// header code computes it, fields (v0.1.13: setter Functions, default factories, no duplicates),
// methods, metadata, type attributes in either revision's column layout,
// ffi.MakeObjectFromPackedArgs, bad input, concurrency.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ffijit/ffijit.h"
#include "reflected_types.h"

namespace ffijit {
namespace {

// A view of `text`, which must outlive it (a literal, or a string the caller keeps).
TVMFFIByteArray Bytes(std::string_view text) {
  return TVMFFIByteArray{text.data(), text.size()};
}

std::string KeyOf(const TVMFFITypeInfo* info) {
  return std::string(info->type_key.data, info->type_key.size);
}

std::string Str(const TVMFFIByteArray& bytes) {
  return bytes.data == nullptr ? std::string() : std::string(bytes.data, bytes.size);
}

// TVMFFITypeGetOrAllocIndex through a std::string key.
int32_t Alloc(const std::string& key, int32_t depth, int32_t child_slots, bool overflow,
              int32_t parent, int32_t static_index = -1) {
  TVMFFIByteArray bytes = Bytes(key);
  return TVMFFITypeGetOrAllocIndex(&bytes, static_index, depth, child_slots, overflow ? 1 : 0,
                                   parent);
}

// The raised error, which must exist.
Error Raised() {
  TVMFFIObjectHandle handle = nullptr;
  TVMFFIErrorMoveFromRaised(&handle);
  EXPECT_NE(handle, nullptr) << "no error was raised";
  if (handle == nullptr) return Error("None", "no error");
  TVMFFIErrorSetRaised(handle);
  TVMFFIObjectDecRef(handle);
  return Error::MoveFromRaised();
}

// A column's begin_index: the member at v0.1.13 (where size is an int32), 0 at e98b94e1, which
// has no such member (a template, so the other revision's branch is never compiled).
template <typename Column>
int64_t ColumnBeginIndex(const Column& column) {
  if constexpr (sizeof(column.size) == 4) {
    return column.begin_index;
  } else {
    return 0;
  }
}

bool NothingRaised() {
  TVMFFIObjectHandle handle = nullptr;
  TVMFFIErrorMoveFromRaised(&handle);
  if (handle != nullptr) TVMFFIObjectDecRef(handle);
  return handle == nullptr;
}

TEST(TypeTable, StaticEntriesMatchTheReference) {
  const char* pods[] = {"None",
                        "int",
                        "bool",
                        "float",
                        "void*",
                        "DataType",
                        "Device",
                        "DLTensor*",
                        "const char*",
                        "TVMFFIByteArray*",
                        "ObjectRValueRef",
                        "ffi.SmallStr",
                        "ffi.SmallBytes"};
  for (int32_t i = 0; i <= kTVMFFISmallBytes; ++i) {
    const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(i);
    EXPECT_EQ(info->type_index, i);
    EXPECT_EQ(info->type_depth, 0);
    EXPECT_EQ(KeyOf(info), pods[i]);
    EXPECT_EQ(info->type_key.data[info->type_key.size], '\0');
    EXPECT_EQ(info->num_fields, 0);
    EXPECT_EQ(info->num_methods, 0);
    EXPECT_EQ(info->metadata, nullptr);
  }
  const TVMFFITypeInfo* object = TVMFFIGetTypeInfo(kTVMFFIObject);
  EXPECT_EQ(KeyOf(object), "ffi.Object");
  EXPECT_EQ(object->type_depth, 0);
  ASSERT_NE(object->metadata, nullptr);
  EXPECT_EQ(object->metadata->total_size, 24);
  EXPECT_EQ(object->metadata->creator, nullptr);
  // Every static object index has an entry: 65-74 at both revisions (TVM FFI e98b94e1 itself
  // left 74 empty), and v0.1.13's List, Dict and VisitInterrupt.
  std::vector<std::string> statics = {
      "ffi.String", "ffi.Bytes", "ffi.Error", "ffi.Function", "ffi.Shape",
      "ffi.Tensor", "ffi.Array", "ffi.Map",   "ffi.Module",   "ffi.OpaquePyObject"};
  if (FFIJIT_TVM_FFI_HAS_LIST_DICT) {
    EXPECT_EQ(kTVMFFIStaticObjectEnd, 78);
    statics.insert(statics.end(), {"ffi.List", "ffi.Dict", "ffi.VisitInterrupt"});
  } else {
    EXPECT_EQ(kTVMFFIStaticObjectEnd, 75);
  }
  ASSERT_EQ(kTVMFFIStr + static_cast<int32_t>(statics.size()), kTVMFFIStaticObjectEnd);
  for (int32_t i = kTVMFFIStr; i < kTVMFFIStaticObjectEnd; ++i) {
    const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(i);
    EXPECT_EQ(info->type_index, i);
    EXPECT_EQ(KeyOf(info), statics[i - kTVMFFIStr]);
    EXPECT_EQ(info->type_depth, 1);
    EXPECT_EQ(info->FFIJIT_TYPE_ANCESTORS[0], object);
    int32_t found = -1;
    TVMFFIByteArray key = Bytes(statics[i - kTVMFFIStr]);
    ASSERT_EQ(TVMFFITypeKeyToIndex(&key, &found), 0);
    EXPECT_EQ(found, i);
    EXPECT_EQ(FFIJITObjectIsInstance(i, kTVMFFIObject), 1);
  }
  for (int32_t i = kTVMFFIStr; i <= kTVMFFIOpaquePyObject; ++i) {
    if (i != kTVMFFIModule) {
      EXPECT_EQ(TVMFFIGetTypeInfo(i)->metadata, nullptr) << i;
    }
  }
  // The first index after the static objects has no entry.
  EXPECT_EQ(TVMFFIGetTypeInfo(kTVMFFIStaticObjectEnd)->type_index, -1);
  const TVMFFITypeInfo* module = TVMFFIGetTypeInfo(kTVMFFIModule);
  ASSERT_EQ(module->num_fields, 1);
  const TVMFFIFieldInfo& imports = module->fields[0];
  EXPECT_EQ(Str(imports.name), "imports_");
  EXPECT_EQ(imports.offset, 24);
  EXPECT_EQ(imports.size, 8);
  EXPECT_EQ(imports.flags, 0);
  EXPECT_EQ(imports.field_static_type_index, kTVMFFIArray);
  ASSERT_NE(module->metadata, nullptr);
  EXPECT_EQ(module->metadata->total_size, 48);
  EXPECT_EQ(module->metadata->creator, nullptr);
  // libstdc++'s std::hash<std::string_view>, so structural hashes match TVM FFI's.
  EXPECT_EQ(object->type_key_hash, 3720555700325843206ULL);
  EXPECT_EQ(TVMFFIGetTypeInfo(kTVMFFINone)->type_key_hash, 18116513903021958570ULL);
  EXPECT_EQ(TVMFFIGetTypeInfo(kTVMFFIStr)->type_key_hash, 11312986287260453238ULL);
  // The columns header code expects.
  for (std::string column :
       {"__s_equal__", "__s_hash__", "__data_to_json__", "__data_from_json__"}) {
    TVMFFIByteArray name = Bytes(column);
    EXPECT_NE(TVMFFIGetTypeAttrColumn(&name), nullptr) << column;
  }
}

TEST(TypeTable, TheRevisionsBuiltinColumnsExistFromTheStart) {
  // v0.1.13 header code looks these up during static initialisation (an enum's __ffi_enum__)
  // and throws on a missing column; e98b94e1 lists none.
  std::vector<std::string> expected;
#define FFIJIT_EXPECTED_COLUMN(name) expected.push_back(name);
  FFIJIT_TVM_FFI_BUILTIN_ATTR_COLUMNS(FFIJIT_EXPECTED_COLUMN)
#undef FFIJIT_EXPECTED_COLUMN
  if (FFIJIT_TVM_FFI_HAS_ENUM) {
    EXPECT_EQ(expected.size(), 15u);
  }
  for (const std::string& column : expected) {
    TVMFFIByteArray name = Bytes(column);
    const TVMFFITypeAttrColumn* found = TVMFFIGetTypeAttrColumn(&name);
    ASSERT_NE(found, nullptr) << column;
    // No value for ffi.Object (absent, or None where a later type grew the column).
    const TVMFFIAny* entry = FFIJITTypeAttrColumnEntry(found, kTVMFFIObject);
    EXPECT_TRUE(entry == nullptr || entry->type_index == kTVMFFINone) << column;
  }
}

TEST(TypeTable, ModuleImportsFieldGetsAndSetsTheArray) {
  // A Module-shaped object: header, then the imports_ Array pointer.
  struct FakeModule {
    TVMFFIObject header;
    TVMFFIObject* imports;
  } module{};
  const TVMFFIFieldInfo& field = TVMFFIGetTypeInfo(kTVMFFIModule)->fields[0];
  void* address = reinterpret_cast<char*>(&module) + field.offset;
  TVMFFIAny out{};
  ASSERT_EQ(field.getter(address, &out), 0);
  EXPECT_EQ(out.type_index, kTVMFFINone);
  Array imports{Any(1), Any(2)};
  TVMFFIAny value{};
  value.type_index = kTVMFFIArray;
  value.v_obj = imports.get();
  ASSERT_EQ(reflected_test::CallSetter(field, address, &value), 0);
  EXPECT_EQ(module.imports, imports.get());
  ASSERT_EQ(field.getter(address, &out), 0);
  Any got = Any::Adopt(out);
  EXPECT_EQ(got.type_index(), kTVMFFIArray);
  EXPECT_EQ(got.raw().v_obj, imports.get());
  TVMFFIAny wrong{};
  wrong.type_index = kTVMFFIInt;
  EXPECT_EQ(reflected_test::CallSetter(field, address, &wrong), -1);
  EXPECT_EQ(Raised().kind(), "TypeError");
  details::DecRef(module.imports);
}

TEST(TypeTable, UnknownIndicesGetAPlaceholderNotACrash) {
  for (int32_t index : {-7, -1, 13, 40, 5000, 16383, 16384, 1 << 30}) {
    const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->type_index, -1);
    EXPECT_EQ(info->type_depth, 0);  // header IsInstance reads no ancestor
    EXPECT_EQ(KeyOf(info), "ffijit.UnknownType");
    EXPECT_EQ(info->num_fields, 0);
    EXPECT_EQ(info->metadata, nullptr);
  }
  EXPECT_TRUE(NothingRaised());
}

TEST(TypeTable, AllocationFollowsChildSlotsAndOverflow) {
  // The reference's example: Base reserves 3 child slots.
  int32_t base = Alloc("tt.alloc.Base", 1, 3, true, kTVMFFIObject);
  ASSERT_GE(base, kTVMFFIDynObjectBegin);
  int32_t first = Alloc("tt.alloc.First", 2, 0, true, base);
  int32_t second = Alloc("tt.alloc.Second", 2, 1, true, base);
  EXPECT_EQ(first, base + 1);
  EXPECT_EQ(second, base + 2);
  int32_t next_overflow = Alloc("tt.alloc.Other", 1, 0, true, kTVMFFIObject);
  EXPECT_EQ(next_overflow, base + 4);  // the counter skipped Base's 3 reserved slots
  int32_t grandchild = Alloc("tt.alloc.Grandchild", 3, 0, true, second);
  EXPECT_EQ(grandchild, base + 3);  // the slot `second` reserved
  int32_t third = Alloc("tt.alloc.Third", 2, 0, true, base);
  EXPECT_EQ(third, base + 5);  // Base's slots are used up: overflow

  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(grandchild);
  EXPECT_EQ(info->type_index, grandchild);
  EXPECT_EQ(info->type_depth, 3);
  EXPECT_EQ(info->FFIJIT_TYPE_ANCESTORS[0]->type_index, kTVMFFIObject);
  EXPECT_EQ(info->FFIJIT_TYPE_ANCESTORS[1]->type_index, base);
  EXPECT_EQ(info->FFIJIT_TYPE_ANCESTORS[2]->type_index, second);
  EXPECT_EQ(info->type_key_hash, std::hash<std::string_view>()("tt.alloc.Grandchild"));

  // An existing key returns its index whatever the other arguments say.
  EXPECT_EQ(Alloc("tt.alloc.Base", -5, -5, false, 123456, 3), base);
  EXPECT_TRUE(NothingRaised());
}

TEST(TypeTable, NoOverflowParentsRefuseInsteadOfAborting) {
  int32_t closed = Alloc("tt.closed.Base", 1, 1, false, kTVMFFIObject);
  ASSERT_GE(closed, kTVMFFIDynObjectBegin);
  int32_t only = Alloc("tt.closed.Only", 2, 0, true, closed);
  EXPECT_EQ(only, closed + 1);
  EXPECT_EQ(Alloc("tt.closed.Extra", 2, 0, true, closed), -1);
  Error error = Raised();
  EXPECT_EQ(error.kind(), "RuntimeError");
  EXPECT_NE(error.message().find("Reach maximum number of sub-classes for tt.closed.Base"),
            std::string::npos)
      << error.message();
  // `only` inherited "cannot overflow" and has no slots of its own.
  EXPECT_EQ(Alloc("tt.closed.Grandchild", 3, 0, true, only), -1);
  EXPECT_EQ(Raised().kind(), "RuntimeError");
  // Failed allocations leave no key behind.
  TVMFFIByteArray extra = Bytes("tt.closed.Extra");
  int32_t out = -1;
  EXPECT_EQ(TVMFFITypeKeyToIndex(&extra, &out), -1);
  EXPECT_EQ(Raised().kind(), "InternalError");
}

TEST(TypeTable, BadAllocationsAreErrors) {
  struct Case {
    std::string key;
    int32_t static_index, depth, slots, parent;
    const char* kind;
    const char* text;
  };
  const Case cases[] = {
      {"tt.bad.NoParent", -1, 1, 0, -1, "ValueError", "needs a parent"},
      {"tt.bad.ParentOutOfTable", -1, 1, 0, 100000, "ValueError", "parent"},
      {"tt.bad.EmptyParent", -1, 1, 0, 7000, "ValueError", "parent"},
      {"tt.bad.Depth", -1, 5, 0, kTVMFFIObject, "ValueError", "depth 5"},
      {"tt.bad.NegativeDepth", -1, -1, 0, kTVMFFIObject, "ValueError", "negative depth"},
      {"tt.bad.NegativeSlots", -1, 1, -3, kTVMFFIObject, "ValueError", "-3 child slots"},
      {"tt.bad.Conflict", kTVMFFIArray, 1, 0, kTVMFFIObject, "RuntimeError",
       "Conflicting static index 71 between ffi.Array and tt.bad.Conflict"},
      {"tt.bad.StaticDynamic", 300, 1, 0, kTVMFFIObject, "ValueError", "[64, 128)"},
      {"tt.bad.StaticPod", 20, 1, 0, kTVMFFIObject, "ValueError", "[64, 128)"},
      {"", -1, 1, 0, kTVMFFIObject, "ValueError", "empty type key"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Alloc(c.key, c.depth, c.slots, true, c.parent, c.static_index), -1) << c.key;
    Error error = Raised();
    EXPECT_EQ(error.kind(), c.kind) << c.key;
    EXPECT_NE(error.message().find(c.text), std::string::npos) << c.key << ": " << error.message();
  }
  EXPECT_EQ(TVMFFITypeGetOrAllocIndex(nullptr, -1, 1, 0, 1, kTVMFFIObject), -1);
  EXPECT_EQ(Raised().kind(), "ValueError");
  TVMFFIByteArray null_data{nullptr, 4};
  EXPECT_EQ(TVMFFITypeGetOrAllocIndex(&null_data, -1, 1, 0, 1, kTVMFFIObject), -1);
  EXPECT_EQ(Raised().kind(), "ValueError");
  // A free static slot works, with depth 1 under ffi.Object.
  int32_t fixed = Alloc("tt.static.Fixed", 1, 0, true, kTVMFFIObject, 100);
  EXPECT_EQ(fixed, 100);
  EXPECT_EQ(TVMFFIGetTypeInfo(100)->FFIJIT_TYPE_ANCESTORS[0]->type_index, kTVMFFIObject);
}

TEST(TypeTable, ParentMinusTwoQueriesAtV0_1_13AndIsAnErrorBefore) {
  int32_t known = Alloc("tt.query.Known", 1, 0, true, kTVMFFIObject);
  ASSERT_GE(known, kTVMFFIDynObjectBegin);
  // A known key answers its index in every mode.
  EXPECT_EQ(Alloc("tt.query.Known", 1, 0, true, -2), known);
  EXPECT_TRUE(NothingRaised());
  if (FFIJIT_TVM_FFI_HAS_TYPE_INDEX_QUERY) {
    EXPECT_EQ(Alloc("ffi.List", 0, 0, false, -2), 75);
    // An unknown key answers -2, raises nothing and registers nothing.
    EXPECT_EQ(Alloc("tt.query.Unknown", 1, 0, true, -2), -2);
    EXPECT_TRUE(NothingRaised());
    EXPECT_EQ(Alloc("tt.query.Unknown", 1, 0, true, -2), -2);
    TVMFFIByteArray unknown = Bytes("tt.query.Unknown");
    int32_t out = 12345;
    EXPECT_EQ(TVMFFITypeKeyToIndex(&unknown, &out), -1);
    EXPECT_EQ(Raised().kind(), "InternalError");
    EXPECT_EQ(out, 12345);
    // The next allocation takes the index a registration would have taken before the queries.
    int32_t after = Alloc("tt.query.After", 1, 0, true, kTVMFFIObject);
    EXPECT_EQ(after, known + 1);
    // A query still needs a readable key.
    EXPECT_EQ(TVMFFITypeGetOrAllocIndex(nullptr, -1, 1, 0, 1, -2), -1);
    EXPECT_EQ(Raised().kind(), "ValueError");
  } else {
    EXPECT_EQ(Alloc("tt.query.Unknown", 1, 0, true, -2), -1);
    Error error = Raised();
    EXPECT_EQ(error.kind(), "ValueError");
    EXPECT_NE(error.message().find("negative parent index"), std::string::npos) << error.message();
  }
  // Other negative parents are errors at both revisions.
  EXPECT_EQ(Alloc("tt.query.Minus3", 1, 0, true, -3), -1);
  EXPECT_EQ(Raised().kind(), "ValueError");
}

// What a module compiled against TVM FFI's headers computes for `IsInstance<T>(x)` (§7.3), with
// T's compile-time depth, child slots, overflow and final flags.
struct CompiledType {
  int32_t index;
  int32_t depth;
  int32_t child_slots;
  bool can_overflow;
  bool final;
};

bool HeaderIsInstance(int32_t x, const CompiledType& t) {
  if (t.index == kTVMFFIObject) return true;
  if (t.final) return x == t.index;
  if (t.child_slots == 0 ? x == t.index : (x >= t.index && x <= t.index + t.child_slots)) {
    return true;
  }
  if (!t.can_overflow) return false;
  if (x < t.index) return false;
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(x);
  return info->type_depth > t.depth && info->FFIJIT_TYPE_ANCESTORS[t.depth]->type_index == t.index;
}

TEST(TypeTable, IsInstanceAgreesWithHeaderCodeOverAMatrix) {
  // Object -> Shape(4 slots, overflow) -> {Circle(0), Polygon(2) -> {Square(0 final), Tri(0)},
  //                                       Ellipse (overflow)}; Object -> Leaf(final)
  //          Array (static) -> MyArray
  std::vector<CompiledType> types;
  std::vector<int32_t> parent_of;
  auto add = [&](const std::string& key, int32_t parent_pos, int32_t slots, bool overflow,
                 bool final) {
    int32_t parent = parent_pos < 0 ? -parent_pos : types[parent_pos].index;
    int32_t depth = TVMFFIGetTypeInfo(parent)->type_depth + 1;
    int32_t index = Alloc(key, depth, slots, overflow, parent);
    EXPECT_GE(index, 0) << key;
    types.push_back(CompiledType{index, depth, slots, overflow, final});
    parent_of.push_back(parent);
    return static_cast<int32_t>(types.size() - 1);
  };
  int32_t shape = add("tt.matrix.Shape", -kTVMFFIObject, 4, true, false);
  add("tt.matrix.Circle", shape, 0, true, false);
  int32_t polygon = add("tt.matrix.Polygon", shape, 2, true, false);
  add("tt.matrix.Square", polygon, 0, true, true);
  add("tt.matrix.Triangle", polygon, 0, true, false);
  int32_t ellipse = add("tt.matrix.Ellipse", shape, 0, true, false);  // overflows Shape's slots
  add("tt.matrix.Oval", ellipse, 0, true, false);
  add("tt.matrix.Leaf", -kTVMFFIObject, 0, true, true);
  add("tt.matrix.MyArray", -kTVMFFIArray, 0, true, false);
  types.push_back(CompiledType{kTVMFFIObject, 0, 0, true, false});
  types.push_back(CompiledType{kTVMFFIArray, 1, 0, true, false});
  types.push_back(CompiledType{kTVMFFIFunction, 1, 0, true, false});

  EXPECT_GT(types[ellipse].index, types[shape].index + 4);  // overflowed
  // Ground truth: walk the parent chain the test itself built.
  auto truth = [&](int32_t x, int32_t t) {
    for (int32_t current = x; current >= 0;) {
      if (current == t) return true;
      const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(current);
      current = info->type_depth == 0
                    ? -1
                    : info->FFIJIT_TYPE_ANCESTORS[info->type_depth - 1]->type_index;
    }
    return false;
  };
  int checked = 0;
  for (const CompiledType& x : types) {
    for (const CompiledType& t : types) {
      bool expected = truth(x.index, t.index);
      EXPECT_EQ(HeaderIsInstance(x.index, t), expected) << x.index << " vs " << t.index;
      EXPECT_EQ(FFIJITObjectIsInstance(x.index, t.index), expected ? 1 : 0)
          << x.index << " vs " << t.index;
      EXPECT_EQ(IsInstance(x.index, t.index), expected);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 12 * 12);
  // Unregistered and POD indices are instances of nothing but themselves.
  EXPECT_EQ(FFIJITObjectIsInstance(9999, types[shape].index), 0);
  EXPECT_EQ(FFIJITObjectIsInstance(kTVMFFIInt, kTVMFFIObject), 0);
  EXPECT_EQ(FFIJITObjectIsInstance(-4, kTVMFFIObject), 0);
}

// ---- A module-like reflected type: Point { int64 x; int64 y = 7; } under Base { int64 id; } ----

struct PointObj {
  TVMFFIObject header;
  int64_t id;
  int64_t x;
  int64_t y;
};

int32_t point_index = -1;
std::atomic<int> points_alive{0};

void PointDeleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) --points_alive;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(self);
}

int CreatePoint(TVMFFIObjectHandle* out) {
  auto* point = static_cast<PointObj*>(std::calloc(1, sizeof(PointObj)));
  point->header.type_index = point_index;
  FFIJITHeaderSetCounts(&point->header, 1, 1);
  point->header.deleter = PointDeleter;
  ++points_alive;
  *out = point;
  return 0;
}

int GetInt(void* field, TVMFFIAny* result) {
  std::memset(result, 0, sizeof(*result));
  result->type_index = kTVMFFIInt;
  result->v_int64 = *static_cast<int64_t*>(field);
  return 0;
}

int SetInt(void* field, const TVMFFIAny* value) {
  if (value->type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "expected an int");
    return -1;
  }
  *static_cast<int64_t*>(field) = value->v_int64;
  return 0;
}

TVMFFIFieldInfo IntField(const char* name, int64_t offset, bool has_default = false,
                         int64_t default_value = 0) {
  TVMFFIFieldInfo field{};
  field.name = TVMFFIByteArray{name, std::strlen(name)};
  field.flags =
      kTVMFFIFieldFlagBitMaskWritable | (has_default ? kTVMFFIFieldFlagBitMaskHasDefault : 0);
  field.size = 8;
  field.alignment = 8;
  field.offset = offset;
  field.getter = GetInt;
  field.setter = reinterpret_cast<decltype(field.setter)>(&SetInt);  // a void* at v0.1.13
  field.FFIJIT_FIELD_DEFAULT.type_index = has_default ? kTVMFFIInt : kTVMFFINone;
  field.FFIJIT_FIELD_DEFAULT.v_int64 = default_value;
  field.field_static_type_index = kTVMFFIInt;
  return field;
}

// Registers the types once, the way a module's static initialiser would.
struct PointModule {
  int32_t base = -1;
  int32_t point = -1;
  Function norm;  // the caller's reference to the method
  PointModule() {
    base = Alloc("tt.geo.Base", 1, 1, true, kTVMFFIObject);
    point = Alloc("tt.geo.Point", 2, 0, true, base);
    point_index = point;
    TVMFFIFieldInfo id = IntField("id", offsetof(PointObj, id), true, -1);
    CheckCall(TVMFFITypeRegisterField(base, &id));
    // Names and docs live in buffers the "module" reuses: the runtime must copy them.
    char name_buffer[8] = "x";
    char doc_buffer[32] = "the x coordinate";
    TVMFFIFieldInfo x = IntField(name_buffer, offsetof(PointObj, x));
    x.doc = TVMFFIByteArray{doc_buffer, std::strlen(doc_buffer)};
    CheckCall(TVMFFITypeRegisterField(point, &x));
    std::strcpy(name_buffer, "zz");
    std::strcpy(doc_buffer, "overwritten");
    TVMFFIFieldInfo y = IntField("y", offsetof(PointObj, y), true, 7);
    CheckCall(TVMFFITypeRegisterField(point, &y));
    TVMFFITypeMetadata metadata{};
    const char doc[] = "a point";
    metadata.doc = TVMFFIByteArray{doc, sizeof(doc) - 1};
    metadata.creator = CreatePoint;
    metadata.total_size = sizeof(PointObj);
    metadata.structural_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
    CheckCall(TVMFFITypeRegisterMetadata(point, &metadata));
    norm = Function::FromTyped([](int64_t a, int64_t b) { return a * a + b * b; });
    TVMFFIMethodInfo method{};
    const char method_name[] = "norm2";
    method.name = TVMFFIByteArray{method_name, sizeof(method_name) - 1};
    method.flags = kTVMFFIFieldFlagBitMaskIsStaticMethod;
    method.method.type_index = kTVMFFIFunction;
    method.method.v_obj = norm.get();
    CheckCall(TVMFFITypeRegisterMethod(point, &method));
  }
};

const PointModule& Module() {
  static PointModule module;
  return module;
}

TEST(TypeTable, FieldsMethodsAndMetadataAreStoredAndCopied) {
  const PointModule& module = Module();
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(module.point);
  EXPECT_EQ(KeyOf(info), "tt.geo.Point");
  ASSERT_EQ(info->num_fields, 2);
  EXPECT_EQ(Str(info->fields[0].name), "x");  // copied before the buffer changed
  EXPECT_EQ(Str(info->fields[0].doc), "the x coordinate");
  EXPECT_EQ(info->fields[0].name.data[1], '\0');
  EXPECT_EQ(info->fields[0].FFIJIT_MEMBER_METADATA.data, nullptr);  // empty becomes {NULL, 0}
  EXPECT_EQ(info->fields[0].FFIJIT_FIELD_DEFAULT.type_index, kTVMFFINone);  // no HasDefault
  EXPECT_EQ(info->fields[1].offset, static_cast<int64_t>(offsetof(PointObj, y)));
  EXPECT_EQ(info->fields[1].FFIJIT_FIELD_DEFAULT.type_index, kTVMFFIInt);
  EXPECT_EQ(info->fields[1].FFIJIT_FIELD_DEFAULT.v_int64, 7);
  ASSERT_NE(info->metadata, nullptr);
  EXPECT_EQ(Str(info->metadata->doc), "a point");
  EXPECT_EQ(info->metadata->total_size, static_cast<int32_t>(sizeof(PointObj)));
  EXPECT_EQ(info->metadata->structural_eq_hash_kind, kTVMFFISEqHashKindTreeNode);
  EXPECT_EQ(info->metadata->creator, &CreatePoint);
  ASSERT_EQ(info->num_methods, 1);
  EXPECT_EQ(Str(info->methods[0].name), "norm2");
  EXPECT_EQ(info->methods[0].flags, kTVMFFIFieldFlagBitMaskIsStaticMethod);
  // The table holds its own reference to the method.
  EXPECT_EQ(info->methods[0].method.v_obj, module.norm.get());
  EXPECT_GE(FFIJITHeaderStrongCount(module.norm.get()), 2u);
  Function method(ObjectPtr<>::Borrow(info->methods[0].method.v_obj));
  EXPECT_EQ(method(3, 4).cast<int64_t>(), 25);
  // The base's own field stays on the base.
  const TVMFFITypeInfo* base = TVMFFIGetTypeInfo(module.base);
  ASSERT_EQ(base->num_fields, 1);
  EXPECT_EQ(Str(base->fields[0].name), "id");
}

TEST(TypeTable, DefaultRawStringsBecomeOwnedStrings) {
  int32_t type = Alloc("tt.defaults.Holder", 1, 0, true, kTVMFFIObject);
  std::string text = "a default longer than seven bytes";
  TVMFFIFieldInfo field = IntField("label", 24, true);
  field.FFIJIT_FIELD_DEFAULT.type_index = kTVMFFIRawStr;
  field.FFIJIT_FIELD_DEFAULT.v_c_str = text.c_str();
  ASSERT_EQ(TVMFFITypeRegisterField(type, &field), 0);
  text.assign(text.size(), '#');
  const TVMFFIAny& stored = TVMFFIGetTypeInfo(type)->fields[0].FFIJIT_FIELD_DEFAULT;
  EXPECT_EQ(stored.type_index, kTVMFFIStr);
  EXPECT_EQ(AnyView(stored).cast<std::string>(), "a default longer than seven bytes");
}

TEST(TypeTable, ReRegisteringAFieldIsAnErrorAtV0_1_13AndReplacesBefore) {
  int32_t type = Alloc("tt.replace.T", 1, 0, true, kTVMFFIObject);
  TVMFFIFieldInfo a = IntField("a", 24);
  ASSERT_EQ(TVMFFITypeRegisterField(type, &a), 0);
  const TVMFFIFieldInfo* before = TVMFFIGetTypeInfo(type)->fields;
  TVMFFIFieldInfo again = IntField("a", 32);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type);
  if (FFIJIT_TVM_FFI_REJECTS_DUPLICATE_FIELDS) {
    ASSERT_EQ(TVMFFITypeRegisterField(type, &again), -1);
    Error error = Raised();
    EXPECT_EQ(error.kind(), "ValueError");
    EXPECT_EQ(error.message(),
              "TVMFFITypeRegisterField: duplicate field name `a` in type `tt.replace.T`");
    ASSERT_EQ(info->num_fields, 1);
    EXPECT_EQ(info->fields[0].offset, 24);  // the first registration stays
    // The same name on a subtype is a field of another type, not a duplicate.
    int32_t sub = Alloc("tt.replace.Sub", 2, 0, true, type);
    EXPECT_EQ(TVMFFITypeRegisterField(sub, &again), 0);
  } else {
    ASSERT_EQ(TVMFFITypeRegisterField(type, &again), 0);
    ASSERT_EQ(info->num_fields, 1);
    EXPECT_EQ(info->fields[0].offset, 32);
    EXPECT_EQ(before[0].offset, 24);  // a reader's old array stays valid and unchanged
  }
  // A method of the same name replaces the first at both revisions.
  Function one = Function::FromTyped([] { return 1; });
  Function two = Function::FromTyped([] { return 2; });
  TVMFFIMethodInfo method{};
  method.name = Bytes("m");
  method.method.type_index = kTVMFFIFunction;
  method.method.v_obj = one.get();
  ASSERT_EQ(TVMFFITypeRegisterMethod(type, &method), 0);
  method.method.v_obj = two.get();
  ASSERT_EQ(TVMFFITypeRegisterMethod(type, &method), 0);
  ASSERT_EQ(info->num_methods, 1);
  EXPECT_EQ(info->methods[0].method.v_obj, two.get());
  // Many appends: the array moves, the count and content stay right.
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) names.push_back("f" + std::to_string(i));
  for (const std::string& name : names) {
    TVMFFIFieldInfo f = IntField(name.c_str(), 24);
    ASSERT_EQ(TVMFFITypeRegisterField(type, &f), 0);
  }
  info = TVMFFIGetTypeInfo(type);
  ASSERT_EQ(info->num_fields, 41);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(Str(info->fields[i + 1].name), names[i]);
}

TEST(TypeTable, BadMemberRegistrationsAreErrors) {
  const PointModule& module = Module();
  TVMFFIFieldInfo field = IntField("x", 24);
  EXPECT_EQ(TVMFFITypeRegisterField(5000, &field), -1);
  Error unknown = Raised();
  EXPECT_EQ(unknown.kind(), "InternalError");
  EXPECT_NE(unknown.message().find("5000"), std::string::npos);
  EXPECT_EQ(TVMFFITypeRegisterField(module.point, nullptr), -1);
  EXPECT_EQ(Raised().kind(), "ValueError");
  TVMFFIFieldInfo unnamed = IntField("", 24);
  EXPECT_EQ(TVMFFITypeRegisterField(module.point, &unnamed), -1);
  EXPECT_NE(Raised().message().find("empty name"), std::string::npos);
  TVMFFIFieldInfo null_name = IntField("x", 24);
  null_name.name = TVMFFIByteArray{nullptr, 0};
  EXPECT_EQ(TVMFFITypeRegisterField(module.point, &null_name), -1);
  EXPECT_EQ(Raised().kind(), "ValueError");
  TVMFFIFieldInfo bad_doc = IntField("w", 24);
  bad_doc.doc = TVMFFIByteArray{nullptr, 3};
  EXPECT_EQ(TVMFFITypeRegisterField(module.point, &bad_doc), -1);
  EXPECT_NE(Raised().message().find("NULL data"), std::string::npos);
  TVMFFIMethodInfo method{};
  EXPECT_EQ(TVMFFITypeRegisterMethod(-3, &method), -1);
  EXPECT_EQ(Raised().kind(), "InternalError");
  EXPECT_EQ(TVMFFITypeRegisterMethod(module.point, &method), -1);  // no name
  EXPECT_EQ(Raised().kind(), "ValueError");
  EXPECT_EQ(TVMFFIGetTypeInfo(module.point)->num_fields, 2);  // nothing half-registered

  TVMFFITypeMetadata metadata{};
  EXPECT_EQ(TVMFFITypeRegisterMetadata(module.point, &metadata), -1);
  Error twice = Raised();
  EXPECT_EQ(twice.kind(), "RuntimeError");
  EXPECT_EQ(twice.message().rfind("Overriding tt.geo.Point, possible causes:", 0), 0u)
      << twice.message();
  EXPECT_EQ(TVMFFIGetTypeInfo(module.point)->metadata->creator, &CreatePoint);  // kept
  EXPECT_EQ(TVMFFITypeRegisterMetadata(7777, &metadata), -1);
  EXPECT_EQ(Raised().kind(), "InternalError");
  EXPECT_EQ(TVMFFITypeRegisterMetadata(module.base, nullptr), -1);
  EXPECT_EQ(Raised().kind(), "ValueError");
}

TEST(TypeTable, AttributeColumnsGrowAndRefuseASecondValue) {
  const PointModule& module = Module();
  std::string name = "tt.attr.repr";
  TVMFFIByteArray key = Bytes(name);
  EXPECT_EQ(TVMFFIGetTypeAttrColumn(&key), nullptr);
  // Index 0 only creates the column; the value is ignored.
  TVMFFIAny ignored{};
  ignored.type_index = kTVMFFIInt;
  ignored.v_int64 = 99;
  ASSERT_EQ(TVMFFITypeRegisterAttr(0, &key, &ignored), 0);
  const TVMFFITypeAttrColumn* column = TVMFFIGetTypeAttrColumn(&key);
  ASSERT_NE(column, nullptr);
  EXPECT_EQ(static_cast<int64_t>(column->size), 0);
  EXPECT_EQ(FFIJITTypeAttrColumnEntry(column, 0), nullptr);

  std::string long_text = "the attribute value of the point type";
  TVMFFIAny value{};
  value.type_index = kTVMFFIRawStr;
  value.v_c_str = long_text.c_str();
  ASSERT_EQ(TVMFFITypeRegisterAttr(module.point, &key, &value), 0);
  EXPECT_EQ(TVMFFIGetTypeAttrColumn(&key), column);  // the column pointer is stable
  // Entry t is data[t]: the layout both revisions' readers agree on (begin_index 0 at v0.1.13).
  ASSERT_EQ(static_cast<int64_t>(column->size), int64_t{module.point} + 1);
  if (FFIJIT_TVM_FFI_HAS_ATTR_COLUMN_BEGIN_INDEX) {
    EXPECT_EQ(ColumnBeginIndex(*column), 0);
  }
  EXPECT_EQ(column->data[module.point].type_index, kTVMFFIStr);  // an owned copy
  EXPECT_EQ(AnyView(column->data[module.point]).cast<std::string>(), long_text);
  EXPECT_EQ(FFIJITTypeAttrColumnEntry(column, module.point), &column->data[module.point]);
  EXPECT_EQ(FFIJITTypeAttrColumnEntry(column, module.point + 1), nullptr);
  EXPECT_EQ(FFIJITTypeAttrColumnEntry(column, -1), nullptr);
  for (int32_t i = 0; i < module.point; ++i) EXPECT_EQ(column->data[i].type_index, kTVMFFINone);
  TVMFFIAny small{};
  small.type_index = kTVMFFIInt;
  small.v_int64 = 5;
  ASSERT_EQ(TVMFFITypeRegisterAttr(kTVMFFIArray, &key, &small), 0);
  EXPECT_EQ(column->data[kTVMFFIArray].v_int64, 5);
  EXPECT_EQ(column->data[module.point].type_index, kTVMFFIStr);

  EXPECT_EQ(TVMFFITypeRegisterAttr(module.point, &key, &small), -1);
  Error twice = Raised();
  EXPECT_EQ(twice.kind(), "RuntimeError");
  EXPECT_EQ(twice.message(),
            "Type attribute `tt.attr.repr` is already set for type `tt.geo.Point`");
  EXPECT_EQ(TVMFFITypeRegisterAttr(-2, &key, &small), -1);
  EXPECT_EQ(Raised().kind(), "ValueError");
  EXPECT_EQ(TVMFFITypeRegisterAttr(6000, &key, &small), -1);
  EXPECT_EQ(Raised().kind(), "InternalError");
  EXPECT_EQ(TVMFFITypeRegisterAttr(module.base, nullptr, &small), -1);
  EXPECT_EQ(Raised().kind(), "ValueError");
  TVMFFIByteArray empty{nullptr, 0};
  EXPECT_EQ(TVMFFITypeRegisterAttr(module.base, &empty, &small), -1);
  EXPECT_EQ(Raised().kind(), "ValueError");
  EXPECT_EQ(TVMFFITypeRegisterAttr(module.base, &key, nullptr), -1);
  EXPECT_EQ(Raised().kind(), "ValueError");
  EXPECT_EQ(TVMFFIGetTypeAttrColumn(nullptr), nullptr);
}

TEST(TypeTable, ColumnEntryReaderFollowsTheRevisionsLayout) {
  TVMFFIAny values[3]{};
  for (int i = 0; i < 3; ++i) {
    values[i].type_index = kTVMFFIInt;
    values[i].v_int64 = 10 + i;
  }
  TVMFFITypeAttrColumn column{};
  column.data = values;
  column.size = 3;
  // data[t] for t < size.
  EXPECT_EQ(FFIJITTypeAttrColumnEntry(&column, 0), &values[0]);
  EXPECT_EQ(FFIJITTypeAttrColumnEntry(&column, 2), &values[2]);
  EXPECT_EQ(FFIJITTypeAttrColumnEntry(&column, 3), nullptr);
  EXPECT_EQ(FFIJITTypeAttrColumnEntry(&column, -1), nullptr);
  EXPECT_EQ(sizeof(TVMFFITypeAttrColumn), 16u);
  if (FFIJIT_TVM_FFI_HAS_ATTR_COLUMN_BEGIN_INDEX) {
    // {data, int32 size, int32 begin_index}: a column starting at 100 holds 100..102.
    ASSERT_EQ(sizeof(column.size), 4u);
    *reinterpret_cast<int32_t*>(reinterpret_cast<char*>(&column) + 12) = 100;  // begin_index
    EXPECT_EQ(ColumnBeginIndex(column), 100);
    EXPECT_EQ(FFIJITTypeAttrColumnEntry(&column, 99), nullptr);
    EXPECT_EQ(FFIJITTypeAttrColumnEntry(&column, 100), &values[0]);
    EXPECT_EQ(FFIJITTypeAttrColumnEntry(&column, 102), &values[2]);
    EXPECT_EQ(FFIJITTypeAttrColumnEntry(&column, 103), nullptr);
    EXPECT_EQ(FFIJITTypeAttrColumnEntry(&column, 0), nullptr);
  } else {
    EXPECT_EQ(sizeof(column.size), 8u);  // {data, size_t size}
  }
}

Any MakeObject(std::vector<Any> args) {
  Function make = GetGlobalFunctionOrThrow("ffi.MakeObjectFromPackedArgs");
  return make.CallPacked(reinterpret_cast<TVMFFIAny*>(args.data()),
                         static_cast<int32_t>(args.size()));
}

TEST(TypeTable, MakeObjectFromPackedArgsUsesTheCreatorAndFields) {
  const PointModule& module = Module();
  int alive = points_alive;
  {
    Any made = MakeObject({Any(std::string("tt.geo.Point")), Any(std::string("x")), Any(3),
                           Any(std::string("id")), Any(11)});
    ASSERT_EQ(made.type_index(), module.point);
    const auto* point = reinterpret_cast<const PointObj*>(made.raw().v_obj);
    EXPECT_EQ(point->x, 3);
    EXPECT_EQ(point->y, 7);  // the default
    EXPECT_EQ(point->id, 11);
    Any by_index = MakeObject(
        {Any(int64_t{module.point}), Any(std::string("y")), Any(1), Any(std::string("x")), Any(2)});
    const auto* second = reinterpret_cast<const PointObj*>(by_index.raw().v_obj);
    EXPECT_EQ(second->x, 2);
    EXPECT_EQ(second->y, 1);
    EXPECT_EQ(second->id, -1);  // the base level's default
    EXPECT_EQ(points_alive, alive + 2);
  }
  EXPECT_EQ(points_alive, alive);

  struct Case {
    std::vector<Any> args;
    const char* kind;
    const char* text;
  };
  std::vector<Case> cases;
  cases.push_back({{Any(std::string("tt.geo.Point")), Any(std::string("y")), Any(1)},
                   "TypeError",
                   "Required field `x` not set in creating `tt.geo.Point`"});
  cases.push_back({{Any(std::string("tt.geo.Point")), Any(std::string("x")), Any(1),
                    Any(std::string("bogus")), Any(2)},
                   "TypeError",
                   "no field named `bogus`"});
  cases.push_back({{Any(std::string("tt.geo.Point")), Any(std::string("x"))},
                   "InternalError",
                   "name/value pairs"});
  cases.push_back({{}, "InternalError", "name/value pairs"});
  cases.push_back({{Any(std::string("tt.geo.Point")), Any(std::string("x")), Any(1.5)},
                   "TypeError",
                   "expected an int"});
  cases.push_back({{Any(std::string("tt.geo.Base"))}, "RuntimeError", "no creator"});
  cases.push_back(
      {{Any(std::string("tt.geo.Nope"))}, "InternalError", "Cannot find type `tt.geo.Nope`"});
  cases.push_back({{Any(int64_t{4321})}, "ValueError", "4321"});
  cases.push_back({{Any(int64_t{kTVMFFIInt})}, "ValueError", "no object type"});
  cases.push_back({{Any(2.5)}, "TypeError", "argument 0"});
  cases.push_back(
      {{Any(std::string("tt.geo.Point")), Any(5), Any(1)}, "TypeError", "field name string"});
  for (Case& c : cases) {
    try {
      MakeObject(c.args);
      ADD_FAILURE() << "no error for " << c.text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), c.kind) << e.message();
      EXPECT_NE(e.message().find(c.text), std::string::npos) << e.message();
    }
  }
  EXPECT_EQ(points_alive, alive);  // failed creations released their object
}

TEST(TypeTable, RegistrationsRaceWithLookupsSafely) {
  int32_t type = Alloc("tt.race.T", 1, 0, true, kTVMFFIObject);
  std::string column_name = "tt.race.column";
  TVMFFIByteArray column_key = Bytes(column_name);
  ASSERT_EQ(TVMFFITypeRegisterAttr(0, &column_key, nullptr), 0);
  constexpr int kWriters = 2, kPerWriter = 200;
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < kPerWriter; ++i) {
        std::string name = "w" + std::to_string(w) + "_" + std::to_string(i);
        TVMFFIFieldInfo field = IntField(name.c_str(), 24 + 8 * i);
        CheckCall(TVMFFITypeRegisterField(type, &field));
        int32_t sub = Alloc("tt.race.Sub" + name, 2, 0, true, type);
        TVMFFIAny value{};
        value.type_index = kTVMFFIInt;
        value.v_int64 = sub;
        CheckCall(TVMFFITypeRegisterAttr(sub, &column_key, &value));
      }
    });
  }
  std::atomic<int64_t> reads{0};
  // Each reader reads at least once after the writers finish (do-while): the scheduler may give a
  // reader no turn while the writers run, and the test must not depend on it.
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&] {
      bool writers_done;
      do {
        writers_done = done.load();
        const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type);
        int32_t n = __atomic_load_n(&info->num_fields, __ATOMIC_ACQUIRE);
        const TVMFFIFieldInfo* fields = __atomic_load_n(&info->fields, __ATOMIC_ACQUIRE);
        for (int32_t i = 0; i < n; ++i) {
          ASSERT_EQ(fields[i].name.data[0], 'w');
        }
        const TVMFFITypeAttrColumn* column = TVMFFIGetTypeAttrColumn(&column_key);
        const int64_t size = static_cast<int64_t>(__atomic_load_n(&column->size, __ATOMIC_ACQUIRE));
        const TVMFFIAny* data = __atomic_load_n(&column->data, __ATOMIC_ACQUIRE);
        for (int64_t i = 0; i < size; ++i) {
          ASSERT_TRUE(data[i].type_index == kTVMFFINone ||
                      (data[i].type_index == kTVMFFIInt && data[i].v_int64 == int64_t(i)));
          if (data[i].type_index == kTVMFFIInt) {
            ASSERT_EQ(FFIJITObjectIsInstance(static_cast<int32_t>(i), type), 1);
          }
        }
        ++reads;
      } while (!writers_done);
    });
  }
  for (int w = 0; w < kWriters; ++w) threads[w].join();
  done = true;
  for (size_t t = kWriters; t < threads.size(); ++t) threads[t].join();
  EXPECT_EQ(TVMFFIGetTypeInfo(type)->num_fields, kWriters * kPerWriter);
  EXPECT_GE(reads.load(), 2);
}

TEST(TypeTable, SetGlobalFromMethodInfoRegistersFunctionsAndNullEntries) {
  Function twice = Function::FromTyped([](int64_t x) { return 2 * x; });
  TVMFFIMethodInfo info{};
  const std::string name = "tt.global.twice";
  info.name = Bytes(name);
  const char doc[] = "doubles";
  info.doc = TVMFFIByteArray{doc, sizeof(doc) - 1};
  info.method.type_index = kTVMFFIFunction;
  info.method.v_obj = twice.get();
  ASSERT_EQ(TVMFFIFunctionSetGlobalFromMethodInfo(&info, 0), 0);
  EXPECT_EQ(GetGlobalFunctionOrThrow(name)(21).cast<int64_t>(), 42);
  EXPECT_EQ(TVMFFIFunctionSetGlobalFromMethodInfo(&info, 0), -1);
  Error taken = Raised();
  EXPECT_EQ(taken.kind(), "RuntimeError");
  EXPECT_EQ(taken.message(), "Global Function `tt.global.twice` is already registered");
  // None stores a null entry: lookups succeed and report no function.
  info.method = TVMFFIAny{};
  ASSERT_EQ(TVMFFIFunctionSetGlobalFromMethodInfo(&info, 1), 0);
  TVMFFIObjectHandle found = reinterpret_cast<TVMFFIObjectHandle>(1);
  ASSERT_EQ(TVMFFIFunctionGetGlobal(&info.name, &found), 0);
  EXPECT_EQ(found, nullptr);
  // Anything else is a TypeError.
  info.method.type_index = kTVMFFIInt;
  EXPECT_EQ(TVMFFIFunctionSetGlobalFromMethodInfo(&info, 1), -1);
  EXPECT_EQ(Raised().kind(), "TypeError");
  Array array{1};
  info.method.type_index = kTVMFFIArray;
  info.method.v_obj = array.get();
  EXPECT_EQ(TVMFFIFunctionSetGlobalFromMethodInfo(&info, 1), -1);
  EXPECT_NE(Raised().message().find("ffi.Array"), std::string::npos);
  EXPECT_EQ(TVMFFIFunctionSetGlobalFromMethodInfo(nullptr, 0), -1);
  EXPECT_EQ(Raised().kind(), "ValueError");
  info.name = TVMFFIByteArray{nullptr, 0};
  EXPECT_EQ(TVMFFIFunctionSetGlobalFromMethodInfo(&info, 0), -1);
  EXPECT_EQ(Raised().kind(), "ValueError");
  // A missing name: 0 with NULL, as in TVM FFI.
  const std::string missing = "tt.global.missing";
  TVMFFIByteArray missing_name = Bytes(missing);
  found = reinterpret_cast<TVMFFIObjectHandle>(1);
  EXPECT_EQ(TVMFFIFunctionGetGlobal(&missing_name, &found), 0);
  EXPECT_EQ(found, nullptr);
}

// ---- v0.1.13's Function setters and default factories (flag bits 11 and 5) ----

// A Function setter for an int64 field: stores the value and counts its calls, as a module's
// Python-defined setter would; a non-int is a TypeError.
struct SetterCalls {
  int calls = 0;
  void* last_address = nullptr;
};

Function IntSetterFunction(SetterCalls* calls) {
  return Function::FromPacked([calls](const AnyView* args, int32_t num_args, Any* result) {
    if (num_args != 2 || args[0].type_index() != kTVMFFIOpaquePtr) {
      throw Error("InternalError", "a setter takes (address, value)");
    }
    if (args[1].type_index() != kTVMFFIInt) throw Error("TypeError", "the setter wants an int");
    ++calls->calls;
    calls->last_address = args[0].raw().v_ptr;
    *static_cast<int64_t*>(args[0].raw().v_ptr) = args[1].raw().v_int64;
    *result = Any();
  });
}

// A creator of PointObj-shaped objects of the type stored in `*Index`.
template <const int32_t* Index>
int CreatePointOf(TVMFFIObjectHandle* out) {
  auto* point = static_cast<PointObj*>(std::calloc(1, sizeof(PointObj)));
  point->header.type_index = *Index;
  FFIJITHeaderSetCounts(&point->header, 1, 1);
  point->header.deleter = PointDeleter;
  ++points_alive;
  *out = point;
  return 0;
}

int32_t fn_point_index = -1;
[[maybe_unused]] int32_t failing_index = -1;   // v0.1.13's tests
[[maybe_unused]] int32_t e98_bits_index = -1;  // e98b94e1's test

struct FunctionFieldTypes {
  int32_t type = -1;
  SetterCalls setter_calls;
  int factory_calls = 0;
  Function setter, factory;
  FunctionFieldTypes() {
    setter = IntSetterFunction(&setter_calls);
    factory = Function::FromPacked([this](const AnyView*, int32_t, Any* result) {
      *result = Any(int64_t{100 + factory_calls++});  // a fresh value per call
    });
    type = Alloc("tt.fn.Point", 1, 0, true, kTVMFFIObject);
    fn_point_index = type;
    TVMFFIFieldInfo x = IntField("x", offsetof(PointObj, x));
    x.flags |= FFIJIT_FIELD_FLAG_SETTER_IS_FUNCTION;
    x.setter = reinterpret_cast<decltype(x.setter)>(static_cast<void*>(setter.get()));
    CheckCall(TVMFFITypeRegisterField(type, &x));
    TVMFFIFieldInfo y = IntField("y", offsetof(PointObj, y), true);
    y.flags |= FFIJIT_FIELD_FLAG_DEFAULT_FROM_FACTORY;
    y.FFIJIT_FIELD_DEFAULT.type_index = kTVMFFIFunction;
    y.FFIJIT_FIELD_DEFAULT.v_obj = factory.get();
    CheckCall(TVMFFITypeRegisterField(type, &y));
    TVMFFITypeMetadata metadata{};
    metadata.creator = CreatePointOf<&fn_point_index>;
    metadata.total_size = sizeof(PointObj);
    metadata.structural_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
    CheckCall(TVMFFITypeRegisterMetadata(type, &metadata));
  }
};

#if FFIJIT_TVM_FFI_HAS_FIELD_FUNCTIONS  // no setter Functions at e98b94e1
TEST(TypeTable, SetterFunctionsAndDefaultFactoriesAreCalledAtV0_1_13) {
  static FunctionFieldTypes types;
  const uint64_t setter_refs = FFIJITHeaderStrongCount(types.setter.get());
  const uint64_t factory_refs = FFIJITHeaderStrongCount(types.factory.get());
  EXPECT_GE(setter_refs, 2u);  // ours and the table's
  EXPECT_GE(factory_refs, 2u);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(types.type);
  ASSERT_EQ(info->num_fields, 2);
  EXPECT_EQ(reinterpret_cast<void*>(info->fields[0].setter), types.setter.get());
  EXPECT_EQ(info->fields[1].FFIJIT_FIELD_DEFAULT.v_obj, types.factory.get());

  const int calls_before = types.setter_calls.calls;
  const int factory_before = types.factory_calls;
  Any made = MakeObject({Any(std::string("tt.fn.Point")), Any(std::string("x")), Any(5)});
  ASSERT_EQ(made.type_index(), types.type);
  const auto* point = reinterpret_cast<const PointObj*>(made.raw().v_obj);
  EXPECT_EQ(point->x, 5);  // through the Function, with the field's address
  EXPECT_EQ(types.setter_calls.calls, calls_before + 1);
  EXPECT_EQ(types.setter_calls.last_address, &point->x);
  EXPECT_EQ(point->y, 100 + factory_before);  // the factory made the default
  Any second = MakeObject({Any(std::string("tt.fn.Point")), Any(std::string("x")), Any(6)});
  EXPECT_EQ(reinterpret_cast<const PointObj*>(second.raw().v_obj)->y, 101 + factory_before);
  // A given value skips the factory.
  Any given = MakeObject({Any(std::string("tt.fn.Point")), Any(std::string("x")), Any(1),
                          Any(std::string("y")), Any(2)});
  EXPECT_EQ(reinterpret_cast<const PointObj*>(given.raw().v_obj)->y, 2);
  EXPECT_EQ(types.factory_calls, factory_before + 2);
  // The setter Function's error reaches the caller.
  try {
    MakeObject({Any(std::string("tt.fn.Point")), Any(std::string("x")), Any(1.5)});
    ADD_FAILURE() << "no error from the setter Function";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
    EXPECT_EQ(e.message(), "the setter wants an int");
  }
  // Calls hold no extra references.
  EXPECT_EQ(FFIJITHeaderStrongCount(types.setter.get()), setter_refs);
  EXPECT_EQ(FFIJITHeaderStrongCount(types.factory.get()), factory_refs);
}
#endif

#if FFIJIT_TVM_FFI_HAS_FIELD_FUNCTIONS  // no default factories at e98b94e1
TEST(TypeTable, DefaultFactoriesRunForJsonGraphFieldsAtV0_1_13) {
  static int made = 0;
  static Function factory = Function::FromPacked([](const AnyView*, int32_t, Any* result) {
    *result = Any("made " + std::to_string(++made));
  });
  static SetterCalls setter_calls;
  static Function setter = Function::FromPacked([](const AnyView* args, int32_t, Any* result) {
    ++setter_calls.calls;
    TVMFFIAny* slot = static_cast<TVMFFIAny*>(args[0].raw().v_ptr);
    TVMFFIAny owned{};
    CheckCall(TVMFFIAnyViewToOwnedAny(&args[1].raw(), &owned));
    details::ReleaseAny(slot);
    *slot = owned;
    *result = Any();
  });
  static const int32_t type = reflected_test::RegisterSlotType(
      "tt.fn.Labelled", kTVMFFISEqHashKindTreeNode,
      {{"value", 0, kTVMFFIInt}, {"label", 0, kTVMFFIAny, nullptr, setter.get(), factory.get()}});
  auto from_json = [](const std::string& text) {
    return GetGlobalFunctionOrThrow("ffi.FromJSONGraphString")(text);
  };
  const int before = made;
  Any first =
      from_json(R"({"root_index":0,"nodes":[{"type":"tt.fn.Labelled","data":{"value":1}}]})");
  ASSERT_EQ(first.type_index(), type);
  const auto* obj = reinterpret_cast<const reflected_test::SlotObj*>(first.raw().v_obj);
  EXPECT_EQ(AnyView(obj->slots[0]).cast<int64_t>(), 1);
  EXPECT_EQ(AnyView(obj->slots[1]).cast<std::string>(), "made " + std::to_string(before + 1));
  EXPECT_EQ(setter_calls.calls, 1);  // the label went through the setter Function
  Any second =
      from_json(R"({"root_index":0,"nodes":[{"type":"tt.fn.Labelled","data":{"value":2}}]})");
  const auto* obj2 = reinterpret_cast<const reflected_test::SlotObj*>(second.raw().v_obj);
  EXPECT_EQ(AnyView(obj2->slots[1]).cast<std::string>(), "made " + std::to_string(before + 2));
  // reflection's reader for header code dispatches the same way.
  const TVMFFIFieldInfo& label = TVMFFIGetTypeInfo(type)->fields[1];
  Any value("direct");
  ASSERT_EQ(reflected_test::CallSetter(
                label, reinterpret_cast<char*>(second.raw().v_obj) + label.offset, &value.raw()),
            0);
  EXPECT_EQ(AnyView(obj2->slots[1]).cast<std::string>(), "direct");
}
#endif

#if FFIJIT_TVM_FFI_HAS_FIELD_FUNCTIONS  // no setter Functions at e98b94e1
TEST(TypeTable, BadSetterFunctionsAndFactoriesAreTypeErrorsAtV0_1_13) {
  int32_t type = Alloc("tt.fn.Bad", 1, 0, true, kTVMFFIObject);
  Array not_a_function{Any(1)};
  TVMFFIFieldInfo setter = IntField("s", 24);
  setter.flags |= FFIJIT_FIELD_FLAG_SETTER_IS_FUNCTION;
  setter.setter =
      reinterpret_cast<decltype(setter.setter)>(static_cast<void*>(not_a_function.get()));
  EXPECT_EQ(TVMFFITypeRegisterField(type, &setter), -1);
  Error bad_setter = Raised();
  EXPECT_EQ(bad_setter.kind(), "TypeError");
  EXPECT_EQ(bad_setter.message(),
            "TVMFFITypeRegisterField: the setter of field `s` of type `tt.fn.Bad` must be a "
            "function, not `ffi.Array`");
  TVMFFIFieldInfo factory = IntField("f", 24, true);
  factory.flags |= FFIJIT_FIELD_FLAG_DEFAULT_FROM_FACTORY;
  EXPECT_EQ(TVMFFITypeRegisterField(type, &factory), -1);  // the default is the int 0
  Error int_factory = Raised();
  EXPECT_EQ(int_factory.kind(), "TypeError");
  EXPECT_EQ(int_factory.message(),
            "TVMFFITypeRegisterField: the default factory of field `f` of type `tt.fn.Bad` must "
            "be a function, not `int`");
  factory.FFIJIT_FIELD_DEFAULT.type_index = kTVMFFIArray;
  factory.FFIJIT_FIELD_DEFAULT.v_obj = not_a_function.get();
  EXPECT_EQ(TVMFFITypeRegisterField(type, &factory), -1);
  EXPECT_NE(Raised().message().find("not `ffi.Array`"), std::string::npos);
  EXPECT_EQ(TVMFFIGetTypeInfo(type)->num_fields, 0);             // nothing half-registered
  EXPECT_EQ(FFIJITHeaderStrongCount(not_a_function.get()), 1u);  // and nothing retained
  // A factory that fails makes creation fail with its error.
  Function failing = Function::FromPacked(
      [](const AnyView*, int32_t, Any*) { throw Error("ValueError", "no default today"); });
  int32_t creatable = Alloc("tt.fn.Failing", 1, 0, true, kTVMFFIObject);
  failing_index = creatable;
  TVMFFIFieldInfo y = IntField("y", offsetof(PointObj, y), true);
  y.flags |= FFIJIT_FIELD_FLAG_DEFAULT_FROM_FACTORY;
  y.FFIJIT_FIELD_DEFAULT.type_index = kTVMFFIFunction;
  y.FFIJIT_FIELD_DEFAULT.v_obj = failing.get();
  ASSERT_EQ(TVMFFITypeRegisterField(creatable, &y), 0);
  TVMFFITypeMetadata metadata{};
  metadata.creator = CreatePointOf<&failing_index>;
  ASSERT_EQ(TVMFFITypeRegisterMetadata(creatable, &metadata), 0);
  try {
    MakeObject({Any(std::string("tt.fn.Failing"))});
    ADD_FAILURE() << "no error from the failing factory";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "ValueError");
    EXPECT_EQ(e.message(), "no default today");
  }
}
#endif

#if !FFIJIT_TVM_FFI_HAS_FIELD_FUNCTIONS  // bits 5-12 have meanings at v0.1.13
TEST(TypeTable, FlagBitsAfterFourMeanNothingAtE98b94e1) {
  // A module built for e98b94e1 never sets bits 5 or 11; if it does, the setter stays a function
  // pointer and the default a value.
  int32_t type = Alloc("tt.e98.Bits", 1, 0, true, kTVMFFIObject);
  e98_bits_index = type;
  TVMFFIFieldInfo x = IntField("x", offsetof(PointObj, x), true, 9);
  x.flags |= (1 << 5) | (1 << 11);
  ASSERT_EQ(TVMFFITypeRegisterField(type, &x), 0);
  TVMFFITypeMetadata metadata{};
  metadata.creator = CreatePointOf<&e98_bits_index>;
  ASSERT_EQ(TVMFFITypeRegisterMetadata(type, &metadata), 0);
  Any made = MakeObject({Any(std::string("tt.e98.Bits"))});
  EXPECT_EQ(reinterpret_cast<const PointObj*>(made.raw().v_obj)->x, 9);
  // Bit 11 with a function-pointer setter: called as a function pointer.
  Any given = MakeObject({Any(std::string("tt.e98.Bits")), Any(std::string("x")), Any(4)});
  EXPECT_EQ(reinterpret_cast<const PointObj*>(given.raw().v_obj)->x, 4);
}
#endif

TEST(TvmFfiAbi, ReportsTheRevisionAndExportsEveryFunction) {
  const FFIJITTvmFfiAbi* abi = FFIJITGetTvmFfiAbi();
  ASSERT_NE(abi, nullptr);
  EXPECT_EQ(abi->object_header_size, 24);
  EXPECT_EQ(abi->type_info_size, 72);
  // The identity is the revision's row of cmake/tvm_ffi_revisions.txt (the generated config).
  EXPECT_STREQ(abi->name, FFIJIT_TVM_FFI_ABI_NAME);
  EXPECT_STREQ(abi->commit, FFIJIT_TVM_FFI_ABI_COMMIT);
  EXPECT_STREQ(abi->version, FFIJIT_TVM_FFI_ABI_VERSION_TEXT);
  EXPECT_EQ(std::strlen(abi->commit), 40u);
  if (FFIJIT_TVM_FFI_HAS_ERROR_CAUSE_CHAIN) {
    EXPECT_EQ(abi->error_cell_size, 72);
    ASSERT_EQ(abi->num_functions, 38);
    EXPECT_STREQ(abi->functions[abi->num_functions - 1], "TVMFFIHandleDeinitOnce");
  } else {
    EXPECT_EQ(abi->error_cell_size, 56);
    ASSERT_EQ(abi->num_functions, 30);
    EXPECT_STREQ(abi->functions[abi->num_functions - 1], "TVMFFIGetTypeInfo");
  }
#if FFIJIT_TVM_FFI_HAS_GET_VERSION
  // TVMFFIGetVersion and the version text agree.
  TVMFFIVersion version{};
  TVMFFIGetVersion(&version);
  EXPECT_EQ(std::to_string(version.major) + "." + std::to_string(version.minor) + "." +
                std::to_string(version.patch),
            abi->version);
#endif
  for (int32_t i = 0; i < abi->num_functions; ++i) {
    EXPECT_NE(dlsym(RTLD_DEFAULT, abi->functions[i]), nullptr) << abi->functions[i];
  }
}

}  // namespace
}  // namespace ffijit
