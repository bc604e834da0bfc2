// TypedFunction<R(Args...)>: a typed C++ handle to any Function, which calls a native directly
// when it can and packed otherwise.
//
// Made from a Function that ffijit bound to a native (MakeFunction/Register, FFIJITMakeFunction)
// whose signature the C++ types match exactly -- the same widths and signedness, the same result,
// the plain convention -- the handle calls the native's address with the C++ arguments: a direct
// call, no packing, no thunk. That is decided once, when the handle is made, and only for types
// whose conversion can never fail (integers, bool, float, double, void*, DLDataType, DLDevice;
// (not 64-bit unsigned), so the direct call raises no error the packed call would have raised. Any
// other Function (a different signature, a packed or typed C++ function, a status-convention
// native, strings, tensors, objects) is called packed, exactly as Function::operator() calls it:
// the arguments packed as borrowed views, the callee's errors thrown as ffijit::Error, and the
// result cast to R (a TypeError when it is not one).
//
//   TypedFunction<int64_t(int64_t, int64_t)> add(MakeFunction("add", &add_native));
//   int64_t three = add(1, 2);   // add.is_direct(): a plain call of add_native
#ifndef FFIJIT_JIT_TYPED_FUNCTION_H_
#define FFIJIT_JIT_TYPED_FUNCTION_H_

#include <type_traits>
#include <utility>

#include "ffijit/export.h"
#include "ffijit/function.h"
#include "ffijit/reflect/deduce.h"
#include "ffijit/reflect/signature.h"

namespace ffijit {
namespace details {

// C++ types a native can be called with directly: their packed conversion cannot fail either way,
// so the direct call and the packed one agree on every value (narrow integers arrive in range by
// type). Not 64-bit unsigned: above INT64_MAX it has no Int, and the packed call raises.
template <typename T>
constexpr bool DirectCallable() {
  if constexpr (std::is_integral_v<T>) {
    return sizeof(T) <= 8 && !(std::is_unsigned_v<T> && sizeof(T) == 8);
  } else {
    return std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, void*> ||
           std::is_same_v<T, DLDataType> || std::is_same_v<T, DLDevice>;
  }
}
template <typename T>
inline constexpr bool kDirectCallable = DirectCallable<T>();
// A result a direct call may return: one of those, or none.
template <typename R>
inline constexpr bool kDirectResult = std::is_void_v<R> || DirectCallable<R>();

// The native's address when `function` is a function ffijit bound to a native with exactly
// `signature` (plain convention, every argument a scalar, pointer, DLDataType or DLDevice, no
// structure paths); nullptr otherwise, including for a null function.
FFIJIT_JIT_API void* DirectNativeTarget(TVMFFIObjectHandle function, const Signature& signature);

}  // namespace details

// TypedFunction's packed fallback reads a result tagged below kTVMFFIDLTensorPtr without owning it.
static_assert(kTVMFFINone == 0 && kTVMFFIDevice + 1 == kTVMFFIDLTensorPtr,
              "the scalar forms are the tags below kTVMFFIDLTensorPtr");

template <typename Signature>
class TypedFunction;

template <typename R, typename... Args>
class TypedFunction<R(Args...)> {
 public:
  using Native = R (*)(Args...);

  TypedFunction() noexcept = default;
  // Binds `function`; whether calls go direct is decided here, once.
  explicit TypedFunction(Function function) : function_(std::move(function)) {
    if constexpr ((std::is_void_v<R> ||
                   details::kDirectCallable<R>)&&(details::kDirectCallable<Args> && ...)) {
      if (function_.get() != nullptr) {
        direct_ = reinterpret_cast<Native>(
            details::DirectNativeTarget(function_.get(), SignatureOf<Native>()));
      }
    }
  }

  // Calls the native directly, or packed (throwing the callee's ffijit::Error, a TypeError when
  // the result is not an R, and a ValueError for a null function).
  R operator()(Args... args) const {
    if (direct_ != nullptr) return direct_(args...);
    return CallPacked(args...);
  }

  // True when calls go straight to the native.
  bool is_direct() const noexcept { return direct_ != nullptr; }
  const Function& function() const noexcept { return function_; }

 private:
  // Out of line, so that where operator() is inlined the direct path stays a load, a test and the
  // call, without the packed path's registers and stack around it.
  [[gnu::noinline]] R CallPacked(Args... args) const {
    const TVMFFIAny result = function_.CallRaw(args...);
    if constexpr (!std::is_void_v<R>) {
      // A scalar form (None through Device) holds no reference and has no malformed shape, so
      // it converts in place; anything else is checked and owned as Function::operator() does.
      if (result.type_index < kTVMFFIDLTensorPtr) return TypeTraits<R>::FromAny(result);
      return Function::AdoptResult(result).template cast<R>();
    } else {
      Function::AdoptResult(result);
    }
  }

  Function function_;  // keeps the native's binding (and so its address) alive
  Native direct_ = nullptr;
};

}  // namespace ffijit

#endif  // FFIJIT_JIT_TYPED_FUNCTION_H_
