// ffijit's container functions (c_ext.h) over TVM FFI's own library: the Arrays and Maps are TVM
// FFI's, made and read through its C++ headers. Written against TVM FFI's headers alone (they
// and ffijit's c_api.h declare the same C types, so no ffijit header is included here); making
// and looking up take values checked.cc has checked (unchecked.h).
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/dict.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

#include <cstdint>
#include <iterator>
#include <vector>

#include "unchecked.h"

namespace ffi = tvm::ffi;

namespace {

void RequireNonNull(const void* pointer, const char* function, const char* what) {
  if (pointer == nullptr) {
    TVM_FFI_THROW(ValueError) << function << ": `" << what << "` must not be NULL";
  }
}

// The map `handle` names, checked: a Map or a Dict (one layout and one lookup in TVM FFI).
const ffi::MapBaseObj* MapOf(TVMFFIObjectHandle handle, const char* function) {
  RequireNonNull(handle, function, "map");
  auto* object = static_cast<ffi::Object*>(handle);
  if (!object->IsInstance<ffi::MapObj>() && !object->IsInstance<ffi::DictObj>()) {
    TVM_FFI_THROW(TypeError) << function << ": expected an ffi.Map, got `" << object->GetTypeKey()
                             << "`";
  }
  return static_cast<const ffi::MapBaseObj*>(object);
}

}  // namespace

extern "C" {

int FFIJITAddonArrayCreate(const void* items, int64_t n, void** out) {
  TVM_FFI_SAFE_CALL_BEGIN();
  const ffi::AnyView* views = static_cast<const ffi::AnyView*>(items);
  ffi::Array<ffi::Any> array(views, views + n);
  *out = ffi::details::ObjectUnsafe::MoveObjectRefToTVMFFIObjectPtr(std::move(array));
  TVM_FFI_SAFE_CALL_END();
}

int FFIJITAddonMapCreate(const void* keys, const void* values, int64_t n, void** out) {
  TVM_FFI_SAFE_CALL_BEGIN();
  const ffi::AnyView* key_views = static_cast<const ffi::AnyView*>(keys);
  const ffi::AnyView* value_views = static_cast<const ffi::AnyView*>(values);
  ffi::Map<ffi::Any, ffi::Any> map;
  for (int64_t i = 0; i < n; ++i) map.Set(ffi::Any(key_views[i]), ffi::Any(value_views[i]));
  *out = ffi::details::ObjectUnsafe::MoveObjectRefToTVMFFIObjectPtr(std::move(map));
  TVM_FFI_SAFE_CALL_END();
}

__attribute__((visibility("default"))) int FFIJITMapSize(TVMFFIObjectHandle map, int64_t* out) {
  TVM_FFI_SAFE_CALL_BEGIN();
  const ffi::MapBaseObj* object = MapOf(map, "FFIJITMapSize");
  RequireNonNull(out, "FFIJITMapSize", "out");
  *out = static_cast<int64_t>(object->size());
  TVM_FFI_SAFE_CALL_END();
}

int FFIJITAddonMapGet(void* map, const void* key, const void** out_value) {
  TVM_FFI_SAFE_CALL_BEGIN();
  const ffi::MapBaseObj* object = MapOf(map, "FFIJITMapGet");
  // An owned key: a borrowed C string becomes a String, which TVM FFI's hash and equality compare
  // by content with every string form.
  auto found = object->find(ffi::Any(*static_cast<const ffi::AnyView*>(key)));
  *out_value = found == object->end() ? nullptr : static_cast<const void*>(&(*found).second);
  TVM_FFI_SAFE_CALL_END();
}

__attribute__((visibility("default"))) int FFIJITMapItemAt(TVMFFIObjectHandle map, int64_t i,
                                                           const TVMFFIAny** key,
                                                           const TVMFFIAny** value) {
  TVM_FFI_SAFE_CALL_BEGIN();
  const ffi::MapBaseObj* object = MapOf(map, "FFIJITMapItemAt");
  RequireNonNull(key, "FFIJITMapItemAt", "key");
  RequireNonNull(value, "FFIJITMapItemAt", "value");
  if (i < 0 || static_cast<uint64_t>(i) >= object->size()) {
    TVM_FFI_THROW(IndexError) << "FFIJITMapItemAt: index " << i << " out of range for a map of "
                              << object->size() << " entries";
  }
  auto entry = object->begin();
  std::advance(entry, i);
  *key = reinterpret_cast<const TVMFFIAny*>(&(*entry).first);
  *value = reinterpret_cast<const TVMFFIAny*>(&(*entry).second);
  TVM_FFI_SAFE_CALL_END();
}

__attribute__((visibility("default"))) int FFIJITShapeCreate(const int64_t* dims, size_t n,
                                                             TVMFFIObjectHandle* out) {
  TVM_FFI_SAFE_CALL_BEGIN();
  RequireNonNull(out, "FFIJITShapeCreate", "out");
  if (n > 0) RequireNonNull(dims, "FFIJITShapeCreate", "dims");
  ffi::Shape shape(std::vector<int64_t>(dims, dims + n));
  *out = ffi::details::ObjectUnsafe::MoveObjectRefToTVMFFIObjectPtr(std::move(shape));
  TVM_FFI_SAFE_CALL_END();
}

}  // extern "C"
