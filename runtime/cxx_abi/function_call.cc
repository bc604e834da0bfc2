// The C++ `call` entry of every Function ffijit creates: the pointer at header+32 that code
// compiled from TVM FFI's C++ headers calls directly (`FunctionObj::call`, of type
// `void(const FunctionObj*, const AnyView*, int32_t, Any*)`), bypassing safe_call.
//
// Such code expects failure as a thrown C++ exception: `tvm::ffi::Error` for -1 (the raised error
// moved out of the slot) and `tvm::ffi::EnvErrorAlreadySet` for -2 (facts: include/tvm/ffi/
// function.h, TVM_FFI_CHECK_SAFE_CALL, at e98b94e1). The entry forwards to the object's current
// safe_call (which the JIT may swap), with the object itself as handle, exactly as
// TVMFFIFunctionCall does, so both ways into a function run the same code.
#include <string>

#include "ffijit/c_ext.h"
#include "shims.h"

namespace {

// Turns a failed safe_call's status into the exception header code catches.
[[noreturn]] __attribute__((noinline, cold)) void ThrowForStatus(int status) {
  if (status == -2) throw tvm::ffi::EnvErrorAlreadySet();
  TVMFFIObjectHandle error = nullptr;
  TVMFFIErrorMoveFromRaised(&error);
  if (error == nullptr) {
    // A callee broke the convention (nonzero without raising); header code would dereference a
    // NULL error here, so give it a real one.
    const std::string message =
        "a function returned " + std::to_string(status) + " without raising an error";
    error = ffijit::Error("RuntimeError", message).ToObject();
  }
  throw tvm::ffi::Error(static_cast<TVMFFIObject*>(error));
}

void CallThroughSafeCall(const void* func, const TVMFFIAny* args, int32_t num_args,
                         TVMFFIAny* result) {
  auto* handle = const_cast<void*>(func);
  auto* cell = reinterpret_cast<TVMFFIFunctionCell*>(static_cast<TVMFFIObject*>(handle) + 1);
  // Relaxed, as in TVMFFIFunctionCall: the JIT swaps safe_call to tier up; either is correct.
  int status = __atomic_load_n(&cell->safe_call, __ATOMIC_RELAXED)(handle, args, num_args, result);
  if (__builtin_expect(status != 0, 0)) ThrowForStatus(status);
}

}  // namespace

extern "C" FFIJITCppCallEntry FFIJITFunctionCppCallEntry(void) {
  return &CallThroughSafeCall;
}
