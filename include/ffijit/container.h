// Containers over the C ABI: Array (of Any), Map (Any -> Any, insertion-ordered), Shape (int64s),
// and on TVM FFI 0.1 the mutable List and Dict.
#ifndef FFIJIT_CONTAINER_H_
#define FFIJIT_CONTAINER_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ffijit/any.h"
#include "ffijit/object.h"

namespace ffijit {

class Array : public ObjectRef {
 public:
  static constexpr int32_t kTypeIndex = kTVMFFIArray;
  static constexpr const char* kTypeKey = "ffi.Array";

  // A null reference; size() is 0.
  Array() noexcept = default;
  explicit Array(ObjectPtr<> ptr) noexcept : ObjectRef(std::move(ptr)) {}
  Array(std::initializer_list<Any> items) : Array(std::vector<Any>(items)) {}
  explicit Array(const std::vector<Any>& items) {
    TVMFFIObjectHandle handle = nullptr;
    CheckCall(FFIJITArrayCreate(items.empty() ? nullptr : &items[0].raw(),
                                static_cast<int64_t>(items.size()), &handle));
    ptr_ = ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle));
  }

  const FFIJITArrayCell* cell() const noexcept {
    return defined() ? reinterpret_cast<const FFIJITArrayCell*>(get() + 1) : nullptr;
  }
  int64_t size() const noexcept { return defined() ? cell()->size : 0; }
  bool empty() const noexcept { return size() == 0; }
  // Borrowed element; an IndexError when out of range.
  AnyView operator[](int64_t i) const {
    if (i < 0 || i >= size()) {
      throw Error("IndexError", "index " + std::to_string(i) +
                                    " out of range for an array of size " + std::to_string(size()));
    }
    return AnyView(cell()->data[i]);
  }
  const AnyView* begin() const noexcept {
    return defined() ? reinterpret_cast<const AnyView*>(cell()->data) : nullptr;
  }
  const AnyView* end() const noexcept { return begin() + size(); }
};

namespace details {
// The read side shared by Map and Dict (one layout): size, lookup, entries in insertion order.
class MapReader : public ObjectRef {
 public:
  using ObjectRef::ObjectRef;

  int64_t size() const {
    if (!defined()) return 0;
    int64_t n = 0;
    CheckCall(FFIJITMapSize(get(), &n));
    return n;
  }
  bool empty() const { return size() == 0; }
  // The value under `key` (borrowed), or nullopt.
  std::optional<AnyView> Get(const AnyView& key) const {
    if (!defined()) return std::nullopt;
    const TVMFFIAny* value = nullptr;
    CheckCall(FFIJITMapGet(get(), &key.raw(), &value));
    if (value == nullptr) return std::nullopt;
    return AnyView(*value);
  }
  std::optional<AnyView> Get(const Any& key) const { return Get(AnyView(key)); }
  // The value under `key`; a KeyError when absent.
  AnyView at(const Any& key) const { return at(AnyView(key)); }
  AnyView at(const AnyView& key) const {
    std::optional<AnyView> value = Get(key);
    if (!value) throw Error("KeyError", "key of type `" + key.type_name() + "` not found in map");
    return *value;
  }
  // The i-th entry in insertion order.
  std::pair<AnyView, AnyView> ItemAt(int64_t i) const {
    const TVMFFIAny* key = nullptr;
    const TVMFFIAny* value = nullptr;
    CheckCall(FFIJITMapItemAt(get(), i, &key, &value));
    return {AnyView(*key), AnyView(*value)};
  }

 protected:
  // Splits items into parallel key and value views for the C constructors.
  static void Split(const std::vector<std::pair<Any, Any>>& items, std::vector<TVMFFIAny>* keys,
                    std::vector<TVMFFIAny>* values) {
    keys->reserve(items.size());
    values->reserve(items.size());
    for (const auto& [key, value] : items) {
      keys->push_back(key.raw());
      values->push_back(value.raw());
    }
  }
};
}  // namespace details

class Map : public details::MapReader {
 public:
  static constexpr int32_t kTypeIndex = kTVMFFIMap;
  static constexpr const char* kTypeKey = "ffi.Map";

  Map() noexcept = default;
  explicit Map(ObjectPtr<> ptr) noexcept : MapReader(std::move(ptr)) {}
  Map(std::initializer_list<std::pair<Any, Any>> items)
      : Map(std::vector<std::pair<Any, Any>>(items)) {}
  explicit Map(const std::vector<std::pair<Any, Any>>& items) {
    std::vector<TVMFFIAny> keys, values;
    Split(items, &keys, &values);
    TVMFFIObjectHandle handle = nullptr;
    CheckCall(
        FFIJITMapCreate(keys.data(), values.data(), static_cast<int64_t>(items.size()), &handle));
    ptr_ = ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle));
  }
};

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
// TVM FFI 0.1's mutable sequence: Array's cell over a separate buffer that grows in place. The
// ffi.List* global functions change it; this class reads it.
class List : public ObjectRef {
 public:
  static constexpr int32_t kTypeIndex = kTVMFFIList;
  static constexpr const char* kTypeKey = "ffi.List";

  List() noexcept = default;
  explicit List(ObjectPtr<> ptr) noexcept : ObjectRef(std::move(ptr)) {}
  List(std::initializer_list<Any> items) : List(std::vector<Any>(items)) {}
  explicit List(const std::vector<Any>& items) {
    TVMFFIObjectHandle handle = nullptr;
    CheckCall(FFIJITListCreate(items.empty() ? nullptr : &items[0].raw(),
                               static_cast<int64_t>(items.size()), &handle));
    ptr_ = ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle));
  }

  const TVMFFISeqCell* cell() const noexcept {
    return defined() ? reinterpret_cast<const TVMFFISeqCell*>(get() + 1) : nullptr;
  }
  int64_t size() const noexcept { return defined() ? cell()->size : 0; }
  bool empty() const noexcept { return size() == 0; }
  // Borrowed element (valid until the list changes); an IndexError when out of range.
  AnyView operator[](int64_t i) const {
    if (i < 0 || i >= size()) {
      throw Error("IndexError", "index " + std::to_string(i) + " out of range for a list of size " +
                                    std::to_string(size()));
    }
    return AnyView(static_cast<const TVMFFIAny*>(cell()->data)[i]);
  }
  const AnyView* begin() const noexcept {
    return defined() ? static_cast<const AnyView*>(cell()->data) : nullptr;
  }
  const AnyView* end() const noexcept { return begin() + size(); }
};

// TVM FFI 0.1's mutable map: the Map layout under its own type index. The ffi.Dict* global
// functions change it; this class reads it.
class Dict : public details::MapReader {
 public:
  static constexpr int32_t kTypeIndex = kTVMFFIDict;
  static constexpr const char* kTypeKey = "ffi.Dict";

  Dict() noexcept = default;
  explicit Dict(ObjectPtr<> ptr) noexcept : MapReader(std::move(ptr)) {}
  Dict(std::initializer_list<std::pair<Any, Any>> items)
      : Dict(std::vector<std::pair<Any, Any>>(items)) {}
  explicit Dict(const std::vector<std::pair<Any, Any>>& items) {
    std::vector<TVMFFIAny> keys, values;
    Split(items, &keys, &values);
    TVMFFIObjectHandle handle = nullptr;
    CheckCall(
        FFIJITDictCreate(keys.data(), values.data(), static_cast<int64_t>(items.size()), &handle));
    ptr_ = ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle));
  }
};
#endif  // FFIJIT_TVM_FFI_HAS_LIST_DICT

class Shape : public ObjectRef {
 public:
  static constexpr int32_t kTypeIndex = kTVMFFIShape;
  static constexpr const char* kTypeKey = "ffi.Shape";

  Shape() noexcept = default;
  explicit Shape(ObjectPtr<> ptr) noexcept : ObjectRef(std::move(ptr)) {}
  Shape(std::initializer_list<int64_t> dims) : Shape(std::vector<int64_t>(dims)) {}
  explicit Shape(const std::vector<int64_t>& dims) {
    TVMFFIObjectHandle handle = nullptr;
    CheckCall(FFIJITShapeCreate(dims.data(), dims.size(), &handle));
    ptr_ = ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle));
  }

  const TVMFFIShapeCell* cell() const noexcept {
    return defined() ? reinterpret_cast<const TVMFFIShapeCell*>(get() + 1) : nullptr;
  }
  size_t size() const noexcept { return defined() ? cell()->size : 0; }
  const int64_t* data() const noexcept { return defined() ? cell()->data : nullptr; }
  int64_t operator[](size_t i) const {
    if (i >= size()) {
      throw Error("IndexError", "index " + std::to_string(i) +
                                    " out of range for a shape of rank " + std::to_string(size()));
    }
    return data()[i];
  }
  std::vector<int64_t> ToVector() const { return std::vector<int64_t>(data(), data() + size()); }
};

}  // namespace ffijit

#endif  // FFIJIT_CONTAINER_H_
