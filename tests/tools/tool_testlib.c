/* A small shared library of C functions for the `ffijit call` and `ffijit bench` tests. */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ffijit/c_api.h"
#include "ffijit/c_ext.h"

#define EXPORT __attribute__((visibility("default")))

/* The sum of a tensor's elements whatever its rank, strides and (integer or float) dtype. */
EXPORT double tensor_sum(const DLTensor* t) {
  int64_t count = 1;
  for (int32_t d = 0; d < t->ndim; ++d) count *= t->shape[d];
  const char* base = (const char*)t->data + t->byte_offset;
  const int bytes = t->dtype.bits / 8;
  double sum = 0;
  for (int64_t i = 0; i < count; ++i) {
    /* Element i in row-major order, placed by the strides. */
    int64_t rest = i, offset = 0, stride = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
      offset += (rest % t->shape[d]) * (t->strides ? t->strides[d] : stride);
      stride *= t->shape[d];
      rest /= t->shape[d];
    }
    const char* p = base + offset * bytes;
    if (t->dtype.code == kDLFloat && bytes == 4) {
      float v;
      memcpy(&v, p, 4);
      sum += v;
    } else if (t->dtype.code == kDLFloat && bytes == 8) {
      double v;
      memcpy(&v, p, 8);
      sum += v;
    } else if (t->dtype.code == kDLInt && bytes == 4) {
      int32_t v;
      memcpy(&v, p, 4);
      sum += v;
    } else if (t->dtype.code == kDLInt && bytes == 8) {
      int64_t v;
      memcpy(&v, p, 8);
      sum += (double)v;
    } else if (t->dtype.code == kDLUInt && bytes == 1) {
      sum += (unsigned char)*p;
    }
  }
  return sum;
}

/* A new f32 tensor [0, 1, ..., n-1] as an owned object (the ndarray result convention). */
EXPORT TVMFFIObject* iota_f32(int64_t n) {
  DLDataType f32 = {kDLFloat, 32, 1};
  DLDevice cpu = {kDLCPU, 0};
  TVMFFIObjectHandle out = NULL;
  if (FFIJITTensorCreateEmpty(&n, 1, f32, cpu, &out) != 0) return NULL;
  DLTensor* t = (DLTensor*)((TVMFFIObject*)out + 1);
  for (int64_t i = 0; i < n; ++i) ((float*)t->data)[i] = (float)i;
  return (TVMFFIObject*)out;
}

/* Hands back its argument (with the new reference a result carries): a tensor round trip. */
EXPORT TVMFFIObject* same_object(TVMFFIObject* obj) {
  TVMFFIObjectIncRef(obj);
  return obj;
}

EXPORT int64_t str_len(const char* s) {
  return (int64_t)strlen(s);
}

/* sdict<x:f64, y:f64> then stuple<i64, str>: x * y * n + strlen(label). */
EXPORT double weigh(double x, double y, int64_t n, const char* label) {
  return x * y * (double)n + (double)strlen(label);
}

/* Named arguments x, scale, offset. */
EXPORT int64_t affine(int64_t x, int64_t scale, int64_t offset) {
  return x * scale + offset;
}

/* Two results through trailing out-pointers. */
EXPORT void divmod(int64_t a, int64_t b, int64_t* quotient, int64_t* remainder) {
  *quotient = a / b;
  *remainder = a % b;
}

/* The status convention: 0 on success, or -1 with a ValueError raised. */
EXPORT int checked_div(int64_t a, int64_t b, int64_t* out) {
  if (b == 0) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "checked_div: division by zero");
    return -1;
  }
  *out = a / b;
  return 0;
}

EXPORT int32_t dtype_bits(DLDataType t) {
  return t.bits;
}
EXPORT int32_t device_id(DLDevice d) {
  return d.device_id;
}
EXPORT void* same_ptr(void* p) {
  return p;
}
EXPORT const char* greeting(void) {
  return "hello, ffijit";
}
EXPORT uint8_t not_u8(uint8_t v) {
  return (uint8_t)~v;
}

/* An f16 argument: libffi has no 16-bit float type, so the bench lists its path unavailable. */
EXPORT double half_twice(_Float16 x) {
  return (double)x * 2;
}

/* Crashes on purpose, for the crash report. */
EXPORT void crash_now(void) {
  raise(SIGSEGV);
}

/* ---- Reflected types, registered while the library loads, the way a TVM FFI module does:
 *      testlib.Point {x, y} and its subtype testlib.Point3 {z}, whose `secret` getter fails. ----
 */
typedef struct {
  TVMFFIObject header;
  int64_t x, y, z;
} Point;

static int32_t point_type = -1, point3_type = -1;

static void PointDeleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

static int GetI64(void* field, TVMFFIAny* result) {
  memset(result, 0, sizeof(*result));
  result->type_index = kTVMFFIInt;
  result->v_int64 = *(const int64_t*)field;
  return 0;
}

static int GetSecret(void* field, TVMFFIAny* result) {
  (void)field;
  (void)result;
  TVMFFIErrorSetRaisedFromCStr("ValueError", "the secret is not readable");
  return -1;
}

static void AddField(int32_t type, const char* name, size_t offset, TVMFFIFieldGetter getter) {
  TVMFFIFieldInfo field;
  memset(&field, 0, sizeof(field));
  field.name.data = name;
  field.name.size = strlen(name);
  field.size = 8;
  field.alignment = 8;
  field.offset = (int64_t)offset;
  field.getter = getter;
  field.field_static_type_index = kTVMFFIInt;
  TVMFFITypeRegisterField(type, &field);
}

__attribute__((constructor)) static void RegisterPointTypes(void) {
  TVMFFIByteArray point = {"testlib.Point", 13}, point3 = {"testlib.Point3", 14};
  point_type = TVMFFITypeGetOrAllocIndex(&point, -1, 1, 1, 1, kTVMFFIObject);
  point3_type = TVMFFITypeGetOrAllocIndex(&point3, -1, 2, 0, 1, point_type);
  AddField(point_type, "x", offsetof(Point, x), GetI64);
  AddField(point_type, "y", offsetof(Point, y), GetI64);
  AddField(point3_type, "z", offsetof(Point, z), GetI64);
  AddField(point3_type, "secret", offsetof(Point, z), GetSecret);
}

static TVMFFIObject* NewPoint(int32_t type, int64_t x, int64_t y, int64_t z) {
  Point* p = (Point*)calloc(1, sizeof(Point));
  if (p == NULL) return NULL;
  p->header.type_index = type;
  FFIJITHeaderSetCounts(&p->header, 1, 1);
  p->header.deleter = PointDeleter;
  p->x = x;
  p->y = y;
  p->z = z;
  return &p->header;
}

EXPORT TVMFFIObject* make_point(int64_t x, int64_t y) {
  return NewPoint(point_type, x, y, 0);
}

EXPORT TVMFFIObject* make_point3(int64_t x, int64_t y, int64_t z) {
  return NewPoint(point3_type, x, y, z);
}
