/*
 * The bodies of the hand-written safe_calls (handwritten.h states their contract), compiled twice:
 * by handwritten.c, where each calls its native through the handle (BM_Call/handwritten), and by
 * handwritten_inlined.c, where each calls the native's body in the same translation unit, which
 * gcc -O2 inlines (BM_Call/handwritten_inlined). The includer defines
 *   FFIJIT_BENCH_HANDWRITTEN(name)               the safe_call's name for the case `name`
 *   FFIJIT_BENCH_NATIVE(handle, native, type)    the native to call, as a pointer of `type`
 * C99, compiled -O2.
 */
#ifndef FFIJIT_BENCH_HANDWRITTEN_CALLS_H_
#define FFIJIT_BENCH_HANDWRITTEN_CALLS_H_

#include <stddef.h>
#include <string.h>

#include "ffijit/c_ext.h"
#include "handwritten.h"

/* Out of line and cold (handwritten.c): the common path keeps its registers. */
__attribute__((noinline, cold)) int FFIJITBenchHandwrittenSlow(void* handle, const TVMFFIAny* args,
                                                               int32_t num_args, TVMFFIAny* result);

#define LIKELY(x) __builtin_expect(!!(x), 1)

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

int FFIJIT_BENCH_HANDWRITTEN(I64x3)(void* handle, const TVMFFIAny* args, int32_t num_args,
                                    TVMFFIAny* result) {
  if (LIKELY(num_args == 3 && IsIntOrBool(&args[0]) && IsIntOrBool(&args[1]) &&
             IsIntOrBool(&args[2]))) {
    int64_t (*native)(int64_t, int64_t, int64_t) =
        FFIJIT_BENCH_NATIVE(handle, BenchNativeI64x3, int64_t(*)(int64_t, int64_t, int64_t));
    return BoxInt(result, native(args[0].v_int64, args[1].v_int64, args[2].v_int64));
  }
  return FFIJITBenchHandwrittenSlow(handle, args, num_args, result);
}

int FFIJIT_BENCH_HANDWRITTEN(Mixed)(void* handle, const TVMFFIAny* args, int32_t num_args,
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
    double (*native)(int64_t, double, int32_t, float, void*) = FFIJIT_BENCH_NATIVE(
        handle, BenchNativeMixed, double (*)(int64_t, double, int32_t, float, void*));
    double r = native(args[0].v_int64, b, (int32_t)args[2].v_int64, d, p);
    result->type_index = kTVMFFIFloat;
    result->zero_padding = 0;
    result->v_float64 = r;
    return 0;
  }
  return FFIJITBenchHandwrittenSlow(handle, args, num_args, result);
}

int FFIJIT_BENCH_HANDWRITTEN(DevDtype)(void* handle, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  if (LIKELY(num_args == 3 && args[0].type_index == kTVMFFIDevice &&
             args[1].type_index == kTVMFFIDataType && IsIntOrBool(&args[2]))) {
    int64_t (*native)(DLDevice, DLDataType, int64_t) =
        FFIJIT_BENCH_NATIVE(handle, BenchNativeDevDtype, int64_t(*)(DLDevice, DLDataType, int64_t));
    return BoxInt(result, native(args[0].v_device, args[1].v_dtype, args[2].v_int64));
  }
  return FFIJITBenchHandwrittenSlow(handle, args, num_args, result);
}

int FFIJIT_BENCH_HANDWRITTEN(Tensor)(void* handle, const TVMFFIAny* args, int32_t num_args,
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
      int64_t (*native)(DLTensor*) =
          FFIJIT_BENCH_NATIVE(handle, BenchNativeTensor, int64_t(*)(DLTensor*));
      return BoxInt(result, native(t));
    }
  }
  return FFIJITBenchHandwrittenSlow(handle, args, num_args, result);
}

int FFIJIT_BENCH_HANDWRITTEN(Str)(void* handle, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result) {
  if (LIKELY(num_args == 1)) {
    const char* s = NULL;
    /* A NUL inside a Str or SmallStr would cut the C string short: the slow path refuses it. */
    if (IsObject(&args[0], kTVMFFIStr)) {
      const FFIJITBytesCell* cell = (const FFIJITBytesCell*)(args[0].v_obj + 1);
      if (LIKELY(memchr(cell->data, 0, cell->size) == NULL)) s = cell->data;
    } else if (args[0].type_index == kTVMFFISmallStr && args[0].small_str_len <= 7) {
      if (memchr(args[0].v_bytes, 0, args[0].small_str_len) == NULL) s = args[0].v_bytes;
    } else if (args[0].type_index == kTVMFFIRawStr) {
      s = args[0].v_c_str; /* NULL stays NULL: the slow path decides */
    }
    if (LIKELY(s != NULL)) {
      int64_t (*native)(const char*) =
          FFIJIT_BENCH_NATIVE(handle, BenchNativeStr, int64_t(*)(const char*));
      return BoxInt(result, native(s));
    }
  }
  return FFIJITBenchHandwrittenSlow(handle, args, num_args, result);
}

#endif /* FFIJIT_BENCH_HANDWRITTEN_CALLS_H_ */
