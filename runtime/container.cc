// Containers: Array (owned Any values, in TVM FFI's ArrayObj layout) and Shape. Maps: map.cc.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "ffijit/object.h"
#include "internal.h"

namespace ffijit {
namespace {

// ---- Array ----

// TVM FFI's ArrayObj layout: the cell, then `capacity` elements inline at +56.
struct ArrayObject {
  TVMFFIObject header;
  FFIJITArrayCell cell;
  TVMFFIAny* inline_items() noexcept { return reinterpret_cast<TVMFFIAny*>(this + 1); }
};
static_assert(sizeof(ArrayObject) == 56, "Array elements inline at +56");

// Also runs for arrays whose contents header-compiled code rewrote in place: it releases what
// `size` and `data` say now, then `data_deleter` if that code installed one.
void ArrayDeleter(void* self, int flags) {
  auto* obj = static_cast<ArrayObject*>(self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    for (int64_t i = 0; i < obj->cell.size; ++i) internal::ReleaseAny(&obj->cell.data[i]);
    if (obj->cell.data_deleter != nullptr) obj->cell.data_deleter(obj->cell.data);
    obj->cell = FFIJITArrayCell{};
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(obj);
}

// ---- Shape ----

void ShapeDeleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(self);
}

}  // namespace
}  // namespace ffijit

using namespace ffijit;

extern "C" {

int FFIJITArrayCreate(const TVMFFIAny* items, int64_t n, TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(out, "FFIJITArrayCreate", "out");
    if (n < 0) throw Error("ValueError", "FFIJITArrayCreate: negative size " + std::to_string(n));
    if (n > 0) internal::RequireNonNull(items, "FFIJITArrayCreate", "items");
    if (static_cast<uint64_t>(n) > (SIZE_MAX - sizeof(ArrayObject)) / sizeof(TVMFFIAny)) {
      throw Error("ValueError", "FFIJITArrayCreate: size " + std::to_string(n) + " too large");
    }
    auto* obj = reinterpret_cast<ArrayObject*>(
        internal::AllocObject(sizeof(ArrayObject) + static_cast<size_t>(n) * sizeof(TVMFFIAny),
                              kTVMFFIArray, ArrayDeleter));
    obj->cell.data = obj->inline_items();
    obj->cell.capacity = n;
    ObjectPtr<> owner = ObjectPtr<>::Adopt(&obj->header);  // frees it if a copy below throws
    for (int64_t i = 0; i < n; ++i) {
      internal::CopyToOwned(items[i], &obj->cell.data[i]);
      obj->cell.size = i + 1;
    }
    *out = owner.release();
  });
}

int FFIJITShapeCreate(const int64_t* dims, size_t n, TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(out, "FFIJITShapeCreate", "out");
    if (n > 0) internal::RequireNonNull(dims, "FFIJITShapeCreate", "dims");
    if (n > (SIZE_MAX / sizeof(int64_t)) - 8) throw Error("ValueError", "shape too large");
    TVMFFIObject* obj =
        internal::AllocObject(sizeof(TVMFFIObject) + sizeof(TVMFFIShapeCell) + n * sizeof(int64_t),
                              kTVMFFIShape, ShapeDeleter);
    auto* cell = reinterpret_cast<TVMFFIShapeCell*>(obj + 1);
    auto* storage = reinterpret_cast<int64_t*>(cell + 1);
    if (n) std::memcpy(storage, dims, n * sizeof(int64_t));
    cell->data = storage;
    cell->size = n;
    *out = obj;
  });
}

}  // extern "C"
