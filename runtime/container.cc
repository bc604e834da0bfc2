// Containers: Array (owned Any values, in TVM FFI's ArrayObj layout), Shape, and on revisions that
// have it List (TVM FFI's ListObj: the same sequence cell over a separate, growable buffer). Maps
// and Dicts: map.cc, map_table.cc and map_key.cc.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "container_internal.h"
#include "ffijit/object.h"
#include "internal.h"
#include "object_internal.h"
#include "string_internal.h"

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
#if FFIJIT_TVM_FFI_HAS_LIST_DICT
// Array and List share TVMFFISeqCell at +24: ffijit's array cell must be that cell.
static_assert(sizeof(FFIJITArrayCell) == sizeof(TVMFFISeqCell) &&
                  offsetof(FFIJITArrayCell, data) == offsetof(TVMFFISeqCell, data) &&
                  offsetof(FFIJITArrayCell, size) == offsetof(TVMFFISeqCell, size) &&
                  offsetof(FFIJITArrayCell, capacity) == offsetof(TVMFFISeqCell, capacity) &&
                  offsetof(FFIJITArrayCell, data_deleter) == offsetof(TVMFFISeqCell, data_deleter),
              "FFIJITArrayCell is TVMFFISeqCell");
#endif

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

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
// ---- List ----
//
// Header code grows a List in place (ListObj::Reserve): it allocates the new buffer with
// ::operator new, moves the elements, passes the old buffer to `data_deleter` and keeps
// `data_deleter` as it was. So every List must have a `data_deleter` (even while `data` is NULL)
// that frees ::operator new storage, and ffijit grows a List (its own or a header-made one) the
// same way, so whichever side grew it last, the deleter in the cell frees the buffer.

struct ListObject {
  TVMFFIObject header;
  TVMFFISeqCell cell;
};
static_assert(sizeof(ListObject) == 56, "the List object is its 56-byte head");

void ListDataDeleter(void* data) {
  ::operator delete(data);
}

constexpr int64_t kListInitialCapacity = 4;
constexpr int64_t kListGrowthFactor = 2;

// Releases what `size` and `data` say now (header code may have changed both), then the buffer.
void ListDeleter(void* self, int flags) {
  auto* obj = static_cast<ListObject*>(self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    auto* items = static_cast<TVMFFIAny*>(obj->cell.data);
    for (int64_t i = 0; i < obj->cell.size; ++i) internal::ReleaseAny(&items[i]);
    if (obj->cell.data_deleter != nullptr) obj->cell.data_deleter(obj->cell.data);
    obj->cell = TVMFFISeqCell{};
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(obj);
}

// The largest element count whose buffer size fits in size_t.
constexpr uint64_t kMaxListCapacity = SIZE_MAX / sizeof(TVMFFIAny);

TVMFFIAny* Items(TVMFFISeqCell* cell) {
  return static_cast<TVMFFIAny*>(cell->data);
}

// Owned copies of views, released unless handed over (an exception between copy and placement
// must not leak them).
struct OwnedItems {
  std::vector<TVMFFIAny> items;
  OwnedItems(const TVMFFIAny* views, int64_t n) {
    items.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      items.push_back(TVMFFIAny{});
      internal::CopyToOwned(views[i], &items.back());
    }
  }
  ~OwnedItems() {
    for (TVMFFIAny& item : items) internal::ReleaseAny(&item);
  }
  void Disown() { items.clear(); }
};

// Grows the buffer to at least `needed` slots (doubling, at least kListInitialCapacity) as header
// code does: new ::operator new storage, elements moved bitwise (an Any is relocatable), the old
// buffer through the cell's data_deleter, the deleter kept.
void ListEnsureCapacity(TVMFFISeqCell* cell, int64_t needed) {
  if (needed <= cell->capacity) return;
  if (static_cast<uint64_t>(needed) > kMaxListCapacity) {
    throw Error("ValueError", "ffi.List: size " + std::to_string(needed) + " too large");
  }
  int64_t capacity = std::max(cell->capacity, int64_t{0});
  capacity = capacity > INT64_MAX / kListGrowthFactor ? needed : capacity * kListGrowthFactor;
  capacity = std::max({capacity, needed, kListInitialCapacity});
  if (static_cast<uint64_t>(capacity) > kMaxListCapacity) capacity = needed;
  void* fresh = ::operator new(static_cast<size_t>(capacity) * sizeof(TVMFFIAny));
  if (cell->size > 0) {
    std::memcpy(fresh, cell->data, static_cast<size_t>(cell->size) * sizeof(TVMFFIAny));
  }
  if (cell->data_deleter != nullptr) {
    cell->data_deleter(cell->data);
  } else {
    cell->data_deleter = ListDataDeleter;  // the old storage was not the cell's to free
  }
  cell->data = fresh;
  cell->capacity = capacity;
}

[[noreturn]] void ThrowIndex(const char* func, int64_t index, int64_t size) {
  throw Error("IndexError", std::string(func) + ": index " + std::to_string(index) +
                                " out of range for a list of size " + std::to_string(size));
}
#endif  // FFIJIT_TVM_FFI_HAS_LIST_DICT

// ---- Shape ----

void ShapeDeleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(self);
}

}  // namespace
}  // namespace ffijit

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
namespace ffijit::internal {
namespace {
TVMFFISeqCell* CellOf(TVMFFIObject* list) {
  return &reinterpret_cast<ListObject*>(list)->cell;
}
}  // namespace

void ListInsert(TVMFFIObject* list, int64_t index, const TVMFFIAny* items, int64_t count,
                const char* func) {
  TVMFFISeqCell* cell = CellOf(list);
  const int64_t size = cell->size;
  if (index < 0 || index > size) {
    throw Error("IndexError", std::string(func) + ": insertion index " + std::to_string(index) +
                                  " out of range for a list of size " + std::to_string(size));
  }
  if (count <= 0) return;
  if (static_cast<uint64_t>(count) > kMaxListCapacity - static_cast<uint64_t>(size)) {
    throw Error("ValueError", std::string(func) + ": size " + std::to_string(size) + " + " +
                                  std::to_string(count) + " too large");
  }
  // Copies first: `items` may point into this list's own buffer, which growing frees.
  OwnedItems copies(items, count);
  ListEnsureCapacity(cell, size + count);
  TVMFFIAny* data = Items(cell);
  std::memmove(data + index + count, data + index,
               static_cast<size_t>(size - index) * sizeof(TVMFFIAny));
  std::memcpy(data + index, copies.items.data(), static_cast<size_t>(count) * sizeof(TVMFFIAny));
  copies.Disown();
  cell->size = size + count;
}

void ListSetItem(TVMFFIObject* list, int64_t index, const TVMFFIAny& value, const char* func) {
  TVMFFISeqCell* cell = CellOf(list);
  if (index < 0 || index >= cell->size) ThrowIndex(func, index, cell->size);
  TVMFFIAny copy{};
  CopyToOwned(value, &copy);
  // Swap in first: releasing the old value may run a deleter that reads this list.
  TVMFFIAny old = Items(cell)[index];
  Items(cell)[index] = copy;
  ReleaseAny(&old);
}

void ListErase(TVMFFIObject* list, int64_t first, int64_t last, const char* func) {
  if (first == last) return;
  TVMFFISeqCell* cell = CellOf(list);
  const int64_t size = cell->size;
  if (first < 0 || last > size || first > last) {
    throw Error("IndexError", std::string(func) + ": range [" + std::to_string(first) + ", " +
                                  std::to_string(last) + ") out of range for a list of size " +
                                  std::to_string(size));
  }
  TVMFFIAny* data = Items(cell);
  // Take the erased values out and close the gap before releasing them, so the list is
  // consistent if a release runs code that looks at it.
  std::vector<TVMFFIAny> erased(data + first, data + last);
  std::memmove(data + first, data + last, static_cast<size_t>(size - last) * sizeof(TVMFFIAny));
  cell->size = size - (last - first);
  for (TVMFFIAny& value : erased) ReleaseAny(&value);
}

void ListReplaceSlice(TVMFFIObject* list, int64_t first, int64_t last, const TVMFFIAny* items,
                      int64_t count, const char* func) {
  // Copies first: `items` may be this very list.
  OwnedItems copies(items, count);
  TVMFFISeqCell* cell = CellOf(list);
  const int64_t size = cell->size;
  const bool bad_range = first == last ? (count > 0 && (first < 0 || first > size))
                                       : (first < 0 || last > size || first > last);
  if (bad_range) {
    throw Error("IndexError", std::string(func) + ": range [" + std::to_string(first) + ", " +
                                  std::to_string(last) + ") out of range for a list of size " +
                                  std::to_string(size));
  }
  ListErase(list, first, last, func);
  ListInsert(list, first, copies.items.data(), count, func);
}

void ListClear(TVMFFIObject* list) {
  TVMFFISeqCell* cell = CellOf(list);
  while (cell->size > 0) {
    TVMFFIAny last = Items(cell)[cell->size - 1];
    --cell->size;
    ReleaseAny(&last);
  }
}

void ListReverse(TVMFFIObject* list) {
  TVMFFISeqCell* cell = CellOf(list);
  if (cell->size > 0) std::reverse(Items(cell), Items(cell) + cell->size);
}

}  // namespace ffijit::internal
#endif  // FFIJIT_TVM_FFI_HAS_LIST_DICT

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
    auto* obj = reinterpret_cast<ArrayObject*>(internal::AllocObjectZeroing(
        sizeof(ArrayObject) + static_cast<size_t>(n) * sizeof(TVMFFIAny), sizeof(ArrayObject),
        kTVMFFIArray, ArrayDeleter));  // the items are written below, `size` counting them
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

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
int FFIJITListCreate(const TVMFFIAny* items, int64_t n, TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(out, "FFIJITListCreate", "out");
    if (n < 0) throw Error("ValueError", "FFIJITListCreate: negative size " + std::to_string(n));
    if (n > 0) internal::RequireNonNull(items, "FFIJITListCreate", "items");
    if (static_cast<uint64_t>(n) > kMaxListCapacity) {
      throw Error("ValueError", "FFIJITListCreate: size " + std::to_string(n) + " too large");
    }
    auto* obj = reinterpret_cast<ListObject*>(
        internal::AllocObject(sizeof(ListObject), kTVMFFIList, ListDeleter));
    obj->cell.data_deleter =
        ListDataDeleter;  // set even while `data` is NULL: header code calls it
    ObjectPtr<> owner = ObjectPtr<>::Adopt(&obj->header);  // frees it if a copy below throws
    internal::ListInsert(&obj->header, 0, items, n, "FFIJITListCreate");
    *out = owner.release();
  });
}
#endif

int FFIJITShapeCreate(const int64_t* dims, size_t n, TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(out, "FFIJITShapeCreate", "out");
    if (n > 0) internal::RequireNonNull(dims, "FFIJITShapeCreate", "dims");
    if (n > (SIZE_MAX - sizeof(TVMFFIObject) - sizeof(TVMFFIShapeCell)) / sizeof(int64_t)) {
      throw Error("ValueError", "FFIJITShapeCreate: size " + std::to_string(n) + " too large");
    }
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
