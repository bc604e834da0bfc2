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

#endif  // FFIJIT_TESTS_MODULES_USER_MODULE_H_
