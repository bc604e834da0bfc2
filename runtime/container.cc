// Containers: Array (owned Any values), Map (insertion-ordered, content-hashed keys), Shape.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ffijit/object.h"
#include "internal.h"

namespace ffijit {
namespace {

// ---- Array ----

struct ArrayObject {
  TVMFFIObject header;
  FFIJITArrayCell cell;
};

void ArrayDeleter(void* self, int flags) {
  auto* obj = static_cast<ArrayObject*>(self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    for (int64_t i = 0; i < obj->cell.size; ++i) internal::ReleaseAny(&obj->cell.data[i]);
    std::free(obj->cell.data);
    obj->cell = FFIJITArrayCell{};
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(obj);
}

// ---- Map ----

// Keys compare by content for every string form and every bytes form, by bits otherwise.
struct KeyView {
  const TVMFFIAny* any;
};

bool IsStrForm(int32_t t) {
  return t == kTVMFFIRawStr || t == kTVMFFISmallStr || t == kTVMFFIStr;
}
bool IsBytesForm(int32_t t) {
  return t == kTVMFFIByteArrayPtr || t == kTVMFFISmallBytes || t == kTVMFFIBytes;
}

struct KeyHash {
  size_t operator()(const KeyView& key) const noexcept {
    std::string_view chars;
    int32_t t = key.any->type_index;
    if ((IsStrForm(t) || IsBytesForm(t)) && internal::ViewBytes(*key.any, &chars)) {
      return std::hash<std::string_view>()(chars) ^ (IsStrForm(t) ? 0x9e3779b9u : 0);
    }
    return std::hash<uint64_t>()(key.any->v_uint64) ^ std::hash<int32_t>()(t);
  }
};

struct KeyEqual {
  bool operator()(const KeyView& a, const KeyView& b) const noexcept {
    int32_t ta = a.any->type_index, tb = b.any->type_index;
    bool both_str = IsStrForm(ta) && IsStrForm(tb);
    bool both_bytes = IsBytesForm(ta) && IsBytesForm(tb);
    if (both_str || both_bytes) {
      std::string_view x, y;
      internal::ViewBytes(*a.any, &x);
      internal::ViewBytes(*b.any, &y);
      return x == y;
    }
    return ta == tb && a.any->v_uint64 == b.any->v_uint64;
  }
};

struct MapData {
  // Stable addresses: entries never move once inserted, so the index can point at them.
  std::vector<std::unique_ptr<TVMFFIAny[]>> entries;  // [0] key, [1] value
  std::unordered_map<KeyView, size_t, KeyHash, KeyEqual> index;
  ~MapData() {
    for (auto& entry : entries) {
      internal::ReleaseAny(&entry[0]);
      internal::ReleaseAny(&entry[1]);
    }
  }
};

struct MapObject {
  TVMFFIObject header;
  MapData* data;
};

void MapDeleter(void* self, int flags) {
  auto* obj = static_cast<MapObject*>(self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    delete obj->data;
    obj->data = nullptr;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(obj);
}

MapData* MapOf(TVMFFIObjectHandle handle, const char* func) {
  auto* obj = static_cast<TVMFFIObject*>(handle);
  internal::RequireNonNull(obj, func, "map");
  if (!IsInstance(obj->type_index, kTVMFFIMap)) {
    throw Error("TypeError", std::string(func) + ": expected an ffi.Map but got `" +
                                 TypeIndexToKey(obj->type_index) + "`");
  }
  return reinterpret_cast<MapObject*>(obj)->data;
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
    auto* obj = reinterpret_cast<ArrayObject*>(
        internal::AllocObject(sizeof(ArrayObject), kTVMFFIArray, ArrayDeleter));
    ObjectPtr<> owner = ObjectPtr<>::Adopt(&obj->header);  // frees it if a copy below throws
    if (n > 0) {
      obj->cell.data =
          static_cast<TVMFFIAny*>(std::calloc(static_cast<size_t>(n), sizeof(TVMFFIAny)));
      if (obj->cell.data == nullptr) throw std::bad_alloc();
      obj->cell.capacity = n;
      for (int64_t i = 0; i < n; ++i) {
        internal::CopyToOwned(items[i], &obj->cell.data[i]);
        obj->cell.size = i + 1;
      }
    }
    *out = owner.release();
  });
}

int FFIJITMapCreate(const TVMFFIAny* keys, const TVMFFIAny* values, int64_t n,
                    TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(out, "FFIJITMapCreate", "out");
    if (n < 0) throw Error("ValueError", "FFIJITMapCreate: negative size " + std::to_string(n));
    if (n > 0) {
      internal::RequireNonNull(keys, "FFIJITMapCreate", "keys");
      internal::RequireNonNull(values, "FFIJITMapCreate", "values");
    }
    auto* obj = reinterpret_cast<MapObject*>(
        internal::AllocObject(sizeof(MapObject), kTVMFFIMap, MapDeleter));
    ObjectPtr<> owner = ObjectPtr<>::Adopt(&obj->header);
    obj->data = new MapData();
    MapData& data = *obj->data;
    for (int64_t i = 0; i < n; ++i) {
      auto it = data.index.find(KeyView{&keys[i]});
      if (it != data.index.end()) {
        TVMFFIAny value{};
        internal::CopyToOwned(values[i], &value);
        internal::ReleaseAny(&data.entries[it->second][1]);
        data.entries[it->second][1] = value;
        continue;
      }
      auto entry = std::make_unique<TVMFFIAny[]>(2);
      entry[0] = TVMFFIAny{};
      entry[1] = TVMFFIAny{};
      data.entries.push_back(std::move(entry));
      TVMFFIAny* slot = data.entries.back().get();
      internal::CopyToOwned(keys[i], &slot[0]);
      internal::CopyToOwned(values[i], &slot[1]);
      data.index.emplace(KeyView{&slot[0]}, data.entries.size() - 1);
    }
    *out = owner.release();
  });
}

int FFIJITMapSize(TVMFFIObjectHandle map, int64_t* out) {
  return internal::GuardCBoundary([&] {
    MapData* data = MapOf(map, "FFIJITMapSize");
    internal::RequireNonNull(out, "FFIJITMapSize", "out");
    *out = static_cast<int64_t>(data->entries.size());
  });
}

int FFIJITMapGet(TVMFFIObjectHandle map, const TVMFFIAny* key, const TVMFFIAny** out_value) {
  return internal::GuardCBoundary([&] {
    MapData* data = MapOf(map, "FFIJITMapGet");
    internal::RequireNonNull(key, "FFIJITMapGet", "key");
    internal::RequireNonNull(out_value, "FFIJITMapGet", "out_value");
    auto it = data->index.find(KeyView{key});
    *out_value = it == data->index.end() ? nullptr : &data->entries[it->second][1];
  });
}

int FFIJITMapItemAt(TVMFFIObjectHandle map, int64_t i, const TVMFFIAny** key,
                    const TVMFFIAny** value) {
  return internal::GuardCBoundary([&] {
    MapData* data = MapOf(map, "FFIJITMapItemAt");
    internal::RequireNonNull(key, "FFIJITMapItemAt", "key");
    internal::RequireNonNull(value, "FFIJITMapItemAt", "value");
    if (i < 0 || i >= static_cast<int64_t>(data->entries.size())) {
      throw Error("IndexError", "FFIJITMapItemAt: index " + std::to_string(i) +
                                    " out of range for a map of size " +
                                    std::to_string(data->entries.size()));
    }
    *key = &data->entries[i][0];
    *value = &data->entries[i][1];
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
