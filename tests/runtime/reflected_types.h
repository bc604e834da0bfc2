// Small reflected object types for the tests of structural equality/hashing and of the JSON graph,
// registered through the C API the way a module compiled from TVM FFI's headers registers its
// types: an index under ffi.Object, fields with getters/setters and flags, metadata with a
// structural kind and a creator, and type attributes.
//
// Every type has the same layout: the object header and four owned TVMFFIAny slots; field i is
// slot i (offset 24 + 16 i). The setter stores an owned copy of any value, except for fields
// declared with a static type index (bool/int/float), which must get a value of that type. At
// v0.1.13 a field may instead have a Function as its setter, or a Function making its default.
#ifndef FFIJIT_TESTS_RUNTIME_REFLECTED_TYPES_H_
#define FFIJIT_TESTS_RUNTIME_REFLECTED_TYPES_H_

#include <array>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ffijit/ffijit.h"

namespace reflected_test {

struct SlotObj {
  TVMFFIObject header;
  TVMFFIAny slots[4];
};

inline void SlotObjDeleter(void* self, int flags) {
  auto* obj = static_cast<SlotObj*>(self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    for (TVMFFIAny& slot : obj->slots) ffijit::details::ReleaseAny(&slot);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(self);
}

inline int GetSlot(void* field, TVMFFIAny* result) {
  return TVMFFIAnyViewToOwnedAny(static_cast<TVMFFIAny*>(field), result);
}

inline int SetSlot(void* field, const TVMFFIAny* value) {
  TVMFFIAny owned{};
  if (TVMFFIAnyViewToOwnedAny(value, &owned) != 0) return -1;
  auto* slot = static_cast<TVMFFIAny*>(field);
  TVMFFIAny old = *slot;
  *slot = owned;
  ffijit::details::ReleaseAny(&old);
  return 0;
}

// Setter of an int field (static type index kTVMFFIInt).
inline int SetIntSlot(void* field, const TVMFFIAny* value) {
  if (value->type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "an int field must be set to an int");
    return -1;
  }
  return SetSlot(field, value);
}

struct FieldSpec {
  const char* name;
  int64_t flags = 0;
  int32_t static_type_index = kTVMFFIAny;
  const TVMFFIAny* default_value = nullptr;
  // v0.1.13 only: a Function called as (field address as OpaquePtr, value), used as the setter.
  TVMFFIObject* setter_function = nullptr;
  // v0.1.13 only: a Function () -> Any that makes the default (HasDefault | DefaultFromFactory).
  TVMFFIObject* default_factory = nullptr;
};

// Calls `field`'s setter the way TVM FFI's header code does: a TVMFFIFieldSetter, or with
// FFIJIT_FIELD_FLAG_SETTER_IS_FUNCTION a Function taking (field address as OpaquePtr, value).
inline int CallSetter(const TVMFFIFieldInfo& field, void* address, const TVMFFIAny* value) {
  void* setter = reinterpret_cast<void*>(field.setter);  // a function pointer at e98b94e1
  if (field.flags & FFIJIT_FIELD_FLAG_SETTER_IS_FUNCTION) {
    TVMFFIAny args[2]{};
    args[0].type_index = kTVMFFIOpaquePtr;
    args[0].v_ptr = address;
    args[1] = *value;
    TVMFFIAny result{};
    const int status = TVMFFIFunctionCall(setter, args, 2, &result);
    if (status == 0) ffijit::details::ReleaseAny(&result);
    return status;
  }
  return reinterpret_cast<TVMFFIFieldSetter>(setter)(address, value);
}

// Type indices by registration order, read by the creators below.
inline std::vector<int32_t>& CreatorTypes() {
  static std::vector<int32_t> types;
  return types;
}

template <int N>
int CreateSlotObj(TVMFFIObjectHandle* out) {
  auto* obj = static_cast<SlotObj*>(std::calloc(1, sizeof(SlotObj)));
  obj->header.type_index = CreatorTypes().at(N);
  FFIJITHeaderSetCounts(&obj->header, 1, 1);
  obj->header.deleter = SlotObjDeleter;
  *out = obj;
  return 0;
}

// One creator per registered type (a C creator takes no type argument). Every test binary that
// includes this header shares the table; RegisterSlotType refuses to go past it.
template <size_t... N>
constexpr std::array<TVMFFIObjectCreator, sizeof...(N)> MakeCreators(std::index_sequence<N...>) {
  return {CreateSlotObj<static_cast<int>(N)>...};
}
inline constexpr auto kCreators = MakeCreators(std::make_index_sequence<64>());

// Registers `key` under `parent` with `fields`; `kind` < 0 registers no metadata at all.
inline int32_t RegisterSlotType(const std::string& key, int32_t kind,
                                const std::vector<FieldSpec>& fields,
                                int32_t parent = kTVMFFIObject, bool with_creator = true) {
  TVMFFIByteArray key_bytes{key.data(), key.size()};
  int32_t depth = parent == kTVMFFIObject ? 1 : TVMFFIGetTypeInfo(parent)->type_depth + 1;
  int32_t index = TVMFFITypeGetOrAllocIndex(&key_bytes, -1, depth, 0, 1, parent);
  // Inherited fields occupy the first slots: continue after the parent's.
  int32_t first_slot = 0;
  for (const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(parent); info->type_depth > 0;
       info = info->FFIJIT_TYPE_ANCESTORS[info->type_depth - 1]) {
    first_slot += info->num_fields;
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    TVMFFIFieldInfo info{};
    info.name = TVMFFIByteArray{fields[i].name, std::strlen(fields[i].name)};
    info.flags = fields[i].flags;
    info.size = sizeof(TVMFFIAny);
    info.alignment = alignof(TVMFFIAny);
    info.offset =
        static_cast<int64_t>(offsetof(SlotObj, slots) + (first_slot + i) * sizeof(TVMFFIAny));
    info.getter = GetSlot;
    const TVMFFIFieldSetter setter =
        fields[i].static_type_index == kTVMFFIInt ? SetIntSlot : SetSlot;
    info.setter = reinterpret_cast<decltype(info.setter)>(setter);  // a void* at v0.1.13
    if (fields[i].setter_function != nullptr) {
      info.flags |= FFIJIT_FIELD_FLAG_SETTER_IS_FUNCTION;
      info.setter =
          reinterpret_cast<decltype(info.setter)>(static_cast<void*>(fields[i].setter_function));
    }
    info.field_static_type_index = fields[i].static_type_index;
    if (fields[i].default_value != nullptr) {
      info.flags |= kTVMFFIFieldFlagBitMaskHasDefault;
      info.FFIJIT_FIELD_DEFAULT = *fields[i].default_value;
    }
    if (fields[i].default_factory != nullptr) {
      info.flags |= kTVMFFIFieldFlagBitMaskHasDefault | FFIJIT_FIELD_FLAG_DEFAULT_FROM_FACTORY;
      info.FFIJIT_FIELD_DEFAULT.type_index = kTVMFFIFunction;
      info.FFIJIT_FIELD_DEFAULT.v_obj = fields[i].default_factory;
    }
    ffijit::CheckCall(TVMFFITypeRegisterField(index, &info));
  }
  if (kind >= 0) {
    TVMFFITypeMetadata metadata{};
    metadata.total_size = sizeof(SlotObj);
    metadata.structural_eq_hash_kind = static_cast<TVMFFISEqHashKind>(kind);
    if (with_creator) {
      if (CreatorTypes().size() == kCreators.size()) {
        throw std::length_error("reflected_types.h: more than " + std::to_string(kCreators.size()) +
                                " types with creators; enlarge kCreators");
      }
      CreatorTypes().push_back(index);
      metadata.creator = kCreators[CreatorTypes().size() - 1];
    }
    ffijit::CheckCall(TVMFFITypeRegisterMetadata(index, &metadata));
  }
  return index;
}

// A new object of `type_index` with its slots set to `values` (owned copies).
inline ffijit::Any MakeSlotObj(int32_t type_index, const std::vector<ffijit::Any>& values) {
  auto* obj = static_cast<SlotObj*>(std::calloc(1, sizeof(SlotObj)));
  obj->header.type_index = type_index;
  FFIJITHeaderSetCounts(&obj->header, 1, 1);
  obj->header.deleter = SlotObjDeleter;
  for (size_t i = 0; i < values.size() && i < 4; ++i) {
    TVMFFIAnyViewToOwnedAny(&values[i].raw(), &obj->slots[i]);
  }
  TVMFFIAny owned{};
  owned.type_index = type_index;
  owned.v_obj = &obj->header;
  return ffijit::Any::Adopt(owned);
}

// Sets the type attribute `name` of `type_index` to `value`.
inline void SetTypeAttr(int32_t type_index, const char* name, const ffijit::Any& value) {
  TVMFFIByteArray bytes{name, std::strlen(name)};
  ffijit::CheckCall(TVMFFITypeRegisterAttr(type_index, &bytes, &value.raw()));
}

}  // namespace reflected_test

#endif  // FFIJIT_TESTS_RUNTIME_REFLECTED_TYPES_H_
