// The ORC engine: compiles batches of generated functions into loaded code units, in the
// process's one ORC session (orc/llvm/session.h).
//
// A code unit is one object file linked into its own JITDylib, so units never clash on symbol
// names and each can be dropped on its own (removing the JITDylib frees its memory). Units are
// refcounted: every symbol handed out holds one reference. Memory comes from JITLink's in-process
// manager, which maps pages writable, copies, then flips them to read+execute: never W+X.
#ifndef FFIJIT_JIT_ORC_TIERS_UNIT_COMPILER_H_
#define FFIJIT_JIT_ORC_TIERS_UNIT_COMPILER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "orc/llvm/session.h"
#include "orc/tiers/object_store.h"

namespace llvm {
class Module;
namespace orc {
class JITDylib;
}  // namespace orc
class TargetMachine;
}  // namespace llvm

namespace ffijit::orc {

// Emits one function named `symbol` into `module`. Returns "" on success, otherwise the reason the
// function cannot be generated (the module must then hold no trace of it).
using EmitFunction = std::function<std::string(llvm::Module& module, const std::string& symbol)>;

// Checks freshly compiled code before it is handed out: gets the addresses of the request's
// companion symbols; returns "" to accept the function, otherwise why it is rejected.
using AcceptFunction = std::function<std::string(const std::vector<void*>& companions)>;

struct CompileRequest {
  CompileRequest() = default;
  CompileRequest(std::string key, EmitFunction emit_function)
      : cache_key(std::move(key)), emit(std::move(emit_function)) {}

  // Stable content key for the persistent cache; "" when the code must not be cached (it embeds
  // process-specific addresses).
  std::string cache_key;
  EmitFunction emit;
  // Optional. Symbols `emit` adds beside the function, named `symbol + suffix` (e.g. an ABI
  // probe), and the check that runs them once the module is loaded, before the function is handed
  // out or saved to the persistent cache. A rejected function fails with accept's reason. Not run
  // for persistent-cache hits: only accepted code is ever saved.
  std::vector<std::string> companion_suffixes;
  AcceptFunction accept;
  // Optional. Sees the module after the IR pipeline, before code generation (e.g. whether a
  // function was inlined). Not run for persistent-cache hits.
  std::function<void(const llvm::Module& module)> inspect;
  // Optional. Dylibs the function's unresolved symbols are looked up in, after the runtime's and
  // before the process's (a JIT module whose native was inlined). Such code is never cached.
  std::vector<llvm::orc::JITDylib*> link_with;
};

struct CodeUnit;  // one loaded object; opaque outside the engine

struct CompiledSymbol {
  void* address = nullptr;   // null on failure
  CodeUnit* unit = nullptr;  // holds one reference when address is set
  bool from_disk = false;
  std::string failure;  // why address is null
};

struct EngineCounters {
  int64_t live_units = 0;
  int64_t units_created = 0;
  int64_t units_removed = 0;
  int64_t modules_compiled = 0;
  int64_t functions_compiled = 0;
  int64_t disk_hits = 0;
  int64_t object_bytes_live = 0;  // size of the live object files (an estimate of code size)
  int64_t cache_errors = 0;       // persistent cache entries found damaged, or not saved
};

class UnitCompiler {
 public:
  // Runtime functions generated code may call, bound as absolute symbols.
  using SymbolTable = std::vector<std::pair<std::string, void*>>;

  // Sets up the engine in the process's session; an error message on failure.
  static std::unique_ptr<UnitCompiler> Create(const SymbolTable& runtime_symbols,
                                              std::string cache_dir, std::string* error);
  ~UnitCompiler();
  UnitCompiler(const UnitCompiler&) = delete;
  UnitCompiler& operator=(const UnitCompiler&) = delete;

  // Compiles (or loads from the persistent cache) every request; requests compiled now share one
  // module (and so one code unit). Thread-safe; blocks the caller for the duration of the compile.
  std::vector<CompiledSymbol> Compile(std::vector<CompileRequest> requests,
                                      CodeGenLevel level = CodeGenLevel::kFast);

  // Compiles and frees a small function with branches, loads and calls at `level`, so that LLVM
  // builds the static objects code generation makes on first use (see JitEngineImpl::Engine).
  void WarmUp(CodeGenLevel level);

  void Retain(CodeUnit* unit);
  // Drops one reference; the last one removes the unit's code.
  void Release(CodeUnit* unit);

  EngineCounters Counters() const;
  // LLVM version, target triple, host CPU and its features: what compiled code depends on.
  const std::string& HostKey() const;

 private:
  UnitCompiler() = default;
  // Links one object into a fresh unit and resolves `symbols` in it.
  bool LoadObject(const std::string& object, const std::vector<std::string>& symbols,
                  const std::vector<llvm::orc::JITDylib*>& link_with, CodeUnit** unit,
                  std::vector<void*>* addresses, std::string* error);
  std::vector<CompiledSymbol> CompileModule(std::vector<CompileRequest>& requests,
                                            CodeGenLevel level);
  // Counts a persistent cache problem and reports it on the JIT log.
  void ReportCacheError(const std::string& what);

  Session* session_ = nullptr;
  uint64_t id_ = 0;  // names this engine's dylibs apart from other engines'
  std::unique_ptr<llvm::TargetMachine> target_machine_;             // kFast
  std::unique_ptr<llvm::TargetMachine> optimizing_target_machine_;  // kOptimized
  std::unique_ptr<llvm::TargetMachine> light_target_machine_;       // kLight
  llvm::orc::JITDylib* runtime_dylib_ = nullptr;
  std::unique_ptr<ObjectStore> store_;
  std::mutex compile_mutex_;        // one compile at a time: a TargetMachine is not reentrant
  mutable std::mutex units_mutex_;  // unit refcounts and counters
  EngineCounters counters_;
  std::unordered_set<CodeUnit*> live_units_;
  uint64_t next_unit_id_ = 0;
};

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_TIERS_UNIT_COMPILER_H_
