// Function objects: creation from a C safe_call + handle, the call entry point.
#include <cstdlib>

#include "ffijit/object.h"
#include "internal.h"
#include "object_internal.h"

namespace ffijit {
namespace {

struct FunctionObject {
  TVMFFIObject header;
  FFIJITFunctionCell cell;
};

// The initial safe_call: forwards to the user's safe_call with the user's handle.
int SelfTrampoline(void* handle, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  auto* obj = static_cast<FunctionObject*>(handle);
  return obj->cell.self_call(obj->cell.self, args, num_args, result);
}

void FunctionDeleter(void* self, int flags) {
  auto* obj = static_cast<FunctionObject*>(self);
  if ((flags & kTVMFFIObjectDeleterFlagBitMaskStrong) && obj->cell.self_deleter) {
    obj->cell.self_deleter(obj->cell.self);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(obj);
}

// TVMFFIFunctionCall for everything but the common case: raises on bad arguments, calls a
// subtype of Function.
__attribute__((noinline, cold)) int CallChecked(TVMFFIObjectHandle func, TVMFFIAny* args,
                                                int32_t num_args, TVMFFIAny* result) {
  auto* obj = static_cast<TVMFFIObject*>(func);
  if (obj == nullptr || result == nullptr || num_args < 0 || (args == nullptr && num_args > 0)) {
    TVMFFIErrorSetRaisedFromCStr(
        "ValueError", obj == nullptr      ? "TVMFFIFunctionCall: `func` must not be NULL"
                      : result == nullptr ? "TVMFFIFunctionCall: `result` must not be NULL"
                      : num_args < 0      ? "TVMFFIFunctionCall: `num_args` must not be negative"
                                          : "TVMFFIFunctionCall: `args` is NULL but num_args > 0");
    return -1;
  }
  if (!IsInstance(obj->type_index, kTVMFFIFunction)) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "TVMFFIFunctionCall: the object is not a Function");
    return -1;
  }
  auto* cell = reinterpret_cast<TVMFFIFunctionCell*>(obj + 1);
  return __atomic_load_n(&cell->safe_call, __ATOMIC_RELAXED)(func, args, num_args, result);
}

}  // namespace
}  // namespace ffijit

using namespace ffijit;

extern "C" {

// A NULL `deleter` means `self` needs no release (v0.1.13 allows it; e98b94e1 crashed on it at
// destruction, so accepting it there too breaks no caller).
int TVMFFIFunctionCreate(void* self, TVMFFISafeCallType safe_call, void (*deleter)(void* self),
                         TVMFFIObjectHandle* out) {
  int status = internal::GuardCBoundary([&] {
    internal::RequireNonNull(out, "TVMFFIFunctionCreate", "out");
    internal::RequireNonNull(reinterpret_cast<const void*>(safe_call), "TVMFFIFunctionCreate",
                             "safe_call");
    auto* obj = reinterpret_cast<FunctionObject*>(
        internal::AllocObject(sizeof(FunctionObject), kTVMFFIFunction, FunctionDeleter));
    obj->cell.cell.safe_call = SelfTrampoline;
    obj->cell.cell.cpp_call = reinterpret_cast<void*>(FFIJITFunctionCppCallEntry());
    obj->cell.self = self;
    obj->cell.self_call = safe_call;
    obj->cell.self_deleter = deleter;
    *out = obj;
  });
  // The caller handed over `self`: on failure nobody else will release it.
  if (status != 0 && deleter != nullptr && safe_call != nullptr) deleter(self);
  return status;
}

int TVMFFIFunctionCall(TVMFFIObjectHandle func, TVMFFIAny* args, int32_t num_args,
                       TVMFFIAny* result) {
  auto* obj = static_cast<TVMFFIObject*>(func);
  // The common case tests and tail-calls without touching the stack; everything else (bad
  // arguments, a Function subtype) is checked out of line, so it costs the fast path nothing.
  // The count and `args` in one compare: any count >= 0 with `args`, only 0 without.
  const uint32_t max_args = args != nullptr ? INT32_MAX : 0;
  if (__builtin_expect(obj != nullptr && result != nullptr &&
                           static_cast<uint32_t>(num_args) <= max_args &&
                           obj->type_index == kTVMFFIFunction,
                       1)) {
    auto* cell = reinterpret_cast<TVMFFIFunctionCell*>(obj + 1);
    // Relaxed: the JIT swaps this pointer at run time to tier up; either target is correct.
    return __atomic_load_n(&cell->safe_call, __ATOMIC_RELAXED)(func, args, num_args, result);
  }
  return CallChecked(func, args, num_args, result);
}

}  // extern "C"
