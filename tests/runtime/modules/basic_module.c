/*
 * A TVM FFI module the way TVM FFI's compilers emit one, written in C against ffijit's headers:
 * exported `__tvm_ffi_<name>` safe_calls, called with handle NULL.
 */
#include <stdio.h>
#include <string.h>

#include "ffijit/c_api.h"
#include "ffijit/c_env_api.h"

#define EXPORT __attribute__((visibility("default")))

/* The characters of a string argument in any of its forms (RawStr, SmallStr, Str), or NULL. */
static const char* StrArg(const TVMFFIAny* arg) {
  if (arg->type_index == kTVMFFIRawStr) return arg->v_c_str;
  if (arg->type_index == kTVMFFISmallStr) return arg->v_bytes; /* NUL-terminated by producers */
  if (arg->type_index == kTVMFFIStr) {
    return ((const TVMFFIByteArray*)((const char*)arg->v_obj + sizeof(TVMFFIObject)))->data;
  }
  return NULL;
}

/* add_one(x: int) -> int */
EXPORT int __tvm_ffi_add_one(void* self, const TVMFFIAny* args, int32_t num_args,
                             TVMFFIAny* result) {
  if (self != NULL) {
    TVMFFIErrorSetRaisedFromCStr("InternalError", "add_one: handle must be NULL");
    return -1;
  }
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add_one expects one int");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 + 1;
  return 0;
}

/* sum_f64(x: DLTensor* of float64) -> float: reads the tensor through a DLTensorPtr argument, or
 * a Tensor object (whose DLTensor follows the header). */
EXPORT int __tvm_ffi_sum_f64(void* self, const TVMFFIAny* args, int32_t num_args,
                             TVMFFIAny* result) {
  (void)self;
  const DLTensor* t = NULL;
  if (num_args == 1 && args[0].type_index == kTVMFFIDLTensorPtr) {
    t = (const DLTensor*)args[0].v_ptr;
  } else if (num_args == 1 && args[0].type_index == kTVMFFITensor) {
    t = (const DLTensor*)((const char*)args[0].v_obj + sizeof(TVMFFIObject));
  } else {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "sum_f64 expects one tensor");
    return -1;
  }
  if (t->dtype.code != kDLFloat || t->dtype.bits != 64 || t->dtype.lanes != 1) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "sum_f64 expects float64 elements");
    return -1;
  }
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  const double* data = (const double*)((const char*)t->data + t->byte_offset);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += data[i];
  result->type_index = kTVMFFIFloat;
  result->zero_padding = 0;
  result->v_float64 = sum;
  return 0;
}

/* fail(message: str) -> never: raises a ValueError carrying the message. */
EXPORT int __tvm_ffi_fail(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  (void)result;
  char message[128] = "fail called";
  if (num_args == 1 && StrArg(&args[0]) != NULL) {
    snprintf(message, sizeof(message), "fail: %s", StrArg(&args[0]));
  }
  TVMFFIErrorSetRaisedFromCStr("ValueError", message);
  return -1;
}

/* stream(device_type: int, device_id: int) -> void*: this thread's current stream. */
EXPORT int __tvm_ffi_stream(void* self, const TVMFFIAny* args, int32_t num_args,
                            TVMFFIAny* result) {
  (void)self;
  if (num_args != 2) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "stream expects (device_type, device_id)");
    return -1;
  }
  result->type_index = kTVMFFIOpaquePtr;
  result->zero_padding = 0;
  result->v_ptr = TVMFFIEnvGetStream((int32_t)args[0].v_int64, (int32_t)args[1].v_int64);
  return 0;
}

/* A context symbol: the loader writes the registered value here. */
EXPORT void* ffijit_test_context = NULL;

/* context() -> void*: what the loader wrote into ffijit_test_context. */
EXPORT int __tvm_ffi_context(void* self, const TVMFFIAny* args, int32_t num_args,
                             TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  result->type_index = kTVMFFIOpaquePtr;
  result->zero_padding = 0;
  result->v_ptr = ffijit_test_context;
  return 0;
}

/* Not a function: a data object under a function's name. */
EXPORT const int __tvm_ffi_not_code[4] = {1, 2, 3, 4};
