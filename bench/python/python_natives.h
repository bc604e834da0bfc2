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

#endif /* FFIJIT_BENCH_PYTHON_NATIVES_H_ */
