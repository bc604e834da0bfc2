/*
 * A TVM FFI module with its own reflected object types, written in C the way header-compiled code
 * behaves at load time: a static initialiser allocates dynamic type indices under ffi.Object
 * (rm.Shape with two child slots, its subtype rm.Rect with one, rm.Rect's subtype rm.Square, and
 * an unrelated rm.Other), registers their fields and metadata, and exported `__tvm_ffi_<name>`
 * functions make objects of them. Every object is a header and three int64 fields.
 */
#include <stddef.h>
#include <stdlib.h>

#include "ffijit/c_api.h"

#define EXPORT __attribute__((visibility("default")))

typedef struct {
  TVMFFIObject header;
  int64_t sides; /* rm.Shape.sides */
  int64_t w;     /* rm.Rect.w */
  int64_t h;     /* rm.Rect.h */
} ShapeObj;

static int32_t shape_type, rect_type, square_type, other_type;

static void ShapeDeleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

static int GetI64(void* field, TVMFFIAny* result) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = *(int64_t*)field;
  return 0;
}

static int SetI64(void* field, const TVMFFIAny* value) {
  if (value->type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "an rm field must be set to an int");
    return -1;
  }
  *(int64_t*)field = value->v_int64;
  return 0;
}

static void AddField(int32_t type, const char* name, size_t name_len, int64_t offset) {
  TVMFFIFieldInfo info = {0};
  info.name.data = name;
  info.name.size = name_len;
  info.size = 8;
  info.alignment = 8;
  info.offset = offset;
  info.getter = GetI64;
  info.setter = SetI64;
  info.field_static_type_index = kTVMFFIInt;
  TVMFFITypeRegisterField(type, &info);
}

static int32_t Alloc(const char* key, size_t len, int32_t depth, int32_t slots, int32_t parent) {
  TVMFFIByteArray bytes = {key, len};
  return TVMFFITypeGetOrAllocIndex(&bytes, -1, depth, slots, 1, parent);
}

__attribute__((constructor)) static void RegisterTypes(void) {
  TVMFFITypeMetadata metadata = {0};
  shape_type = Alloc("rm.Shape", 8, 1, 2, kTVMFFIObject);
  rect_type = Alloc("rm.Rect", 7, 2, 1, shape_type);
  square_type = Alloc("rm.Square", 9, 3, 0, rect_type);
  other_type = Alloc("rm.Other", 8, 1, 0, kTVMFFIObject);
  AddField(shape_type, "sides", 5, (int64_t)offsetof(ShapeObj, sides));
  AddField(rect_type, "w", 1, (int64_t)offsetof(ShapeObj, w));
  AddField(rect_type, "h", 1, (int64_t)offsetof(ShapeObj, h));
  metadata.total_size = (int32_t)sizeof(ShapeObj);
  metadata.structural_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVMFFITypeRegisterMetadata(shape_type, &metadata);
  TVMFFITypeRegisterMetadata(rect_type, &metadata);
  TVMFFITypeRegisterMetadata(square_type, &metadata);
}

static int Make(int32_t type, int64_t sides, int64_t w, int64_t h, TVMFFIAny* result) {
  ShapeObj* obj = (ShapeObj*)calloc(1, sizeof(ShapeObj));
  if (obj == NULL) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "out of memory");
    return -1;
  }
  obj->header.type_index = type;
  FFIJITHeaderSetCounts(&obj->header, 1, 1);
  obj->header.deleter = ShapeDeleter;
  obj->sides = sides;
  obj->w = w;
  obj->h = h;
  result->type_index = type;
  result->zero_padding = 0;
  result->v_obj = &obj->header;
  return 0;
}

static int IntArgs(const char* name, const TVMFFIAny* args, int32_t num_args, int32_t expected) {
  int32_t i;
  if (num_args != expected) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", name);
    return -1;
  }
  for (i = 0; i < num_args; ++i) {
    if (args[i].type_index != kTVMFFIInt) {
      TVMFFIErrorSetRaisedFromCStr("TypeError", name);
      return -1;
    }
  }
  return 0;
}

/* make_shape(sides: int) -> rm.Shape */
EXPORT int __tvm_ffi_make_shape(void* self, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result) {
  (void)self;
  if (IntArgs("make_shape expects one int", args, num_args, 1) != 0) return -1;
  return Make(shape_type, args[0].v_int64, 0, 0, result);
}

/* make_rect(w: int, h: int) -> rm.Rect */
EXPORT int __tvm_ffi_make_rect(void* self, const TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result) {
  (void)self;
  if (IntArgs("make_rect expects two ints", args, num_args, 2) != 0) return -1;
  return Make(rect_type, 4, args[0].v_int64, args[1].v_int64, result);
}

/* make_square(side: int) -> rm.Square */
EXPORT int __tvm_ffi_make_square(void* self, const TVMFFIAny* args, int32_t num_args,
                                 TVMFFIAny* result) {
  (void)self;
  if (IntArgs("make_square expects one int", args, num_args, 1) != 0) return -1;
  return Make(square_type, 4, args[0].v_int64, args[0].v_int64, result);
}

/* make_other() -> rm.Other */
EXPORT int __tvm_ffi_make_other(void* self, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result) {
  (void)self;
  if (IntArgs("make_other expects no arguments", args, num_args, 0) != 0) return -1;
  return Make(other_type, 0, 0, 0, result);
}
