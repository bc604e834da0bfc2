// Layout-compatible stand-ins for the few TVM FFI C++ classes whose bytes or type identity cross
// the boundary with code compiled from TVM FFI's C++ headers (apache/tvm-ffi at e98b94e1).
//
// Internal to the runtime. Each class here is written for ffijit and reproduces only what such
// code depends on:
// - its qualified name, because a `catch (const tvm::ffi::Error&)` in that code matches a thrown
//   object by the Itanium typeinfo *name* ("N3tvm3ffi5ErrorE"; libstdc++ compares the strings);
// - its layout: ObjectRef is one object pointer and no vtable; Error derives from ObjectRef and
//   std::exception, so (Itanium: the first dynamic base is the primary base) its vptr sits at
//   offset 0 and the Error object pointer at offset 8 — where that code's inline
//   `SetSafeCallRaised(err)` reads it.
// - for the value classes passed to and returned from exported functions (Any, String,
//   Optional<int>): their size and their being non-trivial for calls (a user-provided destructor
//   or copy constructor), which makes the Itanium ABI pass them by reference and return them
//   through a hidden pointer, exactly as for the originals.
// Everything is hidden: a module's own copies of these classes (weak, default visibility) must
// never bind to ours, nor ours to theirs. Functions exported under TVM FFI's names are marked
// FFIJIT_TVM_EXPORT where they are defined.
#ifndef FFIJIT_RUNTIME_TVM_FFI_CXX_SHIMS_H_
#define FFIJIT_RUNTIME_TVM_FFI_CXX_SHIMS_H_

#include <cstddef>
#include <exception>
#include <string>

#include "ffijit/c_api.h"

#define FFIJIT_TVM_SHIM __attribute__((visibility("hidden")))
#define FFIJIT_TVM_EXPORT __attribute__((visibility("default")))

namespace tvm {
namespace ffi {

// tvm::ffi::ObjectRef: one strong reference to an object (NULL allowed).
class FFIJIT_TVM_SHIM ObjectRef {
 public:
  ObjectRef() = default;
  // Adopts one strong reference.
  explicit ObjectRef(TVMFFIObject* owned) noexcept : data_(owned) {}
  ObjectRef(const ObjectRef& other) noexcept : data_(other.data_) {
    if (data_ != nullptr) TVMFFIObjectIncRef(data_);
  }
  ObjectRef& operator=(const ObjectRef&) = delete;
  ~ObjectRef() {
    if (data_ != nullptr) TVMFFIObjectDecRef(data_);
  }
  TVMFFIObject* get() const noexcept { return data_; }

 protected:
  TVMFFIObject* data_ = nullptr;
};

// tvm::ffi::EnvErrorAlreadySet: the exception form of return code -2 (the frontend already holds
// an error; nothing is stored in the raised-error slot).
struct FFIJIT_TVM_SHIM EnvErrorAlreadySet : public std::exception {};

// tvm::ffi::Error: an exception holding an ffi.Error object (type 67).
class FFIJIT_TVM_SHIM Error : public ObjectRef, public std::exception {
 public:
  // Adopts one strong reference to an Error object (never NULL).
  explicit Error(TVMFFIObject* owned_error) noexcept : ObjectRef(owned_error) {}
  Error(const Error& other) noexcept : ObjectRef(other), std::exception(other) {}
  // The text header code's Error::what() produces: traceback, then "Kind: message".
  const char* what() const noexcept override;
};

// tvm::ffi::Any: one owned TVMFFIAny.
class FFIJIT_TVM_SHIM Any {
 public:
  Any() noexcept : data_{} {}
  Any(Any&& other) noexcept : data_(other.data_) { other.data_ = TVMFFIAny{}; }
  Any(const Any&) = delete;
  Any& operator=(const Any&) = delete;
  ~Any();
  TVMFFIAny data_;
};

// tvm::ffi::String: one owned TVMFFIAny holding a SmallStr or a Str object.
class FFIJIT_TVM_SHIM String {
 public:
  String() noexcept : data_{} { data_.type_index = kTVMFFISmallStr; }
  String(String&& other) noexcept : data_(other.data_) { other.data_ = TVMFFIAny{}; }
  String(const String&) = delete;
  String& operator=(const String&) = delete;
  ~String();
  TVMFFIAny data_;
};

// tvm::ffi::Optional<int> (template arguments <int, void>): a std::optional<int>, the value at
// offset 0 and the engaged flag at 4.
template <typename T, typename = void>
class Optional;
template <>
class FFIJIT_TVM_SHIM Optional<int, void> {
 public:
  Optional(const Optional& other) noexcept : value(other.value), has_value(other.has_value) {}
  static Optional None() noexcept { return Optional(0, false); }
  int value;
  bool has_value;

 private:
  Optional(int v, bool has) noexcept : value(v), has_value(has) {}
};

static_assert(sizeof(ObjectRef) == sizeof(void*), "ObjectRef is one pointer");
static_assert(sizeof(Any) == 16 && sizeof(String) == 16, "Any and String are one TVMFFIAny");
static_assert(sizeof(Optional<int>) == 8, "Optional<int> is a std::optional<int>");

// The structural comparison entry points (static members, so the classes carry no data).
class FFIJIT_TVM_SHIM StructuralEqual {
 public:
  FFIJIT_TVM_EXPORT static bool Equal(const Any& lhs, const Any& rhs, bool map_free_vars,
                                      bool skip_tensor_content);
};
class FFIJIT_TVM_SHIM StructuralHash {
 public:
  FFIJIT_TVM_EXPORT static uint64_t Hash(const Any& value, bool map_free_vars,
                                         bool skip_tensor_content);
};

FFIJIT_TVM_EXPORT Any ToJSONGraph(const Any& value, const Any& metadata);
FFIJIT_TVM_EXPORT Any FromJSONGraph(const Any& value);

namespace json {
FFIJIT_TVM_EXPORT Any Parse(const String& json_str, String* error_msg);
FFIJIT_TVM_EXPORT String Stringify(const Any& value, Optional<int> indent);
}  // namespace json
static_assert(sizeof(Error) == 2 * sizeof(void*), "Error is a vptr and an object pointer");

}  // namespace ffi
}  // namespace tvm

#endif  // FFIJIT_RUNTIME_TVM_FFI_CXX_SHIMS_H_
