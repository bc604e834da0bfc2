// Layout-compatible stand-ins for the TVM FFI C++ classes whose bytes or type identity cross the
// boundary with code compiled from TVM FFI's C++ headers (apache/tvm-ffi at the configured
// revision, v0.1.13 or e98b94e1; where they differ the revision header's feature macros choose).
// The one definition of each in the runtime; module_obj.h adds the module classes on top.
//
// Internal to the runtime. Each class here is written for ffijit and reproduces only what such
// code depends on:
// - its qualified name, because a `catch (const tvm::ffi::Error&)` in that code matches a thrown
//   object by the Itanium typeinfo *name* ("N3tvm3ffi5ErrorE"; libstdc++ compares the strings);
// - its layout: ObjectRef is one object pointer and no vtable; Error derives from ObjectRef and
//   std::exception, so (Itanium: the first dynamic base is the primary base) its vptr sits at
//   offset 0 and the Error object pointer at offset 8 — where that code's inline
//   `SetSafeCallRaised(err)` reads it; String, Bytes and Optional<String> are one TVMFFIAny
//   (SmallStr/SmallBytes inline or a Str/Bytes object; None only for an empty Optional<String>);
//   Optional<int> is one TVMFFIAny or a std::optional<int> (FFIJIT_TVM_FFI_OPTIONAL_VALUE_IS_ANY),
//   Optional<ObjectRef> one TVMFFIAny or a nullable pointer
//   (FFIJIT_TVM_FFI_OPTIONAL_OBJECT_IS_ANY);
// - for the value classes passed to and returned from exported functions (Any, String,
//   Optional<int>): their size and their being non-trivial for calls (a user-provided destructor
//   or copy constructor), which makes the Itanium ABI pass them by reference and return them
//   through a hidden pointer, exactly as for the originals.
// Nothing here may leave the library (except Error's vtable and typeinfo on v0.1.13, see there): a
// module's own copies of these classes (weak, default visibility) must never bind to ours, nor
// ours to theirs. The classes are hidden explicitly,
// except ObjectRef, which the exported ModuleObj holds as a field (an explicitly hidden field type
// is a -Wattributes error there); it is hidden by the runtime's -fvisibility=hidden and
// -fvisibility-inlines-hidden. Functions exported under TVM FFI's names are marked
// FFIJIT_TVM_EXPORT where they are declared.
#ifndef FFIJIT_RUNTIME_CXX_ABI_SHIMS_H_
#define FFIJIT_RUNTIME_CXX_ABI_SHIMS_H_

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "ffijit/c_api.h"
#include "ffijit/c_ext.h"
#include "ffijit/error.h"

#define FFIJIT_TVM_SHIM __attribute__((visibility("hidden")))
#define FFIJIT_TVM_EXPORT __attribute__((visibility("default")))

namespace tvm {
namespace ffi {

// tvm::ffi::ObjectRef: one strong reference to an object (NULL allowed). Also the layout of
// Function, Module, Array, Map and Optional<T> of an object type.
class ObjectRef {
 public:
  ObjectRef() noexcept = default;
  // Adopts one strong reference.
  static ObjectRef Adopt(TVMFFIObject* owned) noexcept {
    ObjectRef ref;
    ref.data_ = owned;
    return ref;
  }
  static ObjectRef Borrow(TVMFFIObject* obj) noexcept {
    if (obj != nullptr) TVMFFIObjectIncRef(obj);
    return Adopt(obj);
  }
  ObjectRef(const ObjectRef& other) noexcept : data_(other.data_) {
    if (data_ != nullptr) TVMFFIObjectIncRef(data_);
  }
  ObjectRef(ObjectRef&& other) noexcept : data_(std::exchange(other.data_, nullptr)) {}
  ObjectRef& operator=(ObjectRef other) noexcept {
    std::swap(data_, other.data_);
    return *this;
  }
  ~ObjectRef() {
    if (data_ != nullptr) TVMFFIObjectDecRef(data_);
  }
  TVMFFIObject* get() const noexcept { return data_; }
  TVMFFIObject* release() noexcept { return std::exchange(data_, nullptr); }
  bool defined() const noexcept { return data_ != nullptr; }

 protected:
  TVMFFIObject* data_ = nullptr;
};

// tvm::ffi::EnvErrorAlreadySet: the exception form of return code -2 (the frontend already holds
// an error; nothing is stored in the raised-error slot).
struct FFIJIT_TVM_SHIM EnvErrorAlreadySet : public std::exception {};

// tvm::ffi::Error: an exception holding an ffi.Error object (type 67).
//
// v0.1.13 declares the class TVM_FFI_DLL, so its library exports the vtable, typeinfo and typeinfo
// name (and modules built from those headers emit the same weak symbols): an Error thrown in one
// DSO is then caught by type in another through the one exported typeinfo. The class therefore has
// default visibility on that revision, and every member is hidden explicitly so that only those
// three symbols leave the runtime. e98b94e1's library exported none of them: hidden as a whole.
#if FFIJIT_TVM_FFI_ERROR_CLASS_EXPORTED
#define FFIJIT_TVM_ERROR_CLASS_VISIBILITY __attribute__((visibility("default")))
#else
#define FFIJIT_TVM_ERROR_CLASS_VISIBILITY FFIJIT_TVM_SHIM
#endif
class FFIJIT_TVM_ERROR_CLASS_VISIBILITY Error : public ObjectRef, public std::exception {
 public:
  // Adopts one strong reference to an Error object (never NULL).
  FFIJIT_TVM_SHIM explicit Error(TVMFFIObject* owned_error) noexcept
      : ObjectRef(Adopt(owned_error)) {}
  FFIJIT_TVM_SHIM Error(const Error& other) noexcept : ObjectRef(other), std::exception(other) {}
  // What header code's Error::what() produces on this revision (see FullMessage). Inline (no key
  // function): every user of this header, tests included, gets the vtable it throws with.
  FFIJIT_TVM_SHIM const char* what() const noexcept override {
#if FFIJIT_TVM_FFI_ERROR_WHAT_IS_MESSAGE
    thread_local std::string text;
    text = Piece(Cell()->message);
#else
    thread_local std::string text;
    text = FullMessage();
#endif
    return text.c_str();
  }
  // "Traceback (most recent call last):\n", the frames oldest first, then "Kind: message\n".
  FFIJIT_TVM_SHIM std::string FullMessage() const {
    return "Traceback (most recent call last):\n" + TracebackMostRecentCallLast() +
           Piece(Cell()->kind) + ": " + Piece(Cell()->message) + "\n";
  }
  // The stored frames, oldest first (v0.1.13 stores them most recent first: reversed by line).
  FFIJIT_TVM_SHIM std::string TracebackMostRecentCallLast() const {
    const std::string stored = Piece(Cell()->FFIJIT_ERROR_BACKTRACE);
#if FFIJIT_TVM_FFI_HAS_ERROR_CAUSE_CHAIN
    std::string result;
    size_t end = stored.size();
    while (end > 0) {
      size_t begin = stored.rfind('\n', end - 1);
      // A line is [begin + 1, end) when `end` is at a newline, else the trailing partial line.
      const size_t start = begin == std::string::npos ? 0 : begin + 1;
      if (end > start) result.append(stored, start, end - start).push_back('\n');
      if (begin == std::string::npos) break;
      end = begin;
    }
    return result;
#else
    return stored;
#endif
  }

 private:
  FFIJIT_TVM_SHIM const TVMFFIErrorCell* Cell() const noexcept {
    return reinterpret_cast<const TVMFFIErrorCell*>(data_ + 1);
  }
  FFIJIT_TVM_SHIM static std::string Piece(const TVMFFIByteArray& bytes) {
    return bytes.data == nullptr ? std::string() : std::string(bytes.data, bytes.size);
  }
};

// tvm::ffi::Any: one owned TVMFFIAny.
class FFIJIT_TVM_SHIM Any {
 public:
  Any() noexcept : data_{} {}
  Any(Any&& other) noexcept : data_(other.data_) { other.data_ = TVMFFIAny{}; }
  Any(const Any&) = delete;
  Any& operator=(const Any&) = delete;
  ~Any() {
    if (data_.type_index >= kTVMFFIStaticObjectBegin && data_.v_obj != nullptr) {
      TVMFFIObjectDecRef(data_.v_obj);
    }
  }
  TVMFFIAny data_;
};

// The one owned TVMFFIAny inside String, Bytes and Optional<String> (TVM FFI's
// details::BytesBaseCell); None (type index 0) when default-constructed.
class FFIJIT_TVM_SHIM BytesCell {
 public:
  BytesCell() noexcept : data_{} {}
  BytesCell(const BytesCell& other) noexcept : data_(other.data_) {
    if (data_.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectIncRef(data_.v_obj);
  }
  BytesCell(BytesCell&& other) noexcept : data_(std::exchange(other.data_, TVMFFIAny{})) {}
  BytesCell& operator=(BytesCell other) noexcept {
    std::swap(data_, other.data_);
    return *this;
  }
  ~BytesCell() {
    if (data_.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(data_.v_obj);
  }
  bool is_none() const noexcept { return data_.type_index == kTVMFFINone; }
  const TVMFFIAny& raw() const noexcept { return data_; }
  // The characters (empty for None).
  std::string_view view() const noexcept {
    if (data_.type_index == kTVMFFINone) return {};
    if (data_.type_index < kTVMFFIStaticObjectBegin) {
      return std::string_view(data_.v_bytes, data_.small_str_len);
    }
    const auto* bytes = reinterpret_cast<const TVMFFIByteArray*>(data_.v_obj + 1);
    return std::string_view(bytes->data, bytes->size);
  }

  TVMFFIAny data_;
};

// tvm::ffi::String: a SmallStr or a Str object; default-constructed it is the empty SmallStr.
class FFIJIT_TVM_SHIM String : public BytesCell {
 public:
  String() noexcept { data_.type_index = kTVMFFISmallStr; }
  // Adopts an owned Any holding a SmallStr or a Str object.
  static String Adopt(TVMFFIAny owned) noexcept {
    String result;
    result.data_ = owned;
    return result;
  }
  // An owned copy of `chars` (SmallStr when short).
  static String From(std::string_view chars) {
    TVMFFIByteArray bytes{chars.data(), chars.size()};
    TVMFFIAny owned{};
    if (TVMFFIStringFromByteArray(&bytes, &owned) != 0) throw std::bad_alloc();
    return Adopt(owned);
  }
};

// tvm::ffi::Bytes: a SmallBytes or a Bytes object.
class FFIJIT_TVM_SHIM Bytes : public BytesCell {
 public:
  Bytes() noexcept { data_.type_index = kTVMFFISmallBytes; }
};

template <typename T, typename = void>
class Optional;

#if FFIJIT_TVM_FFI_OPTIONAL_VALUE_IS_ANY
// tvm::ffi::Optional<int> (template arguments <int, void>): one TVMFFIAny, an Int or None.
template <>
class FFIJIT_TVM_SHIM Optional<int, void> {
 public:
  Optional(const Optional& other) noexcept : data_(other.data_) {}
  ~Optional() {}  // user-provided, as the original's Any member makes it: passed by reference
  static Optional None() noexcept { return Optional(TVMFFIAny{}); }
  static Optional Of(int value) noexcept {
    TVMFFIAny data{};
    data.type_index = kTVMFFIInt;
    data.v_int64 = value;
    return Optional(data);
  }
  bool has_value() const noexcept { return data_.type_index == kTVMFFIInt; }
  int value() const noexcept { return static_cast<int>(data_.v_int64); }
  TVMFFIAny data_;

 private:
  explicit Optional(TVMFFIAny data) noexcept : data_(data) {}
};
#else
// tvm::ffi::Optional<int> (template arguments <int, void>): a std::optional<int>, the value at
// offset 0 and the engaged flag at 4.
template <>
class FFIJIT_TVM_SHIM Optional<int, void> {
 public:
  Optional(const Optional& other) noexcept : value_(other.value_), has_value_(other.has_value_) {}
  static Optional None() noexcept { return Optional(0, false); }
  static Optional Of(int value) noexcept { return Optional(value, true); }
  bool has_value() const noexcept { return has_value_; }
  int value() const noexcept { return value_; }

 private:
  Optional(int v, bool has) noexcept : value_(v), has_value_(has) {}
  int value_;
  bool has_value_;
};
#endif

// tvm::ffi::Optional<T> for an object type T (Function, Tuple<...>, ...): one owned TVMFFIAny
// (None when empty) where FFIJIT_TVM_FFI_OPTIONAL_OBJECT_IS_ANY, else one nullable object pointer
// (ObjectRef's layout). Both are non-trivial for calls, so returned through a hidden pointer; only
// the size differs.
#if FFIJIT_TVM_FFI_OPTIONAL_OBJECT_IS_ANY
class FFIJIT_TVM_SHIM OptionalObject {
 public:
  OptionalObject() noexcept : data_{} {}
  OptionalObject(ObjectRef ref) noexcept : data_{} {  // NOLINT: implicit, as TVM's
    if (TVMFFIObject* obj = ref.release()) {
      data_.type_index = obj->type_index;
      data_.v_obj = obj;
    }
  }
  OptionalObject(const OptionalObject& other) noexcept : data_(other.data_) {
    if (defined()) TVMFFIObjectIncRef(data_.v_obj);
  }
  OptionalObject(OptionalObject&& other) noexcept
      : data_(std::exchange(other.data_, TVMFFIAny{})) {}
  OptionalObject& operator=(OptionalObject other) noexcept {
    std::swap(data_, other.data_);
    return *this;
  }
  ~OptionalObject() {
    if (defined()) TVMFFIObjectDecRef(data_.v_obj);
  }
  bool defined() const noexcept { return data_.type_index >= kTVMFFIStaticObjectBegin; }
  TVMFFIObject* get() const noexcept { return defined() ? data_.v_obj : nullptr; }
  // The object (one strong reference for the caller), or NULL; leaves None behind.
  TVMFFIObject* release() noexcept {
    TVMFFIObject* obj = get();
    data_ = TVMFFIAny{};
    return obj;
  }

 private:
  TVMFFIAny data_;
};
static_assert(sizeof(OptionalObject) == 16, "Optional<ObjectRef> is one TVMFFIAny");
#else
class FFIJIT_TVM_SHIM OptionalObject : public ObjectRef {
 public:
  OptionalObject() noexcept = default;
  OptionalObject(ObjectRef ref) noexcept : ObjectRef(std::move(ref)) {}  // NOLINT: implicit
};
static_assert(sizeof(OptionalObject) == 8, "Optional<ObjectRef> is one object pointer");
#endif

// tvm::ffi::Optional<String>: a String's cell, None when empty (the default).
template <>
class FFIJIT_TVM_SHIM Optional<String, void> : public BytesCell {
 public:
  Optional() noexcept = default;
  Optional(String value) noexcept : BytesCell(std::move(value)) {}  // NOLINT: implicit, as TVM's
};

static_assert(sizeof(ObjectRef) == sizeof(void*), "ObjectRef is one pointer");
static_assert(sizeof(Any) == 16 && sizeof(String) == 16 && sizeof(Bytes) == 16 &&
                  sizeof(Optional<String>) == 16,
              "Any, String, Bytes and Optional<String> are one TVMFFIAny");
static_assert(sizeof(Optional<int>) == (FFIJIT_TVM_FFI_OPTIONAL_VALUE_IS_ANY ? 16 : 8),
              "Optional<int> is a TVMFFIAny or a std::optional<int>");
static_assert(sizeof(Error) == 2 * sizeof(void*), "Error is a vptr and an object pointer");

// The structural comparison entry points (static members, so the classes carry no data).
class FFIJIT_TVM_SHIM StructuralEqual {
 public:
  FFIJIT_TVM_EXPORT static bool Equal(const Any& lhs, const Any& rhs, bool map_free_vars,
                                      bool skip_tensor_content);
  // Returns Optional<Tuple<AccessPath, AccessPath>>: empty when the values are equal, else a
  // two-element ffi.Array. The return type is not part of the mangled name; OptionalObject has
  // the revision's size and is returned the same way (non-trivial: through a hidden pointer).
  FFIJIT_TVM_EXPORT static OptionalObject GetFirstMismatch(const Any& lhs, const Any& rhs,
                                                           bool map_free_vars,
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
#if FFIJIT_TVM_FFI_JSON_STRINGIFY_INDENT_BY_REF
// The indent by const reference (a different mangled name from by value).
FFIJIT_TVM_EXPORT String Stringify(const Any& value, const Optional<int>& indent);
#else
FFIJIT_TVM_EXPORT String Stringify(const Any& value, Optional<int> indent);
#endif
}  // namespace json

#if FFIJIT_TVM_FFI_HAS_DATACLASS_API
// v0.1.13's dataclass operations (include/tvm/ffi/extra/dataclass.h; see extra/dataclass.cc).
FFIJIT_TVM_EXPORT String ReprPrint(const Any& value);
FFIJIT_TVM_EXPORT int64_t RecursiveHash(const Any& value);
FFIJIT_TVM_EXPORT bool RecursiveEq(const Any& lhs, const Any& rhs);
FFIJIT_TVM_EXPORT bool RecursiveLt(const Any& lhs, const Any& rhs);
FFIJIT_TVM_EXPORT bool RecursiveLe(const Any& lhs, const Any& rhs);
FFIJIT_TVM_EXPORT bool RecursiveGt(const Any& lhs, const Any& rhs);
FFIJIT_TVM_EXPORT bool RecursiveGe(const Any& lhs, const Any& rhs);
FFIJIT_TVM_EXPORT Any DeepCopy(const Any& value);

// tvm::ffi::VisitErrorContext: a reference to an `ffi.VisitErrorContext` object (see
// extra/visit_error_context.cc).
class FFIJIT_TVM_SHIM VisitErrorContext : public ObjectRef {
 public:
  // Returns Array<reflection::AccessPath> (an Array reference).
  FFIJIT_TVM_EXPORT static ObjectRef FindAccessPaths(const ObjectRef& root,
                                                     const VisitErrorContext& visit_context,
                                                     bool allow_prefix_match);
};
#endif

}  // namespace ffi
}  // namespace tvm

namespace ffijit {
namespace internal {

// The two exception types for the same error (kind, message and traceback preserved):
// tvm::ffi::Error is what header-compiled code catches from an exported C++ function;
// ffijit::Error is what the runtime's own code and GuardCBoundary handle.
[[noreturn]] inline void ThrowAsTvmError(const ffijit::Error& error) {
  throw tvm::ffi::Error(static_cast<TVMFFIObject*>(error.ToObject()));
}
// Runs `body` (the inside of an exported C++ function), rethrowing an ffijit::Error as a
// tvm::ffi::Error.
template <typename Body>
auto WithTvmErrors(Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const ffijit::Error& error) {
    ThrowAsTvmError(error);
  }
}
// Runs `body` (a call of an exported C++ function or of a C++ module's virtual member from the
// runtime's own code), rethrowing a tvm::ffi::Error as an ffijit::Error.
template <typename Body>
auto WithFfijitErrors(Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const tvm::ffi::Error& error) {
    throw ffijit::Error::FromObject(error.get());
  }
}

}  // namespace internal
}  // namespace ffijit

#endif  // FFIJIT_RUNTIME_CXX_ABI_SHIMS_H_
