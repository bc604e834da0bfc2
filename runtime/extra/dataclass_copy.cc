// DeepCopy (semantics in dataclass.cc's file comment): containers copied through the runtime's
// constructors and globals, other objects through `__ffi_shallow_copy__` and their fields'
// setters, with shared and cyclic references kept shared. Each dataclass operation is a file of
// its own; they share only dataclass_common.h.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../internal.h"
#include "../reflected.h"
#include "dataclass_common.h"
#include "ffijit/c_ext.h"
#include "ffijit/container.h"
#include "ffijit/function.h"
#include "ffijit/registry.h"

#if FFIJIT_TVM_FFI_HAS_DATACLASS_API

namespace ffijit {
namespace {

using internal::DepthGuard;
using internal::ForEachFieldOf;
using internal::MapEntries;
using internal::ReadField;
using internal::SeqCell;
using internal::TypeAttrHook;
using internal::TypeKeyOfIndex;
using internal::ViewOf;

bool IsObject(const TVMFFIAny& v) {
  return v.type_index >= kTVMFFIStaticObjectBegin && v.v_obj != nullptr;
}

// Writes `value` into `field` of `obj` through the field's setter (a C setter or, with
// kTVMFFIFieldFlagBitSetterIsFunctionObj, a Function taking the field address and the value).
void WriteField(TVMFFIObject* obj, const TVMFFIFieldInfo& field, const TVMFFIAny& value) {
  void* address = reinterpret_cast<char*>(obj) + field.offset;
  const std::string name(field.name.data, field.name.size);
  if (field.setter == nullptr) {
    throw Error("TypeError", "field `" + name + "` of `" + TypeKeyOfIndex(obj->type_index) +
                                 "` is read-only, so the copy cannot refer to the copied value");
  }
  if (field.flags & kTVMFFIFieldFlagBitSetterIsFunctionObj) {
    TVMFFIAny args[2] = {TVMFFIAny{}, value};
    args[0].type_index = kTVMFFIOpaquePtr;
    args[0].v_ptr = address;
    TVMFFIAny result{};
    CheckCall(TVMFFIFunctionCall(field.setter, args, 2, &result));
    internal::ReleaseAny(&result);
    return;
  }
  CheckCall(reinterpret_cast<TVMFFIFieldSetter>(field.setter)(address, &value));
}

bool SameValue(const TVMFFIAny& a, const TVMFFIAny& b) {
  if (a.type_index >= kTVMFFIStaticObjectBegin || b.type_index >= kTVMFFIStaticObjectBegin) {
    return a.type_index == b.type_index && a.v_obj == b.v_obj;
  }
  return a.type_index == b.type_index && a.zero_padding == b.zero_padding && a.v_int64 == b.v_int64;
}

Function RequireGlobal(const char* name, const char* why) {
  std::optional<Function> func = GetGlobalFunction(name);
  if (!func) {
    throw Error("RuntimeError", std::string("DeepCopy: ") + why + " needs the global `" + name +
                                    "`, which is not registered");
  }
  return *func;
}

class DeepCopier {
 public:
  Any Copy(const TVMFFIAny& v) {
    Any result = CopyValue(v);
    if (has_deferred_) FixDeferred();
    return result;
  }

 private:
  Any CopyValue(const TVMFFIAny& v) {
    if (!IsObject(v)) return Any(AnyView(v));
    TVMFFIObject* obj = v.v_obj;
    if (auto done = copies_.find(obj); done != copies_.end()) return done->second;
    if (in_progress_.count(obj) != 0) {
      // An immutable container reached again through itself: refer to the original for now and
      // fix the mutable holders once every copy exists.
      has_deferred_ = true;
      return Any(AnyView(v));
    }
    const int32_t type_index = obj->type_index;
    if (type_index == kTVMFFIStr || type_index == kTVMFFIBytes || type_index == kTVMFFIShape) {
      return Any(AnyView(v));
    }
    DepthGuard guard(&depth_, "DeepCopy");
    keep_.push_back(ObjectPtr<>::Borrow(obj));
    switch (type_index) {
      case kTVMFFIArray:
        return CopyArray(obj);
      case kTVMFFIMap:
        return CopyMap(obj);
      case kTVMFFIList:
        return CopyList(obj);
      case kTVMFFIDict:
        return CopyDict(obj);
      default:
        return CopyObject(obj);
    }
  }

  Any CopyArray(TVMFFIObject* obj) {
    in_progress_.insert(obj);
    std::vector<Any> items;
    const FFIJITArrayCell& cell = SeqCell(obj);
    for (int64_t i = 0; i < cell.size; ++i) items.push_back(CopyValue(SeqCell(obj).data[i]));
    in_progress_.erase(obj);
    std::vector<TVMFFIAny> views;
    for (const Any& item : items) views.push_back(item.raw());
    TVMFFIObjectHandle out = nullptr;
    CheckCall(FFIJITArrayCreate(views.data(), static_cast<int64_t>(views.size()), &out));
    Any copy = Any::Adopt(ViewOf(static_cast<TVMFFIObject*>(out)));
    copies_[obj] = copy;
    return copy;
  }

  Any CopyMap(TVMFFIObject* obj) {
    in_progress_.insert(obj);
    std::vector<Any> keys, values;
    for (const auto& [key, value] : MapEntries(obj)) {
      keys.push_back(CopyValue(key));
      values.push_back(CopyValue(value));
    }
    in_progress_.erase(obj);
    std::vector<TVMFFIAny> key_views, value_views;
    for (size_t i = 0; i < keys.size(); ++i) {
      key_views.push_back(keys[i].raw());
      value_views.push_back(values[i].raw());
    }
    TVMFFIObjectHandle out = nullptr;
    CheckCall(FFIJITMapCreate(key_views.data(), value_views.data(),
                              static_cast<int64_t>(keys.size()), &out));
    Any copy = Any::Adopt(ViewOf(static_cast<TVMFFIObject*>(out)));
    copies_[obj] = copy;
    return copy;
  }

  // Mutable containers are registered before their elements are copied, so cycles through them
  // close on the copy.
  Any CopyList(TVMFFIObject* obj) {
    Any copy = RequireGlobal("ffi.List", "copying an ffi.List")();
    copies_[obj] = copy;
    Function append = RequireGlobal("ffi.ListAppend", "copying an ffi.List");
    for (int64_t i = 0; i < SeqCell(obj).size; ++i) {
      Any item = CopyValue(SeqCell(obj).data[i]);
      append(copy, item);
    }
    return copy;
  }

  Any CopyDict(TVMFFIObject* obj) {
    Any copy = RequireGlobal("ffi.Dict", "copying an ffi.Dict")();
    copies_[obj] = copy;
    Function set_item = RequireGlobal("ffi.DictSetItem", "copying an ffi.Dict");
    for (const auto& [key, value] : MapEntries(obj)) {
      Any k = CopyValue(key);
      Any v = CopyValue(value);
      set_item(copy, k, v);
    }
    return copy;
  }

  Any CopyObject(TVMFFIObject* obj) {
    const int32_t type_index = obj->type_index;
    std::optional<Function> shallow_copy = TypeAttrHook("__ffi_shallow_copy__", type_index);
    if (!shallow_copy) {
      throw Error("InternalError", "Cannot deep copy object of type \"" +
                                       TypeKeyOfIndex(type_index) +
                                       "\" because it is not copy-constructible");
    }
    Any copy = (*shallow_copy)(AnyView(ViewOf(obj)));
    if (!IsObject(copy.raw())) {
      throw Error("TypeError", "__ffi_shallow_copy__ of `" + TypeKeyOfIndex(type_index) +
                                   "` returned `" + copy.type_name() + "`, not an object");
    }
    copies_[obj] = copy;
    ForEachFieldOf(obj, 0, [&](const TVMFFIFieldInfo& field) {
      Any original = ReadField(obj, field);
      Any resolved = CopyValue(original.raw());
      if (!SameValue(original.raw(), resolved.raw())) {
        WriteField(copy.raw().v_obj, field, resolved.raw());
      }
    });
    return copy;
  }

  // Replaces, in the copied Lists and objects, references to originals that have copies.
  void FixDeferred() {
    std::optional<Function> list_set = GetGlobalFunction("ffi.ListSetItem");
    std::optional<Function> dict_set = GetGlobalFunction("ffi.DictSetItem");
    auto copy_of = [&](const TVMFFIAny& v) -> const Any* {
      if (!IsObject(v)) return nullptr;
      auto it = copies_.find(v.v_obj);
      if (it == copies_.end() || SameValue(it->second.raw(), v)) return nullptr;
      return &it->second;
    };
    for (const auto& entry : copies_) {
      TVMFFIObject* copy = entry.second.raw().v_obj;
      const int32_t type_index = copy->type_index;
      if (type_index == kTVMFFIList && list_set) {
        for (int64_t i = 0; i < SeqCell(copy).size; ++i) {
          if (const Any* fixed = copy_of(SeqCell(copy).data[i])) {
            (*list_set)(entry.second, i, *fixed);
          }
        }
      } else if (type_index == kTVMFFIDict && dict_set) {
        for (const auto& [key, value] : MapEntries(copy)) {
          if (const Any* fixed = copy_of(value)) (*dict_set)(entry.second, AnyView(key), *fixed);
        }
      } else if (type_index >= kTVMFFIStaticObjectEnd) {
        ForEachFieldOf(copy, 0, [&](const TVMFFIFieldInfo& field) {
          Any value = ReadField(copy, field);
          if (const Any* fixed = copy_of(value.raw())) WriteField(copy, field, fixed->raw());
        });
      }
    }
  }

  int depth_ = 0;
  bool has_deferred_ = false;
  std::unordered_map<TVMFFIObject*, Any> copies_;
  std::unordered_set<TVMFFIObject*> in_progress_;
  std::vector<ObjectPtr<>> keep_;  // originals stay alive while their addresses are keys
};

}  // namespace

namespace internal {

Any DeepCopyOf(const TVMFFIAny& v) {
  return DeepCopier().Copy(v);
}

}  // namespace internal
}  // namespace ffijit

#endif  // FFIJIT_TVM_FFI_HAS_DATACLASS_API
