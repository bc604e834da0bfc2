/*
 * ffijit_bench_module: the benchmark natives behind a TVM FFI module, the "ffijit module fn" path
 * of bench_calls.py. Each `__tvm_ffi_<name>` is a safe_call written the way TVM FFI's compilers
 * emit one: it checks the packed arguments' type indexes, reads their values, calls the native
 * through a function pointer (volatile, as in the hand-written extension) and packs the result.
 *
 * Linked with the natives library but not with the ffijit runtime: its C API calls (raising
 * errors) resolve against the runtime the ffijit package made global when it was imported, as
 * for any module ffijit.load_module opens.
 */
#include <stddef.h>
#include <stdint.h>

#include "ffijit/c_api.h"
#include "python_natives.h"

#define EXPORT __attribute__((visibility("default")))

static BenchNativeTable g_natives = FFIJIT_BENCH_NATIVE_TABLE;

static int Fail(const char* message) {
  TVMFFIErrorSetRaisedFromCStr("TypeError", message);
  return -1;
}

static void SetInt(TVMFFIAny* result, int64_t value) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = value;
}

static void SetFloat(TVMFFIAny* result, double value) {
  result->type_index = kTVMFFIFloat;
  result->zero_padding = 0;
  result->v_float64 = value;
}

/* A tensor argument: a borrowed DLTensor* or a Tensor object (header, then its DLTensor). */
static DLTensor* TensorOf(const TVMFFIAny* arg) {
  if (arg->type_index == kTVMFFIDLTensorPtr) return (DLTensor*)arg->v_ptr;
  if (arg->type_index == kTVMFFITensor)
    return (DLTensor*)((char*)arg->v_obj + sizeof(TVMFFIObject));
  return NULL;
}

/* A str argument: a borrowed C string, an inline small string or a Str object (header, then its
 * bytes as a TVMFFIByteArray, NUL-terminated). */
static const char* TextOf(const TVMFFIAny* arg) {
  if (arg->type_index == kTVMFFIRawStr) return arg->v_c_str;
  if (arg->type_index == kTVMFFISmallStr) return (const char*)arg->v_bytes;
  if (arg->type_index == kTVMFFIStr) {
    return ((const TVMFFIByteArray*)((const char*)arg->v_obj + sizeof(TVMFFIObject)))->data;
  }
  return NULL;
}

/* no_args() -> None */
EXPORT int __tvm_ffi_no_args(void* self, const TVMFFIAny* args, int32_t num_args,
                             TVMFFIAny* result) {
  (void)self;
  (void)args;
  if (num_args != 0) return Fail("no_args expects no arguments");
  g_natives.no_args();
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}

/* i64_i64_i64(a: int, b: int, c: int) -> int */
EXPORT int __tvm_ffi_i64_i64_i64(void* self, const TVMFFIAny* args, int32_t num_args,
                                 TVMFFIAny* result) {
  (void)self;
  if (num_args != 3 || args[0].type_index != kTVMFFIInt || args[1].type_index != kTVMFFIInt ||
      args[2].type_index != kTVMFFIInt) {
    return Fail("i64_i64_i64 expects three ints");
  }
  SetInt(result, g_natives.i64x3(args[0].v_int64, args[1].v_int64, args[2].v_int64));
  return 0;
}

/* i64_f64_i32_f32_ptr(a: int, b: float, c: int, d: float, p: pointer | None) -> float */
EXPORT int __tvm_ffi_i64_f64_i32_f32_ptr(void* self, const TVMFFIAny* args, int32_t num_args,
                                         TVMFFIAny* result) {
  (void)self;
  if (num_args != 5 || args[0].type_index != kTVMFFIInt || args[1].type_index != kTVMFFIFloat ||
      args[2].type_index != kTVMFFIInt || args[3].type_index != kTVMFFIFloat ||
      (args[4].type_index != kTVMFFIOpaquePtr && args[4].type_index != kTVMFFINone)) {
    return Fail("i64_f64_i32_f32_ptr expects (int, float, int, float, pointer or None)");
  }
  if (args[2].v_int64 < INT32_MIN || args[2].v_int64 > INT32_MAX) {
    return Fail("i64_f64_i32_f32_ptr: argument 3 does not fit in int32");
  }
  void* p = args[4].type_index == kTVMFFIOpaquePtr ? args[4].v_ptr : NULL;
  SetFloat(result, g_natives.mixed(args[0].v_int64, args[1].v_float64, (int32_t)args[2].v_int64,
                                   (float)args[3].v_float64, p));
  return 0;
}

/* dev_dtype_i64(device: Device, dtype: DataType, k: int) -> int */
EXPORT int __tvm_ffi_dev_dtype_i64(void* self, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result) {
  (void)self;
  if (num_args != 3 || args[0].type_index != kTVMFFIDevice ||
      args[1].type_index != kTVMFFIDataType || args[2].type_index != kTVMFFIInt) {
    return Fail("dev_dtype_i64 expects (Device, DataType, int)");
  }
  SetInt(result, g_natives.dev_dtype(args[0].v_device, args[1].v_dtype, args[2].v_int64));
  return 0;
}

/* tensor(t: 2-D float32 tensor) -> int */
EXPORT int __tvm_ffi_tensor(void* self, const TVMFFIAny* args, int32_t num_args,
                            TVMFFIAny* result) {
  (void)self;
  DLTensor* t = num_args == 1 ? TensorOf(&args[0]) : NULL;
  if (t == NULL || t->ndim != 2 || t->dtype.code != kDLFloat || t->dtype.bits != 32 ||
      t->dtype.lanes != 1) {
    return Fail("tensor expects one 2-D float32 tensor");
  }
  SetInt(result, g_natives.tensor(t));
  return 0;
}

/* str(s: str) -> int */
EXPORT int __tvm_ffi_str(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  const char* text = num_args == 1 ? TextOf(&args[0]) : NULL;
  if (text == NULL) return Fail("str expects one str");
  SetInt(result, g_natives.str(text));
  return 0;
}

/* sum_f64(v: 1-D float64 tensor) -> float */
EXPORT int __tvm_ffi_sum_f64(void* self, const TVMFFIAny* args, int32_t num_args,
                             TVMFFIAny* result) {
  (void)self;
  DLTensor* t = num_args == 1 ? TensorOf(&args[0]) : NULL;
  if (t == NULL || t->ndim != 1 || t->dtype.code != kDLFloat || t->dtype.bits != 64 ||
      t->dtype.lanes != 1) {
    return Fail("sum_f64 expects one 1-D float64 tensor");
  }
  SetFloat(result, g_natives.sum_f64(t));
  return 0;
}
