// Module: a loaded TVM FFI module (a shared library exporting `__tvm_ffi_<name>` functions, the
// system library, or a module a user built), with its functions looked up by name.
//
// A thin C++ layer over the `ffi.Module*` global functions the runtime registers; the C API is
// those globals (call them with TVMFFIFunctionGetGlobal + TVMFFIFunctionCall).
#ifndef FFIJIT_MODULE_H_
#define FFIJIT_MODULE_H_

#include <optional>
#include <string>
#include <utility>

#include "ffijit/any.h"
#include "ffijit/c_env_api.h"
#include "ffijit/container.h"
#include "ffijit/function.h"
#include "ffijit/object.h"
#include "ffijit/registry.h"

namespace ffijit {

class Module : public ObjectRef {
 public:
  static constexpr int32_t kTypeIndex = kTVMFFIModule;
  static constexpr const char* kTypeKey = "ffi.Module";

  Module() noexcept = default;
  explicit Module(ObjectPtr<> ptr) noexcept : ObjectRef(std::move(ptr)) {}

  // Loads a module file; the format comes from the extension (".so", ".dll", ".dylib" and ".dso"
  // load a shared library). Errors: a RuntimeError for an unknown format, an InternalError naming
  // the file and the loader's reason when the library cannot be loaded.
  static Module Load(const std::string& path) {
    return Call("ffi.ModuleLoadFromFile", path).cast<Module>();
  }
  // The process's system library: functions registered with TVMFFIEnvModRegisterSystemLibSymbol
  // under `prefix` (one module per prefix).
  static Module SystemLib(const std::string& prefix = "") {
    return Call("ffi.SystemLib", prefix).cast<Module>();
  }

  // The function `name` (this module first, then its imports when query_imports), or nullopt.
  std::optional<Function> GetFunction(const std::string& name, bool query_imports = false) const {
    Any found = Call("ffi.ModuleGetFunction", *this, name, query_imports);
    if (found.is_none()) return std::nullopt;
    return found.cast<Function>();
  }
  bool ImplementsFunction(const std::string& name, bool query_imports = false) const {
    return Call("ffi.ModuleImplementsFunction", *this, name, query_imports).cast<bool>();
  }
  // "library" for a shared library or the system library.
  std::string kind() const { return Call("ffi.ModuleGetKind", *this).cast<std::string>(); }
  // Module::ModulePropertyMask bits: 1 binary-serializable, 2 runnable, 4 exportable.
  int64_t property_mask() const { return Call("ffi.ModuleGetPropertyMask", *this).cast<int64_t>(); }
  // Makes `other`'s functions visible through this module's imports; a RuntimeError on a cycle.
  void Import(const Module& other) const { Call("ffi.ModuleImportModule", *this, other); }
  void ClearImports() const { Call("ffi.ModuleClearImports", *this); }

 private:
  template <typename... Args>
  static Any Call(const char* global, Args&&... args) {
    return GetGlobalFunctionOrThrow(global)(std::forward<Args>(args)...);
  }
};

}  // namespace ffijit

#endif  // FFIJIT_MODULE_H_
