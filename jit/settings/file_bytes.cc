// Reading a whole file (file_bytes.h).
#include "settings/file_bytes.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ffijit {

bool ReadFileBytes(const std::string& path, std::string* out, std::string* why) {
  errno = 0;
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    if (why != nullptr) *why = errno != 0 ? std::strerror(errno) : "cannot open";
    return false;
  }
  std::string bytes;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) bytes.append(buffer, n);
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
