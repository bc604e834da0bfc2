// Reading a whole file into memory, for everything in the jit library that loads one (JIT module
// files, the persistent thunk cache).
#ifndef FFIJIT_JIT_SETTINGS_FILE_BYTES_H_
#define FFIJIT_JIT_SETTINGS_FILE_BYTES_H_

#include <string>

namespace ffijit {

// The bytes of `path`; false, with the reason (strerror) in *why when given, if it cannot be read.
bool ReadFileBytes(const std::string& path, std::string* out, std::string* why = nullptr);

}  // namespace ffijit

#endif  // FFIJIT_JIT_SETTINGS_FILE_BYTES_H_
