// The `ffijit` tool's subcommand table and exit codes; each subcommand lives in its own file.
#ifndef FFIJIT_TOOLS_COMMAND_H_
#define FFIJIT_TOOLS_COMMAND_H_

#include <iosfwd>
#include <string>
#include <vector>

namespace ffijit::tool {

// Exit codes shared by every subcommand (listed by `ffijit --help`).
enum ExitCode : int {
  kExitOk = 0,           // success
  kExitUsage = 1,        // bad command line
  kExitBadMetadata = 2,  // the metadata could not be parsed (call/bench: read or bound either)
  kExitNoLibrary = 3,    // call/bench: the shared library could not be loaded
  kExitNoSymbol = 4,     // call/bench: the library does not export the symbol
  kExitBadArgs = 5,      // call/bench: an argument is not valid JSON or does not fit the signature
  kExitCallFailed = 6,   // call/bench: the native call failed (an error or a crash)
  kExitInternal = 70,    // an unexpected failure inside ffijit (a bug)
};

struct ExitCodeInfo {
  int code;
  const char* meaning;
};
inline constexpr ExitCodeInfo kExitCodes[] = {
    {kExitOk, "success"},
    {kExitUsage, "bad command line"},
    {kExitBadMetadata,
     "the metadata could not be parsed (call, bench: nor read from @FILE, nor bound to the "
     "symbol)"},
    {kExitNoLibrary, "the shared library could not be loaded (the dlopen error is quoted)"},
    {kExitNoSymbol, "the library does not export the symbol"},
    {kExitBadArgs, "an argument is not valid JSON or does not match the signature"},
    {kExitCallFailed,
     "the native call failed: it raised an error, returned a bad result or crashed"},
    {kExitInternal, "unexpected internal failure (please report it)"},
};

// One subcommand: `args` are the words after its name; it reads `in` when told to read stdin.
struct Command {
  const char* name;
  const char* usage;    // the arguments, e.g. "[--format json|raw|sip] [METADATA|-]"
  const char* summary;  // one line for `ffijit --help`
  int (*run)(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
             std::ostream& err);
};

// Subcommands, each defined in <name>_command.cc. Add new ones here.
int RunSig(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
           std::ostream& err);
int RunCall(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
            std::ostream& err);
int RunBench(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
             std::ostream& err);

inline constexpr Command kCommands[] = {
    {"sig", "[--format json|raw|sip|declaration] [METADATA|-]",
     "parse function metadata and print its canonical, JSON and IREE-readable forms", &RunSig},
    {"call",
     "LIB SYMBOL --sig METADATA|@FILE [--format json|raw|sip|declaration] [--tier "
     "jit|interp|libffi] "
     "[--status] [ARG|NAME=ARG...]  |  LIB NAME [ARG...]",
     "call an exported C function (or, without --sig, a TVM FFI module's function) with JSON "
     "arguments; print the result as JSON",
     &RunCall},
    {"bench",
     "LIB SYMBOL --sig METADATA|@FILE [--format json|raw|sip|declaration] [--seconds S] [--status] "
     "[--progress] [ARG|NAME=ARG...]  |  LIB NAME [ARG...]",
     "time that call through each path (jit, interp, libffi) and print ns/call and ratios",
     &RunBench},
};

}  // namespace ffijit::tool

#endif  // FFIJIT_TOOLS_COMMAND_H_
