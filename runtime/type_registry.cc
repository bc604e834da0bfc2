// The type table: every type's TVMFFITypeInfo (index, depth, key, key hash, ancestors) with its
// reflection records (fields, methods, metadata), the type attribute columns, index allocation with
// child slots and overflow as in TVM FFI, and IsInstance.
//
// Thread-safety: registrations take one mutex; lookups of entries by index are lock-free (entries
// are published with release stores and never freed). Published arrays (fields, methods, column
// data) are never modified in place once readers may see a slot: appends write past the published
// count and then publish the count, replacements copy the array and publish the copy; old arrays
// stay allocated, so a reader holding an old pointer reads consistent (if stale) data.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ffijit/object.h"
#include "internal.h"
#include "string_internal.h"

namespace ffijit {
namespace {

// A growable array whose published prefix readers may use without a lock. Every block ever
// published stays allocated, so a pointer a reader loaded earlier remains valid.
template <typename T>
class PublishedArray {
 public:
  size_t size() const { return size_; }
  const T* data() const { return blocks_.empty() ? nullptr : blocks_.back().get(); }

  // Appends `item` past the published prefix (growing into a new block when full).
  void Append(const T& item) {
    if (size_ == capacity_) CopyTo(capacity_ == 0 ? 4 : capacity_ * 2);
    blocks_.back()[size_++] = item;
  }

  // Replaces element `i` in a fresh copy, so readers of the old block never see a torn write.
  void Replace(size_t i, const T& item) {
    CopyTo(capacity_);
    blocks_.back()[i] = item;
  }

  // Grows to at least `n` elements, new ones set to `fill`, in a fresh copy.
  void Resize(size_t n, const T& fill) {
    CopyTo(std::max(n, capacity_));
    for (size_t i = size_; i < n; ++i) blocks_.back()[i] = fill;
    size_ = std::max(n, size_);
  }

 private:
  void CopyTo(size_t capacity) {
    auto block = std::make_unique<T[]>(capacity);
    if (size_ != 0) std::memcpy(static_cast<void*>(block.get()), data(), size_ * sizeof(T));
    blocks_.push_back(std::move(block));
    capacity_ = capacity;
  }

  std::vector<std::unique_ptr<T[]>> blocks_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// One type. `info` is what the C API hands out; the rest is the storage it points into.
struct TypeEntry {
  TVMFFITypeInfo info{};
  std::string key;
  int32_t num_slots = 1;  // the type's own index plus the child slots reserved after it
  int32_t allocated_slots = 1;
  bool child_slots_can_overflow = false;
  std::vector<const TVMFFITypeInfo*> ancestors;
  TVMFFITypeMetadata metadata{};
  std::deque<std::string> strings;  // copies of member names, docs, schemas (stable addresses)
  PublishedArray<TVMFFIFieldInfo> fields;
  PublishedArray<TVMFFIMethodInfo> methods;
};

// A named attribute column; `column.data` is republished on every change. The entry of type t is
// data[t] for t < size: v0.1.13's begin_index stays 0 (as in TVM FFI), so readers of either
// revision's layout find the same entries.
struct AttrColumn {
  TVMFFITypeAttrColumn column{};
  PublishedArray<TVMFFIAny> values;
};

constexpr const char* kUnknownTypeKey = "ffijit.UnknownType";

TVMFFIAny NoneAny() {
  TVMFFIAny none;
  std::memset(&none, 0, sizeof(none));
  return none;
}

std::string ViewKey(const TVMFFIByteArray* bytes, const char* func, const char* param) {
  internal::RequireNonNull(bytes, func, param);
  if (bytes->data == nullptr && bytes->size != 0) {
    throw Error("ValueError", std::string(func) + ": `" + param + "` has NULL data and size " +
                                  std::to_string(bytes->size));
  }
  return std::string(bytes->data == nullptr ? "" : bytes->data, bytes->size);
}

// The getter/setter of ffi.Module's `imports_` field (an Array<Any> at header + 24).
int ModuleImportsGetter(void* field, TVMFFIAny* result) {
  auto* array = *static_cast<TVMFFIObject**>(field);
  *result = NoneAny();
  if (array != nullptr) {
    details::IncRef(array);
    result->type_index = array->type_index;
    result->v_obj = array;
  }
  return 0;
}

int ModuleImportsSetter(void* field, const TVMFFIAny* value) {
  if (value == nullptr || value->type_index != kTVMFFIArray) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "ffi.Module.imports_ must be set to an ffi.Array");
    return -1;
  }
  const details::AnyDefect defect = details::FindAnyDefect(*value);
  if (defect != details::AnyDefect::kNone) {
    return internal::GuardCBoundary(
        [&] { details::ThrowMalformed("ffi.Module.imports_", *value, defect); });
  }
  auto** slot = static_cast<TVMFFIObject**>(field);
  details::IncRef(value->v_obj);
  TVMFFIObject* old = *slot;
  *slot = value->v_obj;
  if (old != nullptr) details::DecRef(old);
  return 0;
}

class TypeTable {
 public:
  static TypeTable& Global() {
    static TypeTable* table = new TypeTable();  // never destroyed: objects may outlive statics
    return *table;
  }

  // TVMFFITypeGetOrAllocIndex; throws where TVM FFI aborts. Where the revision has the query-only
  // mode, parent index kQueryOnlyParent looks the key up and answers kQueryOnlyParent if unknown.
  int32_t GetOrAlloc(const std::string& key, int32_t static_index, int32_t depth,
                     int32_t num_child_slots, bool can_overflow, int32_t parent_index) {
    std::lock_guard lock(mutex_);
    if (auto it = by_key_.find(key); it != by_key_.end()) return it->second;
    if (FFIJIT_TVM_FFI_HAS_TYPE_INDEX_QUERY && parent_index == kQueryOnlyParent) {
      return kQueryOnlyParent;
    }
    return AllocLocked(key, static_index, depth, num_child_slots, can_overflow, parent_index);
  }

  static constexpr int32_t kQueryOnlyParent = -2;

  // The entry of `index`, or nullptr (lock-free).
  const TypeEntry* Find(int32_t index) const noexcept {
    if (index < 0 || index >= kMaxTypes) return nullptr;
    return entries_[index].load(std::memory_order_acquire);
  }

  const TypeEntry& Require(int32_t index, const char* func) const {
    const TypeEntry* entry = Find(index);
    if (entry == nullptr) {
      throw Error("InternalError",
                  std::string(func) + ": no type is registered at index " + std::to_string(index));
    }
    return *entry;
  }

  int32_t FindKey(const std::string& key) const {
    std::lock_guard lock(mutex_);
    auto it = by_key_.find(key);
    if (it == by_key_.end())
      throw Error("InternalError", "Cannot find type `" + Excerpt(key) + "`");
    return it->second;
  }

  const TVMFFITypeInfo* Unknown() const { return &unknown_.info; }

  // Appends the field. A second field of the same name is an error where the revision says so,
  // and otherwise replaces the first (a reloaded module). The table keeps a reference to a setter
  // Function and to the default (value or factory) for the life of the process.
  void RegisterField(int32_t index, const TVMFFIFieldInfo& given) {
    constexpr const char* kFunc = "TVMFFITypeRegisterField";
    TVMFFIFieldInfo field = given;
    std::lock_guard lock(mutex_);
    TypeEntry& entry = MutableLocked(index, kFunc);
    field.name = CopyString(entry, given.name, kFunc, "name", false);
    const std::string_view name(field.name.data, field.name.size);
    if (FFIJIT_TVM_FFI_REJECTS_DUPLICATE_FIELDS) {
      for (size_t i = 0; i < entry.fields.size(); ++i) {
        const TVMFFIFieldInfo& existing = entry.fields.data()[i];
        if (std::string_view(existing.name.data, existing.name.size) == name) {
          throw Error("ValueError", std::string(kFunc) + ": duplicate field name `" +
                                        Excerpt(std::string(name)) + "` in type `" +
                                        Excerpt(entry.key) + "`");
        }
      }
    }
    // The member is a function pointer at e98b94e1 and a void* at v0.1.13; read it as a void*.
    void* setter = reinterpret_cast<void*>(given.setter);
    const bool setter_is_function = (given.flags & FFIJIT_FIELD_FLAG_SETTER_IS_FUNCTION) != 0;
    if (setter_is_function && setter != nullptr) {
      RequireFunction(static_cast<TVMFFIObject*>(setter), entry, name, "setter");
    }
    const bool has_default = (given.flags & kTVMFFIFieldFlagBitMaskHasDefault) != 0;
    if (has_default && (given.flags & FFIJIT_FIELD_FLAG_DEFAULT_FROM_FACTORY)) {
      const TVMFFIAny& factory = given.FFIJIT_FIELD_DEFAULT;
      if (factory.type_index < kTVMFFIStaticObjectBegin) {
        throw Error("TypeError", std::string(kFunc) + ": the default factory of field `" +
                                     Excerpt(std::string(name)) + "` of type `" +
                                     Excerpt(entry.key) + "` must be a function, not `" +
                                     TypeIndexToKeyOrNumber(factory.type_index) + "`");
      }
      RequireFunction(factory.v_obj, entry, name, "default factory");
    }
    field.doc = CopyString(entry, given.doc, kFunc, "doc", true);
    field.FFIJIT_MEMBER_METADATA =
        CopyString(entry, given.FFIJIT_MEMBER_METADATA, kFunc, "metadata", true);
    field.FFIJIT_FIELD_DEFAULT = NoneAny();
    if (has_default) {  // an owned copy, kept forever
      internal::CopyToOwned(given.FFIJIT_FIELD_DEFAULT, &field.FFIJIT_FIELD_DEFAULT);
    }
    if (setter_is_function && setter != nullptr) {
      details::IncRef(static_cast<TVMFFIObject*>(setter));  // kept forever, like the default
    }
    Publish(entry.fields, field, &entry.info.fields, &entry.info.num_fields);
  }

  void RegisterMethod(int32_t index, const TVMFFIMethodInfo& given) {
    TVMFFIMethodInfo method = given;
    std::lock_guard lock(mutex_);
    TypeEntry& entry = MutableLocked(index, "TVMFFITypeRegisterMethod");
    method.name = CopyString(entry, given.name, "TVMFFITypeRegisterMethod", "name", false);
    method.doc = CopyString(entry, given.doc, "TVMFFITypeRegisterMethod", "doc", true);
    method.FFIJIT_MEMBER_METADATA = CopyString(entry, given.FFIJIT_MEMBER_METADATA,
                                               "TVMFFITypeRegisterMethod", "type_schema", true);
    internal::CopyToOwned(given.method, &method.method);  // kept forever
    // TVM FFI records every registration: an overloaded method is registered once per signature
    // (each with its own metadata, all sharing one dispatcher), and every signature must stay
    // visible. Only a registration repeating a name *and* its metadata (a reloaded module)
    // replaces the earlier one, so reloading does not grow the table.
    const std::string_view metadata = View(method.FFIJIT_MEMBER_METADATA);
    Publish(entry.methods, method, &entry.info.methods, &entry.info.num_methods,
            [&](const TVMFFIMethodInfo& existing) {
              return View(existing.FFIJIT_MEMBER_METADATA) == metadata;
            });
  }

  void RegisterMetadata(int32_t index, const TVMFFITypeMetadata& given) {
    std::lock_guard lock(mutex_);
    TypeEntry& entry = MutableLocked(index, "TVMFFITypeRegisterMetadata");
    if (entry.info.metadata != nullptr) {
      throw Error("RuntimeError", "Overriding " + Excerpt(entry.key) +
                                      ", possible causes:\n- two registrations of metadata for "
                                      "the same type\n- another type with the same key is "
                                      "already registered\nCross check the reflection "
                                      "registration.");
    }
    entry.metadata = given;
    entry.metadata.doc = CopyString(entry, given.doc, "TVMFFITypeRegisterMetadata", "doc", true);
    __atomic_store_n(&entry.info.metadata, &entry.metadata, __ATOMIC_RELEASE);
  }

  void RegisterAttr(int32_t index, const std::string& name, const TVMFFIAny& value) {
    if (name.empty()) {
      throw Error("ValueError", "TVMFFITypeRegisterAttr: the attribute name must not be empty");
    }
    std::lock_guard lock(mutex_);
    if (index != 0) MutableLocked(index, "TVMFFITypeRegisterAttr");
    AttrColumn& column = ColumnLocked(name);
    if (index == 0) return;
    size_t slot = static_cast<size_t>(index);
    if (slot < column.values.size() && column.values.data()[slot].type_index != kTVMFFINone) {
      throw Error("RuntimeError", "Type attribute `" + Excerpt(name) +
                                      "` is already set for type `" + Excerpt(Find(index)->key) +
                                      "`");
    }
    TVMFFIAny owned = NoneAny();
    internal::CopyToOwned(value, &owned);  // kept forever
    if (slot >= column.values.size()) column.values.Resize(slot + 1, NoneAny());
    column.values.Replace(slot, owned);
    __atomic_store_n(&column.column.data, column.values.data(), __ATOMIC_RELEASE);
    // size_t at e98b94e1, int32_t at v0.1.13 (indices stay below kMaxTypes either way).
    using ColumnSize = decltype(column.column.size);
    __atomic_store_n(&column.column.size, static_cast<ColumnSize>(column.values.size()),
                     __ATOMIC_RELEASE);
  }

  const TVMFFITypeAttrColumn* FindColumn(const std::string& name) const {
    std::lock_guard lock(mutex_);
    auto it = columns_.find(name);
    return it == columns_.end() ? nullptr : &it->second->column;
  }

 private:
  TypeTable() {
    for (auto& entry : entries_) entry.store(nullptr, std::memory_order_relaxed);
    unknown_.key = kUnknownTypeKey;
    unknown_.info.type_index = -1;
    unknown_.info.type_key = TVMFFIByteArray{unknown_.key.c_str(), unknown_.key.size()};
    unknown_.info.type_key_hash = std::hash<std::string_view>()(unknown_.key);

    std::lock_guard lock(mutex_);
    // POD values: roots without child slots. Index 7 has an entry at both revisions (TVM FFI
    // e98b94e1 left it empty; v0.1.13 registers it too).
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
    for (int32_t i = 0; i <= kTVMFFISmallBytes; ++i) AllocLocked(pod_keys[i], i, 0, 0, false, -1);
    AllocLocked("ffi.Object", kTVMFFIObject, 0, 0, true, -1);
    // Static objects: depth 1 under ffi.Object, no child slots, overflow allowed. Index 74, the
    // type of TVMFFIObjectCreateOpaque's objects, has an entry at both revisions (TVM FFI
    // e98b94e1 left it empty). The revision's types after 74 follow (v0.1.13: 75-77); their
    // metadata and members are registered by whoever implements them.
    const std::pair<const char*, int32_t> static_objects[] = {
        {"ffi.String", kTVMFFIStr},    {"ffi.Bytes", kTVMFFIBytes},
        {"ffi.Error", kTVMFFIError},   {"ffi.Function", kTVMFFIFunction},
        {"ffi.Shape", kTVMFFIShape},   {"ffi.Tensor", kTVMFFITensor},
        {"ffi.Array", kTVMFFIArray},   {"ffi.Map", kTVMFFIMap},
        {"ffi.Module", kTVMFFIModule}, {"ffi.OpaquePyObject", kTVMFFIOpaquePyObject}};
    for (const auto& [key, index] : static_objects) {
      AllocLocked(key, index, 1, 0, true, kTVMFFIObject);
    }
#define FFIJIT_ALLOC_STATIC_OBJECT(index, key) AllocLocked(key, index, 1, 0, true, kTVMFFIObject);
    FFIJIT_TVM_FFI_ABI_STATIC_TYPE_KEYS_AFTER_74(FFIJIT_ALLOC_STATIC_OBJECT)
#undef FFIJIT_ALLOC_STATIC_OBJECT
#define FFIJIT_CREATE_COLUMN(name) ColumnLocked(name);
    FFIJIT_TVM_FFI_BUILTIN_ATTR_COLUMNS(FFIJIT_CREATE_COLUMN)
#undef FFIJIT_CREATE_COLUMN
    SetStaticMetadataLocked(kTVMFFIObject, 24);
    SetStaticMetadataLocked(kTVMFFIModule, 48);
    TypeEntry& module = MutableLocked(kTVMFFIModule, "TypeTable");
    TVMFFIFieldInfo imports{};
    imports.name = CopyString(module, TVMFFIByteArray{"imports_", 8}, "TypeTable", "name", false);
    imports.size = sizeof(void*);
    imports.alignment = alignof(void*);
    imports.offset = sizeof(TVMFFIObject);
    imports.getter = ModuleImportsGetter;
    imports.setter = reinterpret_cast<decltype(imports.setter)>(&ModuleImportsSetter);
    imports.FFIJIT_FIELD_DEFAULT = NoneAny();
    imports.field_static_type_index = kTVMFFIArray;
    Publish(module.fields, imports, &module.info.fields, &module.info.num_fields);
    // The columns header code expects to exist.
    for (const char* column :
         {"__s_equal__", "__s_hash__", "__data_to_json__", "__data_from_json__"}) {
      ColumnLocked(column);
    }
  }

  void SetStaticMetadataLocked(int32_t index, int32_t total_size) {
    TypeEntry& entry = MutableLocked(index, "TypeTable");
    entry.metadata = TVMFFITypeMetadata{};
    entry.metadata.total_size = total_size;
    entry.metadata.structural_eq_hash_kind = kTVMFFISEqHashKindUnsupported;
    entry.info.metadata = &entry.metadata;
  }

  std::string Describe(const std::string& key, int32_t static_index, int32_t parent_index) const {
    return "type `" + Excerpt(key) + "` (static index " + std::to_string(static_index) +
           ", parent " + std::to_string(parent_index) + ")";
  }

  int32_t AllocLocked(const std::string& key, int32_t static_index, int32_t depth,
                      int32_t num_child_slots, bool can_overflow, int32_t parent_index) {
    const char* func = "TVMFFITypeGetOrAllocIndex";
    if (key.empty()) throw Error("ValueError", std::string(func) + ": empty type key");
    if (num_child_slots < 0) {
      throw Error("ValueError", std::string(func) + ": " +
                                    Describe(key, static_index, parent_index) + " asks for " +
                                    std::to_string(num_child_slots) + " child slots");
    }
    if (depth < 0) {
      throw Error("ValueError", std::string(func) + ": " +
                                    Describe(key, static_index, parent_index) +
                                    " has negative depth " + std::to_string(depth));
    }
    if (parent_index < -1) {
      // -1 alone means "no parent" (a root type); other negative indices name nothing.
      throw Error("ValueError",
                  std::string(func) + ": " + Describe(key, static_index, parent_index) +
                      " has a negative parent index (only -1, no parent, is allowed)");
    }
    TypeEntry* parent = nullptr;
    if (parent_index >= 0) {
      parent = Mutable(parent_index);
      if (parent == nullptr) {
        throw Error("ValueError", std::string(func) + ": " +
                                      Describe(key, static_index, parent_index) +
                                      ": no type is registered at the parent index");
      }
    }
    int32_t index = -1;
    if (static_index >= 0) {
      bool pod = static_index <= kTVMFFISmallBytes && parent == nullptr && depth == 0;
      if (static_index >= kTVMFFIDynObjectBegin ||
          (static_index < kTVMFFIStaticObjectBegin && !pod)) {
        throw Error("ValueError", std::string(func) + ": " +
                                      Describe(key, static_index, parent_index) +
                                      ": a static object index must lie in [64, 128)");
      }
      if (const TypeEntry* taken = Find(static_index)) {
        throw Error("RuntimeError", std::string(func) + ": Conflicting static index " +
                                        std::to_string(static_index) + " between " +
                                        Excerpt(taken->key) + " and " + Excerpt(key));
      }
      index = static_index;
    } else {
      if (parent == nullptr) {
        throw Error("ValueError", std::string(func) + ": dynamic type `" + Excerpt(key) +
                                      "` needs a parent type index, got " +
                                      std::to_string(parent_index));
      }
      int64_t need = int64_t{num_child_slots} + 1;
      if (parent->allocated_slots + need <= parent->num_slots) {
        index = parent->info.type_index + parent->allocated_slots;
        parent->allocated_slots += static_cast<int32_t>(need);
      } else {
        if (!parent->child_slots_can_overflow) {
          throw Error("RuntimeError", std::string(func) + ": `" + Excerpt(key) +
                                          "`: Reach maximum number of sub-classes for " +
                                          parent->key);
        }
        if (overflow_counter_ + need > kMaxTypes) {
          throw Error("RuntimeError", std::string(func) + ": `" + Excerpt(key) +
                                          "`: the type table is full (" +
                                          std::to_string(kMaxTypes) + " indices)");
        }
        index = overflow_counter_;
        overflow_counter_ += static_cast<int32_t>(need);
      }
    }
    if (parent != nullptr && !parent->child_slots_can_overflow) can_overflow = false;
    if (parent != nullptr && index <= parent->info.type_index) {
      throw Error("ValueError", std::string(func) + ": " +
                                    Describe(key, static_index, parent_index) + ": index " +
                                    std::to_string(index) + " is not above its parent's");
    }
    if (depth != 0 && (parent == nullptr || depth != parent->info.type_depth + 1)) {
      throw Error(
          "ValueError",
          std::string(func) + ": " + Describe(key, static_index, parent_index) + ": depth " +
              std::to_string(depth) + " does not match " +
              (parent == nullptr ? std::string("a type without parent")
                                 : "parent depth " + std::to_string(parent->info.type_depth)));
    }
    auto entry = std::make_unique<TypeEntry>();
    entry->key = key;
    entry->num_slots = num_child_slots + 1;
    entry->child_slots_can_overflow = can_overflow;
    if (depth != 0) {
      entry->ancestors.assign(parent->ancestors.begin(), parent->ancestors.end());
      entry->ancestors.push_back(&parent->info);
    }
    entry->info.type_index = index;
    entry->info.type_depth = depth;
    entry->info.type_key = TVMFFIByteArray{entry->key.c_str(), entry->key.size()};
    entry->info.FFIJIT_TYPE_ANCESTORS =
        entry->ancestors.empty() ? nullptr : entry->ancestors.data();
    entry->info.type_key_hash = std::hash<std::string_view>()(entry->key);
    by_key_[key] = index;
    entries_[index].store(entry.release(), std::memory_order_release);  // never freed
    return index;
  }

  TypeEntry* Mutable(int32_t index) const noexcept {
    return const_cast<TypeEntry*>(Find(index));
  }

  // The key of `index`, or the number when nothing is registered there (for messages).
  std::string TypeIndexToKeyOrNumber(int32_t index) const {
    const TypeEntry* entry = Find(index);
    return entry == nullptr ? "type index " + std::to_string(index) : entry->key;
  }

  // Throws a TypeError unless `object` (non-NULL) is a Function; `role` names it in the message.
  void RequireFunction(const TVMFFIObject* object, const TypeEntry& entry, std::string_view field,
                       const char* role) const {
    if (object == nullptr || object->type_index != kTVMFFIFunction) {
      throw Error("TypeError",
                  std::string("TVMFFITypeRegisterField: the ") + role + " of field `" +
                      Excerpt(std::string(field)) + "` of type `" + Excerpt(entry.key) +
                      "` must be a function, not " +
                      (object == nullptr ? std::string("NULL")
                                         : "`" + TypeIndexToKeyOrNumber(object->type_index) + "`"));
    }
  }

  TypeEntry& MutableLocked(int32_t index, const char* func) {
    return const_cast<TypeEntry&>(Require(index, func));
  }

  AttrColumn& ColumnLocked(const std::string& name) {
    auto& column = columns_[name];
    if (!column) column = std::make_unique<AttrColumn>();  // never freed
    return *column;
  }

  // A NUL-terminated copy owned by `entry`; an empty string becomes {NULL, 0}.
  TVMFFIByteArray CopyString(TypeEntry& entry, const TVMFFIByteArray& text, const char* func,
                             const char* what, bool may_be_empty) {
    if (text.data == nullptr && text.size != 0) {
      throw Error("ValueError", std::string(func) + ": `" + what + "` of type `" +
                                    Excerpt(entry.key) + "` has NULL data and size " +
                                    std::to_string(text.size));
    }
    if (text.size == 0) {
      if (!may_be_empty) {
        throw Error("ValueError", std::string(func) + ": empty " + what + " for type `" +
                                      Excerpt(entry.key) + "`");
      }
      return TVMFFIByteArray{nullptr, 0};
    }
    const std::string& copy = entry.strings.emplace_back(text.data, text.size);
    return TVMFFIByteArray{copy.c_str(), copy.size()};
  }

  // Publish replacing the element of the same name, whatever else it holds.
  template <typename T>
  static void Publish(PublishedArray<T>& array, const T& item, const T** published,
                      int32_t* published_count) {
    Publish(array, item, published, published_count, [](const T&) { return true; });
  }

  static std::string_view View(const TVMFFIByteArray& bytes) {
    return bytes.size == 0 ? std::string_view() : std::string_view(bytes.data, bytes.size);
  }

  // Appends `item` to `array` (or replaces the element of the same name for which `same` holds)
  // and publishes the array: pointer first, then count, so a reader that sees the new count sees
  // a large enough array.
  template <typename T, typename Same>
  static void Publish(PublishedArray<T>& array, const T& item, const T** published,
                      int32_t* published_count, Same&& same) {
    std::string_view name(item.name.data, item.name.size);
    for (size_t i = 0; i < array.size(); ++i) {
      const T& existing = array.data()[i];
      if (std::string_view(existing.name.data, existing.name.size) == name && same(existing)) {
        array.Replace(i, item);
        __atomic_store_n(published, array.data(), __ATOMIC_RELEASE);
        return;
      }
    }
    array.Append(item);
    __atomic_store_n(published, array.data(), __ATOMIC_RELEASE);
    __atomic_store_n(published_count, static_cast<int32_t>(array.size()), __ATOMIC_RELEASE);
  }

  static constexpr int32_t kMaxTypes = 16384;
  mutable std::mutex mutex_;  // serialises registrations and key lookups
  std::atomic<TypeEntry*> entries_[kMaxTypes];
  std::unordered_map<std::string, int32_t> by_key_;
  std::unordered_map<std::string, std::unique_ptr<AttrColumn>> columns_;
  int32_t overflow_counter_ = kTVMFFIDynObjectBegin;
  TypeEntry unknown_;
};

}  // namespace

int32_t RegisterType(const std::string& key, int32_t parent_type_index) {
  if (key.empty()) throw Error("ValueError", "RegisterType: the type key must not be empty");
  if (parent_type_index < kTVMFFIStaticObjectBegin) {
    throw Error("ValueError", "RegisterType: parent of `" + Excerpt(key) +
                                  "` must be an object type, got " +
                                  std::to_string(parent_type_index));
  }
  TypeTable& table = TypeTable::Global();
  const TVMFFITypeInfo* parent = TVMFFIGetTypeInfo(parent_type_index);
  if (parent->type_index != parent_type_index) {
    throw Error("ValueError", "RegisterType: `" + Excerpt(key) + "`: unknown parent type index " +
                                  std::to_string(parent_type_index));
  }
  int32_t index = table.GetOrAlloc(key, -1, parent->type_depth + 1, 0, true, parent_type_index);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  int32_t actual_parent =
      info->type_depth == 0 ? -1 : info->FFIJIT_TYPE_ANCESTORS[info->type_depth - 1]->type_index;
  if (actual_parent != parent_type_index) {
    throw Error("ValueError",
                "type `" + Excerpt(key) + "` is already registered with parent `" +
                    (actual_parent < 0 ? std::string("<root>") : TypeIndexToKey(actual_parent)) +
                    "`, not `" + TypeIndexToKey(parent_type_index) + "`");
  }
  return index;
}

int32_t TypeKeyToIndex(const std::string& key) {
  return TypeTable::Global().FindKey(key);
}

std::string TypeIndexToKey(int32_t type_index) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  if (info->type_index != type_index) {
    throw Error("KeyError", "unknown type index " + std::to_string(type_index));
  }
  return std::string(info->type_key.data, info->type_key.size);
}

}  // namespace ffijit

using namespace ffijit;

extern "C" {

int TVMFFITypeKeyToIndex(const TVMFFIByteArray* type_key, int32_t* out_tindex) {
  return internal::GuardCBoundary([&] {
    std::string key = ViewKey(type_key, "TVMFFITypeKeyToIndex", "type_key");
    internal::RequireNonNull(out_tindex, "TVMFFITypeKeyToIndex", "out_tindex");
    *out_tindex = TypeKeyToIndex(key);
  });
}

int32_t TVMFFITypeGetOrAllocIndex(const TVMFFIByteArray* type_key, int32_t static_type_index,
                                  int32_t type_depth, int32_t num_child_slots,
                                  int32_t child_slots_can_overflow, int32_t parent_type_index) {
  int32_t result = -1;
  int status = internal::GuardCBoundary([&] {
    std::string key = ViewKey(type_key, "TVMFFITypeGetOrAllocIndex", "type_key");
    result = TypeTable::Global().GetOrAlloc(key, static_type_index, type_depth, num_child_slots,
                                            child_slots_can_overflow != 0, parent_type_index);
  });
  return status == 0 ? result : -1;
}

const TVMFFITypeInfo* TVMFFIGetTypeInfo(int32_t type_index) {
  const TypeTable& table = TypeTable::Global();
  const TypeEntry* entry = table.Find(type_index);
  return entry == nullptr ? table.Unknown() : &entry->info;
}

int TVMFFITypeRegisterField(int32_t type_index, const TVMFFIFieldInfo* info) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(info, "TVMFFITypeRegisterField", "info");
    TypeTable::Global().RegisterField(type_index, *info);
  });
}

int TVMFFITypeRegisterMethod(int32_t type_index, const TVMFFIMethodInfo* info) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(info, "TVMFFITypeRegisterMethod", "info");
    TypeTable::Global().RegisterMethod(type_index, *info);
  });
}

int TVMFFITypeRegisterMetadata(int32_t type_index, const TVMFFITypeMetadata* metadata) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(metadata, "TVMFFITypeRegisterMetadata", "metadata");
    TypeTable::Global().RegisterMetadata(type_index, *metadata);
  });
}

int TVMFFITypeRegisterAttr(int32_t type_index, const TVMFFIByteArray* attr_name,
                           const TVMFFIAny* attr_value) {
  return internal::GuardCBoundary([&] {
    std::string name = ViewKey(attr_name, "TVMFFITypeRegisterAttr", "attr_name");
    if (type_index < 0) {
      throw Error("ValueError", "TVMFFITypeRegisterAttr: negative type index " +
                                    std::to_string(type_index) + " for attribute `" +
                                    Excerpt(name) + "`");
    }
    if (type_index != 0) internal::RequireNonNull(attr_value, "TVMFFITypeRegisterAttr", "value");
    TypeTable::Global().RegisterAttr(type_index, name, type_index == 0 ? NoneAny() : *attr_value);
  });
}

const TVMFFITypeAttrColumn* TVMFFIGetTypeAttrColumn(const TVMFFIByteArray* attr_name) {
  if (attr_name == nullptr || (attr_name->data == nullptr && attr_name->size != 0)) return nullptr;
  try {
    return TypeTable::Global().FindColumn(std::string(attr_name->data, attr_name->size));
  } catch (...) {  // allocation failure: report "no column"
    return nullptr;
  }
}

int FFIJITObjectIsInstance(int32_t object_type_index, int32_t target_type_index) {
  if (object_type_index == target_type_index) return 1;
  const TypeTable& table = TypeTable::Global();
  if (target_type_index == kTVMFFIObject) {
    return object_type_index >= kTVMFFIStaticObjectBegin && table.Find(object_type_index) ? 1 : 0;
  }
  const TypeEntry* object = table.Find(object_type_index);
  const TypeEntry* target = table.Find(target_type_index);
  if (object == nullptr || target == nullptr) return 0;
  int32_t depth = target->info.type_depth;
  return object->info.type_depth > depth &&
                 object->info.FFIJIT_TYPE_ANCESTORS[depth]->type_index == target_type_index
             ? 1
             : 0;
}

int FFIJITTypeIndexToKey(int32_t type_index, TVMFFIAny* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(out, "FFIJITTypeIndexToKey", "out");
    std::string key = TypeIndexToKey(type_index);
    internal::MakeOwnedBytes(true, key.data(), key.size(), out);
  });
}

}  // extern "C"
