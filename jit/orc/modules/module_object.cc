// A JIT module as the runtime's library-module object: creating one (its platform dylib, its
// `__dso_handle`, its registry entries), the symbol source through which the runtime's library
// module (FFIJITLibraryModuleCreate) finds its symbols, and a module's state found from its
// object: for the public API (StateOf) and for the tiers (FindNativeIR, ModuleLinkOrder). The
// lifetime policy: modules/jit_module.cc.
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "ffijit/c_ext.h"
#include "ffijit/error.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "orc/llvm/session.h"
#include "orc/modules/jit_module.h"
#include "orc/modules/module_state.h"

namespace ffijit::orc {
namespace {

std::atomic<bool> g_run_static_initializers{true};

// The symbol source the runtime's library module calls.
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

// The module object is gone. Its code stays (the lifetime policy: jit_module.cc) unless it was
// unloaded.
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

}  // namespace

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

}  // namespace ffijit::orc
