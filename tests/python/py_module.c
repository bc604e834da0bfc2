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

/* Tensors as a module function receives them (test_modules.py): a Tensor object, which it may keep,
 * or a borrowed DLTensor*, which it may read only during the call. */
static const DLTensor* TensorArg(const TVMFFIAny* arg) {
  if (arg->type_index == kTVMFFIDLTensorPtr) return (const DLTensor*)arg->v_ptr;
  if (arg->type_index == kTVMFFITensor) {
    return (const DLTensor*)((const char*)arg->v_obj + sizeof(TVMFFIObject));
  }
  return NULL;
}

/* One element as a double, or 0 with *ok cleared for an element type this file does not read. */
static double ElementAt(const DLTensor* t, const char* p, int* ok) {
  const DLDataType d = t->dtype;
  if (d.lanes != 1) *ok = 0;
  if (d.code == kDLFloat && d.bits == 64) return *(const double*)p;
  if (d.code == kDLFloat && d.bits == 32) return *(const float*)p;
  if (d.code == kDLInt && d.bits == 64) return (double)*(const int64_t*)p;
  if (d.code == kDLInt && d.bits == 32) return *(const int32_t*)p;
  if (d.code == kDLInt && d.bits == 16) return *(const int16_t*)p;
  if (d.code == kDLInt && d.bits == 8) return *(const int8_t*)p;
  if (d.code == kDLUInt && d.bits == 64) return (double)*(const uint64_t*)p;
  if (d.code == kDLUInt && d.bits == 32) return *(const uint32_t*)p;
  if (d.code == kDLUInt && d.bits == 16) return *(const uint16_t*)p;
  if (d.code == kDLUInt && d.bits == 8) return *(const uint8_t*)p;
  *ok = 0;
  return 0;
}

/* The sum of a tensor's elements, walked through its shape, strides (NULL: compact) and
 * byte_offset; -1 with an error raised for an element type ElementAt does not read. */
static int SumElements(const DLTensor* t, double* sum) {
  int64_t index[64] = {0};
  int64_t count = 1;
  int ok = 1;
  if (t->ndim > 64) ok = 0;
  for (int32_t i = 0; ok && i < t->ndim; ++i) count *= t->shape[i];
  *sum = 0;
  const int64_t item = (t->dtype.bits * t->dtype.lanes + 7) / 8;
  for (int64_t n = 0; ok && n < count; ++n) {
    int64_t offset = 0, stride = 1;
    for (int32_t i = t->ndim - 1; i >= 0; --i) {
      offset += index[i] * (t->strides != NULL ? t->strides[i] : stride);
      stride *= t->shape[i];
    }
    *sum += ElementAt(t, (const char*)t->data + t->byte_offset + offset * item, &ok);
    for (int32_t i = t->ndim - 1; i >= 0 && ++index[i] == t->shape[i]; --i) index[i] = 0;
  }
  if (!ok) TVMFFIErrorSetRaisedFromCStr("TypeError", "element_sum: an element type it cannot read");
  return ok ? 0 : -1;
}

/* arg_kind(x) -> int: the type index x arrives with. */
EXPORT int __tvm_ffi_arg_kind(void* self, const TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result) {
  (void)self;
  if (num_args != 1) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "arg_kind expects one argument");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].type_index;
  return 0;
}

/* element_sum(t) -> float: reads a tensor during the call only. */
EXPORT int __tvm_ffi_element_sum(void* self, const TVMFFIAny* args, int32_t num_args,
                                 TVMFFIAny* result) {
  (void)self;
  const DLTensor* t = num_args == 1 ? TensorArg(&args[0]) : NULL;
  if (t == NULL) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "element_sum expects one tensor");
    return -1;
  }
  double sum = 0;
  if (SumElements(t, &sum) != 0) return -1;
  result->type_index = kTVMFFIFloat;
  result->zero_padding = 0;
  result->v_float64 = sum;
  return 0;
}

/* identity(t) -> t: hands a Tensor object back (a new reference, as a result owns). */
EXPORT int __tvm_ffi_identity(void* self, const TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result) {
  (void)self;
  if (num_args != 1) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "identity expects one argument");
    return -1;
  }
  *result = args[0];
  if (args[0].type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectIncRef(args[0].v_obj);
  return 0;
}

/* keep(t), kept() -> t or None, kept_sum() -> float, drop_kept(): a callee that keeps the Tensor
 * it was given (one reference, in a static slot) and reads it in later calls. */
static TVMFFIObjectHandle g_kept = NULL;

EXPORT int __tvm_ffi_keep(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  if (num_args != 1 || args[0].type_index != kTVMFFITensor) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "keep expects one Tensor object");
    return -1;
  }
  TVMFFIObjectIncRef(args[0].v_obj);
  if (g_kept != NULL) TVMFFIObjectDecRef(g_kept);
  g_kept = args[0].v_obj;
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}

EXPORT int __tvm_ffi_kept(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  result->zero_padding = 0;
  result->v_int64 = 0;
  result->type_index = g_kept != NULL ? kTVMFFITensor : kTVMFFINone;
  if (g_kept != NULL) {
    TVMFFIObjectIncRef(g_kept);
    result->v_obj = (TVMFFIObject*)g_kept;
  }
  return 0;
}

EXPORT int __tvm_ffi_kept_sum(void* self, const TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  if (g_kept == NULL) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "kept_sum: nothing kept");
    return -1;
  }
  double sum = 0;
  if (SumElements((const DLTensor*)((const char*)g_kept + sizeof(TVMFFIObject)), &sum) != 0) {
    return -1;
  }
  result->type_index = kTVMFFIFloat;
  result->zero_padding = 0;
  result->v_float64 = sum;
  return 0;
}

EXPORT int __tvm_ffi_drop_kept(void* self, const TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  if (g_kept != NULL) TVMFFIObjectDecRef(g_kept);
  g_kept = NULL;
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}
