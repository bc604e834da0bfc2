/*
 * A TVM FFI module for the Python suites, written in C the way TVM FFI's compilers emit one:
 * exported `__tvm_ffi_<name>` safe_calls. Built as a shared library and as an object file.
 */
#include <stdint.h>

#include "ffijit/c_api.h"

#define EXPORT __attribute__((visibility("default")))

/* add_one(x: int) -> int */
EXPORT int __tvm_ffi_add_one(void* self, const TVMFFIAny* args, int32_t num_args,
                             TVMFFIAny* result) {
  (void)self;
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add_one expects one int");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 + 1;
  return 0;
}

/* call_twice(f, x) -> f(f(x)): calls back into whatever Function it is given. */
EXPORT int __tvm_ffi_call_twice(void* self, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result) {
  (void)self;
  if (num_args != 2 || args[0].type_index != kTVMFFIFunction) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "call_twice expects (function, value)");
    return -1;
  }
  TVMFFIAny first;
  first.type_index = kTVMFFINone;
  first.zero_padding = 0;
  first.v_int64 = 0;
  TVMFFIAny arg = args[1];
  if (TVMFFIFunctionCall(args[0].v_obj, &arg, 1, &first) != 0) return -1;
  int rc = TVMFFIFunctionCall(args[0].v_obj, &first, 1, result);
  if (first.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(first.v_obj);
  return rc;
}

/* fail(message): raises a ValueError with the message. */
EXPORT int __tvm_ffi_fail(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  (void)result;
  const char* message =
      num_args == 1 && args[0].type_index == kTVMFFIRawStr ? args[0].v_c_str : "failed";
  TVMFFIErrorSetRaisedFromCStr("ValueError", message);
  return -1;
}

/* A borrowed C string of a packed string argument (Python passes short ones inline), or NULL. */
static const char* TextOf(const TVMFFIAny* arg) {
  if (arg->type_index == kTVMFFIRawStr) return arg->v_c_str;
  if (arg->type_index == kTVMFFISmallStr) return (const char*)arg->v_bytes;
  return NULL;
}

/* raise(kind, message): raises a TVM FFI error of that kind (test_errors.py). */
EXPORT int __tvm_ffi_raise(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  (void)result;
  const char* kind = num_args == 2 ? TextOf(&args[0]) : NULL;
  const char* message = num_args == 2 ? TextOf(&args[1]) : NULL;
  if (kind == NULL || message == NULL) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "raise expects (kind, message) strings");
    return -1;
  }
  TVMFFIErrorSetRaisedFromCStr(kind, message);
  return -1;
}
