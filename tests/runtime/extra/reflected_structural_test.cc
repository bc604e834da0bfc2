// Structural equality, hashing and first-mismatch paths of reflected object types (registered
// through the C API in reflected_types.h): every structural kind, ignored fields, definition
// fields with free-variable mapping, custom __s_equal__/__s_hash__, inherited fields, the errors
// for types without a structural kind, hash values derived from TVM FFI's published algorithm,
// and the access paths GetFirstMismatch and ffi.GetFirstStructuralMismatch report.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ffijit/ffijit.h"
#include "runtime/reflected_types.h"
#include "runtime/tvm_header_style.h"

namespace ffijit {
namespace {

using reflected_test::FieldSpec;
using reflected_test::MakeSlotObj;
using reflected_test::RegisterSlotType;

struct Types {
  int32_t var, integer, func, node, unique, no_kind, no_meta, custom, base, derived;
  Types() {
    var = RegisterSlotType("rs.Var", kTVMFFISEqHashKindFreeVar,
                           {{"name", kTVMFFIFieldFlagBitMaskSEqHashIgnore}});
    integer = RegisterSlotType("rs.Int", kTVMFFISEqHashKindTreeNode, {{"value", 0, kTVMFFIInt}});
    func = RegisterSlotType("rs.Func", kTVMFFISEqHashKindTreeNode,
                            {{"params", kTVMFFIFieldFlagBitMaskSEqHashDef},
                             {"body"},
                             {"comment", kTVMFFIFieldFlagBitMaskSEqHashIgnore}});
    node = RegisterSlotType("rs.Node", kTVMFFISEqHashKindDAGNode, {{"value"}});
    unique = RegisterSlotType("rs.Unique", kTVMFFISEqHashKindUniqueInstance, {{"value"}});
    no_kind = RegisterSlotType("rs.NoKind", kTVMFFISEqHashKindUnsupported, {{"value"}});
    no_meta = RegisterSlotType("rs.NoMeta", -1, {{"value"}});
    custom = RegisterSlotType("rs.Custom", kTVMFFISEqHashKindTreeNode, {{"a"}, {"b"}});
    base = RegisterSlotType("rs.Base", kTVMFFISEqHashKindTreeNode, {{"x"}});
    derived = RegisterSlotType("rs.Derived", kTVMFFISEqHashKindTreeNode, {{"y"}}, base);
    // rs.Custom compares and hashes field `a` only, through the runtime's callbacks.
    reflected_test::SetTypeAttr(
        custom, "__s_equal__",
        Any(Function::FromPacked([](const AnyView* args, int32_t, Any* result) {
          const auto* l = reinterpret_cast<const reflected_test::SlotObj*>(args[0].raw().v_obj);
          const auto* r = reinterpret_cast<const reflected_test::SlotObj*>(args[1].raw().v_obj);
          Function compare = args[2].cast<Function>();
          *result = compare(AnyView(l->slots[0]), AnyView(r->slots[0]), false, "a");
        })));
    reflected_test::SetTypeAttr(
        custom, "__s_hash__",
        Any(Function::FromPacked([](const AnyView* args, int32_t, Any* result) {
          const auto* self = reinterpret_cast<const reflected_test::SlotObj*>(args[0].raw().v_obj);
          Function hash = args[2].cast<Function>();
          *result = hash(AnyView(self->slots[0]), args[1], false);
        })));
  }
};

const Types& T() {
  static const Types types;
  return types;
}

Any Var(const char* name) {
  return MakeSlotObj(T().var, {Any(name)});
}
Any Int(int64_t v) {
  return MakeSlotObj(T().integer, {Any(v)});
}
Any Func(Array params, Array body, Any comment) {
  return MakeSlotObj(T().func, {Any(params), Any(body), comment});
}

tvm::ffi::Any Hold(const Any& value) {
  TVMFFIAny owned{};
  TVMFFIAnyViewToOwnedAny(&value.raw(), &owned);
  return tvm::ffi::Any(owned);
}
bool Equal(const Any& a, const Any& b, bool map_free_vars = false) {
  return tvm::ffi::StructuralEqual::Equal(Hold(a), Hold(b), map_free_vars, false);
}
uint64_t Hash(const Any& a, bool map_free_vars = false) {
  return tvm::ffi::StructuralHash::Hash(Hold(a), map_free_vars, false);
}

// A heap Bytes object (type 66) holding `text`, as header code may make even for short bytes.
struct HeapBytes {
  TVMFFIObject header;
  TVMFFIByteArray cell;
  char data[8];
};
TVMFFIAny NewHeapBytes(const char* text) {
  auto* obj = static_cast<HeapBytes*>(std::calloc(1, sizeof(HeapBytes)));
  obj->header.type_index = kTVMFFIBytes;
  FFIJITHeaderSetCounts(&obj->header, 1, 1);
  obj->header.deleter = [](void* self, int flags) {
    if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(self);
  };
  std::strncpy(obj->data, text, sizeof(obj->data) - 1);
  obj->cell = TVMFFIByteArray{obj->data, std::strlen(obj->data)};
  TVMFFIAny owned{};
  owned.type_index = kTVMFFIBytes;
  owned.v_obj = &obj->header;
  return owned;
}

// TVM FFI's StableHashCombine (public header base_details.h), for expected values.
uint64_t Combine(uint64_t key, uint64_t value) {
  return key ^ (value + 0x9e3779b9ull + (key << 6) + (key >> 2));
}
uint64_t KeyHash(int32_t type_index) {
  return TVMFFIGetTypeInfo(type_index)->type_key_hash;
}

// Reads an object's reflected field by name (through the type table's getter).
Any Field(const AnyView& obj, const std::string& name) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(obj.raw().type_index);
  for (int32_t i = 0; i < info->num_fields; ++i) {
    const TVMFFIFieldInfo& field = info->fields[i];
    if (std::string(field.name.data, field.name.size) != name) continue;
    TVMFFIAny out{};
    CheckCall(field.getter(reinterpret_cast<char*>(obj.raw().v_obj) + field.offset, &out));
    return Any::Adopt(out);
  }
  throw Error("KeyError", "no field " + name);
}

// An AccessPath as text, root first: .attr, [index], {key}, and "!" for a missing item.
std::string PathText(const AnyView& path) {
  EXPECT_EQ(path.type_name(), "ffi.reflection.AccessPath");
  Any parent = Field(path, "parent");
  if (parent.is_none()) {
    EXPECT_EQ(Field(path, "depth").cast<int64_t>(), 0);
    return "<root>";
  }
  Any step = Field(path, "step");
  int64_t kind = Field(step, "kind").cast<int64_t>();
  Any key = Field(step, "key");
  std::string text = PathText(parent);
  switch (kind) {
    case 0:
      return text + "." + key.cast<std::string>();
    case 1:
    case 4:
      return text + "[" + std::to_string(key.cast<int64_t>()) + "]" + (kind == 4 ? "!" : "");
    case 2:
    case 5:
      return text + "{" + (key.is_none() ? "None" : key.cast<std::string>()) + "}" +
             (kind == 5 ? "!" : "");
    default:
      return text + ".<attr missing " + key.cast<std::string>() + ">";
  }
}

// The first mismatch through the exported C++ function, as "lhs | rhs" (or "equal").
std::string Mismatch(const Any& a, const Any& b, bool map_free_vars = false) {
  tvm::ffi::MismatchResult pair =
      tvm::ffi::StructuralEqual::GetFirstMismatch(Hold(a), Hold(b), map_free_vars, false);
  if (pair.get() == nullptr) return "equal";
  Array paths(ObjectPtr<>::Borrow(pair.get()));
  EXPECT_EQ(paths.size(), 2);
  return PathText(paths[0]) + " | " + PathText(paths[1]);
}

TEST(ReflectedStructural, FreeVarsMapOnlyWhenAskedAndHashByOrder) {
  Any a = Var("a"), b = Var("b");
  EXPECT_TRUE(Equal(a, a));
  EXPECT_FALSE(Equal(a, b));
  EXPECT_TRUE(Equal(a, b, /*map_free_vars=*/true));
  EXPECT_NE(Hash(a), Hash(b));  // by identity when not mapping
  EXPECT_EQ(Hash(a, true), Hash(b, true));
  // The name is ignored; the first mapped free variable gets counter 0.
  EXPECT_EQ(Hash(a, true), Combine(KeyHash(T().var), 0));
  EXPECT_EQ(Hash(a), reinterpret_cast<uintptr_t>(a.raw().v_obj));
}

TEST(ReflectedStructural, DefinitionFieldsMapVariablesAndIgnoredFieldsDoNotCount) {
  Any x = Var("x"), y = Var("y");
  Any fa = Func(Array{x}, Array{Int(1), x}, Any("comment a"));
  Any fb = Func(Array{y}, Array{Int(1), y}, Any("comment b"));
  Any fc = Func(Array{x}, Array{Int(1), Int(2)}, Any("comment c"));
  EXPECT_TRUE(Equal(fa, fb));
  EXPECT_EQ(Hash(fa), Hash(fb));
  EXPECT_FALSE(Equal(fa, fc));
  EXPECT_NE(Hash(fa), Hash(fc));
  EXPECT_EQ(Mismatch(fa, fc), "<root>.body[1] | <root>.body[1]");
  EXPECT_EQ(Mismatch(fa, fb), "equal");
  // A variable used but not defined is free: equal only with map_free_vars.
  Any ga = Func(Array(std::vector<Any>{}), Array{x}, Any()),
      gb = Func(Array(std::vector<Any>{}), Array{y}, Any());
  EXPECT_FALSE(Equal(ga, gb));
  EXPECT_TRUE(Equal(ga, gb, true));
  // Once paired, a variable must keep its partner: params (x, y) vs (y2, x2) pair x-y2, y-x2.
  Any y2 = Var("y2"), x2 = Var("x2");
  Any ha = Func(Array{x, y}, Array{x}, Any()), hb = Func(Array{y2, x2}, Array{x2}, Any());
  EXPECT_FALSE(Equal(ha, hb));
  EXPECT_EQ(Mismatch(ha, hb), "<root>.body[0] | <root>.body[0]");
  EXPECT_TRUE(Equal(ha, Func(Array{y2, x2}, Array{y2}, Any())));
}

TEST(ReflectedStructural, DagNodesMustBeSharedAlikeAndHashTheirSharing) {
  Any n = MakeSlotObj(T().node, {Any(int64_t{1})});
  Any m = MakeSlotObj(T().node, {Any(int64_t{1})});
  Any m2 = MakeSlotObj(T().node, {Any(int64_t{1})});
  EXPECT_TRUE(Equal(n, m));
  EXPECT_EQ(Hash(n), Hash(m));
  EXPECT_TRUE(Equal(Any(Array{n, n}), Any(Array{m, m})));
  EXPECT_EQ(Hash(Any(Array{n, n})), Hash(Any(Array{m, m})));
  EXPECT_FALSE(Equal(Any(Array{n, n}), Any(Array{m, m2})));
  EXPECT_NE(Hash(Any(Array{n, n})), Hash(Any(Array{m, m2})));
  // One DAG node: type key hash, its field, then the node counter (0).
  EXPECT_EQ(Hash(n), Combine(Combine(KeyHash(T().node), Combine(kTVMFFIInt, 1)), 0));
}

TEST(ReflectedStructural, UniqueInstancesCompareByIdentityAndInheritedFieldsComeFirst) {
  Any u = MakeSlotObj(T().unique, {Any(int64_t{1})});
  EXPECT_TRUE(Equal(u, u));
  EXPECT_FALSE(Equal(u, MakeSlotObj(T().unique, {Any(int64_t{1})})));
  Any d1 = MakeSlotObj(T().derived, {Any(int64_t{1}), Any(int64_t{2})});
  Any d2 = MakeSlotObj(T().derived, {Any(int64_t{1}), Any(int64_t{3})});
  Any d3 = MakeSlotObj(T().derived, {Any(int64_t{0}), Any(int64_t{3})});
  EXPECT_EQ(Mismatch(d1, d2), "<root>.y | <root>.y");
  EXPECT_EQ(Mismatch(d1, d3), "<root>.x | <root>.x");
  EXPECT_EQ(Hash(d1),
            Combine(Combine(KeyHash(T().derived), Combine(kTVMFFIInt, 1)), Combine(kTVMFFIInt, 2)));
  // Different types never compare equal.
  EXPECT_FALSE(Equal(MakeSlotObj(T().base, {Any(int64_t{1})}), d1));
}

TEST(ReflectedStructural, CustomEqualAndHashReplaceTheFieldWalk) {
  Any c1 = MakeSlotObj(T().custom, {Any(int64_t{1}), Any("ignored 1")});
  Any c2 = MakeSlotObj(T().custom, {Any(int64_t{1}), Any("ignored 2")});
  Any c3 = MakeSlotObj(T().custom, {Any(int64_t{2}), Any("ignored 1")});
  EXPECT_TRUE(Equal(c1, c2));
  EXPECT_EQ(Hash(c1), Hash(c2));
  EXPECT_FALSE(Equal(c1, c3));
  EXPECT_NE(Hash(c1), Hash(c3));
  EXPECT_EQ(Mismatch(Any(Array{c1}), Any(Array{c3})), "<root>[0].a | <root>[0].a");
  EXPECT_EQ(Hash(c1), Combine(KeyHash(T().custom), Combine(kTVMFFIInt, 1)));
}

TEST(ReflectedStructural, TypesWithoutAStructuralKindAreTypeErrors) {
  struct Case {
    Any value;
    const char* text;
  };
  Function f = Function::FromTyped([] { return 1; });
  const Case cases[] = {
      {MakeSlotObj(T().no_meta, {}), "Type metadata is not set for type `rs.NoMeta`"},
      {MakeSlotObj(T().no_kind, {}), "_type_s_eq_hash_kind is not set for type `rs.NoKind`"},
      {Any(f), "Type metadata is not set for type `ffi.Function`"}};
  for (const Case& c : cases) {
    for (int op = 0; op < 3; ++op) {
      try {
        if (op == 0) Equal(c.value, c.value);
        if (op == 1) Hash(c.value);
        if (op == 2) Mismatch(Any(Array{c.value}), Any(Array{c.value}));
        ADD_FAILURE() << "no error for " << c.text << " (operation " << op << ")";
      } catch (const tvm::ffi::Error& e) {
        EXPECT_EQ(e.kind(), "TypeError");
        EXPECT_NE(e.message().find(c.text), std::string::npos) << e.message();
      }
    }
    try {
      GetGlobalFunctionOrThrow("ffi.StructuralHash")(c.value, false, false);
      ADD_FAILURE() << "ffi.StructuralHash accepted " << c.text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), "TypeError");
    }
  }
}

TEST(ReflectedStructural, HashValuesFollowTvmFfisAlgorithm) {
  // Test vectors computed from the published formulas (StableHashCombine, StableHashBytes):
  // "abc" packs little-endian into 0x636261 = 6513249; 17 bytes take two rounds modulo 2^31-1.
  EXPECT_EQ(Hash(Any(int64_t{5})), Combine(kTVMFFIInt, 5));
  EXPECT_EQ(Hash(Any(int64_t{5})), 2654435839u);
  EXPECT_EQ(Hash(Any("abc")), Combine(kTVMFFIStr, 6513249));
  EXPECT_EQ(Hash(Any("abc")), 2660953131u);
  EXPECT_EQ(Hash(Any(String("hello world, long"))), 3706339778u);
  EXPECT_EQ(Hash(Any(Array{int64_t{1}, int64_t{2}})),
            Combine(Combine(Combine(KeyHash(kTVMFFIArray), 2), Combine(kTVMFFIInt, 1)),
                    Combine(kTVMFFIInt, 2)));
  EXPECT_EQ(Hash(Any(Shape{4})), Combine(Combine(KeyHash(kTVMFFIShape), 1), 4));
  // ffi.Object's key hash is libstdc++'s std::hash, as TVM FFI's.
  EXPECT_EQ(KeyHash(kTVMFFIObject), 3720555700325843206ull);
  // Bytes hash alike in the inline and the heap form (they compare equal).
  TVMFFIAny small{};
  TVMFFIByteArray bytes{"xyz", 3};
  ASSERT_EQ(TVMFFIBytesFromByteArray(&bytes, &small), 0);
  ASSERT_EQ(small.type_index, kTVMFFISmallBytes);
  Any inline_form = Any::Adopt(small), heap_form = Any::Adopt(NewHeapBytes("xyz"));
  EXPECT_TRUE(Equal(inline_form, heap_form));
  EXPECT_EQ(Hash(inline_form), Hash(heap_form));
  EXPECT_EQ(Hash(heap_form), Combine(kTVMFFIBytes, 0x7a7978));
}

TEST(ReflectedStructural, MismatchPathsNameArrayAndMapItems) {
  EXPECT_EQ(Mismatch(Any(Array{int64_t{1}, int64_t{2}, int64_t{3}}), Any(Array{int64_t{1}})),
            "<root>[1] | <root>[1]!");
  EXPECT_EQ(Mismatch(Any(Array{int64_t{1}}), Any(Array{int64_t{1}, int64_t{2}})),
            "<root>[1]! | <root>[1]");
  EXPECT_EQ(Mismatch(Any(int64_t{1}), Any(int64_t{2})), "<root> | <root>");
  Any a(Map{{"a", Array{int64_t{1}}}, {"b", Array{int64_t{4}, "hello"}}});
  EXPECT_EQ(Mismatch(a, Any(Map{{"a", Array{int64_t{1}}}, {"b", Array{int64_t{4}, "world"}}})),
            "<root>{b}[1] | <root>{b}[1]");
  EXPECT_EQ(Mismatch(a, Any(Map{{"a", Array{int64_t{1}}}})), "<root>{b} | <root>{b}!");
  EXPECT_EQ(Mismatch(Any(Map{{"a", Array{int64_t{1}}}}), a), "<root>{b}! | <root>{b}");
  EXPECT_EQ(Mismatch(a, a), "equal");
}

TEST(ReflectedStructural, MismatchPathsCompareStructurallyAndTheGlobalAgrees) {
  Any x = Var("x");
  Any fa = Func(Array{x}, Array{Int(1), x}, Any());
  Any fc = Func(Array{x}, Array{Int(1), Int(2)}, Any());
  Function global = GetGlobalFunctionOrThrow("ffi.GetFirstStructuralMismatch");
  Any first = global(fa, fc, false, false);
  Any second = global(fa, fc);
  ASSERT_EQ(first.type_index(), kTVMFFIArray);
  // Paths are ConstTreeNode objects: distinct but equal paths compare and hash equal.
  EXPECT_NE(first.raw().v_obj, second.raw().v_obj);
  EXPECT_TRUE(Equal(first, second));
  EXPECT_EQ(Hash(first), Hash(second));
  EXPECT_FALSE(Equal(first, global(fa, Func(Array{x}, Array{Int(2), x}, Any()))));
  EXPECT_TRUE(global(fa, fa).is_none());
  EXPECT_THROW(global(fa), Error);
  EXPECT_THROW(global(fa, fa, "yes"), Error);
  // A path's fields and type are reflected like any other type's.
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(first.cast<Array>()[0].raw().type_index);
  ASSERT_NE(info->metadata, nullptr);
  EXPECT_EQ(info->metadata->structural_eq_hash_kind, kTVMFFISEqHashKindConstTreeNode);
  EXPECT_EQ(info->num_fields, 3);
}

TEST(ReflectedStructural, AccessPathFieldSettersCheckTheirValues) {
  Any paths = GetGlobalFunctionOrThrow("ffi.GetFirstStructuralMismatch")(int64_t{1}, int64_t{2});
  AnyView root = paths.cast<Array>()[0];
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(root.raw().type_index);
  auto set = [&](const char* name, const Any& value) {
    for (int32_t i = 0; i < info->num_fields; ++i) {
      const TVMFFIFieldInfo& field = info->fields[i];
      if (std::string(field.name.data, field.name.size) == name) {
        return reflected_test::CallSetter(
            field, reinterpret_cast<char*>(root.raw().v_obj) + field.offset, &value.raw());
      }
    }
    return 1;
  };
  EXPECT_EQ(set("depth", Any(-1)), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "TypeError");
  EXPECT_EQ(set("parent", Any(int64_t{3})), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("ffi.reflection.AccessPath"), std::string::npos);
  EXPECT_EQ(set("step", Any(Array(std::vector<Any>{}))), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "TypeError");
  EXPECT_EQ(set("depth", Any(int64_t{0})), 0);
}

}  // namespace
}  // namespace ffijit
