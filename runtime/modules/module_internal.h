// What the three module files share: module.cc (the module object: lookups through imports, the
// ffi.Module* globals), library_module.cc (loading library modules and finding their symbols) and
// module_obj.cc (ModuleObj's exported members, imports included).
#ifndef FFIJIT_RUNTIME_MODULES_MODULE_INTERNAL_H_
#define FFIJIT_RUNTIME_MODULES_MODULE_INTERNAL_H_

#include <string>
#include <utility>
#include <vector>

#include "../cxx_abi/module_obj.h"
#include "ffijit/c_api.h"
#include "ffijit/object.h"

namespace ffijit::internal {

// The variable a library module exports for its own module pointer (the library ctx).
inline constexpr const char* kLibraryCtxSymbol = "__tvm_ffi__library_ctx";

// Standard containers hold ffijit references, never the tvm::ffi classes: their instantiations
// would be exported under names that header-compiled user code instantiates too.
using ModuleList = std::vector<ObjectPtr<>>;

inline tvm::ffi::ModuleObj* AsModuleObj(const ObjectPtr<>& mod) {
  return tvm::ffi::ModuleObj::FromHandle(mod.get());
}

inline ObjectPtr<> ToModulePtr(tvm::ffi::Module mod) {
  return ObjectPtr<>::Adopt(mod.release());
}

// A borrowed Any cell holding `obj`.
inline TVMFFIAny ObjectView(TVMFFIObject* obj) {
  TVMFFIAny view{};
  view.type_index = obj->type_index;
  view.v_obj = obj;
  return view;
}

// New immutable containers (the imports Array and the lookup-cache Map are replaced, never
// edited).
tvm::ffi::ObjectRef NewArray(const std::vector<TVMFFIAny>& items);
tvm::ffi::ObjectRef NewMap(const std::vector<TVMFFIAny>& keys,
                           const std::vector<TVMFFIAny>& values);

// The modules `mod` imports, each with its own reference (module_obj.cc).
ModuleList ImportsOf(tvm::ffi::ModuleObj* mod);

// The registered context symbols, in registration order (library_module.cc).
std::vector<std::pair<std::string, void*>> ContextSymbolsSnapshot();

// Loads a module file through the loader registered for its extension (module.cc).
tvm::ffi::Module LoadModuleFromFile(const std::string& path);
// Loads a shared library as a library module (library_module.cc).
tvm::ffi::Module LoadSharedLibrary(const std::string& path);
// The system library seen under `prefix`, one module per prefix (library_module.cc).
tvm::ffi::Module SystemLib(const std::string& prefix);

}  // namespace ffijit::internal

#endif  // FFIJIT_RUNTIME_MODULES_MODULE_INTERNAL_H_
