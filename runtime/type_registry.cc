// The type registry: static and dynamic type keys, indices, and the parent chain.
#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ffijit/object.h"
#include "internal.h"

namespace ffijit {
namespace {

struct TypeInfo {
  std::string key;
  int32_t parent = -1;  // -1: a root
};

class TypeTable {
 public:
  static TypeTable& Global() {
    static TypeTable* table = new TypeTable();  // never destroyed: objects may outlive statics
    return *table;
  }

  int32_t Register(const std::string& key, int32_t parent, int32_t wanted_index) {
    std::unique_lock lock(mutex_);
    if (auto it = by_key_.find(key); it != by_key_.end()) {
      int32_t existing = it->second;
      if (parent >= 0 && infos_[existing].parent != parent) {
        throw Error("ValueError", "type `" + key + "` is already registered with parent `" +
                                      KeyLocked(infos_[existing].parent) + "`, not `" +
                                      KeyLocked(parent) + "`");
      }
      return existing;
    }
    if (parent >= 0 &&
        (parent >= static_cast<int32_t>(infos_.size()) || infos_[parent].key.empty())) {
      throw Error("ValueError",
                  "type `" + key + "`: unknown parent type index " + std::to_string(parent));
    }
    int32_t index = wanted_index;
    if (index < 0) {
      index = std::max<int32_t>(kTVMFFIDynObjectBegin, static_cast<int32_t>(infos_.size()));
    } else if (index < static_cast<int32_t>(infos_.size()) && !infos_[index].key.empty()) {
      throw Error("ValueError", "type `" + key + "`: index " + std::to_string(index) +
                                    " already belongs to `" + infos_[index].key + "`");
    }
    if (index >= kMaxTypes) {
      throw Error("ValueError", "type `" + key + "`: the type table is full (" +
                                    std::to_string(kMaxTypes) + " types)");
    }
    if (index >= static_cast<int32_t>(infos_.size())) infos_.resize(index + 1);
    infos_[index] = TypeInfo{key, parent};
    by_key_[key] = index;
    parents_[index].store(parent, std::memory_order_release);
    return index;
  }

  int32_t Find(const std::string& key) const {
    std::shared_lock lock(mutex_);
    auto it = by_key_.find(key);
    if (it == by_key_.end()) throw Error("KeyError", "unknown type key `" + key + "`");
    return it->second;
  }

  std::string Key(int32_t index) const {
    std::shared_lock lock(mutex_);
    if (index < 0 || index >= static_cast<int32_t>(infos_.size()) || infos_[index].key.empty()) {
      throw Error("KeyError", "unknown type index " + std::to_string(index));
    }
    return infos_[index].key;
  }

  // Lock-free: executors ask this on every object argument, from many threads.
  bool IsInstance(int32_t index, int32_t target) const noexcept {
    for (int32_t current = index; current >= 0 && current < kMaxTypes;
         current = parents_[current].load(std::memory_order_acquire)) {
      if (current == target) return true;
    }
    return false;
  }

 private:
  TypeTable() {
    for (auto& parent : parents_) parent.store(-1, std::memory_order_relaxed);
    const char* pod_keys[] = {"None",
                              "int",
                              "bool",
                              "float",
                              "void*",
                              "DataType",
                              "Device",
                              "DLTensor*",
                              "const char*",
                              "TVMFFIByteArray*",
                              "ObjectRValueRef",
                              "ffi.SmallStr",
                              "ffi.SmallBytes"};
    for (int32_t i = 0; i <= kTVMFFISmallBytes; ++i) Register(pod_keys[i], -1, i);
    Register("ffi.Object", -1, kTVMFFIObject);
    const std::pair<const char*, int32_t> static_objects[] = {
        {"ffi.String", kTVMFFIStr},    {"ffi.Bytes", kTVMFFIBytes},
        {"ffi.Error", kTVMFFIError},   {"ffi.Function", kTVMFFIFunction},
        {"ffi.Shape", kTVMFFIShape},   {"ffi.Tensor", kTVMFFITensor},
        {"ffi.Array", kTVMFFIArray},   {"ffi.Map", kTVMFFIMap},
        {"ffi.Module", kTVMFFIModule}, {"ffi.OpaquePyObject", kTVMFFIOpaquePyObject}};
    for (const auto& [key, index] : static_objects) Register(key, kTVMFFIObject, index);
  }

  std::string KeyLocked(int32_t index) const {
    if (index < 0) return "<root>";
    return infos_[index].key;
  }

  static constexpr int32_t kMaxTypes = 16384;
  mutable std::shared_mutex mutex_;
  // parents_[i]: the parent index of type i, -1 for roots and unregistered indices. Written once
  // under the mutex when i is registered, read without it.
  std::atomic<int32_t> parents_[kMaxTypes];
  std::vector<TypeInfo> infos_;
  std::unordered_map<std::string, int32_t> by_key_;
};

}  // namespace

int32_t RegisterType(const std::string& key, int32_t parent_type_index) {
  if (key.empty()) throw Error("ValueError", "RegisterType: the type key must not be empty");
  if (parent_type_index < kTVMFFIStaticObjectBegin) {
    throw Error("ValueError", "RegisterType: parent of `" + key + "` must be an object type, got " +
                                  std::to_string(parent_type_index));
  }
  return TypeTable::Global().Register(key, parent_type_index, -1);
}

int32_t TypeKeyToIndex(const std::string& key) {
  return TypeTable::Global().Find(key);
}

std::string TypeIndexToKey(int32_t type_index) {
  return TypeTable::Global().Key(type_index);
}

}  // namespace ffijit

using namespace ffijit;

extern "C" {

int TVMFFITypeKeyToIndex(const TVMFFIByteArray* type_key, int32_t* out_tindex) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(type_key, "TVMFFITypeKeyToIndex", "type_key");
    internal::RequireNonNull(out_tindex, "TVMFFITypeKeyToIndex", "out_tindex");
    *out_tindex = TypeKeyToIndex(std::string(type_key->data, type_key->size));
  });
}

int32_t TVMFFITypeGetOrAllocIndex(const TVMFFIByteArray* type_key, int32_t static_type_index,
                                  int32_t /*type_depth*/, int32_t /*num_child_slots*/,
                                  int32_t /*child_slots_can_overflow*/, int32_t parent_type_index) {
  int32_t result = -1;
  int status = internal::GuardCBoundary([&] {
    internal::RequireNonNull(type_key, "TVMFFITypeGetOrAllocIndex", "type_key");
    std::string key(type_key->data, type_key->size);
    if (key.empty()) throw Error("ValueError", "TVMFFITypeGetOrAllocIndex: empty type key");
    if (static_type_index >= 0 && static_type_index < kTVMFFIStaticObjectBegin) {
      throw Error("ValueError", "TVMFFITypeGetOrAllocIndex: `" + key + "` asks for index " +
                                    std::to_string(static_type_index) +
                                    ", which is reserved for POD values");
    }
    result = TypeTable::Global().Register(
        key, parent_type_index < 0 ? kTVMFFIObject : parent_type_index, static_type_index);
  });
  return status == 0 ? result : -1;
}

int FFIJITObjectIsInstance(int32_t object_type_index, int32_t target_type_index) {
  if (object_type_index == target_type_index) return 1;
  return TypeTable::Global().IsInstance(object_type_index, target_type_index) ? 1 : 0;
}

int FFIJITTypeIndexToKey(int32_t type_index, TVMFFIAny* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(out, "FFIJITTypeIndexToKey", "out");
    std::string key = TypeIndexToKey(type_index);
    internal::MakeOwnedBytes(true, key.data(), key.size(), out);
  });
}

}  // extern "C"
