// JIT modules: ELF relocatable objects (.o) and LLVM IR (.bc bitcode, .ll text, an in-memory
// llvm::Module) linked in this process by ffijit's ORC JIT, seen as ordinary modules.
//
// A JitModule is an ffijit::Module (kind "library") whose `__tvm_ffi_<name>` symbols are its
// functions, exactly as for a shared library: GetFunction, ImplementsFunction, imports,
// `__tvm_ffi__library_ctx` and TVMFFIEnvModLookupFromImports all work the same. Each module links
// into its own symbol namespace; objects added to one module see each other's symbols; a link
// order makes other modules' exported symbols visible to it; whatever is left resolves to the
// running process (ffijit's C ABI, libc, libstdc++). Static initialisers run when their object
// is added. Thread-local variables work in objects built -fPIC (the general- and local-dynamic
// models; -fpie's exec models are refused with the relocation and the fix).
//
// A module's code stays mapped until the process exits, when its finalisers and C++ static
// destructors run, as a shared library's do: strings, arrays, maps, errors and functions its code
// made carry deleters in that code, and may outlive every handle on the module. Unload() frees
// the code earlier, for a caller who knows nothing the module made is still alive.
//
// Module::Load("kernel.o" | "kernel.bc" | "kernel.ll") loads one file through the loaders the jit
// library registers (`ffi.Module.load_from_file.o`/`.bc`/`.ll`). The C API is a set of globals:
// `ffijit.JitModuleCreate(name)`, `ffijit.JitModuleAddFile(mod, path)`,
// `ffijit.JitModuleSetLinkOrder(mod, [modules])`, `ffijit.JitModuleUnload(mod)`,
// `ffijit.JitModuleMakeNative(mod, ir_function, metadata, format)` (format "json", "raw", "sip" or
// "" to detect).
//
// Every failure is an ffijit::Error naming the file and, where there is one, the symbol:
// ValueError for a file that cannot be read or is not a loadable object/IR for this machine,
// RuntimeError for link failures (undefined or duplicate symbols) and for a static initialiser
// that throws, TypeError for a module that is not a JIT module. The module stays usable after a
// failed add (the failed object is removed again). Builds without LLVM throw RuntimeError.
#ifndef FFIJIT_JIT_JIT_MODULE_H_
#define FFIJIT_JIT_JIT_MODULE_H_

#include <string>
#include <string_view>
#include <vector>

#include "ffijit/export.h"
#include "ffijit/function.h"
#include "ffijit/jit/register.h"
#include "ffijit/module.h"
#include "ffijit/reflect/metadata.h"
#include "ffijit/reflect/signature.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace ffijit {

class JitModule : public Module {
 public:
  JitModule() noexcept = default;

  // A new empty module; `name` appears in messages ("" gives "jit-module-<n>").
  FFIJIT_JIT_API static JitModule Create(const std::string& name = "");
  // A new module holding the one file `path` (.o, .bc or .ll), which must export at least one
  // `__tvm_ffi_<name>` function (a ValueError otherwise).
  FFIJIT_JIT_API static JitModule Load(const std::string& path);
  // `mod` as a JitModule; a TypeError when it was not made by the JIT (a shared library, say).
  FFIJIT_JIT_API static JitModule From(const Module& mod);

  // Adds a file by its extension: ".o" an ELF relocatable object, ".bc" LLVM bitcode, ".ll"
  // LLVM IR text. IR is verified, optimised (the O2 pipeline) and compiled for this machine.
  FFIJIT_JIT_API void AddFile(const std::string& path) const;
  // Adds an object file's bytes; `name` stands for the file in messages.
  FFIJIT_JIT_API void AddObject(std::string_view bytes, const std::string& name) const;
  // Adds LLVM IR as bitcode or as text (told apart by the bitcode magic).
  FFIJIT_JIT_API void AddIR(std::string_view bytes, const std::string& name) const;
  // Adds a copy of an in-memory module (which the caller keeps).
  FFIJIT_JIT_API void AddIR(const llvm::Module& module) const;

  // Symbols this module does not define resolve from `modules` (their exported symbols), in
  // order, before the process. Replaces the previous link order; applies to objects added
  // afterwards. A RuntimeError when it would make a cycle.
  FFIJIT_JIT_API void SetLinkOrder(const std::vector<JitModule>& modules) const;

  // Runs the calling thread's thread_local destructors of the module, its finalisers and static
  // destructors, and frees its code now; afterwards every lookup is a RuntimeError. The caller
  // promises that no value the module's code made is alive (a string, container or error it
  // returned: their deleters are its code). A RuntimeError, and nothing happens, when another
  // handle or one of its functions still holds the module, or while another thread holds
  // thread_local objects of the module with destructors (they run when that thread exits).
  FFIJIT_JIT_API void Unload() const;

  // The address of the global symbol `symbol` defined in this module, or nullptr.
  FFIJIT_JIT_API void* Lookup(const std::string& symbol) const;

  // A packed Function calling the IR or object function `symbol` of this module per `sig` (as
  // MakeFunction in register.h does for an address); the function keeps the module alive, and
  // the module keeps the function's IR. A KeyError when the module does not define `symbol`.
  FFIJIT_JIT_API Function MakeNative(const std::string& symbol, Signature sig,
                                     const RegisterOptions& options = {}) const;
  FFIJIT_JIT_API Function MakeNative(const std::string& symbol, std::string_view metadata,
                                     MetadataFormat format,
                                     const RegisterOptions& options = {}) const;
  // MakeNative, then registers the function globally (under options.global_name, or `symbol`).
  FFIJIT_JIT_API Function RegisterNative(const std::string& symbol, std::string_view metadata,
                                         MetadataFormat format,
                                         const RegisterOptions& options = {}) const;

 private:
  explicit JitModule(Module mod) noexcept : Module(std::move(mod)) {}
};

}  // namespace ffijit

#endif  // FFIJIT_JIT_JIT_MODULE_H_
