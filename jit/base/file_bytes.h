// Reading a whole file into memory: the one reader of the project, for the jit library (JIT module
// files, the persistent thunk cache), the `ffijit` tool (metadata and argument files) and the
// Python extension (a module file's symbol table). Header-only, so the tool and the extension,
// which link only the jit library's exports, read files exactly as the library does.
#ifndef FFIJIT_JIT_BASE_FILE_BYTES_H_
#define FFIJIT_JIT_BASE_FILE_BYTES_H_

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

namespace ffijit {

// The bytes of `path` in *out; false, with the reason in *why when given, if the file cannot be
// opened or read (strerror's text) or holds more than `max_bytes` ("larger than N MiB"; reading
// stops there, so a device such as /dev/zero cannot exhaust memory).
inline bool ReadFileBytes(const std::string& path, std::string* out, std::string* why = nullptr,
                          uint64_t max_bytes = std::numeric_limits<uint64_t>::max()) {
  errno = 0;
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    if (why != nullptr) *why = errno != 0 ? std::strerror(errno) : "cannot open";
    return false;
  }
  std::string bytes;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) {
    bytes.append(buffer, n);
    if (bytes.size() > max_bytes) {
      std::fclose(file);
      if (why != nullptr) *why = "larger than " + std::to_string(max_bytes >> 20) + " MiB";
      return false;
    }
  }
  const bool failed = std::ferror(file) != 0;
  const int error = errno;
  std::fclose(file);
  if (failed) {
    if (why != nullptr) *why = error != 0 ? std::strerror(error) : "read error";
    return false;
  }
  *out = std::move(bytes);
  return true;
}

}  // namespace ffijit

#endif  // FFIJIT_JIT_BASE_FILE_BYTES_H_
