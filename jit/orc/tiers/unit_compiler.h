// The unit compiler: compiles batches of generated functions into loaded code units, in the
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

#include "orc/codegen/compile_request.h"
#include "orc/llvm/session.h"
#include "orc/tiers/object_store.h"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace ffijit::orc {

struct CodeUnit;  // one loaded object; opaque outside the unit compiler

struct CompiledSymbol {
  void* address = nullptr;   // null on failure
  CodeUnit* unit = nullptr;  // holds one reference when address is set
  bool from_disk = false;
  std::string failure;  // why address is null
};

struct UnitCounters {
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
  // Sets up the compiler in the process's session; an error message on failure.
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
  // builds the static objects code generation makes on first use (see JitEngineImpl::Compiler).
  void WarmUp(CodeGenLevel level);

  void Retain(CodeUnit* unit);
  // Drops one reference; the last one removes the unit's code.
  void Release(CodeUnit* unit);

  UnitCounters Counters() const;
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
  uint64_t id_ = 0;  // names this compiler's dylibs apart from other compilers'
  std::unique_ptr<llvm::TargetMachine> target_machine_;             // kFast
  std::unique_ptr<llvm::TargetMachine> optimizing_target_machine_;  // kOptimized
  std::unique_ptr<llvm::TargetMachine> light_target_machine_;       // kLight
  llvm::orc::JITDylib* runtime_dylib_ = nullptr;
  std::unique_ptr<ObjectStore> store_;
  std::mutex compile_mutex_;        // one compile at a time: a TargetMachine is not reentrant
  mutable std::mutex units_mutex_;  // unit refcounts and counters
  UnitCounters counters_;
  std::unordered_set<CodeUnit*> live_units_;
  uint64_t next_unit_id_ = 0;
};

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_TIERS_UNIT_COMPILER_H_
