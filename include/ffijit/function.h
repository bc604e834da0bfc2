// Function: a packed function object, made from a packed C++ callable, a typed C++ callable (with
// compile-time argument conversion) or a C safe_call, and callable with C++ arguments.
//
// C++ exceptions inside a function become raised Errors at the C boundary; an Error raised by a
// callee comes back to a C++ caller as ffijit::Error with kind, message and traceback intact.
#ifndef FFIJIT_FUNCTION_H_
#define FFIJIT_FUNCTION_H_

#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ffijit/any.h"
#include "ffijit/object.h"

namespace ffijit {
namespace details {

// Return and argument types of any callable (function, function pointer, lambda, functor).
template <typename F>
struct FunctionTraits : FunctionTraits<decltype(&F::operator())> {};
template <typename R, typename... A>
struct FunctionTraits<R(A...)> {
  using Return = R;
  using Args = std::tuple<A...>;
  static constexpr size_t kArity = sizeof...(A);
};
template <typename R, typename... A>
struct FunctionTraits<R (*)(A...)> : FunctionTraits<R(A...)> {};
template <typename R, typename... A>
struct FunctionTraits<R (*)(A...) noexcept> : FunctionTraits<R(A...)> {};
template <typename C, typename R, typename... A>
struct FunctionTraits<R (C::*)(A...)> : FunctionTraits<R(A...)> {};
template <typename C, typename R, typename... A>
struct FunctionTraits<R (C::*)(A...) const> : FunctionTraits<R(A...)> {};
template <typename C, typename R, typename... A>
struct FunctionTraits<R (C::*)(A...) noexcept> : FunctionTraits<R(A...)> {};
template <typename C, typename R, typename... A>
struct FunctionTraits<R (C::*)(A...) const noexcept> : FunctionTraits<R(A...)> {};

// A typed callable and the name its errors mention.
template <typename F>
struct TypedCallable {
  F callable;
  std::string name;
};

template <typename F, size_t I>
auto ConvertArgument(const TypedCallable<F>& typed, const TVMFFIAny* args) {
  using Arg = std::decay_t<std::tuple_element_t<I, typename FunctionTraits<F>::Args>>;
  static_assert(TypeTraits<Arg>::kEnabled, "FromTyped: no conversion for this argument type");
  try {
    return TypeTraits<Arg>::FromAny(args[I]);
  } catch (const Error& e) {
    throw Error(e.kind(), "Mismatched type on argument #" + std::to_string(I) + " when calling `" +
                              typed.name + "`: " + e.message());
  }
}

template <typename F, size_t... I>
void InvokeTyped(const TypedCallable<F>& typed, const TVMFFIAny* args, TVMFFIAny* result,
                 std::index_sequence<I...>) {
  using Return = typename FunctionTraits<F>::Return;
  if constexpr (std::is_void_v<Return>) {
    typed.callable(ConvertArgument<F, I>(typed, args)...);
    *result = TVMFFIAny{};
  } else {
    static_assert(TypeTraits<std::decay_t<Return>>::kEnabled,
                  "FromTyped: no conversion for the return type");
    TypeTraits<std::decay_t<Return>>::ToAny(typed.callable(ConvertArgument<F, I>(typed, args)...),
                                            result);
  }
}

template <typename F>
int CallTyped(const TypedCallable<F>& typed, const TVMFFIAny* args, int32_t num_args,
              TVMFFIAny* result) noexcept {
  constexpr size_t kArity = FunctionTraits<F>::kArity;
  if (static_cast<size_t>(num_args) != kArity) {
    return GuardCBoundary([&] {
      throw Error("TypeError", "Mismatched number of arguments when calling `" + typed.name +
                                   "`: expected " + std::to_string(kArity) + " but got " +
                                   std::to_string(num_args));
    });
  }
  return GuardCBoundary(
      [&] { InvokeTyped(typed, args, result, std::make_index_sequence<kArity>{}); });
}

// safe_call receiving the user handle (the TVMFFIFunctionCreate convention).
template <typename F>
int TypedSelfCall(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return CallTyped(*static_cast<const TypedCallable<F>*>(self), args, num_args, result);
}

// safe_call receiving the Function object (installed directly: saves the trampoline hop).
template <typename F>
int TypedObjectCall(void* handle, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  const auto* cell =
      reinterpret_cast<const FFIJITFunctionCell*>(static_cast<TVMFFIObject*>(handle) + 1);
  return CallTyped(*static_cast<const TypedCallable<F>*>(cell->self), args, num_args, result);
}

template <typename F>
void DeleteTyped(void* self) {
  delete static_cast<TypedCallable<F>*>(self);
}

}  // namespace details

class Function : public ObjectRef {
 public:
  static constexpr int32_t kTypeIndex = kTVMFFIFunction;
  static constexpr const char* kTypeKey = "ffi.Function";
  // A packed body: reads `num_args` borrowed arguments, writes the result.
  using PackedBody = std::function<void(const AnyView* args, int32_t num_args, Any* result)>;

  Function() noexcept = default;
  explicit Function(ObjectPtr<> ptr) noexcept : ObjectRef(std::move(ptr)) {}

  // Adopts one strong reference to a Function object (e.g. from TVMFFIFunctionGetGlobal).
  static Function Adopt(TVMFFIObjectHandle owned) noexcept {
    return Function(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(owned)));
  }

  // From a C safe_call and its handle; `deleter(self)` runs when the function dies.
  static Function FromSafeCall(void* self, TVMFFISafeCallType safe_call,
                               void (*deleter)(void* self)) {
    TVMFFIObjectHandle handle = nullptr;
    CheckCall(TVMFFIFunctionCreate(self, safe_call, deleter, &handle));
    return Adopt(handle);
  }

  static Function FromPacked(PackedBody body) {
    auto* owned = new PackedBody(std::move(body));
    return FromSafeCall(owned, &PackedSelfCall, &DeletePacked);
  }

  // From a typed callable: arguments are converted per the conversion contract, the result boxed.
  template <typename F>
  static Function FromTyped(F callable, std::string name = "<anonymous>") {
    using Callable = std::decay_t<F>;
    auto* typed = new details::TypedCallable<Callable>{std::move(callable), std::move(name)};
    Function result =
        FromSafeCall(typed, &details::TypedSelfCall<Callable>, &details::DeleteTyped<Callable>);
    auto* cell = reinterpret_cast<FFIJITFunctionCell*>(result.get() + 1);
    __atomic_store_n(&cell->cell.safe_call, &details::TypedObjectCall<Callable>, __ATOMIC_RELAXED);
    return result;
  }

  template <typename... Args>
  Any operator()(Args&&... args) const {
    if constexpr (sizeof...(Args) == 0) {
      return CallPacked(nullptr, 0);
    } else {
      Any packed[] = {Any(std::forward<Args>(args))...};
      return CallPacked(reinterpret_cast<TVMFFIAny*>(packed), sizeof...(Args));
    }
  }

  // Calls with raw arguments; throws the callee's Error on failure.
  Any CallPacked(TVMFFIAny* args, int32_t num_args) const {
    TVMFFIAny result{};
    CheckCall(TVMFFIFunctionCall(get(), args, num_args, &result));
    return Any::Adopt(result);
  }

 private:
  static int PackedSelfCall(void* self, const TVMFFIAny* args, int32_t num_args,
                            TVMFFIAny* result) {
    return GuardCBoundary([&] {
      Any value;
      (*static_cast<const PackedBody*>(self))(reinterpret_cast<const AnyView*>(args), num_args,
                                              &value);
      *result = value.release();
    });
  }
  static void DeletePacked(void* self) { delete static_cast<PackedBody*>(self); }
};

}  // namespace ffijit

#endif  // FFIJIT_FUNCTION_H_
