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
  kExitBadMetadata = 2,  // the metadata could not be parsed
  kExitInternal = 70,    // an unexpected failure inside ffijit (a bug)
};

struct ExitCodeInfo {
  int code;
  const char* meaning;
};
inline constexpr ExitCodeInfo kExitCodes[] = {
    {kExitOk, "success"},
    {kExitUsage, "bad command line"},
    {kExitBadMetadata, "the metadata could not be parsed"},
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

inline constexpr Command kCommands[] = {
    {"sig", "[--format json|raw|sip] [METADATA|-]",
     "parse function metadata and print its canonical, JSON and IREE-readable forms", &RunSig},
};

}  // namespace ffijit::tool

#endif  // FFIJIT_TOOLS_COMMAND_H_
