/* The hand-written safe_calls of BM_Call/handwritten (see handwritten.h for the contract). */
#include "handwritten.h"

#include <string.h>

#include "ffijit/c_ext.h"

static TVMFFISafeCallType slow_path;

void FFIJITBenchHandwrittenInit(TVMFFISafeCallType slow) {
  slow_path = slow;
}

/* Out of line and cold: the common path keeps its registers. */
__attribute__((noinline, cold)) static int Slow(void* handle, const TVMFFIAny* args,
                                                int32_t num_args, TVMFFIAny* result) {
  return slow_path(handle, args, num_args, result);
}

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define TARGET(handle) (*(void* const*)((const char*)(handle) + FFIJIT_BENCH_TARGET_OFFSET))

static inline int IsIntOrBool(const TVMFFIAny* a) {
  return a->type_index == kTVMFFIInt || a->type_index == kTVMFFIBool;
}

/* An object tag whose object is there and is of that type. */
static inline int IsObject(const TVMFFIAny* a, int32_t type_index) {
  return a->type_index == type_index && a->v_obj != NULL && a->v_obj->type_index == type_index;
}

static inline int BoxInt(TVMFFIAny* result, int64_t v) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = v;
  return 0;
}

int FFIJITBenchHandwrittenI64x3(void* handle, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result) {
  if (LIKELY(num_args == 3 && IsIntOrBool(&args[0]) && IsIntOrBool(&args[1]) &&
             IsIntOrBool(&args[2]))) {
    int64_t (*native)(int64_t, int64_t, int64_t) =
        (int64_t(*)(int64_t, int64_t, int64_t))TARGET(handle);
    return BoxInt(result, native(args[0].v_int64, args[1].v_int64, args[2].v_int64));
  }
  return Slow(handle, args, num_args, result);
}

int FFIJITBenchHandwrittenMixed(void* handle, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result) {
  if (LIKELY(num_args == 5 && IsIntOrBool(&args[0]) &&
             (IsIntOrBool(&args[1]) || args[1].type_index == kTVMFFIFloat) &&
             IsIntOrBool(&args[2]) && args[2].v_int64 == (int32_t)args[2].v_int64 &&
             (IsIntOrBool(&args[3]) || args[3].type_index == kTVMFFIFloat) &&
             (args[4].type_index == kTVMFFIOpaquePtr || args[4].type_index == kTVMFFINone))) {
    double b = args[1].type_index == kTVMFFIFloat ? args[1].v_float64 : (double)args[1].v_int64;
    /* One rounding from the exact input: a Float narrows, an Int converts straight to float. */
    float d =
        args[3].type_index == kTVMFFIFloat ? (float)args[3].v_float64 : (float)args[3].v_int64;
    void* p = args[4].type_index == kTVMFFIOpaquePtr ? args[4].v_ptr : NULL;
    double (*native)(int64_t, double, int32_t, float, void*) =
        (double (*)(int64_t, double, int32_t, float, void*))TARGET(handle);
    double r = native(args[0].v_int64, b, (int32_t)args[2].v_int64, d, p);
    result->type_index = kTVMFFIFloat;
    result->zero_padding = 0;
    result->v_float64 = r;
    return 0;
  }
  return Slow(handle, args, num_args, result);
}

int FFIJITBenchHandwrittenDevDtype(void* handle, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result) {
  if (LIKELY(num_args == 3 && args[0].type_index == kTVMFFIDevice &&
             args[1].type_index == kTVMFFIDataType && IsIntOrBool(&args[2]))) {
    int64_t (*native)(DLDevice, DLDataType, int64_t) =
        (int64_t(*)(DLDevice, DLDataType, int64_t))TARGET(handle);
    return BoxInt(result, native(args[0].v_device, args[1].v_dtype, args[2].v_int64));
  }
  return Slow(handle, args, num_args, result);
}

int FFIJITBenchHandwrittenTensor(void* handle, const TVMFFIAny* args, int32_t num_args,
                                 TVMFFIAny* result) {
  if (LIKELY(num_args == 1)) {
    DLTensor* t = NULL;
    if (IsObject(&args[0], kTVMFFITensor)) {
      t = (DLTensor*)(args[0].v_obj + 1);
    } else if (args[0].type_index == kTVMFFIDLTensorPtr) {
      t = (DLTensor*)args[0].v_ptr;
    }
    /* float32 x1, rank 2 (the signature's), and a rank > 0 tensor has a shape. */
    if (LIKELY(t != NULL && t->dtype.code == kDLFloat && t->dtype.bits == 32 &&
               t->dtype.lanes == 1 && t->ndim == 2 && t->shape != NULL)) {
      int64_t (*native)(DLTensor*) = (int64_t(*)(DLTensor*))TARGET(handle);
      return BoxInt(result, native(t));
    }
  }
  return Slow(handle, args, num_args, result);
}

int FFIJITBenchHandwrittenStr(void* handle, const TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result) {
  if (LIKELY(num_args == 1)) {
    const char* s = NULL;
    if (IsObject(&args[0], kTVMFFIStr)) {
      s = ((const FFIJITBytesCell*)(args[0].v_obj + 1))->data;
    } else if (args[0].type_index == kTVMFFISmallStr && args[0].small_str_len <= 7) {
      s = args[0].v_bytes;
    } else if (args[0].type_index == kTVMFFIRawStr) {
      s = args[0].v_c_str; /* NULL stays NULL: the slow path decides */
    }
    if (LIKELY(s != NULL)) {
      int64_t (*native)(const char*) = (int64_t(*)(const char*))TARGET(handle);
      return BoxInt(result, native(s));
    }
  }
  return Slow(handle, args, num_args, result);
}

TVMFFISafeCallType FFIJITBenchHandwrittenFor(const char* name) {
  if (strcmp(name, "i64_i64_i64") == 0) return &FFIJITBenchHandwrittenI64x3;
  if (strcmp(name, "i64_f64_i32_f32_ptr") == 0) return &FFIJITBenchHandwrittenMixed;
  if (strcmp(name, "dev_dtype_i64") == 0) return &FFIJITBenchHandwrittenDevDtype;
  if (strcmp(name, "tensor") == 0) return &FFIJITBenchHandwrittenTensor;
  if (strcmp(name, "str") == 0) return &FFIJITBenchHandwrittenStr;
  return NULL;
}
