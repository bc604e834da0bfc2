// The test's user-defined module (a tvm::ffi::ModuleObj subclass, kind "user", one function
// "greet(x) = 100 * x"), kept apart so the tests need not see the TVM FFI C++ declarations.
#ifndef FFIJIT_TESTS_MODULES_USER_MODULE_H_
#define FFIJIT_TESTS_MODULES_USER_MODULE_H_

#include <string>
#include <utility>
#include <vector>

#include "ffijit/module.h"

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
};
// tvm::ffi::Module::LoadFromFile(path), expected to fail.
CaughtTvmError LoadFromFileErrorFromCpp(const std::string& path);
// The exported ModuleObj::GetFunction(name, query_imports) on `mod`, expected to fail.
CaughtTvmError GetFunctionErrorFromCpp(const ffijit::Module& mod, const std::string& name);
// The exported ModuleObj::ImportModule(other) on `mod`, expected to fail.
CaughtTvmError ImportModuleErrorFromCpp(const ffijit::Module& mod, const ffijit::Module& other);

#endif  // FFIJIT_TESTS_MODULES_USER_MODULE_H_
