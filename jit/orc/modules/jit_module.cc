// JIT modules' public API, ffijit::JitModule (include/ffijit/jit/jit_module.h). A JIT module loads
// ELF relocatable objects and LLVM IR into a JITDylib of the process's ORC session
// (orc/llvm/session.h), runs their static initialisers, and is a library module to the runtime:
// the module object and its symbol source are module_object.cc's, the files and the globals
// module_files.cc's, the state behind the object module_state.cc's.
//
// The session's platform, LLVM's ORC runtime, gives each module its `__dso_handle`, registers
// its eh-frames and serves its thread-local variables (orc/llvm_patches/thread_locals.h does what
// JITLink 19 cannot). Initialisers and finalisers stay hand-written here, in a JITLink plugin that
// keeps the .init_array/.ctors/.fini_array/.dtors sections of every linked object alive and runs
// their entries in priority order, because the ORC runtime of LLVM 19 runs initialisers where an
// exception cannot be caught (a throwing initialiser must be an error, not std::terminate) and
// never runs .fini_array. `__cxa_atexit` resolves to an interposer recording each module's C++
// static destructors.
//
// Lifetime: a module's code stays mapped until the process exits, when its finalisers and static
// destructors run (as for a shared library, which TVM FFI never unloads either): a string, array,
// error or function made by the module's code carries a deleter in that code and may outlive
// every handle on the module, and so may a thread-exit destructor. JitModule::Unload frees the
// code earlier for a caller who knows that nothing the module made is alive.
#include "orc/modules/jit_module.h"

#include <string>
#include <vector>

#include "ffijit/error.h"
#include "ffijit/jit/jit_module.h"
#include "ffijit/registry.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "orc/llvm/session.h"
#include "orc/modules/module_state.h"
#include "registration/register_internal.h"

namespace ffijit {

// ---- The public API ----

JitModule JitModule::Create(const std::string& name) {
  return JitModule(orc::CreateModule(name));
}

JitModule JitModule::Load(const std::string& path) {
  JitModule mod = Create(path);
  mod.AddFile(path);
  if (!orc::StateOf(mod, "JitModule::Load")->DefinesTvmFfiFunction()) {
    throw ValueError(path +
                     " defines no `__tvm_ffi_<name>` function, so it is not a TVM FFI module (add "
                     "a file of helpers or natives with JitModule::AddFile instead)");
  }
  return mod;
}

JitModule JitModule::From(const Module& mod) {
  orc::StateOf(mod, "JitModule::From");
  return JitModule(mod);
}

void JitModule::AddFile(const std::string& path) const {
  orc::AddFileTo(orc::StateOf(*this, "JitModule::AddFile"), path);
}

void JitModule::AddObject(std::string_view bytes, const std::string& name) const {
  orc::StateOf(*this, "JitModule::AddObject")->AddObject(bytes, name);
}

void JitModule::AddIR(std::string_view bytes, const std::string& name) const {
  orc::StateOf(*this, "JitModule::AddIR")->AddIR(bytes, name);
}

void JitModule::AddIR(const llvm::Module& module) const {
  orc::ModuleState* state = orc::StateOf(*this, "JitModule::AddIR");
  std::string bitcode;
  llvm::raw_string_ostream stream(bitcode);
  llvm::WriteBitcodeToFile(module, stream);
  stream.flush();
  const std::string name =
      module.getModuleIdentifier().empty() ? "<llvm::Module>" : module.getModuleIdentifier();
  state->AddIR(bitcode, name);
}

void JitModule::SetLinkOrder(const std::vector<JitModule>& modules) const {
  orc::StateOf(*this, "JitModule::SetLinkOrder")->SetLinkOrder(modules);
}

void JitModule::Unload() const {
  orc::StateOf(*this, "JitModule::Unload")->Unload(1);
}

void* JitModule::Lookup(const std::string& symbol) const {
  void* address = nullptr;
  orc::SymbolInfo info;
  orc::StateOf(*this, "JitModule::Lookup")->Find(symbol, &address, &info);
  return address;
}

Function JitModule::MakeNative(const std::string& symbol, Signature sig,
                               const RegisterOptions& options) const {
  orc::ModuleState* state = orc::StateOf(*this, "JitModule::MakeNative");
  void* address = nullptr;
  orc::SymbolInfo info;
  if (!state->Find(symbol, &address, &info)) {
    throw KeyError("JIT module " + state->name() + " defines no symbol " + orc::Quote(symbol));
  }
  if (!info.is_code) {
    throw TypeError("symbol " + orc::Quote(symbol) + " of JIT module " + state->name() +
                    " is data, not a function");
  }
  Function func = MakeFunctionOwnedBy(symbol, address, std::move(sig), options, get());
  state->RecordNative(address, symbol);
  return func;
}

Function JitModule::MakeNative(const std::string& symbol, std::string_view metadata,
                               MetadataFormat format, const RegisterOptions& options) const {
  return MakeNative(symbol, ParseMetadata(metadata, format), options);
}

Function JitModule::RegisterNative(const std::string& symbol, std::string_view metadata,
                                   MetadataFormat format, const RegisterOptions& options) const {
  Function func = MakeNative(symbol, metadata, format, options);
  SetGlobalFunction(options.global_name.empty() ? symbol : options.global_name, func,
                    options.allow_override);
  return func;
}

}  // namespace ffijit
