// What `ffijit call` and `ffijit bench` share: command line, symbol, metadata, arguments, calls.
//
// Loading the symbol, parsing the metadata and the JSON arguments, binding one execution path,
// calling, and turning each failure into an exit code (tools/command.h) with a message.
#ifndef FFIJIT_TOOLS_NATIVE_CALL_H_
#define FFIJIT_TOOLS_NATIVE_CALL_H_

#include <csignal>
#include <string>
#include <utility>
#include <vector>

#include "ffijit/any.h"
#include "ffijit/error.h"
#include "ffijit/function.h"
#include "ffijit/reflect/metadata.h"
#include "ffijit/reflect/signature.h"

namespace ffijit::tool {

// Ends a subcommand: the exit code, and the message printed after "ffijit <command>: ".
struct Failure {
  int code;
  std::string message;
};

// The ways a packed call can reach a dynamic symbol.
enum class Path {
  kJit,     // a compiled thunk (JitEngine::CompileNow)
  kInterp,  // the interpreter and its register stub (RegisterOptions::interpret_only)
  kLibffi,  // the interpreter calling through libffi (the C API flag kFFIJITUseLibffi)
  kPacked,  // a TVM FFI function (no --sig): the library's own packed safe_call
};
const char* PathName(Path path);  // "jit", "interp", "libffi"

struct CallRequest {
  std::string library;
  std::string symbol;
  std::string metadata;  // the text, or @FILE
  MetadataFormat format = MetadataFormat::kAuto;
  Path tier = Path::kJit;  // call: --tier
  bool status = false;     // --status: the native follows the status convention
  bool describe = false;   // call: --describe, print the bound function instead of calling it
  double seconds = 1.0;    // bench: --seconds, the whole run's budget
  bool progress = false;   // bench: --progress, show progress even when stderr is no tty
  bool help = false;       // --help
  // No --sig: SYMBOL names a TVM FFI function the library exports as `__tvm_ffi_SYMBOL`, which is
  // already packed; it is called through ffijit's module loader.
  bool packed = false;
  std::vector<std::string> args;  // the argument words, in order
};

// The words after the subcommand's name (bench: true for `ffijit bench`). Throws Failure
// (kExitUsage) naming the problem.
CallRequest ParseRequest(const std::vector<std::string>& words, bool bench);

// dlopen (RTLD_NOW; a bare name goes through the normal search) and dlsym. Throws Failure
// (kExitNoLibrary, kExitNoSymbol) quoting dlerror(). The library stays loaded.
void* LoadSymbol(const std::string& library, const std::string& symbol);

// The TVM FFI function SYMBOL (or __tvm_ffi_SYMBOL) of LIB, loaded as a module (the library stays
// loaded). Throws Failure: kExitNoLibrary quoting the loader's error, kExitNoSymbol when the
// library exports no such TVM FFI function.
Function LoadPackedFunction(const CallRequest& request);

// The signature the request's metadata describes (reading @FILE). Throws Failure
// (kExitBadMetadata).
Signature LoadSignature(const CallRequest& request);

struct CallArgs {
  std::vector<Any> positional;
  std::vector<std::pair<std::string, Any>> keywords;  // NAME=VALUE words
};
// The argument words: a word matching ^[A-Za-z_][A-Za-z0-9_]*= is a keyword argument, any other
// word a positional JSON value (json_values.h); "@FILE" reads the JSON from a file. An ndarray
// value without "dtype" takes the element type of the ndarray argument it binds to in `sig`, if
// that has one. Throws Failure (kExitBadArgs).
CallArgs ParseArguments(const std::vector<std::string>& words, const Signature& sig);

// The arguments of a TVM FFI function (no signature): positional only; a NAME=ARG word is a
// Failure (kExitBadArgs).
CallArgs ParsePackedArguments(const std::vector<std::string>& words);

// A packed function calling `target` over `path`. Throws Failure(kExitBadMetadata) when the
// signature cannot be bound that way. For Path::kJit, when the JIT is not built in or cannot
// compile the signature, the function stays on the interpreter and *jit_failure says why.
Function BindPath(const CallRequest& request, void* target, const Signature& sig, Path path,
                  std::string* jit_failure);

// One call with the arguments (keywords through CallWithKeywords). Throws Failure: kExitBadArgs
// for an error ffijit raised about the arguments, kExitCallFailed for any other.
Any Invoke(const Function& func, const CallArgs& args);
// The Failure for an error a call raised.
Failure CallFailure(const Error& error);

// While alive, a crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) prints "ffijit <command>: the
// native call crashed (<signal>)" and exits with kExitCallFailed, instead of killing the tool
// silently. Guard native calls only.
class CrashGuard {
 public:
  explicit CrashGuard(const char* command);
  ~CrashGuard();
  CrashGuard(const CrashGuard&) = delete;
  CrashGuard& operator=(const CrashGuard&) = delete;

 private:
  static constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  struct sigaction saved_[sizeof(kSignals) / sizeof(kSignals[0])];
  stack_t saved_stack_;
  void* stack_ = nullptr;
};

}  // namespace ffijit::tool

#endif  // FFIJIT_TOOLS_NATIVE_CALL_H_
