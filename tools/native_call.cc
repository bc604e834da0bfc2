// Shared by `ffijit call` and `ffijit bench` (see native_call.h).
#include "native_call.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <string_view>

#include "base/file_bytes.h"
#include "command.h"
#include "ffijit/jit/bridge.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "ffijit/module.h"
#include "ffijit/reflect/metadata.h"
#include "json_values.h"

namespace ffijit::tool {
namespace {

// Metadata and argument files larger than this are refused (reading /dev/zero must not hang).
constexpr size_t kMaxFileBytes = size_t{64} << 20;

Failure Usage(std::string message) {
  return Failure{kExitUsage, std::move(message)};
}

std::optional<Path> PathFromName(const std::string& name) {
  for (Path p : {Path::kJit, Path::kInterp, Path::kLibffi}) {
    if (name == PathName(p)) return p;
  }
  return std::nullopt;
}

// The position of the '=' of a NAME=VALUE word, or npos.
size_t KeywordEnd(const std::string& word) {
  if (word.empty() || !(std::isalpha(static_cast<unsigned char>(word[0])) || word[0] == '_')) {
    return std::string::npos;
  }
  for (size_t i = 1; i < word.size(); ++i) {
    const char c = word[i];
    if (c == '=') return i;
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return std::string::npos;
  }
  return std::string::npos;
}

// The ndarray type with a known element type that a top-level argument binds to, or NULL.
const Type* NDArraySlot(const Signature& sig, size_t position, const std::string& keyword) {
  const Type* type = nullptr;
  if (keyword.empty()) {
    if (position < sig.args.size()) type = sig.args[position].get();
  } else {
    for (const TypePtr& arg : sig.args) {
      if (arg != nullptr && arg->kind == TypeKind::kNamed && arg->name == keyword) type = arg.get();
    }
  }
  if (type != nullptr && type->kind == TypeKind::kNamed && !type->elements.empty()) {
    type = type->elements[0].get();
  }
  if (type == nullptr || type->kind != TypeKind::kNDArray || type->scalar == ScalarKind::kAny) {
    return nullptr;
  }
  return type;
}

// Bare words that are probably meant as strings get a hint about quoting.
std::string JsonHint(const std::string& text) {
  if (text.empty() || text.size() > 40 || text.find('\n') != std::string::npos ||
      std::strchr("[{\"-0123456789tfnNI", text[0]) != nullptr) {
    return "";
  }
  return " (a string argument needs JSON quotes, e.g. '\"" + Excerpt(text) + "\"')";
}

// Lines the JIT logs while the tool compiles; shown only when the compile fails.
std::string& JitLog() {
  static std::string log;
  return log;
}

char g_crash_prefix[64];

void OnCrash(int signal) {
  const char* name = signal == SIGSEGV  ? "SIGSEGV"
                     : signal == SIGBUS ? "SIGBUS"
                     : signal == SIGFPE ? "SIGFPE"
                     : signal == SIGILL ? "SIGILL"
                                        : "SIGABRT";
  const char* parts[] = {g_crash_prefix, "the native call crashed (", name, ")\n"};
  for (const char* part : parts) {
    if (write(STDERR_FILENO, part, std::strlen(part)) < 0) break;
  }
  _exit(kExitCallFailed);
}

}  // namespace

const char* PathName(Path path) {
  switch (path) {
    case Path::kJit:
      return "jit";
    case Path::kInterp:
      return "interp";
    case Path::kPacked:
      return "packed";
    default:
      return "libffi";
  }
}

CallRequest ParseRequest(const std::vector<std::string>& words, bool bench) {
  CallRequest request;
  std::vector<std::string> positional;
  bool have_sig = false;
  bool options_done = false;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (options_done || word.rfind("--", 0) != 0) {
      if (!options_done && word == "-h") {
        request.help = true;
        return request;
      }
      positional.push_back(word);
      continue;
    }
    if (word == "--") {
      options_done = true;
      continue;
    }
    const size_t eq = word.find('=');
    const std::string name = word.substr(0, eq);
    if (name == "--help") {
      request.help = true;
      return request;
    }
    const bool flag =
        name == "--status" || (bench && name == "--progress") || (!bench && name == "--describe");
    const bool valued = name == "--sig" || name == "--format" || (!bench && name == "--tier") ||
                        (bench && name == "--seconds");
    if (!flag && !valued) throw Usage("unknown option '" + word + "'");
    if (flag) {
      if (eq != std::string::npos) throw Usage(name + " takes no value");
      (name == "--status"     ? request.status
       : name == "--describe" ? request.describe
                              : request.progress) = true;
      continue;
    }
    std::string value;
    if (eq != std::string::npos) {
      value = word.substr(eq + 1);
    } else if (i + 1 < words.size()) {
      value = words[++i];
    } else {
      throw Usage(name + " needs a value");
    }
    if (name == "--sig") {
      request.metadata = value;
      have_sig = true;
    } else if (name == "--format") {
      const auto format = MetadataFormatFromName(value);
      if (!format)
        throw Usage("unknown format '" + value +
                    "' (expected auto, json, raw, sip or declaration)");
      request.format = *format;
    } else if (name == "--tier") {
      const auto tier = PathFromName(value);
      if (!tier) throw Usage("unknown tier '" + value + "' (expected jit, interp or libffi)");
      request.tier = *tier;
    } else {
      char* end = nullptr;
      const double seconds = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !std::isfinite(seconds) || seconds <= 0 ||
          seconds > 3600) {
        throw Usage("--seconds needs a number of seconds in (0, 3600], got '" + value + "'");
      }
      request.seconds = seconds;
    }
  }
  if (positional.size() < 2) throw Usage("missing LIB and SYMBOL");
  if (positional[0].empty() || positional[1].empty())
    throw Usage("LIB and SYMBOL must not be empty");
  if (!have_sig) {
    // A TVM FFI function: packed already, so the binding options do not apply.
    request.packed = true;
    if (request.format != MetadataFormat::kAuto) throw Usage("--format needs --sig");
    if (request.status) throw Usage("--status needs --sig (a TVM FFI function raises its errors)");
    if (request.tier != Path::kJit) {
      throw Usage("--tier needs --sig (a TVM FFI function is called as it is, packed)");
    }
    if (request.describe) {
      throw Usage("--describe needs --sig (a TVM FFI function has no call plan or tier)");
    }
  }
  if (request.describe && positional.size() > 2) {
    throw Usage("--describe calls nothing: it takes no ARG");
  }
  request.library = positional[0];
  request.symbol = positional[1];
  request.args.assign(positional.begin() + 2, positional.end());
  return request;
}

void* LoadSymbol(const std::string& library, const std::string& symbol) {
  dlerror();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw Failure{kExitNoLibrary,
                  "cannot load library '" + library + "': " + (why ? why : "unknown dlopen error")};
  }
  dlerror();
  void* address = dlsym(handle, symbol.c_str());
  const char* why = dlerror();
  if (why != nullptr || address == nullptr) {
    throw Failure{kExitNoSymbol, "library '" + library + "' does not export '" + symbol +
                                     "': " + (why ? why : "the symbol's address is NULL")};
  }
  return address;
}

Function LoadPackedFunction(const CallRequest& request) {
  constexpr const char* kPrefix = "__tvm_ffi_";
  std::string name = request.symbol;
  if (name.rfind(kPrefix, 0) == 0 && name.size() > std::strlen(kPrefix)) {
    name = name.substr(std::strlen(kPrefix));
  }
  Module mod;
  try {
    // A file whose extension has a registered loader (the JIT's for .o, .bc, .ll) goes to it;
    // anything else to the shared-library loader itself: LIB may be a bare name (normal dlopen
    // search) or have any extension, e.g. libfoo.so.1.
    std::string format = "so";
    const size_t dot = request.library.rfind('.');
    const size_t slash = request.library.rfind('/');
    if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) {
      const std::string extension = request.library.substr(dot + 1);
      if (GetGlobalFunction("ffi.Module.load_from_file." + extension)) format = extension;
    }
    mod = GetGlobalFunctionOrThrow("ffi.Module.load_from_file." + format)(request.library, format)
              .cast<Module>();
  } catch (const Error& e) {
    throw Failure{kExitNoLibrary, "cannot load library '" + request.library +
                                      "' as a TVM FFI "
                                      "module: " +
                                      e.kind() + ": " + e.message()};
  }
  std::optional<Function> func;
  try {
    func = mod.GetFunction(name);
  } catch (const Error& e) {
    throw Failure{kExitNoSymbol,
                  "library '" + request.library + "': " + e.kind() + ": " + e.message()};
  }
  if (!func) {
    throw Failure{kExitNoSymbol, "no such function: library '" + request.library +
                                     "' exports no TVM FFI function `" + name + "` (symbol `" +
                                     kPrefix + name +
                                     "`); without --sig, SYMBOL names a TVM FFI "
                                     "function"};
  }
  return *func;
}

// The metadata text (a file's contents for @FILE), trimmed.
std::string LoadMetadataText(const CallRequest& request) {
  std::string text = request.metadata;
  if (!text.empty() && text[0] == '@') {
    std::string contents, why;
    if (!ReadFileBytes(text.substr(1), &contents, &why, kMaxFileBytes)) {
      throw Failure{kExitBadMetadata, "cannot read metadata file '" + text.substr(1) + "': " + why};
    }
    text = std::move(contents);
  }
  // Metadata files usually end with a newline; a bare raw signature must not.
  const size_t last = text.find_last_not_of(" \t\r\n");
  text.resize(last == std::string::npos ? 0 : last + 1);
  return text;
}

Signature LoadSignature(const CallRequest& request) {
  const std::string text = LoadMetadataText(request);
  try {
    return ParseMetadata(text, request.format);
  } catch (const Error& e) {
    throw Failure{kExitBadMetadata, e.kind() + ": " + e.message()};
  }
}

CallArgs ParseArguments(const std::vector<std::string>& words, const Signature& sig) {
  CallArgs args;
  for (const std::string& word : words) {
    const size_t eq = KeywordEnd(word);
    const bool keyword = eq != std::string::npos;
    const std::string label = keyword ? "keyword argument `" + word.substr(0, eq) + "`"
                                      : "argument #" + std::to_string(args.positional.size());
    std::string text = keyword ? word.substr(eq + 1) : word;
    if (!text.empty() && text[0] == '@') {
      std::string contents, why;
      if (!ReadFileBytes(text.substr(1), &contents, &why, kMaxFileBytes)) {
        throw Failure{kExitBadArgs,
                      "cannot read " + label + " from '" + text.substr(1) + "': " + why};
      }
      text = std::move(contents);
    }
    nlohmann::ordered_json parsed;
    try {
      parsed = ParseJsonValue(text);
    } catch (const Error& e) {
      throw Failure{kExitBadArgs, e.kind() + ": cannot read " + label + " as JSON: " + e.message() +
                                      JsonHint(text)};
    }
    const Type* slot = NDArraySlot(sig, args.positional.size(), keyword ? word.substr(0, eq) : "");
    if (slot != nullptr && parsed.is_object() && parsed.contains("ndarray") &&
        !parsed.contains("dtype")) {
      parsed["dtype"] = ScalarKindName(slot->scalar);
    }
    Any value;
    try {
      value = JsonToAny(parsed);
    } catch (const Error& e) {
      throw Failure{kExitBadArgs, e.kind() + ": " + label + ": " + e.message()};
    }
    if (keyword) {
      args.keywords.emplace_back(word.substr(0, eq), std::move(value));
    } else {
      args.positional.push_back(std::move(value));
    }
  }
  return args;
}

CallArgs ParsePackedArguments(const std::vector<std::string>& words) {
  CallArgs args = ParseArguments(words, Signature{});
  if (!args.keywords.empty()) {
    throw Failure{kExitBadArgs, "keyword argument `" + args.keywords.front().first +
                                    "`: a TVM FFI function takes positional arguments only "
                                    "(NAME=ARG needs --sig)"};
  }
  return args;
}

Function BindPath(const CallRequest& request, void* target, const Signature& sig, Path path,
                  std::string* jit_failure) {
  RegisterOptions options;
  if (request.status) options.convention = CallConvention::kStatus;
  options.interpret_only = path != Path::kJit;
  Function func;
  try {
    // Compiled below, on demand, never in the background.
    ScopedJitOptions never(JitOptions{JitPolicy::kNever, 0});
    if (path == Path::kLibffi) {
      // The libffi call path has one public switch, the C API's kFFIJITUseLibffi flag; the
      // signature goes over as iree.abi JSON, which writes every Signature but one whose SIP put
      // leaves out of native order or one with output storage (a declaration's): that one goes
      // over as the metadata it was read from.
      const bool ordered =
          sig.arg_leaf_order.empty() && sig.result_leaf_order.empty() && sig.output_storage.empty();
      const std::string text = ordered ? PrintJson(sig) : LoadMetadataText(request);
      const int format = ordered ? kFFIJITFormatJson : static_cast<int>(request.format);
      const int flags =
          kFFIJITInterpretOnly | kFFIJITUseLibffi | (request.status ? kFFIJITStatusConvention : 0);
      TVMFFIObjectHandle handle = nullptr;
      CheckCall(
          FFIJITMakeFunction(target, text.c_str(), format, flags, request.symbol.c_str(), &handle));
      func = Function::Adopt(handle);
    } else {
      func = MakeFunction(request.symbol, target, sig, options);
    }
  } catch (const Error& e) {
    throw Failure{kExitBadMetadata, "cannot bind `" + request.symbol + "` as `" +
                                        CanonicalString(sig) + "` for the " + PathName(path) +
                                        " path: " + e.kind() + ": " + e.message()};
  }
  if (path != Path::kJit) return func;
  // Without LLVM, CompileNow says so.
  JitLog().clear();
  SetJitLogSink([](const std::string& line) { JitLog() += line + "\n"; });
  std::string why;
  try {
    JitEngine::Default().CompileNow(func);
  } catch (const Error& e) {
    // The tool says "using the interpreter" itself: keep only the reason.
    constexpr std::string_view kPrefix = "the function stays interpreted: ";
    why = e.message();
    if (why.rfind(kPrefix, 0) == 0) why.erase(0, kPrefix.size());
  }
  SetJitLogSink(nullptr);
  if (!why.empty()) {
    *jit_failure = why;
    if (!JitLog().empty()) *jit_failure += "; " + JitLog().substr(0, JitLog().size() - 1);
  }
  return func;
}

Failure CallFailure(const Error& error) {
  // Every error the marshaller raises about an argument names the declaration this way.
  const bool about_arguments =
      (error.kind() == "TypeError" || error.kind() == "ValueError" || error.kind() == "KeyError") &&
      error.message().find(" when calling: `") != std::string::npos;
  return Failure{about_arguments ? kExitBadArgs : kExitCallFailed,
                 error.kind() + ": " + error.message()};
}

Any Invoke(const Function& func, const CallArgs& args) {
  try {
    if (args.keywords.empty()) {
      std::vector<TVMFFIAny> views;
      for (const Any& a : args.positional) views.push_back(a.raw());
      return func.CallPacked(views.data(), static_cast<int32_t>(views.size()));
    }
    const std::vector<AnyView> positional(args.positional.begin(), args.positional.end());
    std::vector<std::pair<std::string, AnyView>> keywords;
    for (const auto& [name, value] : args.keywords) keywords.emplace_back(name, value);
    return CallWithKeywords(func, positional, keywords);
  } catch (const Error& e) {
    throw CallFailure(e);
  }
}

CrashGuard::CrashGuard(const char* command) {
  std::snprintf(g_crash_prefix, sizeof(g_crash_prefix), "ffijit %s: ", command);
  constexpr size_t kStackBytes = 64 * 1024;
  stack_ = std::malloc(kStackBytes);
  stack_t alternate{};
  alternate.ss_sp = stack_;
  alternate.ss_size = kStackBytes;
  if (stack_ == nullptr || sigaltstack(&alternate, &saved_stack_) != 0) {
    std::free(stack_);
    stack_ = nullptr;
  }
  struct sigaction action {};
  action.sa_handler = &OnCrash;
  action.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &action, &saved_[i]);
}

CrashGuard::~CrashGuard() {
  for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &saved_[i], nullptr);
  if (stack_ != nullptr) {
    sigaltstack(&saved_stack_, nullptr);
    std::free(stack_);
  }
}

}  // namespace ffijit::tool
