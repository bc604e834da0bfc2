// ModuleObj's and Module's exported out-of-line members (module_obj.h): the lookups that also
// search imports, importing with cycle detection, clearing imports, Module::LoadFromFile and
// Module::VisitContextSymbols. Header-compiled code calls them, so they fail with tvm::ffi::Error.
#include "../cxx_abi/module_obj.h"

#include <mutex>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../internal.h"
#include "module_internal.h"

namespace {

// Imports are replaced (copy on write), never edited in place; this lock orders the swaps and
// the snapshots taken by readers.
std::mutex& ImportsMutex() {
  static std::mutex* mutex = new std::mutex();
  return *mutex;
}

}  // namespace

namespace ffijit::internal {

tvm::ffi::ObjectRef NewArray(const std::vector<TVMFFIAny>& items) {
  TVMFFIObjectHandle handle = nullptr;
  CheckCall(FFIJITArrayCreate(items.data(), static_cast<int64_t>(items.size()), &handle));
  return tvm::ffi::ObjectRef::Adopt(static_cast<TVMFFIObject*>(handle));
}

tvm::ffi::ObjectRef NewMap(const std::vector<TVMFFIAny>& keys,
                           const std::vector<TVMFFIAny>& values) {
  TVMFFIObjectHandle handle = nullptr;
  CheckCall(
      FFIJITMapCreate(keys.data(), values.data(), static_cast<int64_t>(keys.size()), &handle));
  return tvm::ffi::ObjectRef::Adopt(static_cast<TVMFFIObject*>(handle));
}

ModuleList ImportsOf(tvm::ffi::ModuleObj* mod) {
  std::lock_guard lock(ImportsMutex());
  ModuleList result;
  TVMFFIObject* array = mod->imports().get();
  if (array == nullptr) return result;
  const auto* cell = reinterpret_cast<const FFIJITArrayCell*>(array + 1);
  for (int64_t i = 0; i < cell->size; ++i) {
    const TVMFFIAny& item = cell->data[i];
    if (item.type_index == kTVMFFIModule) result.push_back(ObjectPtr<>::Borrow(item.v_obj));
  }
  return result;
}

}  // namespace ffijit::internal

namespace tvm {
namespace ffi {
namespace {

using ffijit::Error;
using ffijit::internal::AsModuleObj;
using ffijit::internal::ImportsOf;
using ffijit::internal::NewArray;
using ffijit::internal::ObjectView;
using ffijit::internal::WithTvmErrors;

// True when `target` is `from` or reachable from it through imports.
bool Reaches(TVMFFIObject* from, TVMFFIObject* target, std::unordered_set<TVMFFIObject*>* seen) {
  if (from == target) return true;
  if (!seen->insert(from).second) return false;
  for (const auto& next : ImportsOf(ModuleObj::FromHandle(from))) {
    if (Reaches(next.get(), target, seen)) return true;
  }
  return false;
}

ModuleObj* CheckedModule(const Module& mod, const char* what) {
  if (!mod.defined()) throw Error("ValueError", std::string(what) + ": the module is None");
  if (mod.get()->type_index != kTVMFFIModule) {
    throw Error("TypeError", std::string(what) + ": expected an ffi.Module");
  }
  return mod.operator->();
}

}  // namespace

void ModuleObj::ImportModule(const Module& other) {
  WithTvmErrors([&] {
    TVMFFIObject* other_handle = CheckedModule(other, "ImportModule")->handle();
    // One import at a time, so two concurrent imports cannot together close a cycle that each
    // check alone missed.
    static std::mutex* graph_mutex = new std::mutex();
    std::lock_guard graph_lock(*graph_mutex);
    std::unordered_set<TVMFFIObject*> seen;
    if (Reaches(other_handle, handle(), &seen)) {
      throw ffijit::RuntimeError("Cyclic dependency detected during import");
    }
    std::lock_guard lock(ImportsMutex());
    std::vector<TVMFFIAny> items;
    if (TVMFFIObject* array = imports_.get()) {
      const auto* cell = reinterpret_cast<const FFIJITArrayCell*>(array + 1);
      items.assign(cell->data, cell->data + cell->size);
    }
    items.push_back(ObjectView(other_handle));
    imports_ = NewArray(items);
  });
}

void ModuleObj::ClearImports() {
  WithTvmErrors([&] {
    ObjectRef empty = NewArray({});
    std::lock_guard lock(ImportsMutex());
    std::swap(imports_, empty);
  });
}

OptionalFunction ModuleObj::GetFunction(const String& name, bool query_imports) {
  return WithTvmErrors([&] {
    OptionalFunction func = GetFunction(name);
    if (func.defined() || !query_imports) return func;
    for (const auto& import : ImportsOf(this)) {
      func = AsModuleObj(import)->GetFunction(name, true);
      if (func.defined()) return func;
    }
    return OptionalFunction();
  });
}

bool ModuleObj::ImplementsFunction(const String& name, bool query_imports) {
  return WithTvmErrors([&] {
    if (ImplementsFunction(name)) return true;
    if (!query_imports) return false;
    for (const auto& import : ImportsOf(this)) {
      if (AsModuleObj(import)->ImplementsFunction(name, true)) return true;
    }
    return false;
  });
}

OptionalString ModuleObj::GetFunctionMetadata(const String& name, bool query_imports) {
  return WithTvmErrors([&] {
    OptionalString metadata = GetFunctionMetadata(name);
    if (!metadata.is_none() || !query_imports) return metadata;
    for (const auto& import : ImportsOf(this)) {
      metadata = AsModuleObj(import)->GetFunctionMetadata(name, true);
      if (!metadata.is_none()) return metadata;
    }
    return OptionalString();
  });
}

#if FFIJIT_TVM_FFI_MODULE_HAS_FUNCTION_DOC
OptionalString ModuleObj::GetFunctionDoc(const String& name, bool query_imports) {
  return WithTvmErrors([&] {
    OptionalString doc = GetFunctionDoc(name);
    if (!doc.is_none() || !query_imports) return doc;
    for (const auto& import : ImportsOf(this)) {
      doc = AsModuleObj(import)->GetFunctionDoc(name, true);
      if (!doc.is_none()) return doc;
    }
    return OptionalString();
  });
}
#endif

Module Module::LoadFromFile(const String& file_name) {
  return WithTvmErrors(
      [&] { return ffijit::internal::LoadModuleFromFile(std::string(file_name.view())); });
}

void Module::VisitContextSymbols(const TypedFunction<void(String, void*)>& callback) {
  WithTvmErrors([&] {
    for (const auto& [name, value] : ffijit::internal::ContextSymbolsSnapshot()) {
      String text = String::From(name);
      TVMFFIAny args[2] = {text.raw(), TVMFFIAny{}};
      args[1].type_index = kTVMFFIOpaquePtr;
      args[1].v_ptr = value;
      TVMFFIAny result{};
      ffijit::CheckCall(TVMFFIFunctionCall(callback.packed.get(), args, 2, &result));
      ffijit::internal::ReleaseAny(&result);
    }
  });
}

}  // namespace ffi
}  // namespace tvm
