// Function: a packed function object, made from a packed C++ callable, a typed C++ callable (with
// compile-time argument conversion) or a C safe_call, and callable with C++ arguments.
//
// C++ exceptions inside a function become raised Errors at the C boundary; an Error raised by a
// callee comes back to a C++ caller as ffijit::Error with kind, message and traceback intact.
//
// A C++ call (`f(a, b)`) packs its arguments as borrowed views, the packed-call ABI's convention:
// objects (Tensor, String, any ObjectRef) travel without a reference count operation, strings as
// borrowed characters (see ArgPacker below for the few values that need a temporary copy).
#ifndef FFIJIT_FUNCTION_H_
#define FFIJIT_FUNCTION_H_

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
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

// ArgPacker<T>::Pack writes the view of one Function::operator() argument into `*view`. A value
// with no borrowed form is converted into `*keep`, which the caller keeps alive for the call;
// kMayKeep says whether Pack can need `keep` at all (when no argument can, none is made).
template <typename T, typename = void>
struct ArgPacker {
  // Anything else with TypeTraits (e.g. a user-defined conversion): an owned temporary.
  static constexpr bool kMayKeep = true;
  static void Pack(const T& value, TVMFFIAny* view, Any* keep) {
    *keep = Any(value);
    *view = keep->raw();
  }
};

// Scalars, pointers, None, DataType and Device: the value itself; nothing is owned.
template <typename T>
struct ArgPacker<T, std::enable_if_t<std::is_arithmetic_v<T> || std::is_same_v<T, void*> ||
                                     std::is_same_v<T, std::nullptr_t> ||
                                     std::is_same_v<T, DLDataType> || std::is_same_v<T, DataType> ||
                                     std::is_same_v<T, DLDevice> || std::is_same_v<T, Device>>> {
  static constexpr bool kMayKeep = false;
  static void Pack(const T& value, TVMFFIAny* view, Any*) { TypeTraits<T>::ToAny(value, view); }
};

// Objects (Tensor, Function, Array, ...): the caller's pointer, borrowed; null is None.
template <typename T>
struct ArgPacker<T, std::enable_if_t<std::is_base_of_v<ObjectRef, T>>> {
  static constexpr bool kMayKeep = false;
  static void Pack(const T& value, TVMFFIAny* view, Any*) noexcept {
    *view = TVMFFIAny{};
    if (TVMFFIObject* obj = value.get()) {
      view->type_index = obj->type_index;
      view->v_obj = obj;
    }
  }
};

// String and Bytes: their small form by value, their heap object borrowed.
template <bool kIsStr>
struct ArgPacker<OwnedBytes<kIsStr>> {
  static constexpr bool kMayKeep = false;
  static void Pack(const OwnedBytes<kIsStr>& value, TVMFFIAny* view, Any*) noexcept {
    *view = value.any();
  }
};

template <typename T>
struct ArgPacker<T, std::enable_if_t<std::is_same_v<T, Any> || std::is_same_v<T, AnyView>>> {
  static constexpr bool kMayKeep = false;
  static void Pack(const T& value, TVMFFIAny* view, Any*) noexcept { *view = value.raw(); }
};

// A C string: RawStr, borrowed; NULL is None (as TypeTraits<const char*> converts it).
template <typename T>
struct ArgPacker<T, std::enable_if_t<std::is_same_v<T, const char*> || std::is_same_v<T, char*>>> {
  static constexpr bool kMayKeep = false;
  static void Pack(const char* value, TVMFFIAny* view, Any*) noexcept {
    *view = TVMFFIAny{};
    if (value != nullptr) {
      view->type_index = kTVMFFIRawStr;
      view->v_c_str = value;
    }
  }
};

// Characters a RawStr cannot carry whole: up to 7 bytes travel inline (SmallStr, no allocation);
// longer ones become a String for the call. Never truncated.
inline void PackCopiedStr(std::string_view text, TVMFFIAny* view, Any* keep) {
  *keep = Any(String(text));
  *view = keep->raw();
}

// std::string: RawStr over its own NUL-terminated buffer, unless it holds a NUL itself (a RawStr
// would end there) or is short enough to travel inline.
template <>
struct ArgPacker<std::string> {
  static constexpr bool kMayKeep = true;
  static void Pack(const std::string& value, TVMFFIAny* view, Any* keep) {
    if (value.size() > String::kMaxInline &&
        std::memchr(value.data(), '\0', value.size()) == nullptr) {
      *view = TVMFFIAny{};
      view->type_index = kTVMFFIRawStr;
      view->v_c_str = value.c_str();
      return;
    }
    PackCopiedStr(value, view, keep);
  }
};

// std::string_view has no terminator to lend a RawStr: inline up to 7 bytes, else a String.
template <>
struct ArgPacker<std::string_view> {
  static constexpr bool kMayKeep = true;
  static void Pack(std::string_view value, TVMFFIAny* view, Any* keep) {
    PackCopiedStr(value, view, keep);
  }
};

template <typename T>
struct ArgPacker<std::optional<T>> {
  static constexpr bool kMayKeep = ArgPacker<T>::kMayKeep;
  static void Pack(const std::optional<T>& value, TVMFFIAny* view, Any* keep) {
    if (value) {
      ArgPacker<T>::Pack(*value, view, keep);
    } else {
      *view = TVMFFIAny{};
    }
  }
};

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

  // Calls with C++ arguments, packed as borrowed views (details::ArgPacker); throws the callee's
  // Error on failure, and a ValueError on a null Function or a malformed result
  // (docs/guide/05-conversion-contract.md, "Malformed values"; the result's reference is released).
  template <typename... Args>
  Any operator()(Args&&... args) const {
    return AdoptResult(CallRaw(args...));
  }

  // Calls with raw arguments; throws the callee's Error on failure (and a ValueError for a
  // malformed result, which it releases).
  Any CallPacked(TVMFFIAny* args, int32_t num_args) const {
    TVMFFIAny result{};
    CheckCall(TVMFFIFunctionCall(get(), args, num_args, &result));
    return AdoptResult(result);
  }

 private:
  // Enters the function's safe_call directly. Of TVMFFIFunctionCall's checks only the null test
  // applies here: the arguments and result are this class's own, and a Function reference holds a
  // Function (or subtype) object, whose cell is where every Function keeps its entry point.
  // Returns the callee's result as it came: owned, not yet checked (AdoptResult checks it).
  TVMFFIAny CallViews(TVMFFIAny* args, int32_t num_args) const {
    TVMFFIObject* obj = get();
    if (obj == nullptr) throw Error("ValueError", "cannot call a null Function");
    auto* cell = reinterpret_cast<TVMFFIFunctionCell*>(obj + 1);
    TVMFFIAny result{};
    // Relaxed, as in TVMFFIFunctionCall: the JIT swaps the pointer; either target is correct.
    CheckCall(__atomic_load_n(&cell->safe_call, __ATOMIC_RELAXED)(obj, args, num_args, &result));
    return result;
  }

  // Packs C++ arguments as borrowed views (details::ArgPacker) and calls; the result as
  // CallViews returns it. TypedFunction's packed fallback converts that result without an Any.
  template <typename>
  friend class TypedFunction;
  template <typename... Args>
  TVMFFIAny CallRaw(const Args&... args) const {
    constexpr size_t kCount = sizeof...(Args);
    if constexpr (kCount == 0) {
      return CallViews(nullptr, 0);
    } else {
      TVMFFIAny views[kCount];
      size_t i = 0;
      if constexpr ((details::ArgPacker<std::decay_t<Args>>::kMayKeep || ...)) {
        Any keep[kCount];
        ((details::ArgPacker<std::decay_t<Args>>::Pack(args, &views[i], &keep[i]), ++i), ...);
        return CallViews(views, static_cast<int32_t>(kCount));
      } else {
        ((details::ArgPacker<std::decay_t<Args>>::Pack(args, &views[i], nullptr), ++i), ...);
        return CallViews(views, static_cast<int32_t>(kCount));
      }
    }
  }

  // Takes the callee's result after checking it against the value-validity contract: nothing a
  // caller reads through a result (a cast, an Array's items) may meet a malformed value.
  static Any AdoptResult(const TVMFFIAny& result) {
    const details::AnyDefect defect = details::FindAnyDefect(result);
    if (__builtin_expect(defect != details::AnyDefect::kNone, 0)) {
      details::ThrowMalformedResult(result, defect);
    }
    return Any::Adopt(result);
  }

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
