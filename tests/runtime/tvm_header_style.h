// Test-side stand-ins for what code compiled from TVM FFI's C++ headers (of the revision this build
// implements: e98b94e1 or v0.1.13) does inline, written for these tests: the Error class it catches
// (matched against the runtime's by the Itanium typeinfo name), the direct call of a Function's C++
// `call` entry at header+32, and the value classes and declarations through which it calls the
// exported C++ functions (json::Parse/Stringify, To/FromJSONGraph, StructuralEqual/Hash) by their
// mangled names. The runtime's own copies are hidden, so these tests exercise the name match across
// the shared-library boundary exactly as a separately built module does.
#ifndef FFIJIT_TESTS_TVM_HEADER_STYLE_H_
#define FFIJIT_TESTS_TVM_HEADER_STYLE_H_

#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
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

namespace tvm {
namespace ffi {
// Test-side stand-ins, laid out and passed like TVM FFI's own (one TVMFFIAny each; non-trivial,
// so passed by reference and returned through a hidden pointer).
class Any {
 public:
  Any() : data_{} {}
  // Adopts an owned value.
  explicit Any(TVMFFIAny owned) : data_(owned) {}
  Any(const Any&) = delete;
  ~Any() {
    if (data_.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(data_.v_obj);
  }
  TVMFFIAny data_;
};
class String {
 public:
  String() : data_{} { data_.type_index = kTVMFFISmallStr; }
  String(const String&) = delete;
  explicit String(const std::string& text) {
    TVMFFIByteArray bytes{text.data(), text.size()};
    TVMFFIStringFromByteArray(&bytes, &data_);
  }
  ~String() {
    if (data_.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(data_.v_obj);
  }
  std::string str() const {
    if (data_.type_index == kTVMFFISmallStr) return std::string(data_.v_bytes, data_.small_str_len);
    const auto* bytes = reinterpret_cast<const TVMFFIByteArray*>(data_.v_obj + 1);
    return std::string(bytes->data, bytes->size);
  }
  TVMFFIAny data_;
};
template <typename T, typename = void>
class Optional;
#if FFIJIT_TVM_FFI_OPTIONAL_VALUE_IS_ANY
// Optional<int> is one TVMFFIAny (an Int or None).
template <>
class Optional<int, void> {
 public:
  Optional(std::optional<int> v) : data_{} {  // NOLINT
    if (v) {
      data_.type_index = kTVMFFIInt;
      data_.v_int64 = *v;
    }
  }
  Optional(const Optional& other) : data_(other.data_) {}
  ~Optional() {}
  TVMFFIAny data_;
};
#else
template <>
class Optional<int, void> {
 public:
  Optional(std::optional<int> v) : data_(v) {}  // NOLINT
  Optional(const Optional& other) : data_(other.data_) {}
  std::optional<int> data_;
};
#endif
#if FFIJIT_TVM_FFI_OPTIONAL_OBJECT_IS_ANY
// Optional<Tuple<AccessPath, AccessPath>>: one TVMFFIAny (None when equal).
class MismatchResult : public Any {
 public:
  TVMFFIObject* get() const { return data_.type_index == kTVMFFINone ? nullptr : data_.v_obj; }
};
#else
// Optional<Tuple<AccessPath, AccessPath>>: one object pointer (NULL when equal), non-trivial, so
// returned through a hidden pointer like this ObjectRef.
using MismatchResult = ObjectRef;
#endif
Any ToJSONGraph(const Any& value, const Any& metadata);
Any FromJSONGraph(const Any& value);
namespace json {
Any Parse(const String& json_str, String* error_msg);
#if FFIJIT_TVM_FFI_JSON_STRINGIFY_INDENT_BY_REF
String Stringify(const Any& value, const Optional<int>& indent);
#else
String Stringify(const Any& value, Optional<int> indent);
#endif
}  // namespace json
struct StructuralEqual {
  static bool Equal(const Any& lhs, const Any& rhs, bool map_free_vars, bool skip_tensor_content);
  static MismatchResult GetFirstMismatch(const Any& lhs, const Any& rhs, bool map_free_vars,
                                         bool skip_tensor_content);
};
struct StructuralHash {
  static uint64_t Hash(const Any& value, bool map_free_vars, bool skip_tensor_content);
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
