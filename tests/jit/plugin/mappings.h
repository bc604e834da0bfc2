// What the plugin-seam suites observe: whether a shared object is mapped into this process (read
// from /proc/self/maps, where dlopen's mappings show by file name).
#ifndef FFIJIT_TESTS_JIT_PLUGIN_MAPPINGS_H_
#define FFIJIT_TESTS_JIT_PLUGIN_MAPPINGS_H_

#include <fstream>
#include <string>

namespace ffijit_tests {

// Whether a file whose name contains `needle` is mapped into this process.
inline bool Mapped(const std::string& needle) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace ffijit_tests

#endif  // FFIJIT_TESTS_JIT_PLUGIN_MAPPINGS_H_
