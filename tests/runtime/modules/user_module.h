// The test's user-defined module (a tvm::ffi::ModuleObj subclass, kind "user", one function
// "greet(x) = 100 * x" with a docstring (v0.1.13) and metadata, and an InspectSource), kept apart
// so the tests need not see the TVM FFI C++ declarations; and calls of the exported C++ API.
#ifndef FFIJIT_TESTS_MODULES_USER_MODULE_H_
#define FFIJIT_TESTS_MODULES_USER_MODULE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ffijit/module.h"

inline constexpr const char* kUserGreetDoc = "Multiplies its argument by one hundred.";
inline constexpr const char* kUserGreetMetadata = "{\"type_schema\": \"int(int)\"}";

ffijit::Module MakeUserModule();
// The address of the C++ object (the vptr), which sits before the object header.
void* CppObjectOf(const ffijit::Module& mod);
// What the exported C++ tvm::ffi::Module::VisitContextSymbols reports, in order.
std::vector<std::pair<std::string, void*>> VisitContextSymbolsFromCpp();
// The exported C++ tvm::ffi::Module::LoadFromFile.
ffijit::Module LoadFromFileFromCpp(const std::string& path);

// What header-compiled code's `catch (const tvm::ffi::Error&)` saw (caught false: nothing thrown).
struct CaughtTvmError {
  bool caught = false;
  std::string kind, message;
  std::string what;  // Error::what() as header code sees it
};
// tvm::ffi::Module::LoadFromFile(path), expected to fail.
CaughtTvmError LoadFromFileErrorFromCpp(const std::string& path);
// The exported ModuleObj::GetFunction(name, query_imports) on `mod`, expected to fail.
CaughtTvmError GetFunctionErrorFromCpp(const ffijit::Module& mod, const std::string& name);
// The exported ModuleObj::ImportModule(other) on `mod`, expected to fail.
CaughtTvmError ImportModuleErrorFromCpp(const ffijit::Module& mod, const ffijit::Module& other);

// Calls virtual slot `slot` of the module's C++ object as `Cell (const String& argument)` (the
// shape of GetFunctionDoc, GetFunctionMetadata and InspectSource), straight through the vtable: the
// answer, or nullopt for None.
std::optional<std::string> CallStringSlot(const ffijit::Module& mod, int slot,
                                          const std::string& argument);

#if FFIJIT_TVM_FFI_HAS_DATACLASS_API
// The exported tvm::ffi::ReprPrint / RecursiveHash / RecursiveEq / DeepCopy.
std::string ReprPrintFromCpp(const ffijit::Any& value);
int64_t RecursiveHashFromCpp(const ffijit::Any& value);
bool RecursiveEqFromCpp(const ffijit::Any& lhs, const ffijit::Any& rhs);
ffijit::Any DeepCopyFromCpp(const ffijit::Any& value);
// tvm::ffi::RecursiveLt(lhs, rhs), expected to fail.
CaughtTvmError RecursiveLtErrorFromCpp(const ffijit::Any& lhs, const ffijit::Any& rhs);
#endif

#endif  // FFIJIT_TESTS_MODULES_USER_MODULE_H_
