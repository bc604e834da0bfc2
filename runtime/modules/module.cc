// The module object's side of the C API and the registry: the ffi.Module* globals over ModuleObj's
// members (module_obj.cc), loading a module file through the loader registered for its
// extension, and TVMFFIEnvModLookupFromImports. Library modules are made in library_module.cc.
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../internal.h"
#include "ffijit/c_env_api.h"
#include "ffijit/module.h"
#include "module_internal.h"

namespace ffijit::internal {
namespace {

// The Function ffijit registers as ffi.Module.load_from_file.so, with one reference held for the
// life of the process (so no other Function can ever have its address). While that global is
// still this Function, LoadModuleFromFile runs the loader's body itself instead of packing the
// path into a call and unpacking it again: the same result and errors, a third less time for a
// library already loaded.
std::atomic<TVMFFIObject*> g_builtin_so_loader{nullptr};

}  // namespace

tvm::ffi::Module LoadModuleFromFile(const std::string& path) {
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
    throw Error("RuntimeError",
                "Failed to get file format of `" + path + "`: the name has no extension");
  }
  std::string format = path.substr(dot + 1);
  if (format == "dll" || format == "dylib" || format == "dso") format = "so";
  const std::string loader = "ffi.Module.load_from_file." + format;
  std::optional<Function> load = GetGlobalFunction(loader);
  if (!load) {
    throw Error("RuntimeError", "Loader for `." + format +
                                    "` files is not registered, resolved to (" + loader +
                                    ") (loading `" + path + "`)");
  }
  if (load->get() == g_builtin_so_loader.load(std::memory_order_acquire)) {
    return WithFfijitErrors([&] { return LoadSharedLibrary(path); });
  }
  Any result = (*load)(path, format);
  if (result.type_index() != kTVMFFIModule) {
    throw Error("TypeError", loader + " returned `" + result.type_name() + "`, not a Module");
  }
  return tvm::ffi::Module(tvm::ffi::ObjectRef::Borrow(result.raw().v_obj));
}

}  // namespace ffijit::internal

namespace tvm {
namespace ffi {
namespace {

using ffijit::Error;
using ffijit::internal::AsModuleObj;
using ffijit::internal::ImportsOf;
using ffijit::internal::NewMap;
using ffijit::internal::ObjectView;
using ffijit::internal::WithFfijitErrors;

// TVMFFIEnvModLookupFromImports: the cache, the imports, the globals. The returned function is
// borrowed from the cache.
TVMFFIObject* LookupFromImports(ModuleObj* mod, const char* name) {
  static std::mutex* cache_mutex = new std::mutex();
  {
    // The hit path allocates nothing: map keys compare by content, so a RawStr view finds the
    // String stored at insertion.
    TVMFFIAny view{};
    view.type_index = kTVMFFIRawStr;
    view.v_c_str = name;
    std::lock_guard lock(*cache_mutex);
    const TVMFFIAny* found = nullptr;
    if (mod->lookup_cache().defined()) {
      ffijit::CheckCall(FFIJITMapGet(mod->lookup_cache().get(), &view, &found));
    }
    if (found != nullptr) return found->v_obj;
  }
  const String key = String::From(name);
  OptionalFunction func;
  for (const auto& import : ImportsOf(mod)) {
    func = WithFfijitErrors([&] { return AsModuleObj(import)->GetFunction(key, true); });
    if (func.defined()) break;
  }
  if (!func.defined()) {
    if (std::optional<ffijit::Function> global = ffijit::GetGlobalFunction(name)) {
      func = OptionalFunction(ObjectRef::Borrow(global->get()));
    }
  }
  if (!func.defined()) {
    throw Error("RuntimeError", std::string("Cannot find function ") + ffijit::Excerpt(name) +
                                    " in the imported modules or global registry.");
  }
  std::lock_guard lock(*cache_mutex);
  // Copy on insert: the cache is an immutable Map; another thread may have added `name` meanwhile.
  std::vector<TVMFFIAny> keys, values;
  if (TVMFFIObject* cache = mod->lookup_cache().get()) {
    const TVMFFIAny* found = nullptr;
    ffijit::CheckCall(FFIJITMapGet(cache, &key.raw(), &found));
    if (found != nullptr) return found->v_obj;
    int64_t size = 0;
    ffijit::CheckCall(FFIJITMapSize(cache, &size));
    for (int64_t i = 0; i < size; ++i) {
      const TVMFFIAny* k = nullptr;
      const TVMFFIAny* v = nullptr;
      ffijit::CheckCall(FFIJITMapItemAt(cache, i, &k, &v));
      keys.push_back(*k);
      values.push_back(*v);
    }
  }
  keys.push_back(key.raw());
  values.push_back(ObjectView(func.get()));
  mod->lookup_cache() = NewMap(keys, values);
  return func.get();  // the new cache holds it
}

}  // namespace
}  // namespace ffi
}  // namespace tvm

// ---- The ffi.Module* globals ----

namespace ffijit {
namespace {

namespace tf = tvm::ffi;

tf::ModuleObj* Deref(const Module& mod, const char* global) {
  if (!mod.defined()) {
    throw Error("TypeError", std::string(global) + ": expected an ffi.Module, got None");
  }
  return tf::ModuleObj::FromHandle(mod.get());
}

tf::String ToString(const std::string& text) {
  return tf::String::From(text);
}

Any FromOptionalString(const tf::OptionalString& value) {
  if (value.is_none()) return Any();
  return Any(std::string(value.view()));
}

Module ToModule(tf::Module mod) {
  return Module(ObjectPtr<>::Adopt(mod.release()));
}

void Register(const char* name, Function func) {
  SetGlobalFunction(name, func, true);
}

// The module members a global calls fail with tvm::ffi::Error (header-compiled code catches that);
// the global's caller gets the same kind and message through the C convention.
template <typename F, typename... A>
auto ReportingTvmErrors(F body, std::tuple<A...>*) {
  return [body = std::move(body)](A... args) {
    return internal::WithFfijitErrors([&] { return body(std::move(args)...); });
  };
}

template <typename F>
void RegisterTyped(const char* name, F body) {
  using Args = typename details::FunctionTraits<F>::Args;
  Register(name, Function::FromTyped(
                     ReportingTvmErrors(std::move(body), static_cast<Args*>(nullptr)), name));
}

bool RegisterModuleGlobals() {
  RegisterTyped("ffi.ModuleLoadFromFile",
                [](std::string path) { return ToModule(internal::LoadModuleFromFile(path)); });
  RegisterTyped("ffi.Module.load_from_file.so", [](std::string path, std::string) {
    return ToModule(internal::LoadSharedLibrary(path));
  });
  if (std::optional<Function> so_loader = GetGlobalFunction("ffi.Module.load_from_file.so")) {
    internal::g_builtin_so_loader.store(static_cast<TVMFFIObject*>(so_loader->release()),
                                        std::memory_order_release);
  }
  RegisterTyped(
      "ffi.ModuleGetFunction",
      [](Module mod, std::string name, bool query_imports) -> std::optional<Function> {
        tf::OptionalFunction func =
            Deref(mod, "ffi.ModuleGetFunction")->GetFunction(ToString(name), query_imports);
        if (!func.defined()) return std::nullopt;
        return Function(ObjectPtr<>::Adopt(func.release()));
      });
  RegisterTyped("ffi.ModuleImplementsFunction",
                [](Module mod, std::string name, bool query_imports) {
                  return Deref(mod, "ffi.ModuleImplementsFunction")
                      ->ImplementsFunction(ToString(name), query_imports);
                });
  RegisterTyped(
      "ffi.ModuleGetFunctionMetadata", [](Module mod, std::string name, bool query_imports) {
        return FromOptionalString(Deref(mod, "ffi.ModuleGetFunctionMetadata")
                                      ->GetFunctionMetadata(ToString(name), query_imports));
      });
#if FFIJIT_TVM_FFI_MODULE_HAS_FUNCTION_DOC
  RegisterTyped("ffi.ModuleGetFunctionDoc", [](Module mod, std::string name, bool query_imports) {
    return FromOptionalString(
        Deref(mod, "ffi.ModuleGetFunctionDoc")->GetFunctionDoc(ToString(name), query_imports));
  });
#endif
  RegisterTyped("ffi.ModuleGetPropertyMask", [](Module mod) {
    return static_cast<int64_t>(Deref(mod, "ffi.ModuleGetPropertyMask")->GetPropertyMask());
  });
  RegisterTyped("ffi.ModuleGetKind",
                [](Module mod) { return std::string(Deref(mod, "ffi.ModuleGetKind")->kind()); });
  RegisterTyped("ffi.ModuleInspectSource", [](Module mod, std::string format) {
    return std::string(
        Deref(mod, "ffi.ModuleInspectSource")->InspectSource(ToString(format)).view());
  });
  RegisterTyped("ffi.ModuleGetWriteFormats", [](Module mod) {
    tf::ArrayRef formats = Deref(mod, "ffi.ModuleGetWriteFormats")->GetWriteFormats();
    return Array(ObjectPtr<>::Adopt(formats.release()));
  });
  RegisterTyped("ffi.ModuleWriteToFile", [](Module mod, std::string file, std::string format) {
    Deref(mod, "ffi.ModuleWriteToFile")->WriteToFile(ToString(file), ToString(format));
  });
  RegisterTyped("ffi.ModuleImportModule", [](Module mod, Module other) {
    tf::ModuleObj* self = Deref(mod, "ffi.ModuleImportModule");
    Deref(other, "ffi.ModuleImportModule");
    self->ImportModule(tf::Module(tf::ObjectRef::Borrow(other.get())));
  });
  RegisterTyped("ffi.ModuleClearImports",
                [](Module mod) { Deref(mod, "ffi.ModuleClearImports")->ClearImports(); });
  Register("ffi.SystemLib",
           Function::FromPacked([](const AnyView* args, int32_t num_args, Any* result) {
             if (num_args > 1) {
               throw Error("TypeError",
                           "ffi.SystemLib takes at most one argument (the prefix), "
                           "got " +
                               std::to_string(num_args));
             }
             std::string prefix;
             if (num_args == 1) {
               try {
                 prefix = args[0].cast<std::string>();
               } catch (const Error& e) {
                 throw Error(e.kind(),
                             "Mismatched type on argument #0 when calling "
                             "`ffi.SystemLib`: " +
                                 e.message());
               }
             }
             *result = ToModule(internal::SystemLib(prefix));
           }));
  return true;
}

__attribute__((constructor)) void RegisterModuleGlobalsAtLoad() {
  RegisterAtLoad("the ffi.Module* globals", RegisterModuleGlobals);
}

}  // namespace
}  // namespace ffijit

using namespace ffijit;

extern "C" {

int TVMFFIEnvModLookupFromImports(TVMFFIObjectHandle library_ctx, const char* func_name,
                                  TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(library_ctx, "TVMFFIEnvModLookupFromImports", "library_ctx");
    internal::RequireNonNull(func_name, "TVMFFIEnvModLookupFromImports", "func_name");
    internal::RequireNonNull(out, "TVMFFIEnvModLookupFromImports", "out");
    // The loader stored the C++ ModuleObj* (header - 8), as TVM FFI does.
    auto* mod = static_cast<tvm::ffi::ModuleObj*>(library_ctx);
    if (mod->header()->type_index != kTVMFFIModule) {
      throw Error("ValueError",
                  "TVMFFIEnvModLookupFromImports: `library_ctx` is not a module "
                  "context (pass the value the loader stored in " +
                      std::string(internal::kLibraryCtxSymbol) + ")");
    }
    *out = tvm::ffi::LookupFromImports(mod, func_name);
  });
}

}  // extern "C"
