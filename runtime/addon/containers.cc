// ffijit's container functions (c_ext.h) over TVM FFI's own library: the Arrays and Maps are TVM
// FFI's, made and read through its C++ headers. Written against TVM FFI's headers alone (they
// and ffijit's c_api.h declare the same C types, so no ffijit header is included here).
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

namespace ffi = tvm::ffi;

namespace {

const ffi::AnyView* Views(const TVMFFIAny* items) {
  return reinterpret_cast<const ffi::AnyView*>(items);
}

void RequireNonNull(const void* pointer, const char* function, const char* what) {
  if (pointer == nullptr) {
    TVM_FFI_THROW(ValueError) << function << ": `" << what << "` is NULL";
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

__attribute__((visibility("default"))) int FFIJITArrayCreate(const TVMFFIAny* items, int64_t n,
                                                             TVMFFIObjectHandle* out) {
  TVM_FFI_SAFE_CALL_BEGIN();
  RequireNonNull(out, "FFIJITArrayCreate", "out");
  if (n < 0) TVM_FFI_THROW(ValueError) << "FFIJITArrayCreate: negative size " << n;
  if (n > 0) RequireNonNull(items, "FFIJITArrayCreate", "items");
  ffi::Array<ffi::Any> array(Views(items), Views(items) + n);
  *out = ffi::details::ObjectUnsafe::MoveObjectRefToTVMFFIObjectPtr(std::move(array));
  TVM_FFI_SAFE_CALL_END();
}

__attribute__((visibility("default"))) int FFIJITMapCreate(const TVMFFIAny* keys,
                                                           const TVMFFIAny* values, int64_t n,
                                                           TVMFFIObjectHandle* out) {
  TVM_FFI_SAFE_CALL_BEGIN();
  RequireNonNull(out, "FFIJITMapCreate", "out");
  if (n < 0) TVM_FFI_THROW(ValueError) << "FFIJITMapCreate: negative size " << n;
  if (n > 0) {
    RequireNonNull(keys, "FFIJITMapCreate", "keys");
    RequireNonNull(values, "FFIJITMapCreate", "values");
  }
  // A repeated key keeps its first position and takes the last value, as ffijit's runtime does.
  ffi::Map<ffi::Any, ffi::Any> map;
  for (int64_t i = 0; i < n; ++i) map.Set(ffi::Any(Views(keys)[i]), ffi::Any(Views(values)[i]));
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

__attribute__((visibility("default"))) int FFIJITMapGet(TVMFFIObjectHandle map,
                                                        const TVMFFIAny* key,
                                                        const TVMFFIAny** out_value) {
  TVM_FFI_SAFE_CALL_BEGIN();
  const ffi::MapBaseObj* object = MapOf(map, "FFIJITMapGet");
  RequireNonNull(key, "FFIJITMapGet", "key");
  RequireNonNull(out_value, "FFIJITMapGet", "out_value");
  // An owned key: a borrowed C string becomes a String, which TVM FFI's hash and equality compare
  // by content with every string form.
  auto found = object->find(ffi::Any(*Views(key)));
  *out_value =
      found == object->end() ? nullptr : reinterpret_cast<const TVMFFIAny*>(&(*found).second);
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
