// SignatureOf<F>(): the Signature of a plain C/C++ function type, deduced at compile time.
//
//   int64_t add(int64_t, int64_t);
//   Signature sig = SignatureOf<decltype(add)>();   // or SignatureOf<decltype(&add)>()
//
// Parameter and result types map as follows; anything else fails to compile with a static_assert.
//   bool -> i1; other integers -> i8..i64 / u8..u64 by size and signedness; float -> f32;
//   double -> f64; void* -> ptr; const char* -> str; TVMFFIByteArray -> bytes;
//   DLTensor* -> ndarray<any> (element and rank unchecked); DLDataType -> DataType;
//   DLDevice -> Device; TVMFFIObject* -> object; const TVMFFIAny* -> any (unknown);
//   a void result -> no results. Parameter names are not part of a C++ type, so no argument is
//   named.
#ifndef FFIJIT_REFLECT_DEDUCE_H_
#define FFIJIT_REFLECT_DEDUCE_H_

#include <cstdint>
#include <type_traits>

#include "ffijit/c_api.h"
#include "ffijit/reflect/signature.h"

namespace ffijit {
namespace deduce_detail {

template <typename T>
struct AlwaysFalse : std::false_type {};

template <typename T, typename Enable = void>
struct TypeOf {
  static_assert(AlwaysFalse<T>::value,
                "ffijit::SignatureOf: unsupported parameter or result type; supported are bool, "
                "integers, float, double, void*, const char*, TVMFFIByteArray, DLTensor*, "
                "DLDataType, DLDevice, TVMFFIObject* and const TVMFFIAny*");
  static TypePtr Make() { return nullptr; }
};

template <size_t Size, bool Signed>
constexpr ScalarKind IntegerKind() {
  static_assert(Size == 1 || Size == 2 || Size == 4 || Size == 8,
                "ffijit::SignatureOf: integers must be 8, 16, 32 or 64 bits wide");
  if (Size == 1) return Signed ? ScalarKind::kI8 : ScalarKind::kU8;
  if (Size == 2) return Signed ? ScalarKind::kI16 : ScalarKind::kU16;
  if (Size == 4) return Signed ? ScalarKind::kI32 : ScalarKind::kU32;
  return Signed ? ScalarKind::kI64 : ScalarKind::kU64;
}

template <typename T>
struct TypeOf<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static TypePtr Make() { return Type::Scalar(IntegerKind<sizeof(T), std::is_signed_v<T>>()); }
};

template <ScalarKind K>
struct ScalarType {
  static TypePtr Make() { return Type::Scalar(K); }
};
template <TypeKind K>
struct SimpleType {
  static TypePtr Make() { return Type::Simple(K); }
};

template <>
struct TypeOf<bool> : ScalarType<ScalarKind::kI1> {};
template <>
struct TypeOf<float> : ScalarType<ScalarKind::kF32> {};
template <>
struct TypeOf<double> : ScalarType<ScalarKind::kF64> {};
template <>
struct TypeOf<void*> : SimpleType<TypeKind::kOpaquePtr> {};
template <>
struct TypeOf<const char*> : SimpleType<TypeKind::kStr> {};
template <>
struct TypeOf<TVMFFIByteArray> : SimpleType<TypeKind::kBytes> {};
template <>
struct TypeOf<DLDataType> : SimpleType<TypeKind::kDataType> {};
template <>
struct TypeOf<DLDevice> : SimpleType<TypeKind::kDevice> {};
template <>
struct TypeOf<const TVMFFIAny*> : SimpleType<TypeKind::kUnknown> {};
template <>
struct TypeOf<DLTensor*> {
  static TypePtr Make() { return Type::NDArray(ScalarKind::kAny, -1, {}); }
};
template <>
struct TypeOf<TVMFFIObject*> {
  static TypePtr Make() { return Type::Object(); }
};

template <typename F>
struct FunctionTraits {
  static_assert(AlwaysFalse<F>::value,
                "ffijit::SignatureOf: expected a plain function type or function pointer, e.g. "
                "SignatureOf<decltype(f)>() or SignatureOf<decltype(&f)>()");
  static Signature Make() { return Signature(); }
};

template <typename R, typename... Args>
struct FunctionTraits<R(Args...)> {
  static Signature Make() {
    Signature sig;
    sig.args = {TypeOf<std::remove_cv_t<Args>>::Make()...};
    if constexpr (!std::is_void_v<R>) sig.results.push_back(TypeOf<std::remove_cv_t<R>>::Make());
    return sig;
  }
};
template <typename R, typename... Args>
struct FunctionTraits<R(Args...) noexcept> : FunctionTraits<R(Args...)> {};
template <typename F>
struct FunctionTraits<F*> : FunctionTraits<F> {};
template <typename F>
struct FunctionTraits<F* const> : FunctionTraits<F> {};

}  // namespace deduce_detail

// The Signature of function type (or function pointer type) F.
template <typename F>
Signature SignatureOf() {
  return deduce_detail::FunctionTraits<F>::Make();
}

}  // namespace ffijit

#endif  // FFIJIT_REFLECT_DEDUCE_H_
