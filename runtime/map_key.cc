// The hashing and equality of map keys, which must agree with header code's AnyHash/AnyEqual
// (map_table.h). A file of its own: it is the contract every map shares with header code whoever
// made the map, and the only map code that calls a key type's `__any_hash__`/`__any_equal__` hooks
// and so differs between revisions (FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT).
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "container_internal.h"
#include "cxx_abi/shims.h"
#include "ffijit/any.h"
#include "ffijit/object.h"
#include "hashing.h"
#include "internal.h"
#include "map_table.h"
#include "string_internal.h"

namespace ffijit {
namespace {

using details::IsBytesForm;
using details::IsStrForm;

using internal::HashBytes;
using internal::HashCombine;

// The revision with structural keys (v0.1.13) is the one whose AnyHash/AnyEqual consult the
// hooks; at e98b94e1 header code hashes every object key by its address, and so does ffijit.
#if FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT
// The `__any_hash__` or `__any_equal__` entry of an object key's type, or NULL. Columns are never
// freed once made, so a found one is kept; its entries are read live, as header code reads them.
const TVMFFIAny* KeyHook(int32_t type_index, std::atomic<const TVMFFITypeAttrColumn*>* cache,
                         const char* name) {
  const TVMFFITypeAttrColumn* column = cache->load(std::memory_order_acquire);
  if (column == nullptr) {
    const TVMFFIByteArray key{name, std::strlen(name)};
    column = TVMFFIGetTypeAttrColumn(&key);
    if (column == nullptr) return nullptr;
    cache->store(column, std::memory_order_release);
  }
  const TVMFFIAny* entry = FFIJITTypeAttrColumnEntry(column, type_index);
  return entry != nullptr && entry->type_index != kTVMFFINone ? entry : nullptr;
}

std::atomic<const TVMFFITypeAttrColumn*> g_hash_column{nullptr};
std::atomic<const TVMFFITypeAttrColumn*> g_equal_column{nullptr};

[[noreturn]] void ThrowBadHook(const char* name, int32_t type_index, const std::string& what) {
  throw Error("TypeError", std::string("the `") + name + "` hook of type `" +
                               TypeIndexToKey(type_index) + "` " + what);
}

// Calls a hook entry: a function pointer taking `const Any&`s (a C++ function that reports
// failure by throwing tvm::ffi::Error) or an ffi.Function. Returns the result as a TVMFFIAny the
// caller must check (and own, for a Function).
template <typename Pointer, typename... Args>
TVMFFIAny CallHook(const TVMFFIAny& hook, const char* name, int32_t type_index,
                   const Args&... args) {
  TVMFFIAny result{};
  if (hook.type_index == kTVMFFIOpaquePtr) {
    auto fn = reinterpret_cast<Pointer>(hook.v_ptr);
    if (fn == nullptr) ThrowBadHook(name, type_index, "is a NULL function pointer");
    const auto value = internal::WithFfijitErrors([&] { return fn(&args...); });
    result.type_index = sizeof...(Args) == 1 ? kTVMFFIInt : kTVMFFIBool;
    result.v_int64 = static_cast<int64_t>(value);
    return result;
  }
  if (hook.type_index != kTVMFFIFunction) {
    ThrowBadHook(name, type_index,
                 "is a `" + TypeIndexToKey(hook.type_index) +
                     "`, neither a function pointer nor a Function");
  }
  TVMFFIAny call_args[] = {args...};
  if (TVMFFIFunctionCall(hook.v_obj, call_args, sizeof...(Args), &result) != 0) {
    throw Error::MoveFromRaised();
  }
  return result;
}

uint64_t HookHash(const TVMFFIAny& hook, const TVMFFIAny& key) {
  TVMFFIAny result =
      CallHook<int64_t (*)(const TVMFFIAny*)>(hook, "__any_hash__", key.type_index, key);
  if (result.type_index != kTVMFFIInt) {
    const std::string got = TypeIndexToKey(result.type_index);
    internal::ReleaseAny(&result);
    ThrowBadHook("__any_hash__", key.type_index, "returned a `" + got + "`, not an int");
  }
  return static_cast<uint64_t>(result.v_int64);
}

bool HookEqual(const TVMFFIAny& hook, const TVMFFIAny& a, const TVMFFIAny& b) {
  TVMFFIAny result = CallHook<bool (*)(const TVMFFIAny*, const TVMFFIAny*)>(hook, "__any_equal__",
                                                                            a.type_index, a, b);
  if (result.type_index != kTVMFFIBool) {
    const std::string got = TypeIndexToKey(result.type_index);
    internal::ReleaseAny(&result);
    ThrowBadHook("__any_equal__", a.type_index, "returned a `" + got + "`, not a bool");
  }
  return result.v_int64 != 0;
}
#endif  // FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT

}  // namespace

namespace internal {

uint64_t KeyHash(const TVMFFIAny& key) {
  // The common short-string key, without the general string view (checked well-formed: <= 7).
  if ((key.type_index == kTVMFFISmallStr || key.type_index == kTVMFFISmallBytes) &&
      key.small_str_len <= 7) {
    return HashCombine(key.type_index == kTVMFFISmallStr ? kTVMFFIStr : kTVMFFIBytes,
                       internal::HashSmallBytes(key));
  }
  std::string_view chars;
  if (IsStrForm(key.type_index) && internal::ViewBytes(key, &chars)) {
    return HashCombine(kTVMFFIStr, HashBytes(chars));
  }
  if (IsBytesForm(key.type_index) && internal::ViewBytes(key, &chars)) {
    return HashCombine(kTVMFFIBytes, HashBytes(chars));
  }
#if FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT
  if (key.type_index >= kTVMFFIStaticObjectBegin) {
    if (const TVMFFIAny* hook = KeyHook(key.type_index, &g_hash_column, "__any_hash__")) {
      return HashCombine(static_cast<uint64_t>(key.type_index), HookHash(*hook, key));
    }
  }
#endif
  return HashCombine(static_cast<uint64_t>(static_cast<int64_t>(key.type_index)), key.v_uint64);
}

bool KeyEqual(const TVMFFIAny& a, const TVMFFIAny& b) {
  bool both_str = IsStrForm(a.type_index) && IsStrForm(b.type_index);
  bool both_bytes = IsBytesForm(a.type_index) && IsBytesForm(b.type_index);
  if (both_str || both_bytes) {
    std::string_view x, y;
    return internal::ViewBytes(a, &x) && internal::ViewBytes(b, &y) && x == y;
  }
  if (a.type_index != b.type_index) return false;
  if (a.v_uint64 == b.v_uint64) return true;
#if FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT
  if (a.type_index >= kTVMFFIStaticObjectBegin) {
    if (const TVMFFIAny* hook = KeyHook(a.type_index, &g_equal_column, "__any_equal__")) {
      return HookEqual(*hook, a, b);
    }
  }
#endif
  return false;
}

bool AnyEqual(const TVMFFIAny& a, const TVMFFIAny& b) {
  return KeyEqual(a, b);
}

}  // namespace internal
}  // namespace ffijit
