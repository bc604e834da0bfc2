// The types `ffi.reflection.AccessStep` and `ffi.reflection.AccessPath` (see access_path.h): their
// registration in the type table while the runtime loads, their reflected fields, and the
// constructors the structural comparison uses to report where two values first differ.
//
// Facts from TVM FFI's public headers (every revision): both types are final subclasses of
// ffi.Object (no child slots), structural kind ConstTreeNode, fields `kind`/`key` and
// `parent`/`step`/`depth` in that order and at the offsets access_path.h gives (parent and step
// are Optional<ObjectRef> members, whose size is the revision's). Header code constructs and reads
// them inline; objects made there and here are interchangeable because only the layout and the type
// index are shared.
#include "access_path.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "../internal.h"
#include "../object_internal.h"
#include "../string_internal.h"
#include "ffijit/function.h"
#include "runtime_types.h"

namespace ffijit::internal {
namespace {

struct AccessStepLayout {
  TVMFFIObject header;
  int32_t kind;
  TVMFFIAny key;
};
// An Optional<ObjectRef> member: a TVMFFIAny (None when empty) where
// FFIJIT_TVM_FFI_OPTIONAL_OBJECT_IS_ANY, else a nullable object pointer.
#if FFIJIT_TVM_FFI_OPTIONAL_OBJECT_IS_ANY
using OptionalSlot = TVMFFIAny;
TVMFFIObject* SlotObject(const OptionalSlot& slot) {
  return slot.type_index >= kTVMFFIStaticObjectBegin ? slot.v_obj : nullptr;
}
// Stores `owned` (one reference, or NULL) and returns the previous object (its reference).
TVMFFIObject* ExchangeSlot(OptionalSlot* slot, TVMFFIObject* owned) {
  TVMFFIObject* old = SlotObject(*slot);
  *slot = TVMFFIAny{};
  if (owned != nullptr) {
    slot->type_index = owned->type_index;
    slot->v_obj = owned;
  }
  return old;
}
constexpr size_t kAccessPathSize = 64;
#else
using OptionalSlot = TVMFFIObject*;
TVMFFIObject* SlotObject(const OptionalSlot& slot) {
  return slot;
}
TVMFFIObject* ExchangeSlot(OptionalSlot* slot, TVMFFIObject* owned) {
  return std::exchange(*slot, owned);
}
constexpr size_t kAccessPathSize = 48;
#endif

struct AccessPathLayout {
  TVMFFIObject header;
  OptionalSlot parent;  // an AccessPath, or empty at the root
  OptionalSlot step;    // an AccessStep, or empty at the root
  int32_t depth;
};
static_assert(offsetof(AccessStepLayout, kind) == 24 && offsetof(AccessStepLayout, key) == 32 &&
                  sizeof(AccessStepLayout) == 48,
              "AccessStepObj layout");
static_assert(offsetof(AccessPathLayout, parent) == 24 &&
                  offsetof(AccessPathLayout, step) == 24 + sizeof(OptionalSlot) &&
                  offsetof(AccessPathLayout, depth) == 24 + 2 * sizeof(OptionalSlot) &&
                  sizeof(AccessPathLayout) == kAccessPathSize,
              "AccessPathObj layout: parent@24, step@32, depth@40 (48 B) with pointer Optionals; "
              "parent@24, step@40, depth@56 (64 B) with Any Optionals");

constexpr char kStepKey[] = "ffi.reflection.AccessStep";
constexpr char kPathKey[] = "ffi.reflection.AccessPath";

void StepDeleter(void* self, int flags) {
  auto* step = static_cast<AccessStepLayout*>(self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) ReleaseAny(&step->key);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(self);
}

void PathDeleter(void* self, int flags) {
  auto* path = static_cast<AccessPathLayout*>(self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    if (TVMFFIObject* parent = ExchangeSlot(&path->parent, nullptr)) details::DecRef(parent);
    if (TVMFFIObject* step = ExchangeSlot(&path->step, nullptr)) details::DecRef(step);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(self);
}

// ---- Field accessors (getter: an owned value; setter: converts or fails with TypeError) ----

void SetRaised(const char* kind, const std::string& message) {
  TVMFFIErrorSetRaisedFromCStr(kind, message.c_str());
}

int GetInt32(void* field, TVMFFIAny* result) {
  *result = TVMFFIAny{};
  result->type_index = kTVMFFIInt;
  result->v_int64 = *static_cast<int32_t*>(field);
  return 0;
}

int SetKind(void* field, const TVMFFIAny* value) {
  if (value->type_index != kTVMFFIInt || value->v_int64 < 0 || value->v_int64 > 5) {
    SetRaised("TypeError", "ffi.reflection.AccessStep.kind must be an int from 0 to 5");
    return -1;
  }
  *static_cast<int32_t*>(field) = static_cast<int32_t>(value->v_int64);
  return 0;
}

int SetDepth(void* field, const TVMFFIAny* value) {
  if (value->type_index != kTVMFFIInt || value->v_int64 < 0 || value->v_int64 > INT32_MAX) {
    SetRaised("TypeError", "ffi.reflection.AccessPath.depth must be a non-negative int32");
    return -1;
  }
  *static_cast<int32_t*>(field) = static_cast<int32_t>(value->v_int64);
  return 0;
}

int SetAny(void* field, const TVMFFIAny* value) {
  return GuardCBoundary([&] {
    TVMFFIAny owned{};
    CopyToOwned(*value, &owned);
    auto* slot = static_cast<TVMFFIAny*>(field);
    TVMFFIAny old = std::exchange(*slot, owned);
    ReleaseAny(&old);
  });
}

int GetObject(void* field, TVMFFIAny* result) {
  TVMFFIObject* obj = SlotObject(*static_cast<OptionalSlot*>(field));
  *result = TVMFFIAny{};
  if (obj != nullptr) {
    details::IncRef(obj);
    result->type_index = obj->type_index;
    result->v_obj = obj;
  }
  return 0;
}

// Stores None or an object of exactly `type_index` (both types are final).
int SetObjectOf(void* field, const TVMFFIAny* value, int32_t type_index, const char* what) {
  details::RequireWellFormed(*value, what);  // callers run it inside GuardCBoundary
  if (value->type_index != kTVMFFINone && value->type_index != type_index) {
    SetRaised("TypeError", std::string(what) + " must be None or an `" +
                               TypeIndexToKey(type_index) + "`, not `" +
                               TypeIndexToKey(value->type_index) + "`");
    return -1;
  }
  TVMFFIObject* next = value->type_index == kTVMFFINone ? nullptr : value->v_obj;
  if (next != nullptr) details::IncRef(next);
  TVMFFIObject* old = ExchangeSlot(static_cast<OptionalSlot*>(field), next);
  if (old != nullptr) details::DecRef(old);
  return 0;
}
int SetParent(void* field, const TVMFFIAny* value) {
  return GuardCBoundary([&] {
    CheckCall(SetObjectOf(field, value, AccessPathTypeIndex(), "ffi.reflection.AccessPath.parent"));
  });
}
int SetStep(void* field, const TVMFFIAny* value) {
  return GuardCBoundary([&] {
    CheckCall(SetObjectOf(field, value, AccessStepTypeIndex(), "ffi.reflection.AccessPath.step"));
  });
}

int CreateStep(TVMFFIObjectHandle* result) {
  return GuardCBoundary(
      [&] { *result = AllocObject(sizeof(AccessStepLayout), AccessStepTypeIndex(), StepDeleter); });
}
int CreatePath(TVMFFIObjectHandle* result) {
  return GuardCBoundary(
      [&] { *result = AllocObject(sizeof(AccessPathLayout), AccessPathTypeIndex(), PathDeleter); });
}

#if FFIJIT_TVM_FFI_HAS_DATACLASS_API
// ---- `__ffi_repr__` (v0.1.13): a path prints as "<root>" followed by its steps, root first ----

// `key` of a step as text, through ReprPrint's callback (strings come back quoted).
std::string KeyRepr(const Function& repr_fn, const TVMFFIAny& key) {
  Any text = repr_fn(AnyView(key));
  std::string_view chars;
  if (!ViewBytes(text.raw(), &chars)) {
    throw Error("TypeError", "the repr callback returned a `" + text.type_name() + "`, not a str");
  }
  return std::string(chars);
}

// An array index step's key as a decimal integer; anything else is a malformed step.
std::string IndexText(const TVMFFIAny& key) {
  if (key.type_index != kTVMFFIInt) {
    throw Error("TypeError", std::string("an array-item access step needs an int key, not `") +
                                 details::AnyTypeName(key) + "`");
  }
  return std::to_string(key.v_int64);
}

// One step: `.name`, `[index]`, `[<repr(key)>]`, or for a missing item `[<missing:...>]` with the
// attribute name or map key quoted by repr and the array index plain.
std::string StepText(const AccessStepLayout& step, const Function& repr_fn) {
  switch (static_cast<AccessKind>(step.kind)) {
    case AccessKind::kAttr: {
      std::string_view name;
      if (!ViewBytes(step.key, &name)) {
        throw Error("TypeError", std::string("an attribute access step needs a str key, not `") +
                                     details::AnyTypeName(step.key) + "`");
      }
      return "." + std::string(name);
    }
    case AccessKind::kArrayItem:
      return "[" + IndexText(step.key) + "]";
    case AccessKind::kMapItem:
      return "[" + KeyRepr(repr_fn, step.key) + "]";
    case AccessKind::kAttrMissing:
    case AccessKind::kMapItemMissing:
      return "[<missing:" + KeyRepr(repr_fn, step.key) + ">]";
    case AccessKind::kArrayItemMissing:
      return "[<missing:" + IndexText(step.key) + ">]";
  }
  throw Error("ValueError", "access step has unknown kind " + std::to_string(step.kind));
}

const TVMFFIObject* ObjectOfType(const AnyView& value, int32_t type_index, const char* what) {
  if (value.type_index() != type_index) {
    throw Error("TypeError",
                std::string("__ffi_repr__ of ") + what + " got a `" + value.type_name() + "`");
  }
  return value.raw().v_obj;
}

void RegisterRepr(int32_t type_index, Function repr) {
  static constexpr char kRepr[] = "__ffi_repr__";
  TVMFFIByteArray name{kRepr, sizeof(kRepr) - 1};
  TVMFFIAny value{};
  value.type_index = kTVMFFIFunction;
  value.v_obj = repr.get();
  CheckCall(TVMFFITypeRegisterAttr(type_index, &name, &value));
}

void RegisterReprs(int32_t step_index, int32_t path_index) {
  RegisterRepr(step_index, Function::FromTyped(
                               [step_index](AnyView self, Function repr_fn) {
                                 const auto* step = reinterpret_cast<const AccessStepLayout*>(
                                     ObjectOfType(self, step_index, "AccessStep"));
                                 return StepText(*step, repr_fn);
                               },
                               "ffi.reflection.AccessStep.__ffi_repr__"));
  RegisterRepr(path_index,
               Function::FromTyped(
                   [path_index](AnyView self, Function repr_fn) {
                     // Walk leaf to root, then print root first.
                     std::vector<const AccessStepLayout*> steps;
                     const TVMFFIObject* at = ObjectOfType(self, path_index, "AccessPath");
                     while (at != nullptr) {
                       const auto* path = reinterpret_cast<const AccessPathLayout*>(at);
                       if (const TVMFFIObject* step = SlotObject(path->step)) {
                         steps.push_back(reinterpret_cast<const AccessStepLayout*>(step));
                       }
                       at = SlotObject(path->parent);
                     }
                     std::string text = "<root>";
                     for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
                       text += StepText(**it, repr_fn);
                     }
                     return text;
                   },
                   "ffi.reflection.AccessPath.__ffi_repr__"));
}
#endif  // FFIJIT_TVM_FFI_HAS_DATACLASS_API

// Allocates (or finds) the index the way header code does for a final subclass of ffi.Object:
// depth 1, no child slots, overflow allowed (inherited from ffi.Object).
int32_t AllocIndex(const char* key) {
  TVMFFIByteArray bytes{key, std::strlen(key)};
  return TVMFFITypeGetOrAllocIndex(&bytes, -1, 1, 0, 1, kTVMFFIObject);
}

// Registers both types with their fields once (the first caller wins; later calls only read).
struct Registration {
  int32_t step = -1;
  int32_t path = -1;
  Registration() {
    step = AllocIndex(kStepKey);
    path = AllocIndex(kPathKey);
    RegisterMember(step,
                   {"kind", offsetof(AccessStepLayout, kind), 4, kTVMFFIInt, GetInt32, SetKind});
    RegisterMember(step,
                   {"key", offsetof(AccessStepLayout, key), 16, kTVMFFIAny, GetAnyMember, SetAny});
    RegisterRuntimeTypeMetadata(step, CreateStep, sizeof(AccessStepLayout),
                                kTVMFFISEqHashKindConstTreeNode);
    RegisterMember(path, {"parent", offsetof(AccessPathLayout, parent), sizeof(OptionalSlot),
                          kTVMFFIAny, GetObject, SetParent});
    RegisterMember(path, {"step", offsetof(AccessPathLayout, step), sizeof(OptionalSlot),
                          kTVMFFIAny, GetObject, SetStep});
    RegisterMember(path,
                   {"depth", offsetof(AccessPathLayout, depth), 4, kTVMFFIInt, GetInt32, SetDepth});
    RegisterRuntimeTypeMetadata(path, CreatePath, sizeof(AccessPathLayout),
                                kTVMFFISEqHashKindConstTreeNode);
#if FFIJIT_TVM_FFI_HAS_DATACLASS_API
    RegisterReprs(step, path);
#endif
  }
};

const Registration& Registered() {
  static const Registration registration;
  return registration;
}

// While the runtime loads, before any module's static initialisers can ask for the keys.
__attribute__((constructor)) void RegisterAccessPathTypes() {
  RegisterAtLoad("ffi.reflection.AccessStep and AccessPath", [] { Registered(); });
}

}  // namespace

int32_t AccessStepTypeIndex() {
  return Registered().step;
}
int32_t AccessPathTypeIndex() {
  return Registered().path;
}

ObjectPtr<> NewAccessStep(AccessKind kind, const AnyView& key) {
  auto* step = reinterpret_cast<AccessStepLayout*>(
      AllocObject(sizeof(AccessStepLayout), AccessStepTypeIndex(), StepDeleter));
  ObjectPtr<> owned = ObjectPtr<>::Adopt(&step->header);
  step->kind = static_cast<int32_t>(kind);
  CopyToOwned(key.raw(), &step->key);
  return owned;
}

ObjectPtr<> AccessPathRoot() {
  return ObjectPtr<>::Adopt(
      AllocObject(sizeof(AccessPathLayout), AccessPathTypeIndex(), PathDeleter));
}

ObjectPtr<> ExtendAccessPath(const ObjectPtr<>& parent, const ObjectPtr<>& step) {
  auto* path = reinterpret_cast<AccessPathLayout*>(
      AllocObject(sizeof(AccessPathLayout), AccessPathTypeIndex(), PathDeleter));
  ObjectPtr<> owned = ObjectPtr<>::Adopt(&path->header);
  ExchangeSlot(&path->parent, ObjectPtr<>(parent).release());
  ExchangeSlot(&path->step, ObjectPtr<>(step).release());
  path->depth = reinterpret_cast<const AccessPathLayout*>(parent.get())->depth + 1;
  return owned;
}

}  // namespace ffijit::internal
