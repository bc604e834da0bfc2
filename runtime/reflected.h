// Reading and writing objects of reflected types the way TVM FFI's extra API does (include/tvm/ffi/
// reflection/accessor.h): every field of a type, ancestors' fields first; a field's value through
// its getter; storing through its setter (a function pointer, or at v0.1.13 possibly a Function
// object); a field's default (a value, or at v0.1.13 possibly a factory Function); a type's entry
// in a type attribute column. Shared by reflection creation, the structural comparison and the
// JSON graph serialization.
#ifndef FFIJIT_RUNTIME_REFLECTED_H_
#define FFIJIT_RUNTIME_REFLECTED_H_

#include <cstring>
#include <string>

#include "ffijit/any.h"
#include "ffijit/c_api.h"
#include "ffijit/error.h"
#include "ffijit/object.h"

namespace ffijit::internal {

inline std::string TypeKeyOf(const TVMFFITypeInfo& info) {
  return std::string(info.type_key.data, info.type_key.size);
}

// Calls visit(field) for every field of the type, from the ancestor at depth 1 down to the type's
// own (the root ffi.Object has none); stops as soon as visit returns true, and then returns true.
// Field arrays may be republished by later registrations, so each is read once, acquiring.
template <typename Visit>
bool ForEachField(const TVMFFITypeInfo& info, Visit&& visit) {
  auto visit_level = [&](const TVMFFITypeInfo& level) {
    const int32_t count = __atomic_load_n(&level.num_fields, __ATOMIC_ACQUIRE);
    const TVMFFIFieldInfo* fields = __atomic_load_n(&level.fields, __ATOMIC_ACQUIRE);
    for (int32_t i = 0; i < count; ++i) {
      if (visit(fields[i])) return true;
    }
    return false;
  };
  for (int32_t depth = 1; depth < info.type_depth; ++depth) {
    if (visit_level(*info.FFIJIT_TYPE_ANCESTORS[depth])) return true;
  }
  return visit_level(info);
}

// The value of `field` of `obj` (owned), or the getter's error.
inline Any ReadField(TVMFFIObject* obj, const TVMFFIFieldInfo& field) {
  if (field.getter == nullptr) {
    throw Error("RuntimeError",
                "field `" + std::string(field.name.data, field.name.size) + "` has no getter");
  }
  TVMFFIAny out{};
  CheckCall(field.getter(reinterpret_cast<char*>(obj) + field.offset, &out));
  return Any::Adopt(out);
}

// Stores `value` (a view) into `field` of `obj` through the field's setter: a TVMFFIFieldSetter,
// or, with FFIJIT_FIELD_FLAG_SETTER_IS_FUNCTION, a Function called as (field address as an
// OpaquePtr, value). `type_key` names the type in the error when the field has no setter.
inline void SetField(TVMFFIObject* obj, const TVMFFIFieldInfo& field, const TVMFFIAny& value,
                     const std::string& type_key) {
  // The member is a function pointer at e98b94e1 and a void* at v0.1.13; read it as a void*.
  void* setter = reinterpret_cast<void*>(field.setter);
  if (setter == nullptr) {
    throw Error("RuntimeError", "field `" + std::string(field.name.data, field.name.size) +
                                    "` of `" + type_key + "` has no setter");
  }
  void* address = reinterpret_cast<char*>(obj) + field.offset;
  if (field.flags & FFIJIT_FIELD_FLAG_SETTER_IS_FUNCTION) {
    TVMFFIAny args[2]{};
    args[0].type_index = kTVMFFIOpaquePtr;
    args[0].v_ptr = address;
    args[1] = value;
    TVMFFIAny result{};
    CheckCall(TVMFFIFunctionCall(static_cast<TVMFFIObjectHandle>(setter), args, 2, &result));
    Any::Adopt(result);  // a setter returns None; release whatever it returned
    return;
  }
  CheckCall(reinterpret_cast<TVMFFIFieldSetter>(setter)(address, &value));
}

// The default of a field that has kTVMFFIFieldFlagBitMaskHasDefault: the stored value, or, with
// FFIJIT_FIELD_FLAG_DEFAULT_FROM_FACTORY, a fresh value from the stored factory () -> Any.
inline Any FieldDefault(const TVMFFIFieldInfo& field) {
  const TVMFFIAny& stored = field.FFIJIT_FIELD_DEFAULT;
  if (!(field.flags & FFIJIT_FIELD_FLAG_DEFAULT_FROM_FACTORY)) return Any(AnyView(stored));
  if (stored.type_index != kTVMFFIFunction) {  // registration checks this; kept for hand-made info
    throw Error("TypeError", "the default factory of field `" +
                                 std::string(field.name.data, field.name.size) +
                                 "` is not a function");
  }
  TVMFFIAny result{};
  CheckCall(TVMFFIFunctionCall(stored.v_obj, nullptr, 0, &result));
  return Any::Adopt(result);
}

// The Function stored for `type_index` in the type attribute column `column` (borrowed), or NULL
// when the column or the entry is absent; a TypeError when the entry is not a Function.
inline TVMFFIObject* TypeAttrFunction(const char* column, int32_t type_index) {
  TVMFFIByteArray name{column, std::strlen(column)};
  const TVMFFITypeAttrColumn* attrs = TVMFFIGetTypeAttrColumn(&name);
  const TVMFFIAny* entry =
      attrs == nullptr ? nullptr : FFIJITTypeAttrColumnEntry(attrs, type_index);
  if (entry == nullptr) return nullptr;
  const TVMFFIAny& value = *entry;
  if (value.type_index == kTVMFFINone) return nullptr;
  if (value.type_index != kTVMFFIFunction) {
    throw Error("TypeError", std::string("type attribute `") + column + "` of `" +
                                 TypeIndexToKey(type_index) + "` must be a function, not `" +
                                 TypeIndexToKey(value.type_index) + "`");
  }
  return value.v_obj;
}

}  // namespace ffijit::internal

#endif  // FFIJIT_RUNTIME_REFLECTED_H_
