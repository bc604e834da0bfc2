/*
 * Plain C natives for the Python suites: they know nothing about ffijit; the tests register them
 * by address (ctypes finds them in this library) with IREE metadata.
 */
#include <stdint.h>
#include <string.h>

#include "ffijit/c_api.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int64_t py_add3(int64_t a, int64_t b, int64_t c) {
  return a + 2 * b + 3 * c;
}
EXPORT double py_mixed(int64_t a, double b, int32_t c, float d, void* p) {
  return (double)a + b + c + (double)d + (p != NULL ? 1.0 : 0.0);
}
EXPORT int32_t py_narrow(int8_t a, uint8_t b, int16_t c, uint32_t d) {
  return (int32_t)a + (int32_t)b + (int32_t)c + (int32_t)d;
}
EXPORT int py_not(int flag) {
  return !flag;
}
EXPORT int64_t py_strlen(const char* s) {
  return (int64_t)strlen(s);
}
EXPORT int64_t py_dev_dtype(DLDevice dev, DLDataType dtype) {
  return dev.device_type * 1000000 + dev.device_id * 10000 + dtype.code * 1000 + dtype.bits;
}
/* Sums a float32 tensor of any rank (compact or strided). */
EXPORT double py_sum_f32(DLTensor* t) {
  int64_t count = 1;
  for (int i = 0; i < t->ndim; ++i) count *= t->shape[i];
  double total = 0;
  const float* data = (const float*)((const char*)t->data + t->byte_offset);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat, offset = 0, step = 1;
    for (int i = t->ndim - 1; i >= 0; --i) {
      int64_t index = rest % t->shape[i];
      rest /= t->shape[i];
      offset += index * (t->strides != NULL ? t->strides[i] : step);
      step *= t->shape[i];
    }
    total += data[offset];
  }
  return total;
}
/* Scales a float64 vector in place. */
EXPORT void py_scale_f64(DLTensor* t, double k) {
  double* data = (double*)((char*)t->data + t->byte_offset);
  for (int64_t i = 0; i < t->shape[0]; ++i) data[i] *= k;
}
/* Calls a native callback `int64_t (*)(int64_t)` n times, summing. */
EXPORT int64_t py_apply(int64_t (*f)(int64_t), int64_t n) {
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) total += f(i);
  return total;
}
