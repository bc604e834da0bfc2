// FFIJITObjectCreateOpaqueOfType (c_ext.h): opaque objects of any opaque type, over the C ABI's
// type records, the same in ffijit's runtime and in the add-on over TVM FFI's library.
#include <cstdlib>
#include <new>
#include <string>

#include "ffijit/c_ext.h"
#include "ffijit/error.h"
#include "ffijit/object.h"

namespace ffijit::portable {
namespace {

// An opaque object: a header, the foreign handle (what header code reads at +24) and the function
// that releases it.
struct OpaqueObject {
  TVMFFIObject header;
  TVMFFIOpaqueObjectCell cell;
  void (*handle_deleter)(void* handle);
};

void DeleteOpaqueObject(void* self, int flags) {
  auto* object = static_cast<OpaqueObject*>(self);
  if ((flags & kTVMFFIObjectDeleterFlagBitMaskStrong) && object->handle_deleter) {
    object->handle_deleter(object->cell.handle);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(object);
}

// Throws a ValueError unless objects of `type_index` may be opaque objects: ffi.OpaquePyObject,
// dynamic types and their subtypes (any other layout would be read as a string, a function, ...);
// a KeyError for an unregistered index.
void RequireOpaqueType(int32_t type_index) {
  if (type_index < kTVMFFIStaticObjectBegin) {
    throw Error("ValueError", "FFIJITObjectCreateOpaqueOfType: type index " +
                                  std::to_string(type_index) + " is not an object type");
  }
  TypeIndexToKey(type_index);  // throws KeyError for an unregistered index
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
}

}  // namespace
}  // namespace ffijit::portable

extern "C" int FFIJITObjectCreateOpaqueOfType(void* handle, int32_t type_index,
                                              void (*deleter)(void* handle),
                                              TVMFFIObjectHandle* out) {
  using namespace ffijit::portable;
  return ffijit::GuardCBoundary([&] {
    ffijit::details::RequireNonNull(out, "FFIJITObjectCreateOpaqueOfType", "out");
    RequireOpaqueType(type_index);
    auto* object = static_cast<OpaqueObject*>(std::calloc(1, sizeof(OpaqueObject)));
    if (object == nullptr) throw std::bad_alloc();
    FFIJITHeaderInit(&object->header, type_index, DeleteOpaqueObject);
    object->cell.handle = handle;
    object->handle_deleter = deleter;
    *out = &object->header;
  });
}
