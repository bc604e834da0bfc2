// The reflection global `ffi.MakeObjectFromPackedArgs(type, name0, value0, ...)`: makes an object
// of a reflected type through its metadata's creator and sets its fields from keyword pairs (and
// the fields' defaults, values or factories, for the others).
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ffijit/object.h"
#include "ffijit/registry.h"
#include "internal.h"
#include "reflected.h"
#include "string_internal.h"

namespace ffijit {
namespace {

// The type named by argument 0: an Int index or a type key string.
const TVMFFITypeInfo& ResolveType(const TVMFFIAny& arg) {
  int32_t index = -1;
  std::string_view key;
  if (arg.type_index == kTVMFFIInt) {
    index = static_cast<int32_t>(arg.v_int64);
    if (arg.v_int64 != index) index = -1;
  } else if (internal::ViewBytes(arg, &key) && arg.type_index != kTVMFFISmallBytes &&
             arg.type_index != kTVMFFIBytes && arg.type_index != kTVMFFIByteArrayPtr) {
    index = TypeKeyToIndex(std::string(key));
  } else {
    throw Error(
        "TypeError",
        "ffi.MakeObjectFromPackedArgs: argument 0 must be a type index or a type key, not `" +
            TypeIndexToKey(arg.type_index) + "`");
  }
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  if (info->type_index != index || index < kTVMFFIStaticObjectBegin) {
    throw Error("ValueError",
                "ffi.MakeObjectFromPackedArgs: no object type is registered at index " +
                    std::to_string(arg.type_index == kTVMFFIInt ? arg.v_int64 : index));
  }
  return *info;
}

std::string KeyOf(const TVMFFITypeInfo& info) {
  return std::string(info.type_key.data, info.type_key.size);
}

void MakeObject(const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (num_args < 1 || num_args % 2 == 0) {
    throw Error("InternalError",
                "ffi.MakeObjectFromPackedArgs takes a type and name/value pairs, got " +
                    std::to_string(num_args) + " arguments");
  }
  const TVMFFITypeInfo& info = ResolveType(args[0]);
  const TVMFFITypeMetadata* metadata = __atomic_load_n(&info.metadata, __ATOMIC_ACQUIRE);
  if (metadata == nullptr || metadata->creator == nullptr) {
    throw Error("RuntimeError",
                "Type `" + KeyOf(info) + "` does not support reflection creation (no creator)");
  }
  std::vector<std::string_view> names;
  for (int32_t i = 1; i < num_args; i += 2) {
    std::string_view name;
    if (!internal::ViewBytes(args[i], &name)) {
      throw Error("TypeError", "ffi.MakeObjectFromPackedArgs: argument " + std::to_string(i) +
                                   " must be a field name string");
    }
    names.push_back(name);
  }
  std::vector<bool> used(names.size(), false);

  TVMFFIObjectHandle handle = nullptr;
  CheckCall(metadata->creator(&handle));
  if (handle == nullptr) {
    throw Error("RuntimeError", "the creator of `" + KeyOf(info) + "` returned no object");
  }
  ObjectPtr<> object = ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle));
  // Fields of every level, from the root down to the type itself (each level's own fields).
  std::vector<const TVMFFITypeInfo*> levels(info.FFIJIT_TYPE_ANCESTORS,
                                            info.FFIJIT_TYPE_ANCESTORS + info.type_depth);
  levels.push_back(&info);
  for (const TVMFFITypeInfo* level : levels) {
    int32_t num_fields = __atomic_load_n(&level->num_fields, __ATOMIC_ACQUIRE);
    const TVMFFIFieldInfo* fields = __atomic_load_n(&level->fields, __ATOMIC_ACQUIRE);
    for (int32_t f = 0; f < num_fields; ++f) {
      const TVMFFIFieldInfo& field = fields[f];
      std::string_view field_name(field.name.data, field.name.size);
      const TVMFFIAny* given = nullptr;
      for (size_t n = 0; n < names.size(); ++n) {
        if (names[n] == field_name) {
          given = &args[2 * n + 2];
          used[n] = true;
        }
      }
      if (given != nullptr) {
        internal::SetField(object.get(), field, *given, KeyOf(*level));
        continue;
      }
      if (!(field.flags & kTVMFFIFieldFlagBitMaskHasDefault)) {
        throw Error("TypeError", "Required field `" + std::string(field_name) +
                                     "` not set in creating `" + KeyOf(info) + "`");
      }
      // A factory default is made afresh for every object.
      const Any value = internal::FieldDefault(field);
      internal::SetField(object.get(), field, value.raw(), KeyOf(*level));
    }
  }
  for (size_t n = 0; n < names.size(); ++n) {
    if (!used[n]) {
      throw Error("TypeError",
                  "Type `" + KeyOf(info) + "` has no field named `" + std::string(names[n]) + "`");
    }
  }
  std::memset(result, 0, sizeof(*result));
  result->type_index = object->type_index;
  result->v_obj = object.release();
}

int MakeObjectSafeCall(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return GuardCBoundary([&] { MakeObject(args, num_args, result); });
}

// Registered while the runtime library loads, like TVM FFI's own globals.
__attribute__((constructor)) void RegisterReflectionGlobals() {
  RegisterAtLoad("ffi.MakeObjectFromPackedArgs", [] {
    SetGlobalFunction("ffi.MakeObjectFromPackedArgs",
                      Function::FromSafeCall(nullptr, MakeObjectSafeCall, nullptr), true);
  });
}

}  // namespace
}  // namespace ffijit
