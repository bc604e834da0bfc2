/*
 * The Python call benchmark's own natives: the no-argument floor and the sum of a 1-D float64
 * array (a native that does real work, to set call overhead against). Built with
 * bench/call_natives.c into libffijit_bench_natives.so, the one library every Python path
 * (hand-written extension, ffijit, ctypes, cffi, the TVM FFI module) calls, so all of them run the
 * very same code.
 */
#include "python_natives.h"

#include <stddef.h>

void BenchNativeNoArgs(void) {}

/* A plain loop (no -ffast-math: the additions stay in order, one after the other), reading the
 * elements through the strides when the tensor has them. */
double BenchNativeSumF64(DLTensor* t) {
  const double* data = (const double*)((const char*)t->data + t->byte_offset);
  int64_t n = t->shape[0];
  int64_t stride = t->strides != NULL ? t->strides[0] : 1;
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += data[i * stride];
  return sum;
}
