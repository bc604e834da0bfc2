// Private container operations shared by the runtime's sources: in-place changes to List and Dict
// objects, key equality, walking a Map, and the "missing" sentinel object. They work on
// objects made by ffijit and by header-compiled code alike, reading every field live.
#ifndef FFIJIT_RUNTIME_CONTAINER_INTERNAL_H_
#define FFIJIT_RUNTIME_CONTAINER_INTERNAL_H_

#include <cstdint>

#include "ffijit/c_api.h"
#include "ffijit/object.h"

namespace ffijit::internal {

// TVM FFI's AnyEqual as map keys use it: strings (bytes) by content whatever their form, objects
// whose type has an `__any_equal__` hook (v0.1.13) through it, anything else by type index and
// bits. Throws what a hook raises.
bool AnyEqual(const TVMFFIAny& a, const TVMFFIAny& b);

// Calls visit(key, value) for every entry of a Map object (either layout, made by ffijit or by
// header-compiled code), in iteration order, in one pass (FFIJITMapItemAt walks from the start).
void MapForEach(const TVMFFIObject* map,
                void (*visit)(void* ctx, const TVMFFIAny& key, const TVMFFIAny& value), void* ctx);
template <typename F>
void MapForEach(const TVMFFIObject* map, F&& visit) {
  MapForEach(
      map,
      [](void* ctx, const TVMFFIAny& key, const TVMFFIAny& value) {
        (*static_cast<F*>(ctx))(key, value);
      },
      &visit);
}

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
// Every List function takes a live List object (type kTVMFFIList) and throws ffijit::Error:
// IndexError naming the index and the size when an index is out of range. `func` names the
// caller in messages. Values are views; the list stores owned copies.
void ListInsert(TVMFFIObject* list, int64_t index, const TVMFFIAny* items, int64_t count,
                const char* func);
void ListSetItem(TVMFFIObject* list, int64_t index, const TVMFFIAny& value, const char* func);
// Erases [first, last); first == last does nothing (as in TVM FFI), else 0 <= first < last <= size.
void ListErase(TVMFFIObject* list, int64_t first, int64_t last, const char* func);
// Replaces [first, last) by copies of items[0..count), which may alias the list itself.
void ListReplaceSlice(TVMFFIObject* list, int64_t first, int64_t last, const TVMFFIAny* items,
                      int64_t count, const char* func);
void ListClear(TVMFFIObject* list);
void ListReverse(TVMFFIObject* list);

// Every Dict function takes a live Dict object (type kTVMFFIDict); keys and values are views.
// Sets (or replaces: the entry keeps its position) the value under `key`.
void DictSet(TVMFFIObject* dict, const TVMFFIAny& key, const TVMFFIAny& value);
// Removes `key`'s entry; false when there was none.
bool DictErase(TVMFFIObject* dict, const TVMFFIAny& key);
void DictClear(TVMFFIObject* dict);

// The process-wide "missing" sentinel (a plain ffi.Object) that ffi.GetInvalidObject returns and
// ffi.MapGetItemOrMissing / ffi.DictGetItemOrMissing answer for an absent key.
ObjectRef MissingObject();
#endif

}  // namespace ffijit::internal

#endif  // FFIJIT_RUNTIME_CONTAINER_INTERNAL_H_
