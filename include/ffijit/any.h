// Any (owning) and AnyView (borrowed): the 16-byte TVMFFIAny with conversions to and from C++.
//
// Conversions follow docs/design.md's conversion contract: integers accept Int/Bool and must fit
// (300 into int8_t is a ValueError naming value and type), floats accept Float/Int/Bool, strings
// accept every str form, DataType/Device accept their tag or a parsable string, objects must be
// instances of the target type. A wrong tag is a TypeError naming what was expected and what came.
#ifndef FFIJIT_ANY_H_
#define FFIJIT_ANY_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "ffijit/dtype.h"
#include "ffijit/object.h"
#include "ffijit/string.h"

namespace ffijit {
namespace details {

// The name of a value's type in every error message (runtime, interpreter, JIT, callbacks alike):
// the signature metadata's spelling ("ptr", "ndarray", "str", an object's type key such as
// "ffi.Array"), and the kind of a plain value ("int", "float", "bool", "None").
FFIJIT_API std::string AnyTypeName(const TVMFFIAny& any);
// TypeError: expected `<expected>` but got `<type of got>`.
[[noreturn]] FFIJIT_API void ThrowMismatch(const char* expected, const TVMFFIAny& got);
// ValueError: value <got> is out of range for `<type>`.
[[noreturn]] FFIJIT_API void ThrowOutOfRange(const TVMFFIAny& got, const char* type);

// Releases the reference an owned Any holds, if any, and leaves it None.
inline void ReleaseAny(TVMFFIAny* any) noexcept {
  if (any->type_index >= kTVMFFIStaticObjectBegin && any->v_obj) DecRef(any->v_obj);
  *any = TVMFFIAny{};
}

inline bool IsStrForm(int32_t t) noexcept {
  return t == kTVMFFIRawStr || t == kTVMFFISmallStr || t == kTVMFFIStr;
}
inline bool IsBytesForm(int32_t t) noexcept {
  return t == kTVMFFIByteArrayPtr || t == kTVMFFISmallBytes || t == kTVMFFIBytes;
}

// The value-validity contract (docs/guide/05-conversion-contract.md, "Malformed values"): what
// every path checks about an incoming TVMFFIAny before it reads any byte the value points at. An
// object tag carries a non-NULL object whose header type index equals the tag or is a subtype of
// it; a SmallStr or SmallBytes holds at most 7 bytes, and a SmallStr's eighth byte is its NUL; a
// tensor (Tensor object or non-NULL DLTensorPtr) has ndim >= 0 and a shape when ndim > 0. Memory
// the caller owns and describes wrongly (a shape with too few elements, a dangling pointer) cannot
// be checked.
enum class AnyDefect : uint8_t {
  kNone,
  kNullObject,         // an object tag with a NULL object
  kObjectMismatch,     // the object's header type is neither the tag nor a subtype of it
  kSmallLength,        // SmallStr/SmallBytes longer than 7
  kSmallUnterminated,  // a SmallStr whose eighth byte is not NUL
  kTensorNdim,         // a tensor with ndim < 0
  kTensorShape,        // a tensor with ndim > 0 and a NULL shape
};

inline AnyDefect TensorDefect(const DLTensor& t) noexcept {
  if (t.ndim < 0) return AnyDefect::kTensorNdim;
  if (t.ndim > 0 && t.shape == nullptr) return AnyDefect::kTensorShape;
  return AnyDefect::kNone;
}

// The first defect of `any` under the contract above (kNone for a well-formed value). The common
// case costs one compare of the header against the tag; the subtype walk runs only on mismatch.
inline AnyDefect FindAnyDefect(const TVMFFIAny& any) noexcept {
  const int32_t tag = any.type_index;
  if (tag >= kTVMFFIStaticObjectBegin) {
    if (any.v_obj == nullptr) return AnyDefect::kNullObject;
    const int32_t header = any.v_obj->type_index;
    if (header != tag && FFIJITObjectIsInstance(header, tag) != 1) {
      return AnyDefect::kObjectMismatch;
    }
    if (tag == kTVMFFITensor)
      return TensorDefect(*reinterpret_cast<const DLTensor*>(any.v_obj + 1));
    return AnyDefect::kNone;
  }
  if (tag == kTVMFFISmallStr || tag == kTVMFFISmallBytes) {
    if (any.small_str_len > 7) return AnyDefect::kSmallLength;
    if (tag == kTVMFFISmallStr && any.v_bytes[7] != 0) return AnyDefect::kSmallUnterminated;
    return AnyDefect::kNone;
  }
  if (tag == kTVMFFIDLTensorPtr && any.v_ptr != nullptr) {
    return TensorDefect(*static_cast<const DLTensor*>(any.v_ptr));
  }
  return AnyDefect::kNone;
}

// What is wrong with `any`, e.g. "a value tagged `str` with a NULL object" (reads no more than
// FindAnyDefect did).
FFIJIT_API std::string AnyDefectText(const TVMFFIAny& any, AnyDefect defect);
// ValueError: "<where>: malformed value: <AnyDefectText>".
[[noreturn]] FFIJIT_API void ThrowMalformed(const char* where, const TVMFFIAny& any,
                                            AnyDefect defect);
// ValueError: "a called function returned a malformed value: <AnyDefectText>", for a callee's
// result that breaks the contract. Releases the reference `owned` holds, if it holds one (an object
// tag and a non-NULL object: the header counts its references whatever the tag says), exactly once
// and after the message has read the header; a NULL object is not touched.
[[noreturn]] FFIJIT_API void ThrowMalformedResult(const TVMFFIAny& owned, AnyDefect defect);
// Throws ThrowMalformed's ValueError unless `any` is well-formed.
inline void RequireWellFormed(const TVMFFIAny& any, const char* where) {
  const AnyDefect defect = FindAnyDefect(any);
  if (defect != AnyDefect::kNone) ThrowMalformed(where, any, defect);
}

// Borrowed characters of any str or bytes form (the Any must stay alive).
inline std::string_view ViewChars(const TVMFFIAny& any) noexcept {
  switch (any.type_index) {
    case kTVMFFIRawStr:
      return any.v_c_str ? std::string_view(any.v_c_str) : std::string_view();
    case kTVMFFISmallStr:
    case kTVMFFISmallBytes:
      return std::string_view(any.v_bytes, any.small_str_len);
    case kTVMFFIByteArrayPtr: {
      const auto* bytes = static_cast<const TVMFFIByteArray*>(any.v_ptr);
      return bytes ? std::string_view(bytes->data, bytes->size) : std::string_view();
    }
    default: {
      const auto* cell = reinterpret_cast<const FFIJITBytesCell*>(any.v_obj + 1);
      return std::string_view(cell->data, cell->size);
    }
  }
}

template <typename T>
constexpr const char* IntName() {
  if constexpr (std::is_signed_v<T>) {
    return sizeof(T) == 1 ? "i8" : sizeof(T) == 2 ? "i16" : sizeof(T) == 4 ? "i32" : "i64";
  } else {
    return sizeof(T) == 1 ? "u8" : sizeof(T) == 2 ? "u16" : sizeof(T) == 4 ? "u32" : "u64";
  }
}

inline TVMFFIAny MakePod(int32_t type_index) noexcept {
  TVMFFIAny any{};
  any.type_index = type_index;
  return any;
}

}  // namespace details

// TypeTraits<T>: ToAny (writes an owned Any) and FromAny (borrowing read; throws on mismatch).
template <typename T, typename = void>
struct TypeTraits {
  static constexpr bool kEnabled = false;
};

template <>
struct TypeTraits<bool> {
  static constexpr bool kEnabled = true;
  static constexpr const char* kName = "bool";
  static void ToAny(bool value, TVMFFIAny* out) noexcept {
    *out = details::MakePod(kTVMFFIBool);
    out->v_int64 = value;
  }
  static bool FromAny(const TVMFFIAny& any) {
    if (any.type_index == kTVMFFIBool || any.type_index == kTVMFFIInt) return any.v_int64 != 0;
    details::ThrowMismatch(kName, any);
  }
};

template <typename T>
struct TypeTraits<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static constexpr bool kEnabled = true;
  static constexpr const char* kName = details::IntName<T>();
  static void ToAny(T value, TVMFFIAny* out) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) == 8) {
      if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        throw Error("ValueError", "value " + std::to_string(value) + " does not fit in `int`");
      }
    }
    *out = details::MakePod(kTVMFFIInt);
    out->v_int64 = static_cast<int64_t>(value);
  }
  static T FromAny(const TVMFFIAny& any) {
    if (any.type_index != kTVMFFIInt && any.type_index != kTVMFFIBool) {
      details::ThrowMismatch(kName, any);
    }
    int64_t value = any.v_int64;
    if constexpr (std::is_signed_v<T>) {
      if (value < std::numeric_limits<T>::min() || value > std::numeric_limits<T>::max()) {
        details::ThrowOutOfRange(any, kName);
      }
    } else {
      if (value < 0 || static_cast<uint64_t>(value) > std::numeric_limits<T>::max()) {
        details::ThrowOutOfRange(any, kName);
      }
    }
    return static_cast<T>(value);
  }
};

template <typename T>
struct TypeTraits<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  static constexpr bool kEnabled = true;
  static constexpr const char* kName = sizeof(T) == 4 ? "f32" : "f64";
  static void ToAny(T value, TVMFFIAny* out) noexcept {
    *out = details::MakePod(kTVMFFIFloat);
    out->v_float64 = static_cast<double>(value);
  }
  static T FromAny(const TVMFFIAny& any) {
    if (any.type_index == kTVMFFIFloat) return static_cast<T>(any.v_float64);
    if (any.type_index == kTVMFFIInt || any.type_index == kTVMFFIBool) {
      return static_cast<T>(any.v_int64);
    }
    details::ThrowMismatch(kName, any);
  }
};

template <>
struct TypeTraits<void*> {
  static constexpr bool kEnabled = true;
  static constexpr const char* kName = "ptr";
  static void ToAny(void* value, TVMFFIAny* out) noexcept {
    *out = details::MakePod(value ? kTVMFFIOpaquePtr : kTVMFFINone);
    out->v_ptr = value;
  }
  static void* FromAny(const TVMFFIAny& any) {
    if (any.type_index == kTVMFFIOpaquePtr) return any.v_ptr;
    if (any.type_index == kTVMFFINone) return nullptr;
    details::ThrowMismatch(kName, any);
  }
};

template <>
struct TypeTraits<std::nullptr_t> {
  static constexpr bool kEnabled = true;
  static constexpr const char* kName = "None";
  static void ToAny(std::nullptr_t, TVMFFIAny* out) noexcept { *out = TVMFFIAny{}; }
  static std::nullptr_t FromAny(const TVMFFIAny& any) {
    if (any.type_index == kTVMFFINone) return nullptr;
    details::ThrowMismatch(kName, any);
  }
};

// String and Bytes: owned copies; a RawStr or ByteArrayPtr view becomes a new owned string.
template <bool kIsStr>
struct TypeTraits<details::OwnedBytes<kIsStr>> {
  using Owned = details::OwnedBytes<kIsStr>;
  static constexpr bool kEnabled = true;
  static constexpr const char* kName = kIsStr ? "str" : "bytes";
  static void ToAny(const Owned& value, TVMFFIAny* out) noexcept { *out = Owned(value).release(); }
  static Owned FromAny(const TVMFFIAny& any) {
    bool accepted =
        kIsStr ? details::IsStrForm(any.type_index)
               : details::IsBytesForm(any.type_index) || details::IsStrForm(any.type_index);
    if (!accepted) details::ThrowMismatch(kName, any);
    details::RequireWellFormed(any, nullptr);
    if (any.type_index == Owned::kSmallIndex || any.type_index == Owned::kHeapIndex) {
      return CopyOf(any);
    }
    return Owned(details::ViewChars(any));
  }

 private:
  static Owned CopyOf(const TVMFFIAny& any) noexcept {
    if (any.type_index >= kTVMFFIStaticObjectBegin) details::IncRef(any.v_obj);
    return Owned::AdoptAny(any);
  }
};

template <>
struct TypeTraits<std::string> {
  static constexpr bool kEnabled = true;
  static constexpr const char* kName = "str";
  static void ToAny(const std::string& value, TVMFFIAny* out) { *out = String(value).release(); }
  static std::string FromAny(const TVMFFIAny& any) {
    if (!details::IsStrForm(any.type_index)) details::ThrowMismatch(kName, any);
    details::RequireWellFormed(any, nullptr);
    return std::string(details::ViewChars(any));
  }
};

// Borrowed: valid while the Any it came from lives.
template <>
struct TypeTraits<std::string_view> {
  static constexpr bool kEnabled = true;
  static constexpr const char* kName = "str";
  static void ToAny(std::string_view value, TVMFFIAny* out) { *out = String(value).release(); }
  static std::string_view FromAny(const TVMFFIAny& any) {
    if (!details::IsStrForm(any.type_index)) details::ThrowMismatch(kName, any);
    details::RequireWellFormed(any, nullptr);
    return details::ViewChars(any);
  }
};

// Borrowed and NUL-terminated: valid while the Any it came from lives.
template <>
struct TypeTraits<const char*> {
  static constexpr bool kEnabled = true;
  static constexpr const char* kName = "str";
  // NULL becomes None, like every other NULL pointer result.
  static void ToAny(const char* value, TVMFFIAny* out) {
    *out = value ? String(value).release() : TVMFFIAny{};
  }
  // A SmallStr or Str with a NUL inside would end the C string early: a ValueError, never cut
  // short (a RawStr cannot hold one).
  static const char* FromAny(const TVMFFIAny& any) {
    if (!details::IsStrForm(any.type_index)) details::ThrowMismatch(kName, any);
    details::RequireWellFormed(any, nullptr);
    if (any.type_index == kTVMFFIRawStr) return any.v_c_str;
    const std::string_view chars = details::ViewChars(any);
    const size_t nul = chars.find('\0');
    if (nul != std::string_view::npos) {
      throw Error("ValueError", "the str contains a NUL character (at byte " + std::to_string(nul) +
                                    " of " + std::to_string(chars.size()) +
                                    "), which a C string would cut short; take it as a "
                                    "std::string or pass bytes instead");
    }
    return chars.data();
  }
};

template <typename T>
struct TypeTraits<T,
                  std::enable_if_t<std::is_same_v<T, DLDataType> || std::is_same_v<T, DataType>>> {
  static constexpr bool kEnabled = true;
  static constexpr const char* kName = "DataType";
  static void ToAny(const T& value, TVMFFIAny* out) noexcept {
    *out = details::MakePod(kTVMFFIDataType);
    out->v_dtype = value;
  }
  static T FromAny(const TVMFFIAny& any) {
    if (any.type_index == kTVMFFIDataType) return any.v_dtype;
    if (details::IsStrForm(any.type_index)) {
      details::RequireWellFormed(any, nullptr);
      return ParseDataType(details::ViewChars(any));
    }
    details::ThrowMismatch(kName, any);
  }
};

template <typename T>
struct TypeTraits<T, std::enable_if_t<std::is_same_v<T, DLDevice> || std::is_same_v<T, Device>>> {
  static constexpr bool kEnabled = true;
  static constexpr const char* kName = "Device";
  static void ToAny(const T& value, TVMFFIAny* out) noexcept {
    *out = details::MakePod(kTVMFFIDevice);
    out->v_device = value;
  }
  static T FromAny(const TVMFFIAny& any) {
    if (any.type_index == kTVMFFIDevice) return any.v_device;
    if (details::IsStrForm(any.type_index)) {
      details::RequireWellFormed(any, nullptr);
      return ParseDevice(details::ViewChars(any));
    }
    details::ThrowMismatch(kName, any);
  }
};

// Object references: None gives a null reference; other objects must be instances of T.
template <typename T>
struct TypeTraits<T, std::enable_if_t<std::is_base_of_v<ObjectRef, T>>> {
  static constexpr bool kEnabled = true;
  static constexpr const char* kName = T::kTypeKey;
  static void ToAny(const T& value, TVMFFIAny* out) noexcept {
    *out = TVMFFIAny{};
    if (TVMFFIObject* obj = value.get()) {
      details::IncRef(obj);
      out->type_index = obj->type_index;
      out->v_obj = obj;
    }
  }
  static T FromAny(const TVMFFIAny& any) {
    if (any.type_index == kTVMFFINone) return T();
    if (any.type_index < kTVMFFIStaticObjectBegin || !IsInstance(any.type_index, T::kTypeIndex)) {
      details::ThrowMismatch(kName, any);
    }
    details::RequireWellFormed(any, nullptr);
    return T(ObjectPtr<>::Borrow(any.v_obj));
  }
};

template <typename T>
struct TypeTraits<std::optional<T>, std::enable_if_t<TypeTraits<T>::kEnabled>> {
  static constexpr bool kEnabled = true;
  static constexpr const char* kName = TypeTraits<T>::kName;
  static void ToAny(const std::optional<T>& value, TVMFFIAny* out) {
    if (value) {
      TypeTraits<T>::ToAny(*value, out);
    } else {
      *out = TVMFFIAny{};
    }
  }
  static std::optional<T> FromAny(const TVMFFIAny& any) {
    if (any.type_index == kTVMFFINone) return std::nullopt;
    return TypeTraits<T>::FromAny(any);
  }
};

class AnyView;

namespace details {
template <typename T>
struct HasTypeTraits : std::bool_constant<TypeTraits<T>::kEnabled> {};
}  // namespace details

// An owned value: holds one reference when it holds an object. Never holds RawStr/ByteArrayPtr.
class Any {
 public:
  Any() noexcept : data_{} {}
  Any(const Any& other) noexcept : data_(other.data_) {
    if (data_.type_index >= kTVMFFIStaticObjectBegin && data_.v_obj) details::IncRef(data_.v_obj);
  }
  Any(Any&& other) noexcept : data_(std::exchange(other.data_, TVMFFIAny{})) {}
  Any& operator=(Any other) noexcept {
    std::swap(data_, other.data_);
    return *this;
  }
  ~Any() { details::ReleaseAny(&data_); }

  // conjunction short-circuits: TypeTraits<Any> must not be instantiated before it is defined.
  template <typename T, typename U = std::remove_cv_t<std::remove_reference_t<T>>,
            typename = std::enable_if_t<std::conjunction_v<
                std::negation<std::is_same<U, Any>>, details::HasTypeTraits<std::decay_t<T>>>>>
  Any(T&& value) : data_{} {  // NOLINT: implicit by design, like TVM FFI's Any
    TypeTraits<std::decay_t<T>>::ToAny(value, &data_);
  }

  // Takes ownership of an owned TVMFFIAny (e.g. a call's result).
  static Any Adopt(const TVMFFIAny& owned) noexcept {
    Any result;
    result.data_ = owned;
    return result;
  }
  // Gives the value and its reference to the caller.
  TVMFFIAny release() noexcept { return std::exchange(data_, TVMFFIAny{}); }

  const TVMFFIAny& raw() const noexcept { return data_; }
  int32_t type_index() const noexcept { return data_.type_index; }
  bool is_none() const noexcept { return data_.type_index == kTVMFFINone; }
  std::string type_name() const { return details::AnyTypeName(data_); }

  template <typename T>
  T cast() const {
    return TypeTraits<T>::FromAny(data_);
  }
  template <typename T>
  std::optional<T> try_cast() const {
    try {
      return TypeTraits<T>::FromAny(data_);
    } catch (const Error&) {
      return std::nullopt;
    }
  }

 private:
  TVMFFIAny data_;
};

// A borrowed value: no reference held; may hold RawStr/ByteArrayPtr views.
class AnyView {
 public:
  AnyView() noexcept : data_{} {}
  AnyView(const TVMFFIAny& raw) noexcept : data_(raw) {}      // NOLINT
  AnyView(const Any& owned) noexcept : data_(owned.raw()) {}  // NOLINT

  const TVMFFIAny& raw() const noexcept { return data_; }
  int32_t type_index() const noexcept { return data_.type_index; }
  bool is_none() const noexcept { return data_.type_index == kTVMFFINone; }
  std::string type_name() const { return details::AnyTypeName(data_); }

  template <typename T>
  T cast() const {
    return TypeTraits<T>::FromAny(data_);
  }
  template <typename T>
  std::optional<T> try_cast() const {
    try {
      return TypeTraits<T>::FromAny(data_);
    } catch (const Error&) {
      return std::nullopt;
    }
  }
  // An owned copy: RawStr becomes a String, ByteArrayPtr a Bytes, objects gain a reference.
  Any ToOwned() const {
    TVMFFIAny owned{};
    CheckCall(TVMFFIAnyViewToOwnedAny(&data_, &owned));
    return Any::Adopt(owned);
  }

 private:
  TVMFFIAny data_;
};

template <>
struct TypeTraits<Any> {
  static constexpr bool kEnabled = true;
  static constexpr const char* kName = "Any";
  static void ToAny(const Any& value, TVMFFIAny* out) noexcept { *out = Any(value).release(); }
  static Any FromAny(const TVMFFIAny& any) { return AnyView(any).ToOwned(); }
};

template <>
struct TypeTraits<AnyView> {
  static constexpr bool kEnabled = true;
  static constexpr const char* kName = "Any";
  static void ToAny(const AnyView& value, TVMFFIAny* out) { *out = value.ToOwned().release(); }
  // Checked like a native `any` parameter: a typed callable never sees a malformed value.
  static AnyView FromAny(const TVMFFIAny& any) {
    details::RequireWellFormed(any, nullptr);
    return AnyView(any);
  }
};

static_assert(sizeof(Any) == sizeof(TVMFFIAny), "Any is layout-compatible with TVMFFIAny");
static_assert(sizeof(AnyView) == sizeof(TVMFFIAny), "AnyView is layout-compatible with TVMFFIAny");

}  // namespace ffijit

#endif  // FFIJIT_ANY_H_
