// Map and Dict objects as the rest of the runtime sees them: building one from key/value arrays
// (repeated keys folded), the ffijit C API (FFIJITMapCreate/Get/ItemAt/Size, FFIJITDictCreate) and
// the in-place Dict changes of container_internal.h (DictSet/DictErase/DictClear). They work on
// whole entries through the table operations of map_table.h, so they live apart from the
// slot-level mechanics (map_table.cc) and the key hashing (map_key.cc).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "container_internal.h"
#include "ffijit/any.h"
#include "ffijit/object.h"
#include "internal.h"
#include "map_table.h"
#include "object_internal.h"
#include "string_internal.h"

namespace ffijit {
namespace {

using internal::DenseMapObject;
using internal::EntryAt;
using internal::Find;
using internal::KeyEqual;
using internal::KeyHash;
using internal::KeyValue;
using internal::kSmallLayoutBit;
using internal::kSmallMaxEntries;
using internal::MapDeleter;
using internal::MapObject;
using internal::NewDenseMap;

// A Map, or on revisions that have it a Dict (the same layout).
MapObject* MapOf(TVMFFIObjectHandle handle, const char* func) {
  auto* obj = static_cast<TVMFFIObject*>(handle);
  internal::RequireNonNull(obj, func, "map");
#if FFIJIT_TVM_FFI_HAS_LIST_DICT
  const bool is_map = IsInstance(obj->type_index, kTVMFFIMap) || obj->type_index == kTVMFFIDict;
#else
  const bool is_map = IsInstance(obj->type_index, kTVMFFIMap);
#endif
  if (!is_map) {
    throw Error("TypeError", std::string(func) + ": expected an ffi.Map but got `" +
                                 TypeIndexToKey(obj->type_index) + "`");
  }
  return reinterpret_cast<MapObject*>(obj);
}

// Owned copies of the entries, each key once: at its first position, with its last value.
struct Entries {
  std::vector<KeyValue> list;
  ~Entries() {
    for (KeyValue& kv : list) {
      internal::ReleaseAny(&kv.key);
      internal::ReleaseAny(&kv.value);
    }
  }
};

// Keys of one argument array, hashed once beforehand (a hook is called once per key) and compared
// as map keys (which may throw: std::unordered_map then leaves itself unchanged).
struct IndexHash {
  const uint64_t* hashes;
  size_t operator()(int64_t i) const noexcept { return static_cast<size_t>(hashes[i]); }
};
struct IndexEqual {
  const TVMFFIAny* keys;
  bool operator()(int64_t a, int64_t b) const { return KeyEqual(keys[a], keys[b]); }
};

TVMFFIObjectHandle* CheckedOut(TVMFFIObjectHandle* out, const char* func) {
  internal::RequireNonNull(out, func, "out");
  return out;
}

// Up to this many keys, BuildMap finds repeated keys by scanning instead of through a hash table.
constexpr int64_t kLinearDedupMaxKeys = 8;

// The largest entry count a map's storage can be sized for.
constexpr uint64_t kMaxMapEntries = (SIZE_MAX - sizeof(DenseMapObject)) / sizeof(KeyValue);

// A new Map or Dict from keys[i] -> values[i]; a repeated key keeps its first position and takes
// its last value. The count is checked, and storage proportional to it reserved, before either
// array is read: a count the arrays cannot have is refused rather than read past.
TVMFFIObject* BuildMap(const TVMFFIAny* keys, const TVMFFIAny* values, int64_t n,
                       int32_t type_index, const char* func) {
  if (n < 0) throw Error("ValueError", std::string(func) + ": negative size " + std::to_string(n));
  if (static_cast<uint64_t>(n) > kMaxMapEntries) {
    throw Error("ValueError", std::string(func) + ": size " + std::to_string(n) + " too large");
  }
  if (n > 0) {
    internal::RequireNonNull(keys, func, "keys");
    internal::RequireNonNull(values, func, "values");
  }
  // The bookkeeping, on the stack for a few keys: each key's hash, then each distinct key's first
  // position and the position of its last value.
  const size_t count = static_cast<size_t>(n);
  uint64_t inline_scratch[3 * kLinearDedupMaxKeys];
  std::vector<uint64_t> heap_scratch;
  uint64_t* key_hashes = inline_scratch;
  if (n > kLinearDedupMaxKeys) {
    heap_scratch.resize(3 * count);
    key_hashes = heap_scratch.data();
  }
  uint64_t* first_key = key_hashes + count;
  uint64_t* last_value = first_key + count;
  size_t distinct = 0;
  // Keys are hashed before they are copied: every key and value is checked first.
  for (int64_t i = 0; i < n; ++i) {
    details::RequireWellFormed(keys[i], func);
    details::RequireWellFormed(values[i], func);
  }
  // Position of each distinct key (compared by content, whatever its string form, or through
  // its type's hooks).
  for (size_t i = 0; i < count; ++i) key_hashes[i] = KeyHash(keys[i]);
  if (n <= kLinearDedupMaxKeys) {
    // Few keys (the common ffi.Map(k, v, ...) call): a scan of the distinct keys so far costs
    // less than the hash table's allocations.
    for (size_t i = 0; i < count; ++i) {
      size_t k = 0;
      while (k < distinct && !(key_hashes[first_key[k]] == key_hashes[i] &&
                               KeyEqual(keys[first_key[k]], keys[i]))) {
        ++k;
      }
      if (k == distinct) first_key[distinct++] = i;
      last_value[k] = i;
    }
  } else {
    std::unordered_map<int64_t, size_t, IndexHash, IndexEqual> position(
        count, IndexHash{key_hashes}, IndexEqual{keys});
    for (size_t i = 0; i < count; ++i) {
      auto [it, inserted] = position.emplace(static_cast<int64_t>(i), distinct);
      if (inserted) first_key[distinct++] = i;
      last_value[it->second] = i;
    }
  }
  if (distinct <= kSmallMaxEntries) {
    // Straight into the object: no staging vector. `size` counts the entries copied so far, so
    // the deleter releases exactly those if a copy throws.
    // A Dict keeps room for the most a small dict holds, which also makes the object big enough
    // for header code to rewrite it as a dense one in place.
    const uint64_t inline_slots = type_index == kTVMFFIMap ? distinct : kSmallMaxEntries;
    auto* map = reinterpret_cast<MapObject*>(internal::AllocObject(
        sizeof(MapObject) + inline_slots * sizeof(KeyValue), type_index, MapDeleter));
    ObjectPtr<> owner = ObjectPtr<>::Adopt(&map->header);
    auto* inline_entries = reinterpret_cast<KeyValue*>(map + 1);
    map->data = inline_entries;
    map->slots = inline_slots | kSmallLayoutBit;
    for (size_t k = 0; k < distinct; ++k) {
      KeyValue& kv = inline_entries[k];
      internal::CopyToOwned(keys[first_key[k]], &kv.key);
      try {
        internal::CopyToOwned(values[last_value[k]], &kv.value);
      } catch (...) {
        internal::ReleaseAny(&kv.key);
        throw;
      }
      map->size = k + 1;
    }
    return owner.release();
  }
  Entries entries;
  entries.list.reserve(distinct);
  for (size_t k = 0; k < distinct; ++k) {
    entries.list.push_back(KeyValue{});
    internal::CopyToOwned(keys[first_key[k]], &entries.list.back().key);
    internal::CopyToOwned(values[last_value[k]], &entries.list.back().value);
  }
  std::vector<uint64_t> hashes;
  hashes.reserve(distinct);
  for (size_t k = 0; k < distinct; ++k) hashes.push_back(key_hashes[first_key[k]]);
  TVMFFIObject* map = NewDenseMap(entries.list, hashes, type_index);
  entries.list.clear();  // the references moved into the map
  return map;
}

}  // namespace
}  // namespace ffijit

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
namespace ffijit::internal {

void DictSet(TVMFFIObject* dict, const TVMFFIAny& key, const TVMFFIAny& value) {
  auto* map = reinterpret_cast<MapObject*>(dict);
  details::RequireWellFormed(key, "ffi.Dict");
  details::RequireWellFormed(value, "ffi.Dict");
  const KeyValue* entry = Find(map, key);  // may throw (a key hook): nothing is copied yet
  TVMFFIAny owned_value{};
  CopyToOwned(value, &owned_value);
  if (entry != nullptr) {
    // Replaced in its position; the old value is released after the swap, as its deleter may
    // read this dict.
    TVMFFIAny old = entry->value;
    const_cast<KeyValue*>(entry)->value = owned_value;
    ReleaseAny(&old);
    return;
  }
  KeyValue kv{};
  kv.value = owned_value;
  try {
    CopyToOwned(key, &kv.key);
    InsertAbsent(map, kv);
  } catch (...) {
    ReleaseAny(&kv.key);
    ReleaseAny(&kv.value);
    throw;
  }
}

bool DictErase(TVMFFIObject* dict, const TVMFFIAny& key) {
  auto* map = reinterpret_cast<MapObject*>(dict);
  details::RequireWellFormed(key, "ffi.Dict");
  const Found at = FindEntry(map, key);  // may throw (a key hook): nothing has changed
  if (at.entry == nullptr) return false;
  KeyValue removed{};
  if (map->slots & kSmallLayoutBit) {
    auto* entries = static_cast<KeyValue*>(map->data);
    removed = entries[at.index];
    std::memmove(entries + at.index, entries + at.index + 1,
                 (map->size - at.index - 1) * sizeof(KeyValue));
    --map->size;
  } else {
    removed = DenseErase(reinterpret_cast<DenseMapObject*>(map), at.index, at.home);
  }
  ReleaseAny(&removed.key);
  ReleaseAny(&removed.value);
  return true;
}

void DictClear(TVMFFIObject* dict) {
  auto* map = reinterpret_cast<MapObject*>(dict);
  // Emptied first and released afterwards: a released value's deleter may read this dict.
  std::vector<KeyValue> entries = EntriesInOrder(map);
  if (map->slots & kSmallLayoutBit) {
    map->size = 0;
  } else if (map->data != nullptr) {
    auto* dense = reinterpret_cast<DenseMapObject*>(map);
    DenseView v = ViewOf(dense);
    for (uint64_t i = 0; i < v.slots; ++i) v.meta(i) = kEmptyMeta;
    map->size = 0;
    dense->iter_head = kNoSlot;
    dense->iter_tail = kNoSlot;
  }
  for (KeyValue& kv : entries) {
    ReleaseAny(&kv.key);
    ReleaseAny(&kv.value);
  }
}

}  // namespace ffijit::internal
#endif  // FFIJIT_TVM_FFI_HAS_LIST_DICT

using namespace ffijit;

extern "C" {

int FFIJITMapCreate(const TVMFFIAny* keys, const TVMFFIAny* values, int64_t n,
                    TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    *CheckedOut(out, "FFIJITMapCreate") = BuildMap(keys, values, n, kTVMFFIMap, "FFIJITMapCreate");
  });
}

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
int FFIJITDictCreate(const TVMFFIAny* keys, const TVMFFIAny* values, int64_t n,
                     TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    *CheckedOut(out, "FFIJITDictCreate") =
        BuildMap(keys, values, n, kTVMFFIDict, "FFIJITDictCreate");
  });
}
#endif

int FFIJITMapSize(TVMFFIObjectHandle map, int64_t* out) {
  return internal::GuardCBoundary([&] {
    MapObject* obj = MapOf(map, "FFIJITMapSize");
    internal::RequireNonNull(out, "FFIJITMapSize", "out");
    *out = static_cast<int64_t>(obj->size);
  });
}

int FFIJITMapGet(TVMFFIObjectHandle map, const TVMFFIAny* key, const TVMFFIAny** out_value) {
  return internal::GuardCBoundary([&] {
    MapObject* obj = MapOf(map, "FFIJITMapGet");
    internal::RequireNonNull(key, "FFIJITMapGet", "key");
    internal::RequireNonNull(out_value, "FFIJITMapGet", "out_value");
    details::RequireWellFormed(*key, "FFIJITMapGet");
    const KeyValue* entry = Find(obj, *key);
    *out_value = entry == nullptr ? nullptr : &entry->value;
  });
}

int FFIJITMapItemAt(TVMFFIObjectHandle map, int64_t i, const TVMFFIAny** key,
                    const TVMFFIAny** value) {
  return internal::GuardCBoundary([&] {
    MapObject* obj = MapOf(map, "FFIJITMapItemAt");
    internal::RequireNonNull(key, "FFIJITMapItemAt", "key");
    internal::RequireNonNull(value, "FFIJITMapItemAt", "value");
    if (i < 0 || static_cast<uint64_t>(i) >= obj->size) {
      throw Error("IndexError", "FFIJITMapItemAt: index " + std::to_string(i) +
                                    " out of range for a map of size " + std::to_string(obj->size));
    }
    const KeyValue* entry = EntryAt(obj, static_cast<uint64_t>(i));
    *key = &entry->key;
    *value = &entry->value;
  });
}

}  // extern "C"
