// Object allocation, the refcount C API and opaque objects.
#include <cstdlib>
#include <cstring>

#include "ffijit/object.h"
#include "internal.h"

namespace ffijit::internal {

TVMFFIObject* AllocObject(size_t size, int32_t type_index, void (*deleter)(void*, int)) {
  void* memory = std::calloc(1, size);
  if (memory == nullptr) throw std::bad_alloc();
  auto* obj = static_cast<TVMFFIObject*>(memory);
  FFIJITHeaderInit(obj, type_index, deleter);
  return obj;
}

}  // namespace ffijit::internal

namespace {

using namespace ffijit;

// An opaque object: a foreign handle and the function that releases it.
struct OpaqueObject {
  TVMFFIObject header;
  TVMFFIOpaqueObjectCell cell;
  void (*handle_deleter)(void* handle);
};

void OpaqueDeleter(void* self, int flags) {
  auto* obj = static_cast<OpaqueObject*>(self);
  if ((flags & kTVMFFIObjectDeleterFlagBitMaskStrong) && obj->handle_deleter) {
    obj->handle_deleter(obj->cell.handle);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(obj);
}

}  // namespace

extern "C" {

int TVMFFIObjectIncRef(TVMFFIObjectHandle obj) {
  if (obj == nullptr) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "TVMFFIObjectIncRef: `obj` must not be NULL");
    return -1;
  }
  details::IncRef(static_cast<TVMFFIObject*>(obj));
  return 0;
}

int TVMFFIObjectDecRef(TVMFFIObjectHandle obj) {
  if (obj == nullptr) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "TVMFFIObjectDecRef: `obj` must not be NULL");
    return -1;
  }
  details::DecRef(static_cast<TVMFFIObject*>(obj));
  return 0;
}

int FFIJITObjectCreateOpaqueOfType(void* handle, int32_t type_index, void (*deleter)(void* handle),
                                   TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(out, "FFIJITObjectCreateOpaqueOfType", "out");
    if (type_index < kTVMFFIStaticObjectBegin) {
      throw Error("ValueError", "FFIJITObjectCreateOpaqueOfType: type index " +
                                    std::to_string(type_index) + " is not an object type");
    }
    TypeIndexToKey(type_index);  // throws KeyError for an unregistered index
    // An opaque object is a header and a handle: a type whose objects have another layout (a
    // string, a function, a tensor, ...) would be read as that layout and crash.
    const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
    for (int32_t d = 0; d <= info->type_depth; ++d) {
      const int32_t layout =
          d == info->type_depth ? type_index : info->FFIJIT_TYPE_ANCESTORS[d]->type_index;
      if (layout != kTVMFFIObject && layout != kTVMFFIOpaquePyObject &&
          layout < kTVMFFIDynObjectBegin) {
        throw Error("ValueError", "FFIJITObjectCreateOpaqueOfType: type index " +
                                      std::to_string(type_index) + " (`" +
                                      TypeIndexToKey(type_index) +
                                      "`) is not an opaque type: only ffi.OpaquePyObject, dynamic "
                                      "types and their subtypes hold an opaque handle");
      }
    }
    auto* obj = reinterpret_cast<OpaqueObject*>(
        internal::AllocObject(sizeof(OpaqueObject), type_index, OpaqueDeleter));
    obj->cell.handle = handle;
    obj->handle_deleter = deleter;
    *out = obj;
  });
}

int TVMFFIObjectCreateOpaque(void* handle, int32_t type_index, void (*deleter)(void* handle),
                             TVMFFIObjectHandle* out) {
  if (type_index != kTVMFFIOpaquePyObject) {
    // The message TVM FFI gives; the caller keeps ownership of `handle`.
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "Only kTVMFFIOpaquePyObject is supported for now");
    return -1;
  }
  return FFIJITObjectCreateOpaqueOfType(handle, type_index, deleter, out);
}

}  // extern "C"
