// The global function registry (thread-safe): set with or without override, get, list, remove.
#ifndef FFIJIT_REGISTRY_H_
#define FFIJIT_REGISTRY_H_

#include <optional>
#include <string>
#include <vector>

#include "ffijit/container.h"
#include "ffijit/function.h"

namespace ffijit {

// Registers `func` under `name`; a RuntimeError (TVM FFI's kind) when taken and !allow_override.
inline void SetGlobalFunction(const std::string& name, const Function& func,
                              bool allow_override = false) {
  TVMFFIByteArray key{name.data(), name.size()};
  CheckCall(TVMFFIFunctionSetGlobal(&key, func.get(), allow_override ? 1 : 0));
}

// The function registered under `name`, or nullopt.
inline std::optional<Function> GetGlobalFunction(const std::string& name) {
  TVMFFIByteArray key{name.data(), name.size()};
  TVMFFIObjectHandle handle = nullptr;
  CheckCall(TVMFFIFunctionGetGlobal(&key, &handle));
  if (handle == nullptr) return std::nullopt;
  return Function::Adopt(handle);
}

// The function registered under `name`; a KeyError naming it when absent.
inline Function GetGlobalFunctionOrThrow(const std::string& name) {
  std::optional<Function> func = GetGlobalFunction(name);
  if (!func) throw Error("KeyError", "global function `" + name + "` is not registered");
  return *func;
}

// Removes `name`; a KeyError naming it when absent.
inline void RemoveGlobalFunction(const std::string& name) {
  TVMFFIByteArray key{name.data(), name.size()};
  CheckCall(FFIJITFunctionRemoveGlobal(&key));
}

// All registered names, sorted.
inline std::vector<std::string> ListGlobalFunctions() {
  TVMFFIObjectHandle handle = nullptr;
  CheckCall(FFIJITFunctionListGlobals(&handle));
  Array names(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle)));
  std::vector<std::string> result;
  result.reserve(static_cast<size_t>(names.size()));
  for (int64_t i = 0; i < names.size(); ++i) result.push_back(names[i].cast<std::string>());
  return result;
}

}  // namespace ffijit

#endif  // FFIJIT_REGISTRY_H_
