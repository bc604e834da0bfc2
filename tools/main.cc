// The `ffijit` command-line tool: dispatches to the subcommands of tools/command.h.
#include <cstring>
#include <exception>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "command.h"

namespace {

using ffijit::tool::kCommands;

void PrintHelp(std::ostream& out) {
  out << "usage: ffijit <command> [args...]\n"
         "       ffijit <command> --help\n\n"
         "commands:\n";
  for (const auto& c : kCommands) {
    out << "  " << c.name << " " << c.usage << "\n      " << c.summary << "\n";
  }
  out << "\nexit codes:\n";
  for (const auto& e : ffijit::tool::kExitCodes) {
    out << "  " << std::setw(3) << std::left << e.code << e.meaning << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintHelp(std::cerr);
    return ffijit::tool::kExitUsage;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    PrintHelp(std::cout);
    return ffijit::tool::kExitOk;
  }
  for (const auto& c : kCommands) {
    if (name != c.name) continue;
    try {
      return c.run(std::vector<std::string>(argv + 2, argv + argc), std::cin, std::cout, std::cerr);
    } catch (const std::exception& e) {
      std::cerr << "ffijit " << name << ": internal error: " << e.what() << "\n";
      return ffijit::tool::kExitInternal;
    }
  }
  std::cerr << "ffijit: unknown command '" << name << "' (see ffijit --help)\n";
  return ffijit::tool::kExitUsage;
}
