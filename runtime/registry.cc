// The global function registry: thread-safe name -> Function map, each entry with the metadata
// (JSON text, e.g. the type schema) it was registered with; on TVM FFI 0.1 the global
// ffi.GetGlobalFuncMetadata reads that metadata back.
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "ffijit/function.h"
#include "ffijit/object.h"
#include "ffijit/registry.h"
#include "internal.h"

namespace ffijit {
namespace {

class GlobalTable {
 public:
  static GlobalTable& Get() {
    // Never destroyed: functions may be looked up from other libraries' static destructors.
    static GlobalTable* table = new GlobalTable();
    return *table;
  }

  // Registers `func` under `name` with `metadata` (empty when the registration carried none); an
  // override replaces both.
  void Set(const std::string& name, ObjectPtr<> func, std::string metadata, bool allow_override) {
    ObjectPtr<> replaced;  // released after the lock: its deleter may call back into the registry
    std::lock_guard lock(mutex_);
    auto [it, inserted] = table_.try_emplace(name, Entry{func, metadata, Any()});
    if (inserted) it->second.name = Any(name);
    if (!inserted) {
      if (!allow_override) {
        // TVM FFI's kind and wording, so callers matching either runtime's text agree.
        throw Error("RuntimeError",
                    "Global Function `" + Excerpt(name) + "` is already registered");
      }
      replaced = std::exchange(it->second.func, std::move(func));
      it->second.metadata = std::move(metadata);
    }
  }

  ObjectPtr<> Get(std::string_view name) const {
    std::lock_guard lock(mutex_);
    auto it = table_.find(name);
    return it == table_.end() ? ObjectPtr<>() : it->second.func;
  }

  // The metadata `name` was registered with; nullopt when nothing is registered under `name`.
  std::optional<std::string> Metadata(const std::string& name) const {
    std::lock_guard lock(mutex_);
    auto it = table_.find(name);
    if (it == table_.end()) return std::nullopt;
    return it->second.metadata;
  }

  bool Remove(const std::string& name) {
    ObjectPtr<> removed;  // released after the lock: its deleter may call back into the registry
    std::lock_guard lock(mutex_);
    auto it = table_.find(name);
    if (it == table_.end()) return false;
    removed = std::move(it->second.func);
    table_.erase(it);
    return true;
  }

  // A new Array of every registered name, sorted: it retains the entries' own Strings rather than
  // copying them, under the lock, so a concurrent removal cannot free one in between.
  int ListNames(TVMFFIObjectHandle* out) const {
    std::lock_guard lock(mutex_);
    std::vector<TVMFFIAny> names;
    names.reserve(table_.size());
    for (const auto& entry : table_) names.push_back(entry.second.name.raw());
    return FFIJITArrayCreate(names.data(), static_cast<int64_t>(names.size()), out);
  }

 private:
  struct Entry {
    ObjectPtr<> func;  // NULL for a None method, which lookups report as missing
    std::string metadata;
    Any name;  // the key as a String, handed out by listings without a copy
  };
  mutable std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> table_;  // looked up by string_view, no copy
};

std::string_view NameViewOf(const TVMFFIByteArray* name, const char* func) {
  internal::RequireNonNull(name, func, "name");
  if (name->data == nullptr && name->size != 0) {
    throw Error("ValueError", std::string(func) + ": NULL name data with nonzero size");
  }
  if (name->size == 0) throw Error("ValueError", std::string(func) + ": empty function name");
  return std::string_view(name->data, name->size);
}

std::string NameOf(const TVMFFIByteArray* name, const char* func) {
  return std::string(NameViewOf(name, func));
}

#if FFIJIT_TVM_FFI_HAS_GLOBAL_FUNC_METADATA
// ffi.GetGlobalFuncMetadata(name): the metadata text of a registered global ("" when it was
// registered without any); TVM FFI's RuntimeError for an unknown name.
std::string GlobalFuncMetadata(const std::string& name) {
  std::optional<std::string> metadata = GlobalTable::Get().Metadata(name);
  if (!metadata) throw Error("RuntimeError", "Global Function is not found: " + Excerpt(name));
  return *metadata;
}

// Registered while the runtime library loads, like TVM FFI's own globals.
__attribute__((constructor)) void RegisterRegistryGlobals() {
  RegisterAtLoad("ffi.GetGlobalFuncMetadata", [] {
    SetGlobalFunction("ffi.GetGlobalFuncMetadata",
                      Function::FromTyped(GlobalFuncMetadata, "ffi.GetGlobalFuncMetadata"), true);
  });
}
#endif  // FFIJIT_TVM_FFI_HAS_GLOBAL_FUNC_METADATA

}  // namespace
}  // namespace ffijit

using namespace ffijit;

extern "C" {

int TVMFFIFunctionSetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle f, int allow_override) {
  return internal::GuardCBoundary([&] {
    std::string key = NameOf(name, "TVMFFIFunctionSetGlobal");
    auto* obj = static_cast<TVMFFIObject*>(f);
    internal::RequireNonNull(obj, "TVMFFIFunctionSetGlobal", "f");
    if (!IsInstance(obj->type_index, kTVMFFIFunction)) {
      throw Error("TypeError", "TVMFFIFunctionSetGlobal: `" + Excerpt(key) +
                                   "` is not a Function but `" + TypeIndexToKey(obj->type_index) +
                                   "`");
    }
    GlobalTable::Get().Set(key, ObjectPtr<>::Borrow(obj), std::string(), allow_override != 0);
  });
}

int TVMFFIFunctionSetGlobalFromMethodInfo(const TVMFFIMethodInfo* method_info, int allow_override) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(method_info, "TVMFFIFunctionSetGlobalFromMethodInfo", "method_info");
    std::string key = NameOf(&method_info->name, "TVMFFIFunctionSetGlobalFromMethodInfo");
    const TVMFFIAny& method = method_info->method;
    details::RequireWellFormed(method, "TVMFFIFunctionSetGlobalFromMethodInfo");
    ObjectPtr<> func;  // None registers a null entry, which lookups report as missing
    if (method.type_index != kTVMFFINone) {
      if (method.type_index < kTVMFFIStaticObjectBegin || method.v_obj == nullptr ||
          !IsInstance(method.v_obj->type_index, kTVMFFIFunction)) {
        throw Error("TypeError", "TVMFFIFunctionSetGlobalFromMethodInfo: the method of `" +
                                     Excerpt(key) + "` must be a Function or None, not `" +
                                     TypeIndexToKey(method.type_index) + "`");
      }
      func = ObjectPtr<>::Borrow(method.v_obj);
    }
    // The metadata is kept (ffi.GetGlobalFuncMetadata reads it at TVM FFI 0.1); ffijit keeps no
    // per-global doc or flags: no API reads them back.
    const TVMFFIByteArray& metadata = method_info->FFIJIT_MEMBER_METADATA;
    if (metadata.data == nullptr && metadata.size != 0) {
      throw Error("ValueError", "TVMFFIFunctionSetGlobalFromMethodInfo: the metadata of `" +
                                    Excerpt(key) + "` has NULL data and size " +
                                    std::to_string(metadata.size));
    }
    GlobalTable::Get().Set(
        key, std::move(func),
        std::string(metadata.data == nullptr ? "" : metadata.data, metadata.size),
        allow_override != 0);
  });
}

int TVMFFIFunctionGetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    const std::string_view key = NameViewOf(name, "TVMFFIFunctionGetGlobal");
    internal::RequireNonNull(out, "TVMFFIFunctionGetGlobal", "out");
    *out = GlobalTable::Get().Get(key).release();
  });
}

int FFIJITFunctionRemoveGlobal(const TVMFFIByteArray* name) {
  return internal::GuardCBoundary([&] {
    std::string key = NameOf(name, "FFIJITFunctionRemoveGlobal");
    if (!GlobalTable::Get().Remove(key)) {
      throw Error("KeyError", "global function `" + Excerpt(key) + "` is not registered");
    }
  });
}

int FFIJITFunctionListGlobals(TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(out, "FFIJITFunctionListGlobals", "out");
    CheckCall(GlobalTable::Get().ListNames(out));
  });
}

}  // extern "C"
