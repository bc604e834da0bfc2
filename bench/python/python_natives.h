/*
 * The natives of libffijit_bench_natives.so as C declarations: the five of bench/call_natives.c
 * plus the no-argument floor and the float64 sum of python_natives.c. Only DLPack types appear, so
 * the hand-written extension needs no ffijit header.
 */
#ifndef FFIJIT_BENCH_PYTHON_NATIVES_H_
#define FFIJIT_BENCH_PYTHON_NATIVES_H_

#include <dlpack/dlpack.h>
#include <stdint.h>

int64_t BenchNativeI64x3(int64_t a, int64_t b, int64_t c);
double BenchNativeMixed(int64_t a, double b, int32_t c, float d, void* p);
int64_t BenchNativeDevDtype(DLDevice dev, DLDataType dtype, int64_t k);
int64_t BenchNativeTensor(DLTensor* t);
int64_t BenchNativeStr(const char* s);
void BenchNativeNoArgs(void);
double BenchNativeSumF64(DLTensor* t);

/* The natives as the hand-written callers (the extension, the TVM FFI module) reach them: through
 * volatile pointers, so no compiler sees through a call, as for a native found at run time. */
typedef struct {
  int64_t (*volatile i64x3)(int64_t, int64_t, int64_t);
  double (*volatile mixed)(int64_t, double, int32_t, float, void*);
  int64_t (*volatile dev_dtype)(DLDevice, DLDataType, int64_t);
  int64_t (*volatile tensor)(DLTensor*);
  int64_t (*volatile str)(const char*);
  void (*volatile no_args)(void);
  double (*volatile sum_f64)(DLTensor*);
} BenchNativeTable;
#define FFIJIT_BENCH_NATIVE_TABLE                                                               \
  {                                                                                             \
    BenchNativeI64x3, BenchNativeMixed, BenchNativeDevDtype, BenchNativeTensor, BenchNativeStr, \
        BenchNativeNoArgs, BenchNativeSumF64                                                    \
  }

#endif /* FFIJIT_BENCH_PYTHON_NATIVES_H_ */
