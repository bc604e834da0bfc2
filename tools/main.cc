// The `ffijit` command-line tool: dispatches to the subcommands of tools/command.h.
#include <cstring>
#include <exception>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "ffijit/c_ext.h"

namespace {

using ffijit::tool::kCommands;

// The tool's version and the TVM FFI ABI revision the runtime it loaded implements.
void PrintVersion(std::ostream& out) {
  const FFIJITTvmFfiAbi* abi = FFIJITGetTvmFfiAbi();
  out << "ffijit " << FFIJIT_VERSION << "\n"
      << "TVM FFI ABI " << abi->name << " (apache/tvm-ffi " << abi->commit << ", " << abi->version
      << "): object header " << abi->object_header_size << " bytes, error cell "
      << abi->error_cell_size << " bytes, type info " << abi->type_info_size << " bytes, "
      << abi->num_functions << " C functions\n";
#if FFIJIT_TVM_FFI_HAS_GET_VERSION
  // What the loaded runtime answers TVM FFI's own version query with.
  TVMFFIVersion version{};
  TVMFFIGetVersion(&version);
  out << "TVM FFI version " << version.major << "." << version.minor << "." << version.patch
      << "\n";
#endif
}

void PrintHelp(std::ostream& out) {
  out << "usage: ffijit <command> [args...]\n"
         "       ffijit <command> --help\n"
         "       ffijit --version\n\n"
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
  if (name == "--version" || name == "version") {
    PrintVersion(std::cout);
    return ffijit::tool::kExitOk;
  }
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
