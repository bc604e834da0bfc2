// What a code generator hands the unit compiler (orc/tiers/unit_compiler.h): a request to emit
// one function, with the optional checks run on its compiled code, and the runtime functions
// generated code may call. Kept here, below tiers/, so the generators need nothing of the
// compiler that consumes their requests.
#ifndef FFIJIT_JIT_ORC_CODEGEN_COMPILE_REQUEST_H_
#define FFIJIT_JIT_ORC_CODEGEN_COMPILE_REQUEST_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace llvm {
class Module;
namespace orc {
class JITDylib;
}  // namespace orc
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

// Runtime functions generated code may call, bound as absolute symbols of every code unit.
using SymbolTable = std::vector<std::pair<std::string, void*>>;

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_CODEGEN_COMPILE_REQUEST_H_
