// The structural features v0.1.13 added (runtime/extra/structural_equal.cc, structural_hash.cc and
// structural_visit.cc): non-recursive definition regions in structural equality and hashing (fields
// and the callbacks of custom hooks), the `__s_visit__` hooks that let a visitor's default walk
// enter containers, and ffi.StructuralKey with the `__any_hash__` / `__any_equal__` hooks maps use
// for its keys. Types are registered through the C API (reflected_types.h); the visitor is built
// here with the ABI layout of TVM FFI's StructuralVisitorObj.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ffijit/ffijit.h"
#include "runtime/reflected_types.h"
#include "runtime/tvm_header_style.h"

namespace ffijit {
namespace {

#if FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT

using reflected_test::MakeSlotObj;
using reflected_test::RegisterSlotType;

// A free variable with one structural field `dep` (possibly another free variable), and a holder
// with one recursive and one non-recursive definition field, like the tag's TVarWithDep and
// TDefHolder.
struct Types {
  int32_t var, holder, custom;
  Types() {
    var = RegisterSlotType("sv.VarWithDep", kTVMFFISEqHashKindFreeVar,
                           {{"name", kTVMFFIFieldFlagBitMaskSEqHashIgnore}, {"dep"}});
    holder =
        RegisterSlotType("sv.DefHolder", kTVMFFISEqHashKindTreeNode,
                         {{"def_recursive", kTVMFFIFieldFlagBitMaskSEqHashDefRecursive},
                          {"def_non_recursive", FFIJIT_FIELD_FLAG_SEQ_HASH_DEF_NON_RECURSIVE}});
    // sv.Custom compares field `a` through the runtime's callback with the region kind stored in
    // field `kind`.
    custom = RegisterSlotType("sv.Custom", kTVMFFISEqHashKindTreeNode, {{"a"}, {"kind"}});
    reflected_test::SetTypeAttr(
        custom, "__s_equal__",
        Any(Function::FromPacked([](const AnyView* args, int32_t, Any* result) {
          const auto* l = reinterpret_cast<const reflected_test::SlotObj*>(args[0].raw().v_obj);
          const auto* r = reinterpret_cast<const reflected_test::SlotObj*>(args[1].raw().v_obj);
          Function compare = args[2].cast<Function>();
          *result = compare(AnyView(l->slots[0]), AnyView(r->slots[0]), AnyView(l->slots[1]), "a");
        })));
  }
};

const Types& T() {
  static const Types types;
  return types;
}

Any Var(const char* name, Any dep = Any()) {
  return MakeSlotObj(T().var, {Any(name), dep});
}
Any Holder(const Any& recursive, const Any& non_recursive) {
  return MakeSlotObj(T().holder, {recursive, non_recursive});
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

Function Global(const char* name) {
  TVMFFIByteArray key{name, std::strlen(name)};
  TVMFFIObjectHandle func = nullptr;
  CheckCall(TVMFFIFunctionGetGlobal(&key, &func));
  if (func == nullptr) throw Error("KeyError", std::string("no global ") + name);
  return Function(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(func)));
}

// An object's reflected field by name (through the type table's getter).
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

// The entry of `type_index` in the attribute column `column`, or None.
TVMFFIAny TypeAttr(const char* column, int32_t type_index) {
  TVMFFIByteArray name{column, std::strlen(column)};
  const TVMFFITypeAttrColumn* attrs = TVMFFIGetTypeAttrColumn(&name);
  const TVMFFIAny* entry =
      attrs == nullptr ? nullptr : FFIJITTypeAttrColumnEntry(attrs, type_index);
  return entry == nullptr ? TVMFFIAny{} : *entry;
}

TEST(StructuralDefRegions, RecursiveFieldsBindNestedVariablesNonRecursiveOnlyTheVariable) {
  // Recursive: a(dep m) and b(dep n) bind, and so do m and n.
  Any a = Var("a", Var("m")), b = Var("b", Var("n"));
  EXPECT_TRUE(Equal(Holder(a, a), Holder(b, b)));
  EXPECT_EQ(Hash(Holder(a, a), true), Hash(Holder(b, b), true));
  // Non-recursive: c and d bind, their deps p and q stay free and differ.
  Any shared = Var("shared");
  Any c = Var("c", Var("p")), d = Var("d", Var("q"));
  EXPECT_FALSE(Equal(Holder(shared, c), Holder(shared, d)));
  // ... unless the deps are one object.
  Any dep = Var("dep");
  Any c2 = Var("c", dep), d2 = Var("d", dep);
  EXPECT_TRUE(Equal(Holder(shared, c2), Holder(shared, d2)));
  EXPECT_EQ(Hash(Holder(shared, c2)), Hash(Holder(shared, d2)));
  // The variable the non-recursive field reaches binds, without map_free_vars.
  Any c3 = Var("c"), d3 = Var("d");
  EXPECT_TRUE(Equal(Holder(shared, c3), Holder(shared, d3)));
  EXPECT_EQ(Hash(Holder(shared, c3)), Hash(Holder(shared, d3)));
  // The field's region replaces the recursive one map_free_vars starts with: p and q stay free.
  EXPECT_FALSE(Equal(Holder(shared, c), Holder(shared, d), /*map_free_vars=*/true));
  EXPECT_TRUE(Equal(c, d, /*map_free_vars=*/true));
}

TEST(StructuralDefRegions, CustomEqualCallbacksTakeTheRegionKind) {
  auto custom = [](const Any& a, int64_t kind) { return MakeSlotObj(T().custom, {a, Any(kind)}); };
  Any c = Var("c", Var("p")), d = Var("d", Var("q"));
  Any e = Var("e"), f = Var("f");
  EXPECT_FALSE(Equal(custom(e, 0), custom(f, 0)));  // 0 inherits: no region
  EXPECT_TRUE(Equal(custom(e, 1), custom(f, 1)));
  EXPECT_TRUE(Equal(custom(e, 2), custom(f, 2)));
  EXPECT_TRUE(Equal(custom(c, 1), custom(d, 1)));
  EXPECT_FALSE(Equal(custom(c, 2), custom(d, 2)));  // p and q are outside the region
  try {
    Equal(custom(e, 3), custom(f, 3));
    ADD_FAILURE() << "a region kind of 3 was accepted";
  } catch (const tvm::ffi::Error& error) {
    EXPECT_EQ(error.kind(), "TypeError");
    EXPECT_NE(error.message().find("def_region_kind"), std::string::npos) << error.message();
  }
}

TEST(StructuralKey, HooksHashAndCompareKeysStructurally) {
  Function make = Global("ffi.StructuralKey");
  Any k1 = make(Array{Any(1), Any(2), Any(3)});
  Any k2 = make(Array{Any(1), Any(2), Any(3)});
  Any k3 = make(Array{Any(1), Any(3), Any(5)});
  ASSERT_EQ(k1.type_name(), "ffi.StructuralKey");
  EXPECT_NE(k1.raw().v_obj, k2.raw().v_obj);
  const int32_t type_index = k1.raw().type_index;

  TVMFFIAny hash_attr = TypeAttr("__any_hash__", type_index);
  TVMFFIAny equal_attr = TypeAttr("__any_equal__", type_index);
  ASSERT_EQ(hash_attr.type_index, kTVMFFIOpaquePtr);
  ASSERT_EQ(equal_attr.type_index, kTVMFFIOpaquePtr);
  auto hash = reinterpret_cast<int64_t (*)(const TVMFFIAny*)>(hash_attr.v_ptr);
  auto equal = reinterpret_cast<bool (*)(const TVMFFIAny*, const TVMFFIAny*)>(equal_attr.v_ptr);

  EXPECT_EQ(hash(&k1.raw()), hash(&k2.raw()));
  EXPECT_NE(hash(&k1.raw()), hash(&k3.raw()));
  EXPECT_EQ(static_cast<uint64_t>(hash(&k1.raw())), Hash(Array{Any(1), Any(2), Any(3)}));
  EXPECT_TRUE(equal(&k1.raw(), &k2.raw()));
  EXPECT_FALSE(equal(&k1.raw(), &k3.raw()));
  Function key_equal = Global("ffi.StructuralKeyEqual");
  EXPECT_TRUE(key_equal(k1, k2).cast<bool>());
  EXPECT_FALSE(key_equal(k1, k3).cast<bool>());
  EXPECT_THROW(key_equal(k1, Any(1)), Error);
  // Header code receives a failing hook's error as a thrown tvm::ffi::Error.
  Any not_a_key = Array{Any(1)};
  EXPECT_THROW(hash(&not_a_key.raw()), tvm::ffi::Error);
}

// ---- A visitor with TVM FFI's StructuralVisitorObj layout, recording what it is asked to visit
// ----

struct RecordingVisitor;
using VisitFunction = TVMFFIAny (*)(RecordingVisitor*, TVMFFIAny) noexcept;
struct VisitorVTable {
  VisitFunction visit;
};
struct RecordingVisitor {
  TVMFFIObject header;
  const VisitorVTable* vtable;
  int32_t def_region_kind;
  // Beyond the ABI part: what was visited, and when to stop.
  std::vector<Any>* visited;
  int64_t interrupt_at;  // the int value whose visit returns an interrupt
  int64_t fail_at;       // the int value whose visit returns an error
};

TVMFFIAny Record(RecordingVisitor* self, TVMFFIAny value) noexcept {
  self->visited->push_back(Any(AnyView(value)));
  TVMFFIAny out{};
  if (value.type_index == kTVMFFIInt && value.v_int64 == self->interrupt_at) {
    CheckCall(TVMFFIFunctionCall(Global("ffi.VisitInterrupt").get(), &value, 1, &out));
  } else if (value.type_index == kTVMFFIInt && value.v_int64 == self->fail_at) {
    Error("ValueError", "visit failed").SetRaised();
    TVMFFIErrorMoveFromRaised(reinterpret_cast<TVMFFIObjectHandle*>(&out.v_obj));
    out.type_index = kTVMFFIError;
  }
  return out;
}

const VisitorVTable kRecordingVTable{&Record};

// Runs the `__s_visit__` hook of `container`'s type; the visited values and the hook's result.
std::pair<std::vector<Any>, Any> RunVisitHook(const Any& container, int64_t interrupt_at = -1,
                                              int64_t fail_at = -1) {
  std::vector<Any> visited;
  RecordingVisitor visitor{};
  visitor.vtable = &kRecordingVTable;
  visitor.visited = &visited;
  visitor.interrupt_at = interrupt_at;
  visitor.fail_at = fail_at;
  TVMFFIAny attr = TypeAttr("__s_visit__", container.raw().type_index);
  EXPECT_EQ(attr.type_index, kTVMFFIOpaquePtr) << container.type_name();
  if (attr.type_index != kTVMFFIOpaquePtr) return {};
  auto hook = reinterpret_cast<VisitFunction>(attr.v_ptr);
  Any result = Any::Adopt(hook(&visitor, container.raw()));
  return {visited, result};
}

TEST(StructuralVisitHooks, SequencesVisitTheirElementsInOrder) {
  Array inner{Any(7)};
  auto [visited, result] = RunVisitHook(Array{Any(1), Any("x"), Any(inner)});
  EXPECT_TRUE(result.is_none());
  ASSERT_EQ(visited.size(), 3u);
  EXPECT_EQ(visited[0].cast<int64_t>(), 1);
  EXPECT_EQ(visited[1].cast<std::string>(), "x");
  EXPECT_EQ(visited[2].raw().v_obj, inner.get());  // not entered: the visitor decides
  TVMFFIAny list{};
  CheckCall(TVMFFIFunctionCall(Global("ffi.List").get(), nullptr, 0, &list));
  EXPECT_EQ(RunVisitHook(Any::Adopt(list)).first.size(), 0u);
}

TEST(StructuralVisitHooks, MapsVisitEachKeyThenItsValue) {
  auto [visited, result] = RunVisitHook(Map{{Any("k"), Any(5)}});
  EXPECT_TRUE(result.is_none());
  ASSERT_EQ(visited.size(), 2u);
  EXPECT_EQ(visited[0].cast<std::string>(), "k");
  EXPECT_EQ(visited[1].cast<int64_t>(), 5);
}

TEST(StructuralVisitHooks, AnInterruptOrAnErrorStopsTheWalkAndIsReturned) {
  Array items{Any(1), Any(2), Any(3)};
  auto [visited, interrupt] = RunVisitHook(items, /*interrupt_at=*/2);
  EXPECT_EQ(visited.size(), 2u);
  ASSERT_EQ(interrupt.type_name(), "ffi.VisitInterrupt");
  Any payload = Field(interrupt, "value");
  EXPECT_EQ(payload.cast<int64_t>(), 2);

  auto [visited_before_error, error] = RunVisitHook(items, -1, /*fail_at=*/1);
  EXPECT_EQ(visited_before_error.size(), 1u);
  ASSERT_EQ(error.raw().type_index, kTVMFFIError);
}

#else

TEST(StructuralVisitHooks, AbsentAtThisRevision) {
  TVMFFIByteArray key{"ffi.StructuralKey", 17};
  TVMFFIObjectHandle func = nullptr;
  CheckCall(TVMFFIFunctionGetGlobal(&key, &func));
  EXPECT_EQ(func, nullptr);
}

#endif  // FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT

}  // namespace
}  // namespace ffijit
