// JIT modules: loads ELF relocatable objects and LLVM IR into JITDylibs of the process's ORC
// session (orc/llvm/session.h), runs their static initialisers, and exposes them to the runtime
// as library modules (FFIJITLibraryModuleCreate) and to users as ffijit::JitModule.
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

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "ffijit/c_ext.h"
#include "ffijit/error.h"
#include "ffijit/jit_module.h"
#include "ffijit/registry.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "orc/llvm/session.h"
#include "orc/modules/module_state.h"
#include "registration/register_internal.h"
#include "settings/file_bytes.h"

namespace ffijit {
namespace orc {
namespace {

std::atomic<bool> g_run_static_initializers{true};

std::string ReadFileOrThrow(const std::string& path) {
  std::string bytes, why;
  if (!ReadFileBytes(path, &bytes, &why))
    throw ValueError("cannot read " + Quote(path) + ": " + why);
  return bytes;
}

std::string Extension(const std::string& path) {
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  return path.substr(dot + 1);
}

// ---- The symbol source the runtime's library module calls ----

int FindSymbol(void* self, const char* name, void** address, size_t* size, int* is_code) {
  return GuardCBoundary([&] {
    SymbolInfo info;
    *address = nullptr;
    *size = 0;
    *is_code = -1;
    if (static_cast<ModuleState*>(self)->Find(name, address, &info)) {
      *size = static_cast<size_t>(info.size);
      *is_code = info.is_code ? 1 : 0;
    }
  });
}

// The module object is gone. Its code stays (see the file comment) unless it was unloaded.
void ReleaseState(void* self) {
  auto* state = static_cast<ModuleState*>(self);
  if (state->unloaded()) {
    delete state;
    return;
  }
  Registry& registry = Registry::Get();
  std::lock_guard lock(registry.mutex);
  if (state->object() != nullptr) registry.by_object.erase(state->object());
  state->set_object(nullptr);
}

ModuleState* StateOf(const Module& mod, const char* what) {
  if (!mod.defined()) throw TypeError(std::string(what) + ": the module is None");
  Registry& registry = Registry::Get();
  std::lock_guard lock(registry.mutex);
  auto it = registry.by_object.find(mod.get());
  if (it == registry.by_object.end()) {
    throw TypeError(std::string(what) +
                    ": not a JIT module (made by JitModule::Create or loaded from a .o, .bc or "
                    ".ll file)");
  }
  return it->second;
}

Module CreateModule(std::string name) {
  ModuleJit& jit = ModuleJit::Get();
  const uint64_t id = jit.NextId();
  if (name.empty()) name = "jit-module-" + std::to_string(id);
  // A platform dylib: the ORC runtime defines its own __dso_handle in it, which C++ objects pass
  // to __cxa_atexit and __cxa_thread_atexit.
  std::string why;
  llvm::orc::JITDylib* dylib =
      jit.jit_session().CreatePlatformDylib("ffijit.module." + std::to_string(id), &why);
  if (dylib == nullptr) throw RuntimeError("cannot create JIT module " + name + ": " + why);
  dylib->setLinkOrder(llvm::orc::makeJITDylibSearchOrder(jit.BaseLinks()));
  ReportedErrors capture;
  auto dso = jit.session().lookup(
      llvm::orc::makeJITDylibSearchOrder(dylib, llvm::orc::JITDylibLookupFlags::MatchAllSymbols),
      jit.session().intern("__dso_handle"));
  if (!dso) {
    why = capture.Or(ErrorText(dso.takeError()));
    jit.jit_session().RemoveDylib(*dylib);
    throw RuntimeError("cannot create JIT module " + name + ": " + why);
  }
  auto* state = new ModuleState(name, dylib, dso->getAddress().toPtr<void*>());
  {
    Registry& registry = Registry::Get();
    std::lock_guard lock(registry.mutex);
    registry.by_dylib[dylib] = state;
    registry.by_dso[state->dso_handle()] = state;
    registry.loaded.push_back(state);
  }
  FFIJITSymbolSource source{state, &FindSymbol, &ReleaseState, name.c_str()};
  TVMFFIObjectHandle handle = nullptr;
  CheckCall(FFIJITLibraryModuleCreate(&source, &handle));  // releases the state on failure
  auto* object = static_cast<TVMFFIObject*>(handle);
  state->set_object(object);
  {
    Registry& registry = Registry::Get();
    std::lock_guard lock(registry.mutex);
    registry.by_object[object] = state;
  }
  return Module(ObjectPtr<>::Adopt(object));
}

// The files a JIT module loads, by extension: the one list behind AddFile and the
// `ffi.Module.load_from_file.<extension>` loaders registered below.
struct FileKind {
  const char* extension;
  bool is_object;  // else LLVM IR, bitcode or text
};
constexpr FileKind kFileKinds[] = {{"o", true}, {"bc", false}, {"ll", false}};

void AddFileTo(ModuleState* state, const std::string& path) {
  const std::string extension = Extension(path);
  for (const FileKind& kind : kFileKinds) {
    if (extension != kind.extension) continue;
    const std::string bytes = ReadFileOrThrow(path);
    if (kind.is_object) {
      state->AddObject(bytes, path);
    } else {
      state->AddIR(bytes, path);
    }
    return;
  }
  throw ValueError("cannot add " + Quote(path) +
                   " to a JIT module: the extension must be .o, .bc or .ll");
}

// An empty name is "auto": the loader's global takes the format as an optional string.
MetadataFormat FormatFromName(const std::string& name) {
  if (name.empty()) return MetadataFormat::kAuto;
  if (auto format = MetadataFormatFromName(name)) return *format;
  throw ValueError("unknown metadata format " + Quote(name) +
                   " (expected \"auto\", \"json\", \"raw\", \"sip\" or \"\")");
}

bool RegisterGlobals() {
  auto load = Function::FromTyped(
      [](std::string path, std::string) -> Module { return JitModule::Load(path); },
      "ffi.Module.load_from_file.o");
  for (const FileKind& kind : kFileKinds) {
    SetGlobalFunction(std::string("ffi.Module.load_from_file.") + kind.extension, load, true);
  }
  SetGlobalFunction("ffijit.JitModuleCreate", Function::FromTyped([](std::string name) -> Module {
                      return JitModule::Create(name);
                    }),
                    true);
  SetGlobalFunction(
      "ffijit.JitModuleAddFile",
      Function::FromTyped([](Module mod, std::string path) { JitModule::From(mod).AddFile(path); }),
      true);
  // The caller's handle and this function's argument.
  SetGlobalFunction("ffijit.JitModuleUnload", Function::FromTyped([](Module mod) {
                      StateOf(mod, "ffijit.JitModuleUnload")->Unload(2);
                    }),
                    true);
  SetGlobalFunction("ffijit.JitModuleSetLinkOrder",
                    Function::FromTyped([](Module mod, Array modules) {
                      std::vector<JitModule> order;
                      for (int64_t i = 0; i < modules.size(); ++i) {
                        order.push_back(JitModule::From(modules[i].cast<Module>()));
                      }
                      JitModule::From(mod).SetLinkOrder(order);
                    }),
                    true);
  SetGlobalFunction(
      "ffijit.JitModuleMakeNative",
      Function::FromTyped(
          [](Module mod, std::string symbol, std::string metadata, std::string format) -> Function {
            return JitModule::From(mod).MakeNative(symbol, metadata, FormatFromName(format));
          }),
      true);
  return true;
}

__attribute__((constructor)) void RegisterGlobalsAtLoad() {
  RegisterAtLoad("the JIT module loaders", RegisterGlobals);
}

}  // namespace

void SetRunStaticInitializers(bool run) {
  g_run_static_initializers.store(run, std::memory_order_relaxed);
}

bool RunStaticInitializers() {
  return g_run_static_initializers.load(std::memory_order_relaxed);
}

bool FindNativeIR(TVMFFIObject* owner, void* target, std::string* bitcode, std::string* function) {
  if (owner == nullptr) return false;
  ModuleState* state = nullptr;
  {
    Registry& registry = Registry::Get();
    std::lock_guard lock(registry.mutex);
    auto it = registry.by_object.find(owner);
    if (it == registry.by_object.end()) return false;
    state = it->second;
  }
  return state->NativeIR(target, bitcode, function);
}

std::vector<llvm::orc::JITDylib*> ModuleLinkOrder(TVMFFIObject* owner) {
  ModuleState* state = nullptr;
  {
    Registry& registry = Registry::Get();
    std::lock_guard lock(registry.mutex);
    auto it = registry.by_object.find(owner);
    if (it != registry.by_object.end()) state = it->second;
  }
  return state == nullptr ? std::vector<llvm::orc::JITDylib*>{} : state->LinkOrder();
}

}  // namespace orc

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
