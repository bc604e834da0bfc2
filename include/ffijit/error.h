// ffijit::Error: the C++ exception that carries an ABI Error (kind, message, traceback).
//
// Thrown inside C++ code; converted to a raised TVMFFIError object at every C boundary and back
// into this exception when a packed callee fails.
#ifndef FFIJIT_ERROR_H_
#define FFIJIT_ERROR_H_

#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "ffijit/c_api.h"

namespace ffijit {

class FFIJIT_API Error : public std::exception {
 public:
  Error(std::string kind, std::string message, std::string traceback = "");

  const std::string& kind() const noexcept { return kind_; }
  const std::string& message() const noexcept { return message_; }
  const std::string& traceback() const noexcept { return traceback_; }
  // "Kind: message"
  const char* what() const noexcept override { return what_.c_str(); }

  // A new Error object (one strong reference, owned by the caller).
  TVMFFIObjectHandle ToObject() const;
  // Stores this error as the thread's raised error (for returning -1 from a safe_call).
  void SetRaised() const;
  // Takes the thread's raised error; a RuntimeError if none is set.
  static Error MoveFromRaised();
  // Reads an Error object without taking ownership.
  static Error FromObject(TVMFFIObjectHandle error);

 private:
  std::string kind_, message_, traceback_, what_;
};

// At most `limit` bytes of an input quoted in an error message: the input itself when it fits,
// else its first `limit` bytes, "…" and its total length ("abc… (1048576 bytes)"), so a message
// never grows with what a caller passed.
inline constexpr size_t kExcerptLimit = 200;
inline std::string Excerpt(std::string_view input, size_t limit = kExcerptLimit) {
  if (input.size() <= limit) return std::string(input);
  // Cut before a UTF-8 continuation byte rather than through a character.
  size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(input[cut]) & 0xC0) == 0x80) --cut;
  std::string out(input.substr(0, cut));
  out += "\xe2\x80\xa6 (";
  out += std::to_string(input.size());
  out += " bytes)";
  return out;
}

// Shorthands for the kinds docs/design.md uses.
inline Error TypeError(std::string msg) {
  return Error("TypeError", std::move(msg));
}
inline Error ValueError(std::string msg) {
  return Error("ValueError", std::move(msg));
}
inline Error KeyError(std::string msg) {
  return Error("KeyError", std::move(msg));
}
inline Error RuntimeError(std::string msg) {
  return Error("RuntimeError", std::move(msg));
}
inline Error IndexError(std::string msg) {
  return Error("IndexError", std::move(msg));
}

// Runs `body` at a C boundary (a C API function, a safe_call): any exception becomes the thread's
// raised error and the result is -1; otherwise 0. Nothing escapes, as the ABI requires.
template <typename Body>
int GuardCBoundary(Body&& body) noexcept {
  try {
    body();
    return 0;
  } catch (const Error& e) {
    e.SetRaised();
  } catch (const std::bad_alloc&) {
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "out of memory");
  } catch (const std::exception& e) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", e.what());
  } catch (...) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "unknown C++ exception");
  }
  return -1;
}

// Runs `body` while a library loads (a static initialiser registering types, attributes or global
// functions): only allocation can fail there, and a static initialiser must not terminate the
// process, so a failure is reported on stderr, naming what is then missing, and loading goes on.
template <typename Body>
void RegisterAtLoad(const char* what, Body&& body) noexcept {
  try {
    body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ffijit: cannot register %s: %s\n", what, e.what());
  } catch (...) {
    std::fprintf(stderr, "ffijit: cannot register %s\n", what);
  }
}

namespace details {
// The NULL check of a C entry point's pointer argument, for use inside GuardCBoundary: a
// ValueError "<func>: `<param>` must not be NULL".
inline void RequireNonNull(const void* ptr, const char* func, const char* param) {
  if (ptr == nullptr) {
    throw Error("ValueError", std::string(func) + ": `" + param + "` must not be NULL");
  }
}
}  // namespace details

}  // namespace ffijit

#endif  // FFIJIT_ERROR_H_
