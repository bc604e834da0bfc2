// Test-side stand-ins for what code compiled from TVM FFI's C++ headers (apache/tvm-ffi e98b94e1)
// does inline, written for these tests: the Error class it catches (matched against the
// runtime's by the Itanium typeinfo name), and the direct call of a Function's C++ `call` entry
// at header+32. The runtime's own copies are hidden, so these tests exercise the name match
// across the shared-library boundary exactly as a separately built module does.
#ifndef FFIJIT_TESTS_TVM_HEADER_STYLE_H_
#define FFIJIT_TESTS_TVM_HEADER_STYLE_H_

#include <cstring>
#include <exception>
#include <string>

#include "ffijit/c_api.h"

namespace tvm {
namespace ffi {

class ObjectRef {
 public:
  ObjectRef() = default;
  ObjectRef(const ObjectRef& other) : data_(other.data_) {
    if (data_) TVMFFIObjectIncRef(data_);
  }
  ~ObjectRef() {
    if (data_) TVMFFIObjectDecRef(data_);
  }
  TVMFFIObject* get() const { return data_; }

 protected:
  TVMFFIObject* data_ = nullptr;
};

struct EnvErrorAlreadySet : public std::exception {};

class Error : public ObjectRef, public std::exception {
 public:
  std::string kind() const { return Field(&TVMFFIErrorCell::kind); }
  std::string message() const { return Field(&TVMFFIErrorCell::message); }
  const char* what() const noexcept override { return "test-side Error"; }

 private:
  std::string Field(TVMFFIByteArray TVMFFIErrorCell::*member) const {
    const auto* cell = reinterpret_cast<const TVMFFIErrorCell*>(data_ + 1);
    const TVMFFIByteArray& bytes = cell->*member;
    return std::string(bytes.data, bytes.size);
  }
};

}  // namespace ffi
}  // namespace tvm

namespace ffijit_test {

// The `FunctionObj::call` type: (self, AnyView args, num_args, Any* result).
using HeaderCall = void (*)(const void*, const TVMFFIAny*, int32_t, TVMFFIAny*);

// Reads the entry at header+32 and calls it, as `Function::operator()` in header code does.
inline void CallAt32(TVMFFIObjectHandle func, const TVMFFIAny* args, int32_t num_args,
                     TVMFFIAny* result) {
  HeaderCall call;
  std::memcpy(&call, static_cast<const char*>(func) + 32, sizeof(call));
  call(func, args, num_args, result);
}

}  // namespace ffijit_test

#endif  // FFIJIT_TESTS_TVM_HEADER_STYLE_H_
