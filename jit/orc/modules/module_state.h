// A JIT module's state behind its library-module object (ModuleState), the registry that finds it
// by dylib, __dso_handle or object, and what JIT modules add to the process's ORC session
// (ModuleJit). The lifetime policy and why initialisers are run here: modules/jit_module.cc.
#ifndef FFIJIT_JIT_ORC_MODULES_MODULE_STATE_H_
#define FFIJIT_JIT_ORC_MODULES_MODULE_STATE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ffijit/jit/jit_module.h"
#include "ffijit/object.h"
#include "orc/llvm/session.h"
#include "orc/llvm_patches/link_records.h"

namespace llvm {
class DataLayout;
class TargetMachine;
class Triple;
namespace orc {
class ExecutionSession;
class JITDylib;
class ObjectLinkingLayer;
}  // namespace orc
}  // namespace llvm

namespace ffijit::orc {

class ModuleState;

// JITDylib -> module, __dso_handle -> module, module object -> module.
class Registry {
 public:
  static Registry& Get() {
    static Registry* registry = new Registry();  // never destroyed: modules may outlive statics
    return *registry;
  }
  std::mutex mutex;
  std::unordered_map<const llvm::orc::JITDylib*, ModuleState*> by_dylib;
  std::unordered_map<const void*, ModuleState*> by_dso;
  std::unordered_map<const TVMFFIObject*, ModuleState*> by_object;
  std::vector<ModuleState*> loaded;  // every module whose code is mapped, oldest first
};

class ModuleState final : public LinkRecordSink {
 public:
  ModuleState(std::string name, llvm::orc::JITDylib* dylib, void* dso_handle)
      : name_(std::move(name)), dylib_(dylib), dso_handle_(dso_handle) {}

  const std::string& name() const { return name_; }
  llvm::orc::JITDylib* dylib() const { return dylib_; }
  const void* dso_handle() const { return dso_handle_; }
  void set_object(TVMFFIObject* object) { object_ = object; }
  TVMFFIObject* object() const { return object_; }

  void Commit(LinkRecords records) override {
    std::lock_guard lock(records_mutex_);
    pending_.push_back(std::move(records));
  }
  // Called by the __cxa_atexit interposer while an initialiser of this module runs.
  void AddAtExit(void (*function)(void*), void* arg) {
    std::lock_guard lock(records_mutex_);
    at_exit_.emplace_back(function, arg);
  }

  void AddObject(std::string_view bytes, const std::string& file);
  void AddIR(std::string_view bytes, const std::string& file);
  void SetLinkOrder(const std::vector<JitModule>& modules);
  // Finds a global symbol this module defines; false when it does not.
  bool Find(const std::string& symbol, void** address, SymbolInfo* info);
  bool DefinesTvmFfiFunction();
  void RecordNative(void* address, const std::string& symbol);
  bool NativeIR(void* address, std::string* bitcode, std::string* function);
  // Its dylib, then those of its link order: where its code's references resolve.
  std::vector<llvm::orc::JITDylib*> LinkOrder();
  // Runs the finalisers and the C++ static destructors, once.
  void Finalize();
  // Runs the calling thread's thread_local destructors of the module, finalizes and frees the code
  // now (JitModule::Unload); `handles` references are the caller's. Refused while another thread
  // has thread_local destructors of the module pending.
  void Unload(uint64_t handles);
  bool unloaded() {
    std::lock_guard lock(mutex_);
    return unloaded_;
  }

 private:
  std::vector<LinkRecords> TakePending() {
    std::lock_guard lock(records_mutex_);
    return std::exchange(pending_, {});
  }
  size_t AtExitCount() {
    std::lock_guard lock(records_mutex_);
    return at_exit_.size();
  }
  // Runs (newest first) and forgets the C++ static destructors registered after the first `keep`.
  void RunAtExitFrom(size_t keep);
  void RebindContext();

  std::string name_;
  llvm::orc::JITDylib* dylib_;
  TVMFFIObject* object_ = nullptr;  // the library module (no reference: it owns this state)
  void* dso_handle_;                // the module's __dso_handle
  // Held by every operation on the dylib, so a lookup never sees an object whose initialisers
  // have not run; recursive because an initialiser may look up its own module.
  std::recursive_mutex mutex_;
  std::mutex records_mutex_;  // what the plugin and the interposer write
  std::vector<LinkRecords> pending_;
  std::vector<std::pair<void (*)(void*), void*>> at_exit_;
  std::vector<InitFunction> finis_;  // in registration order; run backwards
  std::unordered_map<std::string, SymbolInfo> symbols_;
  std::vector<ObjectPtr<>> link_order_;  // the modules this one links against, kept alive
  struct IrUnit {
    std::string name;
    std::string bitcode;  // optimised
    std::unordered_set<std::string> functions;
  };
  std::vector<IrUnit> ir_units_;
  std::unordered_map<void*, std::string> natives_;  // MakeNative address -> symbol
  std::vector<const void*> eh_frames_;  // of every linked object (LinkRecords::eh_frames)
  bool finalized_ = false;
  bool unloaded_ = false;
};

// What JIT modules add to the process's ORC session: the link-records and thread-local plugins,
// the `__cxa_atexit` and `__cxa_thread_atexit` interposers, a target machine for their IR, the
// finalisers run at exit.
class ModuleJit {
 public:
  // Set up on first use; a RuntimeError when LLVM cannot be.
  static ModuleJit& Get();

  Session& jit_session() { return *session_; }
  llvm::orc::ExecutionSession& session();
  llvm::orc::ObjectLinkingLayer& layer();
  // Where a module's own code looks for what it does not define, after the modules it links
  // against: the interposer, the ORC runtime, the process.
  std::vector<llvm::orc::JITDylib*> BaseLinks();
  const llvm::Triple& triple() const;
  const llvm::DataLayout& data_layout() const;
  std::mutex& compile_mutex() { return compile_mutex_; }
  llvm::TargetMachine& target_machine() { return *target_machine_; }
  uint64_t NextId() { return next_id_.fetch_add(1); }

 private:
  ModuleJit() = default;
  std::string Init();

  Session* session_ = nullptr;
  llvm::orc::JITDylib* support_ = nullptr;
  std::unique_ptr<llvm::TargetMachine> target_machine_;
  std::mutex compile_mutex_;  // a TargetMachine compiles one module at a time
  std::atomic<uint64_t> next_id_{0};
};

// Whether objects' static initialisers run (the default; see jit_module.h).
bool RunStaticInitializers();

// A new, empty JIT module named `name` ("" for a generated name), as a library-module object
// (module_object.cc).
Module CreateModule(std::string name);
// The state behind `mod`; a TypeError naming `what` when `mod` is not a JIT module.
ModuleState* StateOf(const Module& mod, const char* what);
// Adds the file at `path` to `state` by its extension: .o an object, .bc or .ll LLVM IR
// (module_files.cc).
void AddFileTo(ModuleState* state, const std::string& path);

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_MODULES_MODULE_STATE_H_
