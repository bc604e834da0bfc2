// What TVM FFI v0.1.13's library provides for its header-only structural visitor and structural
// keys (include/tvm/ffi/extra/structural_visit.h and structural_key.h):
// - the `__s_visit__` type attributes of ffi.Array, ffi.List, ffi.Map and ffi.Dict, which let a
//   visitor's default walk step into containers (elements in order; a map's key then value per
//   entry, in iteration order);
// - the `value` field of ffi.VisitInterrupt and the global `ffi.VisitInterrupt(value)`;
// - the type ffi.StructuralKey (fields `key`, `hash_i64`) with its `__any_hash__` / `__any_equal__`
//   attributes, so a Map or Dict treats structurally equal keys as one key, and the globals
//   `ffi.StructuralKey(key)` and `ffi.StructuralKeyEqual(lhs, rhs)`.
//
// Facts from v0.1.13's public headers: a StructuralVisitorObj is the object header, then a pointer
// to its vtable (whose first entry is the visit function) at +24 and the current
// TVMFFIDefRegionKind at +32. A visit function takes the visitor and the value (an AnyView: 16
// trivially copyable bytes, passed like a TVMFFIAny) and returns a TVMFFIAny holding None
// (continue), a VisitInterrupt (stop) or an Error (failed). A `__s_visit__` entry is such a
// function as an OpaquePtr (or a Function). A StructuralKeyObj is the header, the key (an Any) at
// +24 and its structural hash (int64) at +40; `__any_hash__` entries as OpaquePtrs are
// `int64_t (*)(const Any&)` and `__any_equal__` entries `bool (*)(const Any&, const Any&)`, whose
// failures header code receives as thrown tvm::ffi::Error.
//
// At e98b94e1 none of this exists (FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT is 0) and the file is empty.
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "../container_internal.h"
#include "../cxx_abi/shims.h"
#include "../internal.h"
#include "../object_internal.h"
#include "../string_internal.h"
#include "ffijit/c_ext.h"
#include "ffijit/object.h"
#include "runtime_types.h"
#include "structural.h"

#if FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT

namespace ffijit::internal {
namespace {

// ---- The visitor ABI ----

struct StructuralVisitorLayout;
using VisitFunction = TVMFFIAny (*)(StructuralVisitorLayout* visitor, TVMFFIAny value) noexcept;
struct StructuralVisitorVTableLayout {
  VisitFunction visit;
};
struct StructuralVisitorLayout {
  TVMFFIObject header;
  const StructuralVisitorVTableLayout* vtable;
  int32_t def_region_kind;
};
static_assert(offsetof(StructuralVisitorLayout, vtable) == 24, "vtable at +24");
static_assert(offsetof(StructuralVisitorLayout, def_region_kind) == 32, "def region at +32");

// The error raised in this thread, as the value a visit function returns.
TVMFFIAny RaisedAsVisitResult() {
  TVMFFIObjectHandle error = nullptr;
  TVMFFIErrorMoveFromRaised(&error);
  TVMFFIAny out{};
  if (error != nullptr) {
    out.type_index = kTVMFFIError;
    out.v_obj = static_cast<TVMFFIObject*>(error);
  }
  return out;
}

// Visits `child` through the visitor's own visit function. True when the traversal must stop; the
// visit's result (an interrupt or an error, owned) is then in *stop.
bool VisitChild(StructuralVisitorLayout* visitor, const TVMFFIAny& child, TVMFFIAny* stop) {
  TVMFFIAny result = visitor->vtable->visit(visitor, child);
  if (result.type_index == kTVMFFIError || result.type_index == kTVMFFIVisitInterrupt) {
    *stop = result;
    return true;
  }
  ReleaseAny(&result);
  return false;
}

void RequireContainer(const TVMFFIAny& value, int32_t first, int32_t second, const char* hook) {
  if (value.type_index != first && value.type_index != second) {
    throw Error("TypeError",
                std::string(hook) + " cannot visit a `" + details::AnyTypeName(value) + "`");
  }
}

// The elements of an Array or a List, in order. Each element is copied before it is visited, and
// the size re-read, so a visitor that changes the sequence does not read freed memory.
TVMFFIAny VisitSequence(StructuralVisitorLayout* visitor, TVMFFIAny value) noexcept {
  TVMFFIAny stop{};
  int status = GuardCBoundary([&] {
    RequireContainer(value, kTVMFFIArray, kTVMFFIList, "the sequence __s_visit__ hook");
    ObjectPtr<> keep = ObjectPtr<>::Borrow(value.v_obj);
    const auto& cell = *reinterpret_cast<const FFIJITArrayCell*>(value.v_obj + 1);
    for (int64_t i = 0; i < cell.size; ++i) {
      Any item{AnyView(cell.data[i])};
      if (VisitChild(visitor, item.raw(), &stop)) return;
    }
  });
  return status != 0 ? RaisedAsVisitResult() : stop;
}

// The entries of a Map or a Dict in iteration order, each key before its value. The entries are
// copied first, so a visitor that changes the map does not disturb the walk.
TVMFFIAny VisitMapping(StructuralVisitorLayout* visitor, TVMFFIAny value) noexcept {
  TVMFFIAny stop{};
  int status = GuardCBoundary([&] {
    RequireContainer(value, kTVMFFIMap, kTVMFFIDict, "the map __s_visit__ hook");
    std::vector<std::pair<Any, Any>> entries;
    MapForEach(value.v_obj, [&](const TVMFFIAny& key, const TVMFFIAny& item) {
      entries.emplace_back(Any(AnyView(key)), Any(AnyView(item)));
    });
    for (const auto& [key, item] : entries) {
      if (VisitChild(visitor, key.raw(), &stop) || VisitChild(visitor, item.raw(), &stop)) return;
    }
  });
  return status != 0 ? RaisedAsVisitResult() : stop;
}

TVMFFIByteArray Bytes(const char* text) {
  return TVMFFIByteArray{text, std::strlen(text)};
}

void RegisterOpaqueAttr(int32_t type_index, const char* name, void* pointer) {
  TVMFFIAny value{};
  value.type_index = kTVMFFIOpaquePtr;
  value.v_ptr = pointer;
  TVMFFIByteArray key = Bytes(name);
  CheckCall(TVMFFITypeRegisterAttr(type_index, &key, &value));
}

// ---- Objects with reflected fields ----

// The original registers these types without structural kind (Unsupported).
void AddMetadata(int32_t type_index, TVMFFIObjectCreator creator, int32_t total_size) {
  RegisterRuntimeTypeMetadata(type_index, creator, total_size, kTVMFFISEqHashKindUnsupported);
}

// An object whose only member is an Any at +24 (VisitInterrupt's value).
struct OneAnyLayout {
  TVMFFIObject header;
  TVMFFIAny value;
};
// A StructuralKey.
struct StructuralKeyLayout {
  TVMFFIObject header;
  TVMFFIAny key;
  int64_t hash_i64;
};
static_assert(offsetof(StructuralKeyLayout, hash_i64) == 40 && sizeof(StructuralKeyLayout) == 48,
              "StructuralKeyObj layout");

void OneAnyDeleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    ReleaseAny(&static_cast<OneAnyLayout*>(self)->value);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(self);
}

void StructuralKeyDeleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    ReleaseAny(&static_cast<StructuralKeyLayout*>(self)->key);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(self);
}

int32_t StructuralKeyTypeIndex();

int CreateVisitInterrupt(TVMFFIObjectHandle* result) {
  return GuardCBoundary(
      [&] { *result = AllocObject(sizeof(OneAnyLayout), kTVMFFIVisitInterrupt, OneAnyDeleter); });
}

int CreateStructuralKey(TVMFFIObjectHandle* result) {
  return GuardCBoundary([&] {
    *result =
        AllocObject(sizeof(StructuralKeyLayout), StructuralKeyTypeIndex(), StructuralKeyDeleter);
  });
}

// A new StructuralKey of `key` with its structural hash (the default flags), owned.
ObjectPtr<> NewStructuralKey(const TVMFFIAny& key) {
  const int64_t hash = static_cast<int64_t>(StructuralHashValue(key, false, false));
  auto* obj = reinterpret_cast<StructuralKeyLayout*>(
      AllocObject(sizeof(StructuralKeyLayout), StructuralKeyTypeIndex(), StructuralKeyDeleter));
  ObjectPtr<> owned = ObjectPtr<>::Adopt(&obj->header);
  CopyToOwned(key, &obj->key);
  obj->hash_i64 = hash;
  return owned;
}

const StructuralKeyLayout& AsStructuralKey(const TVMFFIAny& value, const char* what) {
  if (value.type_index != StructuralKeyTypeIndex()) {
    throw Error("TypeError", std::string(what) + " must be an `ffi.StructuralKey`, not `" +
                                 details::AnyTypeName(value) + "`");
  }
  return *reinterpret_cast<const StructuralKeyLayout*>(value.v_obj);
}

bool StructuralKeysEqual(const TVMFFIAny& lhs, const TVMFFIAny& rhs) {
  if (lhs.type_index >= kTVMFFIStaticObjectBegin && lhs.type_index == rhs.type_index &&
      lhs.v_obj == rhs.v_obj) {
    return true;
  }
  const StructuralKeyLayout& l = AsStructuralKey(lhs, "the left operand");
  const StructuralKeyLayout& r = AsStructuralKey(rhs, "the right operand");
  return l.hash_i64 == r.hash_i64 && StructuralEqualValues(l.key, r.key, false, false);
}

// The `__any_hash__` / `__any_equal__` entries (header code passes `const Any&`: a TVMFFIAny*).
int64_t StructuralKeyAnyHash(const TVMFFIAny* key) {
  return WithTvmErrors([&] { return AsStructuralKey(*key, "the map key").hash_i64; });
}
bool StructuralKeyAnyEqual(const TVMFFIAny* lhs, const TVMFFIAny* rhs) {
  return WithTvmErrors([&] { return StructuralKeysEqual(*lhs, *rhs); });
}

// ---- Globals ----

void RequireArgs(const char* name, int32_t num_args, int32_t expected) {
  if (num_args != expected) {
    throw Error("TypeError", std::string(name) + " takes " + std::to_string(expected) +
                                 " argument(s) but got " + std::to_string(num_args));
  }
}

// ffi.VisitInterrupt(value) -> VisitInterrupt
int VisitInterruptGlobal(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return GuardCBoundary([&] {
    RequireArgs("ffi.VisitInterrupt", num_args, 1);
    auto* obj = reinterpret_cast<OneAnyLayout*>(
        AllocObject(sizeof(OneAnyLayout), kTVMFFIVisitInterrupt, OneAnyDeleter));
    ObjectPtr<> owned = ObjectPtr<>::Adopt(&obj->header);
    CopyToOwned(args[0], &obj->value);
    *result = TVMFFIAny{};
    result->type_index = kTVMFFIVisitInterrupt;
    result->v_obj = owned.release();
  });
}

// ffi.StructuralKey(key) -> StructuralKey
int StructuralKeyGlobal(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return GuardCBoundary([&] {
    RequireArgs("ffi.StructuralKey", num_args, 1);
    ObjectPtr<> key = NewStructuralKey(args[0]);
    *result = TVMFFIAny{};
    result->type_index = key->type_index;
    result->v_obj = key.release();
  });
}

// ffi.StructuralKeyEqual(lhs: StructuralKey, rhs: StructuralKey) -> bool
int StructuralKeyEqualGlobal(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return GuardCBoundary([&] {
    RequireArgs("ffi.StructuralKeyEqual", num_args, 2);
    const bool equal = StructuralKeysEqual(args[0], args[1]);
    *result = TVMFFIAny{};
    result->type_index = kTVMFFIBool;
    result->v_int64 = equal ? 1 : 0;
  });
}

void RegisterGlobal(const char* name, TVMFFISafeCallType body) {
  TVMFFIObjectHandle func = nullptr;
  CheckCall(TVMFFIFunctionCreate(nullptr, body, nullptr, &func));
  ObjectPtr<> owned = ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(func));
  TVMFFIByteArray key = Bytes(name);
  CheckCall(TVMFFIFunctionSetGlobal(&key, func, 1));
}

// ---- Registration ----

// Allocates (or finds) the index as header code does for a final subclass of ffi.Object: depth 1,
// no child slots, overflow allowed (inherited from ffi.Object).
int32_t AllocFinalObjectIndex(const char* key) {
  TVMFFIByteArray bytes = Bytes(key);
  return TVMFFITypeGetOrAllocIndex(&bytes, -1, 1, 0, 1, kTVMFFIObject);
}

struct Registration {
  int32_t structural_key = -1;
  Registration() {
    structural_key = AllocFinalObjectIndex("ffi.StructuralKey");
    RegisterMember(structural_key, {"key", offsetof(StructuralKeyLayout, key), sizeof(TVMFFIAny),
                                    kTVMFFIAny, GetAnyMember});
    RegisterMember(structural_key, {"hash_i64", offsetof(StructuralKeyLayout, hash_i64),
                                    sizeof(int64_t), kTVMFFIInt, GetInt64Member});
    AddMetadata(structural_key, CreateStructuralKey, sizeof(StructuralKeyLayout));
    RegisterOpaqueAttr(structural_key, "__any_hash__",
                       reinterpret_cast<void*>(&StructuralKeyAnyHash));
    RegisterOpaqueAttr(structural_key, "__any_equal__",
                       reinterpret_cast<void*>(&StructuralKeyAnyEqual));

    RegisterMember(kTVMFFIVisitInterrupt, {"value", offsetof(OneAnyLayout, value),
                                           sizeof(TVMFFIAny), kTVMFFIAny, GetAnyMember});
    AddMetadata(kTVMFFIVisitInterrupt, CreateVisitInterrupt, sizeof(OneAnyLayout));

    const std::pair<int32_t, VisitFunction> hooks[] = {{kTVMFFIArray, VisitSequence},
                                                       {kTVMFFIList, VisitSequence},
                                                       {kTVMFFIMap, VisitMapping},
                                                       {kTVMFFIDict, VisitMapping}};
    for (const auto& [type_index, hook] : hooks) {
      RegisterOpaqueAttr(type_index, "__s_visit__", reinterpret_cast<void*>(hook));
    }

    RegisterGlobal("ffi.VisitInterrupt", VisitInterruptGlobal);
    RegisterGlobal("ffi.StructuralKey", StructuralKeyGlobal);
    RegisterGlobal("ffi.StructuralKeyEqual", StructuralKeyEqualGlobal);
  }
};

const Registration& Registered() {
  static const Registration registration;
  return registration;
}

int32_t StructuralKeyTypeIndex() {
  return Registered().structural_key;
}

// While the runtime loads, before any module's static initialisers look the attributes up.
__attribute__((constructor)) void RegisterStructuralVisitSupport() {
  // Without them, the hooks are absent and containers are not entered.
  RegisterAtLoad("the structural visitor hooks and ffi.StructuralKey", [] { Registered(); });
}

}  // namespace
}  // namespace ffijit::internal

#endif  // FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT
