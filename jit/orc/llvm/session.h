// The one ORC session of the process: an ExecutionSession and ObjectLinkingLayer (LLJIT's), with
// LLVM's ORC runtime as its platform, shared by the thunk compiler, callbacks, hot thunks and JIT
// modules, each of which links into JITDylibs of its own. Also the one home of what every user of
// LLVM here needs: target set-up and target machines, the O2 pipeline, LLVM error text and where
// LLVM's diagnostics go.
//
// Error rule of the JIT layer (docs/architecture/08-orc.md): code that talks to LLVM turns every
// llvm::Error into text here (ErrorText) at the point it happens; the layer's internal functions
// return that text ("" or a bool + reason) to the tiers, which fall back to the interpreter;
// only the user-facing JIT module API throws ffijit errors.
#ifndef FFIJIT_JIT_ORC_LLVM_SESSION_H_
#define FFIJIT_JIT_ORC_LLVM_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ffijit/error.h"

namespace llvm {
class DataLayout;
class Error;
class LLVMContext;
class Module;
class TargetMachine;
class Triple;
namespace orc {
class ExecutionSession;
class JITDylib;
class LLJIT;
class ObjectLinkingLayer;
}  // namespace orc
}  // namespace llvm

namespace ffijit::orc {

// How a module is compiled. kFast: the cold tier's -O0 with FastISel and the fast register
// allocator (thunks are straight-line code; compile latency matters most). kOptimized: O2's
// codegen level (the hot tier and JIT modules' IR). kLight: a few function passes (inlining of
// always-inline functions, SROA, early CSE, instcombine, CFG simplification, and SROA, instcombine
// and CFG simplification again) and O1's code
// generation: straight-line code about as good as O2 makes it, at about two thirds of its compile
// time (generated Python entries).
enum class CodeGenLevel : uint8_t { kFast, kOptimized, kLight };

class Session {
 public:
  // The process's session, built on first use and never destroyed (JIT code may run, and
  // thread-exit destructors of modules may fire, until the process ends). Null with the reason
  // when LLVM cannot be set up for this machine.
  static Session* Get(std::string* why);

  llvm::orc::LLJIT& jit() { return *jit_; }
  llvm::orc::ExecutionSession& session();
  llvm::orc::ObjectLinkingLayer& linker() { return *linker_; }
  // Links code generated here (thunks, callbacks), which needs none of the ORC platform's
  // services (no unwind tables, thread-locals or initialisers), into a bare dylib: the platform's
  // passes run on every graph of linker() and, in LLVM 22, read the header of the graph's
  // JITDylib, which only a platform dylib has (a bare one made the link fail at random).
  llvm::orc::ObjectLinkingLayer& code_linker() { return *code_linker_; }
  // Resolves the process's own symbols (dlsym of the running program).
  llvm::orc::JITDylib& process_symbols();
  const llvm::Triple& triple() const;
  const llvm::DataLayout& data_layout() const;
  // LLVM version, target triple, host CPU and its features: what compiled code depends on.
  const std::string& host_key() const { return host_key_; }

  // A target machine for `level`. A TargetMachine compiles one module at a time, so each
  // compiling component owns its own; null with the reason on failure.
  std::unique_ptr<llvm::TargetMachine> CreateTargetMachine(CodeGenLevel level,
                                                           std::string* why) const;

  // A JITDylib the ORC runtime knows (its own __dso_handle, thread-local variables, eh-frames):
  // for code compiled elsewhere (JIT modules). Null with the reason on failure.
  llvm::orc::JITDylib* CreatePlatformDylib(const std::string& name, std::string* why);
  // A JITDylib with nothing in it: for code generated here (thunks, callbacks).
  llvm::orc::JITDylib& CreateBareDylib(const std::string& name);
  // Frees a JITDylib's code and memory; "" or why it could not.
  std::string RemoveDylib(llvm::orc::JITDylib& dylib);

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

 private:
  Session() = default;
  std::string Init();

  std::unique_ptr<llvm::orc::LLJIT> jit_;
  llvm::orc::ObjectLinkingLayer* linker_ = nullptr;
  std::unique_ptr<llvm::orc::ObjectLinkingLayer> code_linker_;  // after jit_: goes first
  std::string host_key_;
};

// One line for an LLVM error: undefined or duplicate symbols by name, else LLVM's message.
std::string ErrorText(llvm::Error error);

// LLVM's texts and the names read from a loaded file, as the module loaders' errors quote them:
// at most kLoaderTextLimit bytes (ffijit::Excerpt), names in backquotes.
inline constexpr size_t kLoaderTextLimit = 600;
inline std::string LoaderExcerpt(std::string_view text) {
  return Excerpt(text, kLoaderTextLimit);
}
inline std::string Quote(std::string_view name) {
  return "`" + LoaderExcerpt(name) + "`";
}

// While one lives on a thread, the errors the session reports on the side (ORC hands a failed
// link's caller only "Failed to materialize symbols"; links run on the thread that looks the
// symbols up) are collected here as well as logged.
class ReportedErrors {
 public:
  ReportedErrors();
  ~ReportedErrors();
  ReportedErrors(const ReportedErrors&) = delete;
  ReportedErrors& operator=(const ReportedErrors&) = delete;
  // The reported causes joined, else `fallback`.
  std::string Or(std::string fallback) const;

 private:
  std::vector<std::string>* saved_;
  std::vector<std::string> errors_;
};

// Sends `context`'s errors and warnings to the JIT log, each prefixed with `prefix` (LLVM prints
// them on stderr by default); remarks and notes are dropped.
void LogDiagnostics(llvm::LLVMContext& context, std::string prefix);

// LLVM's O2 module pipeline, tuned for `machine` (its cost model decides e.g. select vs branch).
void OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine);
// kLight's passes.
void OptimizeModuleLightly(llvm::Module& module, llvm::TargetMachine& machine);

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_LLVM_SESSION_H_
