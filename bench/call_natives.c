/*
 * The five natives of the call benchmarks (call_natives.h declares them): C, compiled three ways
 * from this one source so every path runs the same code -- by gcc -O2 into the benchmark (the
 * direct, interpreter, libffi, handwritten, jit and hot paths call it by address), by the build
 * LLVM's clang -O2 to LLVM bitcode (BM_Call/hot_inlined loads it into a JIT module, whose
 * hot-tier thunk inlines it), and into handwritten_inlined.c, which defines
 * FFIJIT_BENCH_NATIVE_LINKAGE as `static` to compile its own copy beside the hand-written
 * safe_calls that inline it.
 */
#include <stddef.h>
#include <stdint.h>

#include "ffijit/c_api.h"

#ifndef FFIJIT_BENCH_NATIVE_LINKAGE
#define FFIJIT_BENCH_NATIVE_LINKAGE
#endif

FFIJIT_BENCH_NATIVE_LINKAGE int64_t BenchNativeI64x3(int64_t a, int64_t b, int64_t c) {
  return a + 2 * b + 3 * c;
}

FFIJIT_BENCH_NATIVE_LINKAGE double BenchNativeMixed(int64_t a, double b, int32_t c, float d,
                                                    void* p) {
  return (double)a + b + c + (double)d + (p != NULL ? 1.0 : 0.0);
}

FFIJIT_BENCH_NATIVE_LINKAGE int64_t BenchNativeDevDtype(DLDevice dev, DLDataType dtype, int64_t k) {
  return dev.device_type + dev.device_id + dtype.code + dtype.bits + dtype.lanes + k;
}

FFIJIT_BENCH_NATIVE_LINKAGE int64_t BenchNativeTensor(DLTensor* t) {
  return t->shape[0] + t->shape[1];
}

FFIJIT_BENCH_NATIVE_LINKAGE int64_t BenchNativeStr(const char* s) {
  return (int64_t)(unsigned char)s[0];
}
