// Structural equality and hashing of values, as TVM FFI's C++ API `StructuralEqual::Equal`,
// `StructuralEqual::GetFirstMismatch` and `StructuralHash::Hash` (apache/tvm-ffi e98b94e1,
// include/tvm/ffi/extra/structural_*.h) and the globals `ffi.StructuralHash` and
// `ffi.GetFirstStructuralMismatch`; v0.1.13 adds definition-region kinds.
//
// Semantics (the facts of both versions unless noted):
// - POD values by bits (every NaN equals every NaN); strings and bytes by content in any form;
//   Arrays element by element; Maps key by key (keys looked up the way the map does, after
//   mapping already-matched objects); Shapes; Tensors by shape, dtype and (unless
//   skip_tensor_content) the bytes of contiguous CPU data.
// - Any other object by its type's reflection: metadata must be registered with a structural kind
//   other than Unsupported (else TypeError). UniqueInstance compares by identity; ConstTreeNode
//   short-cuts on identity; TreeNode, DAGNode, FreeVar and ConstTreeNode compare their fields
//   (ancestors' first), skipping fields flagged SEqHashIgnore. A field flagged
//   SEqHashDef(Recursive) opens a definition region where free variables bind; at v0.1.13 a field
//   flagged SEqHashDefNonRecursive opens one that binds the free variable it reaches but not the
//   free variables among that variable's fields. map_free_vars starts the walk in a recursive
//   region. A type attribute `__s_equal__` / `__s_hash__` replaces the field walk (its callback
//   takes the region kind as 0 = inherit, 1 = recursive, 2 = non-recursive; e98b94e1 passes a
//   bool). DAGNode and FreeVar record the lhs<->rhs pairing they matched, so a later occurrence
//   must pair the same way; an unmapped FreeVar equals another only inside a definition region (or
//   when it is the same object).
// - Hash values follow TVM FFI's algorithm (StableHashCombine / StableHashBytes of the public
//   headers, seeded by type_key_hash), so equal values hash equally and the numbers match TVM FFI
//   built with libstdc++. One deliberate difference: a SmallBytes value hashes like the same bytes
//   in a Bytes object (TVM FFI hashes the inline form as a POD, unequal to the heap form although
//   the two compare equal).
// - GetFirstMismatch reports the access paths (ffi.reflection.AccessPath, see access_path.h) to
//   the first difference found, or None when the values are equal.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../cxx_abi/shims.h"
#include "../hashing.h"
#include "../internal.h"
#include "../reflected.h"
#include "access_path.h"
#include "ffijit/c_ext.h"
#include "ffijit/container.h"
#include "ffijit/function.h"
#include "ffijit/registry.h"
#include "structural.h"

namespace ffijit {
namespace {

using details::IsBytesForm;
using details::IsStrForm;
using internal::AccessKind;
using internal::ForEachField;
using internal::HashBytes;
using internal::HashCombine;
using internal::ReadField;
using internal::TypeAttrFunction;
using internal::TypeKeyHash;
using internal::TypeKeyOf;

// ---- Reading objects through reflection ----

const FFIJITArrayCell& ArrayCell(const TVMFFIAny& v) {
  return *reinterpret_cast<const FFIJITArrayCell*>(v.v_obj + 1);
}
const TVMFFIShapeCell& ShapeCell(const TVMFFIAny& v) {
  return *reinterpret_cast<const TVMFFIShapeCell*>(v.v_obj + 1);
}
const DLTensor& TensorOf(const TVMFFIAny& v) {
  return *reinterpret_cast<const DLTensor*>(v.v_obj + 1);
}

// The structural kind of a reflected type; a TypeError when the type does not define one.
TVMFFISEqHashKind KindOf(const TVMFFITypeInfo& info, const char* operation) {
  const TVMFFITypeMetadata* metadata = __atomic_load_n(&info.metadata, __ATOMIC_ACQUIRE);
  if (metadata == nullptr) {
    throw Error("TypeError", "Type metadata is not set for type `" + TypeKeyOf(info) + "`, so " +
                                 operation + " is not supported for this type");
  }
  if (metadata->structural_eq_hash_kind == kTVMFFISEqHashKindUnsupported) {
    throw Error("TypeError", "_type_s_eq_hash_kind is not set for type `" + TypeKeyOf(info) +
                                 "`, so " + operation + " is not supported for this type");
  }
  return metadata->structural_eq_hash_kind;
}

Function BorrowFunction(TVMFFIObject* func) {
  return Function(ObjectPtr<>::Borrow(func));
}

TVMFFIAny IntBits(uint64_t value) {
  TVMFFIAny out{};
  out.type_index = kTVMFFIInt;
  out.v_uint64 = value;
  return out;
}

bool IsCompactTensor(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int32_t i = t.ndim; i-- > 0;) {
    if (t.shape[i] == 1) continue;
    if (t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

// Bytes of a tensor's data; a RuntimeError when the data cannot be read here.
std::string_view TensorBytes(const DLTensor& t) {
  if (t.device.device_type != kDLCPU) {
    throw Error("RuntimeError", "StructuralEqual/Hash: can only compare the data of CPU tensors");
  }
  if (!IsCompactTensor(t)) {
    throw Error("RuntimeError", "StructuralEqual/Hash: can only compare contiguous tensors");
  }
  uint64_t numel = 1;
  for (int32_t i = 0; i < t.ndim; ++i) numel *= static_cast<uint64_t>(t.shape[i]);
  uint64_t bits = static_cast<uint64_t>(t.dtype.bits) * t.dtype.lanes;
  uint64_t bytes = t.dtype.code == kDLUInt && t.dtype.bits == 1 && t.dtype.lanes == 1
                       ? numel
                       : (numel * bits + 7) / 8;
  return std::string_view(static_cast<const char*>(t.data) + t.byte_offset, bytes);
}

bool SameTensorMeta(const DLTensor& l, const DLTensor& r) {
  if (l.ndim != r.ndim) return false;
  for (int32_t i = 0; i < l.ndim; ++i) {
    if (l.shape[i] != r.shape[i]) return false;
  }
  return l.dtype.code == r.dtype.code && l.dtype.bits == r.dtype.bits &&
         l.dtype.lanes == r.dtype.lanes;
}

// Where free variables may bind, with the numbers of TVM FFI's TVMFFIDefRegionKind (v0.1.13); the
// custom-hook callbacks receive them as ints (e98b94e1 passes a bool: 0 or 1, the same meaning).
// Outside a definition region an unmapped free variable equals only itself and hashes by identity;
// inside one it binds to its counterpart. A non-recursive region binds the variable it reaches but
// not the free variables among that variable's own fields.
enum DefRegion : int32_t {
  kNoDefRegion = 0,
  kRecursiveDefRegion = 1,
  kNonRecursiveDefRegion = 2,
};

DefRegion InitialDefRegion(bool map_free_vars) {
  return map_free_vars ? kRecursiveDefRegion : kNoDefRegion;
}

// The region a field opens (kNoDefRegion: the field inherits the current one).
DefRegion FieldDefRegion(int64_t flags) {
  if (flags & FFIJIT_FIELD_FLAG_SEQ_HASH_DEF_NON_RECURSIVE) return kNonRecursiveDefRegion;
  if (flags & kTVMFFIFieldFlagBitMaskSEqHashDef) return kRecursiveDefRegion;
  return kNoDefRegion;
}

// The def-region argument a custom __s_equal__ / __s_hash__ hook passes to its callback.
DefRegion DefRegionArgument(const AnyView& arg, const char* hook) {
  const TVMFFIAny& raw = arg.raw();
  if ((raw.type_index == kTVMFFIBool || raw.type_index == kTVMFFIInt) && raw.v_int64 >= 0 &&
      raw.v_int64 <= kNonRecursiveDefRegion) {
    return static_cast<DefRegion>(raw.v_int64);
  }
  throw Error("TypeError", std::string("the ") + hook +
                               " callback's def_region_kind must be 0 (none), 1 (recursive) or 2 "
                               "(non-recursive), not " +
                               details::AnyTypeName(raw) +
                               (raw.type_index == kTVMFFIInt ? " " + std::to_string(raw.v_int64)
                                                             : std::string()));
}

// The region a member is compared or hashed in: the one its field (or hook) opens, else the
// current.
DefRegion MemberDefRegion(DefRegion current, DefRegion opened) {
  return opened != kNoDefRegion ? opened : current;
}

// The region the fields of an object of structural kind `kind` are compared or hashed in: a
// non-recursive region binds the free variable it reaches, not the free variables in its fields.
DefRegion FieldsDefRegion(DefRegion current, TVMFFISEqHashKind kind) {
  return kind == kTVMFFISEqHashKindFreeVar && current == kNonRecursiveDefRegion ? kNoDefRegion
                                                                                : current;
}

// Makes `region` the current region for the lifetime of the object, then restores the previous one.
class DefRegionScope {
 public:
  DefRegionScope(DefRegion* current, DefRegion region) : current_(current), saved_(*current) {
    *current_ = region;
  }
  ~DefRegionScope() { *current_ = saved_; }
  DefRegionScope(const DefRegionScope&) = delete;
  DefRegionScope& operator=(const DefRegionScope&) = delete;

 private:
  DefRegion* current_;
  DefRegion saved_;
};

// ---- Equality ----

class EqualHandler {
 public:
  EqualHandler(bool map_free_vars, bool skip_tensor_content)
      : def_region_(InitialDefRegion(map_free_vars)), skip_tensor_content_(skip_tensor_content) {}

  // Records the steps to the first mismatch, innermost first.
  void TracePaths() { tracing_ = true; }
  const std::vector<ObjectPtr<>>& lhs_steps() const { return lhs_steps_; }
  const std::vector<ObjectPtr<>>& rhs_steps() const { return rhs_steps_; }

  bool Compare(const TVMFFIAny& a, const TVMFFIAny& b) {
    std::string_view x, y;
    if ((IsStrForm(a.type_index) && IsStrForm(b.type_index)) ||
        (IsBytesForm(a.type_index) && IsBytesForm(b.type_index))) {
      internal::ViewBytes(a, &x);
      internal::ViewBytes(b, &y);
      return x == y;
    }
    if (a.type_index != b.type_index) return false;
    if (a.type_index < kTVMFFIStaticObjectBegin) {
      if (a.type_index == kTVMFFIFloat && std::isnan(a.v_float64)) return std::isnan(b.v_float64);
      return a.zero_padding == b.zero_padding && a.v_int64 == b.v_int64;
    }
    switch (a.type_index) {
      case kTVMFFIArray:
#if FFIJIT_TVM_FFI_HAS_LIST_DICT
      case kTVMFFIList:  // the same sequence cell
#endif
        return CompareArray(a, b);
      case kTVMFFIMap:
#if FFIJIT_TVM_FFI_HAS_LIST_DICT
      case kTVMFFIDict:  // the same map layout
#endif
        return CompareMap(a, b);
      case kTVMFFIShape: {
        const TVMFFIShapeCell &l = ShapeCell(a), &r = ShapeCell(b);
        return l.size == r.size &&
               (l.size == 0 || std::memcmp(l.data, r.data, l.size * sizeof(int64_t)) == 0);
      }
      case kTVMFFITensor: {
        if (a.v_obj == b.v_obj) return true;
        const DLTensor &l = TensorOf(a), &r = TensorOf(b);
        if (!SameTensorMeta(l, r)) return false;
        return skip_tensor_content_ || TensorBytes(l) == TensorBytes(r);
      }
      default:
        return CompareObject(a.v_obj, b.v_obj);
    }
  }

 private:
  void Record(AccessKind lhs_kind, const AnyView& lhs_key, AccessKind rhs_kind,
              const AnyView& rhs_key) {
    if (!tracing_) return;
    lhs_steps_.push_back(internal::NewAccessStep(lhs_kind, lhs_key));
    rhs_steps_.push_back(internal::NewAccessStep(rhs_kind, rhs_key));
  }

  bool CompareArray(const TVMFFIAny& a, const TVMFFIAny& b) {
    const FFIJITArrayCell &l = ArrayCell(a), &r = ArrayCell(b);
    if (l.size != r.size && !tracing_) return false;
    const int64_t common = std::min(l.size, r.size);
    for (int64_t i = 0; i < common; ++i) {
      if (!Compare(l.data[i], r.data[i])) {
        Record(AccessKind::kArrayItem, Any(i), AccessKind::kArrayItem, Any(i));
        return false;
      }
    }
    if (l.size == r.size) return true;
    if (l.size > r.size) {
      Record(AccessKind::kArrayItem, Any(r.size), AccessKind::kArrayItemMissing, Any(r.size));
    } else {
      Record(AccessKind::kArrayItemMissing, Any(l.size), AccessKind::kArrayItem, Any(l.size));
    }
    return false;
  }

  // An object key maps to its matched partner (when it has one); other keys stay as they are.
  static TVMFFIAny MapKey(const TVMFFIAny& key,
                          const std::unordered_map<TVMFFIObject*, TVMFFIObject*>& pairing) {
    if (key.type_index < kTVMFFIStaticObjectBegin) return key;
    auto it = pairing.find(key.v_obj);
    if (it == pairing.end()) return key;
    TVMFFIAny mapped{};
    mapped.type_index = it->second->type_index;
    mapped.v_obj = it->second;
    return mapped;
  }

  static const TVMFFIAny* Find(TVMFFIObject* map, const TVMFFIAny& key) {
    const TVMFFIAny* value = nullptr;
    CheckCall(FFIJITMapGet(map, &key, &value));
    return value;
  }

  bool CompareMap(const TVMFFIAny& a, const TVMFFIAny& b) {
    int64_t ln = 0, rn = 0;
    CheckCall(FFIJITMapSize(a.v_obj, &ln));
    CheckCall(FFIJITMapSize(b.v_obj, &rn));
    if (ln != rn && !tracing_) return false;
    bool same = true;
    internal::MapForEach(a.v_obj, [&](const TVMFFIAny& key, const TVMFFIAny& value) {
      if (!same) return;
      TVMFFIAny rhs_key = MapKey(key, lhs_to_rhs_);
      const TVMFFIAny* other = Find(b.v_obj, rhs_key);
      if (other == nullptr) {
        Record(AccessKind::kMapItem, key, AccessKind::kMapItemMissing, rhs_key);
        same = false;
      } else if (!Compare(value, *other)) {
        Record(AccessKind::kMapItem, key, AccessKind::kMapItem, rhs_key);
        same = false;
      }
    });
    if (!same) return false;
    if (ln == rn) return true;
    // Every lhs key is in rhs, so rhs has one more: name it.
    internal::MapForEach(b.v_obj, [&](const TVMFFIAny& key, const TVMFFIAny&) {
      if (!same) return;
      TVMFFIAny lhs_key = MapKey(key, rhs_to_lhs_);
      if (Find(a.v_obj, lhs_key) == nullptr) {
        Record(AccessKind::kMapItemMissing, lhs_key, AccessKind::kMapItem, key);
        same = false;
      }
    });
    return false;
  }

  void Pair(TVMFFIObject* lhs, TVMFFIObject* rhs) {
    keep_.push_back(ObjectPtr<>::Borrow(lhs));
    keep_.push_back(ObjectPtr<>::Borrow(rhs));
    lhs_to_rhs_[lhs] = rhs;
    rhs_to_lhs_[rhs] = lhs;
  }

  // Compares one field (or one value a custom __s_equal__ hands back), recording its name on a
  // mismatch.
  bool CompareMember(const TVMFFIAny& l, const TVMFFIAny& r, DefRegion kind, const AnyView& name) {
    bool same;
    {
      DefRegionScope scope(&def_region_, MemberDefRegion(def_region_, kind));
      same = Compare(l, r);
    }
    if (!same) Record(AccessKind::kAttr, name, AccessKind::kAttr, name);
    return same;
  }

  bool CompareObject(TVMFFIObject* lhs, TVMFFIObject* rhs) {
    const TVMFFITypeInfo& info = *TVMFFIGetTypeInfo(lhs->type_index);
    const TVMFFISEqHashKind kind = KindOf(info, "StructuralEqual");
    if (kind == kTVMFFISEqHashKindUniqueInstance) return lhs == rhs;
    if (kind == kTVMFFISEqHashKindConstTreeNode && lhs == rhs) return true;
    if (kind == kTVMFFISEqHashKindDAGNode || kind == kTVMFFISEqHashKindFreeVar) {
      auto it = lhs_to_rhs_.find(lhs);
      if (it != lhs_to_rhs_.end()) return it->second == rhs;
      if (rhs_to_lhs_.count(rhs) != 0) return false;  // rhs already paired with another lhs
    }
    bool same;
    {
      DefRegionScope scope(&def_region_, FieldsDefRegion(def_region_, kind));
      same = CompareFields(info, lhs, rhs);
    }
    if (!same) return false;
    if (kind == kTVMFFISEqHashKindFreeVar) {
      if (lhs != rhs && def_region_ == kNoDefRegion) return false;
      Pair(lhs, rhs);
    } else if (kind == kTVMFFISEqHashKindDAGNode) {
      Pair(lhs, rhs);
    }
    return true;
  }

  // The fields of two objects of one type, through the type's __s_equal__ hook when it has one.
  bool CompareFields(const TVMFFITypeInfo& info, TVMFFIObject* lhs, TVMFFIObject* rhs) {
    bool same;
    if (TVMFFIObject* custom = TypeAttrFunction("__s_equal__", info.type_index)) {
      if (!callback_.defined()) {
        callback_ = Function::FromPacked([this](const AnyView* args, int32_t n, Any* result) {
          if (n != 4) {
            throw Error("TypeError",
                        "the __s_equal__ callback takes (lhs, rhs, def_region_kind, "
                        "field_name), got " +
                            std::to_string(n) + " arguments");
          }
          *result = CompareMember(args[0].raw(), args[1].raw(),
                                  DefRegionArgument(args[2], "__s_equal__"), args[3]);
        });
      }
      TVMFFIAny l{}, r{};
      l.type_index = lhs->type_index;
      l.v_obj = lhs;
      r.type_index = rhs->type_index;
      r.v_obj = rhs;
      same = BorrowFunction(custom)(AnyView(l), AnyView(r), callback_).cast<bool>();
    } else {
      same = !ForEachField(info, [&](const TVMFFIFieldInfo& field) {
        if (field.flags & kTVMFFIFieldFlagBitMaskSEqHashIgnore) return false;
        Any l = ReadField(lhs, field), r = ReadField(rhs, field);
        Any name(std::string_view(field.name.data, field.name.size));
        return !CompareMember(l.raw(), r.raw(), FieldDefRegion(field.flags), name);
      });
    }
    return same;
  }

  DefRegion def_region_;
  bool skip_tensor_content_;
  bool tracing_ = false;
  std::vector<ObjectPtr<>> lhs_steps_, rhs_steps_;
  std::unordered_map<TVMFFIObject*, TVMFFIObject*> lhs_to_rhs_, rhs_to_lhs_;
  std::vector<ObjectPtr<>> keep_;  // the paired objects stay alive while their addresses are keys
  Function callback_;
};

// ---- Hashing ----

class HashHandler {
 public:
  HashHandler(bool map_free_vars, bool skip_tensor_content)
      : def_region_(InitialDefRegion(map_free_vars)), skip_tensor_content_(skip_tensor_content) {}

  uint64_t Hash(const TVMFFIAny& v) {
    std::string_view text;
    if (IsStrForm(v.type_index) || IsBytesForm(v.type_index)) {
      internal::ViewBytes(v, &text);
      return HashCombine(IsStrForm(v.type_index) ? kTVMFFIStr : kTVMFFIBytes, HashBytes(text));
    }
    if (v.type_index < kTVMFFIStaticObjectBegin) {
      if (v.type_index == kTVMFFIFloat && std::isnan(v.v_float64)) {
        TVMFFIAny canonical = v;
        canonical.v_float64 = std::numeric_limits<double>::quiet_NaN();
        return HashCombine(kTVMFFIFloat, canonical.v_uint64);
      }
      return HashCombine(static_cast<uint64_t>(static_cast<int64_t>(v.type_index)), v.v_uint64);
    }
    switch (v.type_index) {
      case kTVMFFIArray:
#if FFIJIT_TVM_FFI_HAS_LIST_DICT
      case kTVMFFIList:  // the same sequence cell, hashed under its own type key
#endif
      {
        const FFIJITArrayCell& cell = ArrayCell(v);
        uint64_t h = HashCombine(TypeKeyHash(v.type_index), static_cast<uint64_t>(cell.size));
        for (int64_t i = 0; i < cell.size; ++i) h = HashCombine(h, Hash(cell.data[i]));
        return h;
      }
      case kTVMFFIMap:
#if FFIJIT_TVM_FFI_HAS_LIST_DICT
      case kTVMFFIDict:
#endif
        return HashMap(v);
      case kTVMFFIShape: {
        const TVMFFIShapeCell& cell = ShapeCell(v);
        uint64_t h = HashCombine(TypeKeyHash(kTVMFFIShape), cell.size);
        for (size_t i = 0; i < cell.size; ++i) {
          h = HashCombine(h, static_cast<uint64_t>(cell.data[i]));
        }
        return h;
      }
      case kTVMFFITensor: {
        const DLTensor& t = TensorOf(v);
        uint64_t h = HashCombine(TypeKeyHash(kTVMFFITensor), static_cast<uint64_t>(t.ndim));
        for (int32_t i = 0; i < t.ndim; ++i) h = HashCombine(h, static_cast<uint64_t>(t.shape[i]));
        TVMFFIAny dtype{};
        dtype.v_dtype = t.dtype;
        h = HashCombine(h, dtype.v_uint64);
        return skip_tensor_content_ ? h : HashCombine(h, HashBytes(TensorBytes(t)));
      }
      default:
        return HashObject(v.v_obj);
    }
  }

 private:
  // A hash of `key` that does not depend on what was hashed before it: strings and POD values by
  // content, objects only when already hashed (memoized); otherwise none.
  bool OrderIndependentHash(const TVMFFIAny& key, uint64_t* out) {
    if (key.type_index < kTVMFFIStaticObjectBegin || key.type_index == kTVMFFIStr ||
        key.type_index == kTVMFFIBytes) {
      *out = Hash(key);
      return true;
    }
    auto it = memo_.find(key.v_obj);
    if (it == memo_.end()) return false;
    *out = it->second;
    return true;
  }

  // Entries in the order of their keys' hashes, so the result is independent of insertion order;
  // keys with no order-independent hash are left out, and tied keys contribute without values.
  uint64_t HashMap(const TVMFFIAny& v) {
    int64_t n = 0;
    CheckCall(FFIJITMapSize(v.v_obj, &n));
    uint64_t h = HashCombine(TypeKeyHash(v.type_index), static_cast<uint64_t>(n));
    std::vector<std::pair<uint64_t, const TVMFFIAny*>> items;
    internal::MapForEach(v.v_obj, [&](const TVMFFIAny& key, const TVMFFIAny& value) {
      uint64_t key_hash = 0;
      if (OrderIndependentHash(key, &key_hash)) items.emplace_back(key_hash, &value);
    });
    // Equal key hashes are combined once, without their values, so their order does not matter.
    std::sort(items.begin(), items.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    for (size_t i = 0; i < items.size();) {
      size_t k = i + 1;
      while (k < items.size() && items[k].first == items[i].first) ++k;
      h = HashCombine(h, items[i].first);
      if (k == i + 1) h = HashCombine(h, Hash(*items[i].second));
      i = k;
    }
    return h;
  }

  uint64_t HashMember(const TVMFFIAny& value, uint64_t seed, DefRegion kind) {
    DefRegionScope scope(&def_region_, MemberDefRegion(def_region_, kind));
    return HashCombine(seed, Hash(value));
  }

  uint64_t HashObject(TVMFFIObject* obj) {
    const TVMFFITypeInfo& info = *TVMFFIGetTypeInfo(obj->type_index);
    const TVMFFISEqHashKind kind = KindOf(info, "StructuralHash");
    auto memo = memo_.find(obj);
    if (memo != memo_.end()) return memo->second;
    uint64_t h;
    {
      DefRegionScope scope(&def_region_, FieldsDefRegion(def_region_, kind));
      h = HashFields(info, obj);
    }
    if (kind == kTVMFFISEqHashKindFreeVar) {
      // Bound free variables hash by their order of appearance; unbound ones by identity.
      h = def_region_ != kNoDefRegion ? HashCombine(h, free_var_counter_++)
                                      : reinterpret_cast<uintptr_t>(obj);
    } else if (kind == kTVMFFISEqHashKindDAGNode) {
      h = HashCombine(h, graph_node_counter_++);
    }
    keep_.push_back(ObjectPtr<>::Borrow(obj));
    memo_[obj] = h;
    return h;
  }

  // The fields of an object folded into its type key's hash, through the type's __s_hash__ hook
  // when it has one.
  uint64_t HashFields(const TVMFFITypeInfo& info, TVMFFIObject* obj) {
    uint64_t h = info.type_key_hash;
    if (TVMFFIObject* custom = TypeAttrFunction("__s_hash__", info.type_index)) {
      if (!callback_.defined()) {
        callback_ = Function::FromPacked([this](const AnyView* args, int32_t n, Any* result) {
          if (n != 3 || args[1].type_index() != kTVMFFIInt) {
            throw Error("TypeError",
                        "the __s_hash__ callback takes (value, init_hash: int, def_region_kind)");
          }
          *result = Any::Adopt(IntBits(HashMember(args[0].raw(), args[1].raw().v_uint64,
                                                  DefRegionArgument(args[2], "__s_hash__"))));
        });
      }
      TVMFFIAny self{};
      self.type_index = obj->type_index;
      self.v_obj = obj;
      Any out = BorrowFunction(custom)(AnyView(self), AnyView(IntBits(h)), callback_);
      if (out.type_index() != kTVMFFIInt) {
        throw Error("TypeError", "__s_hash__ of `" + TypeKeyOf(info) +
                                     "` must return an int, not `" + out.type_name() + "`");
      }
      h = out.raw().v_uint64;
    } else {
      ForEachField(info, [&](const TVMFFIFieldInfo& field) {
        if (field.flags & kTVMFFIFieldFlagBitMaskSEqHashIgnore) return false;
        Any value = ReadField(obj, field);
        h = HashMember(value.raw(), h, FieldDefRegion(field.flags));
        return false;
      });
    }
    return h;
  }

  DefRegion def_region_;
  bool skip_tensor_content_;
  uint32_t free_var_counter_ = 0;
  uint32_t graph_node_counter_ = 0;
  std::unordered_map<TVMFFIObject*, uint64_t> memo_;
  std::vector<ObjectPtr<>> keep_;  // memoized objects stay alive while their addresses are keys
  Function callback_;
};

// ---- Entry points ----

bool Equal(const TVMFFIAny& a, const TVMFFIAny& b, bool map_free_vars, bool skip_tensor_content) {
  return EqualHandler(map_free_vars, skip_tensor_content).Compare(a, b);
}

uint64_t Hash(const TVMFFIAny& v, bool map_free_vars, bool skip_tensor_content) {
  return HashHandler(map_free_vars, skip_tensor_content).Hash(v);
}

ObjectPtr<> PathOf(const std::vector<ObjectPtr<>>& innermost_first) {
  ObjectPtr<> path = internal::AccessPathRoot();
  for (auto it = innermost_first.rbegin(); it != innermost_first.rend(); ++it) {
    path = internal::ExtendAccessPath(path, *it);
  }
  return path;
}

// None when equal, else an Array [lhs path, rhs path] (TVM FFI's Tuple<AccessPath, AccessPath>).
Any FirstMismatch(const TVMFFIAny& a, const TVMFFIAny& b, bool map_free_vars,
                  bool skip_tensor_content) {
  EqualHandler handler(map_free_vars, skip_tensor_content);
  handler.TracePaths();
  if (handler.Compare(a, b)) return Any();
  return Array{Any(ObjectRef(PathOf(handler.lhs_steps()))),
               Any(ObjectRef(PathOf(handler.rhs_steps())))};
}

void CheckFlags(const char* name, const TVMFFIAny* args, int32_t num_args, int32_t first_flag,
                int32_t max_args) {
  if (num_args < first_flag || num_args > max_args) {
    throw Error("TypeError", std::string(name) + ": expected " + std::to_string(first_flag) +
                                 " to " + std::to_string(max_args) + " arguments but got " +
                                 std::to_string(num_args));
  }
  for (int32_t i = first_flag; i < num_args; ++i) {
    if (args[i].type_index != kTVMFFIBool && args[i].type_index != kTVMFFIInt) {
      throw Error("TypeError", std::string(name) + ": argument #" + std::to_string(i) +
                                   " must be a bool, not `" + details::AnyTypeName(args[i]) + "`");
    }
  }
}

bool Flag(const TVMFFIAny* args, int32_t num_args, int32_t i) {
  return i < num_args && args[i].v_int64 != 0;
}

// ffi.StructuralHash(value, map_free_vars: bool, skip_tensor_content: bool) -> int
int StructuralHashGlobal(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return GuardCBoundary([&] {
    CheckFlags("ffi.StructuralHash", args, num_args, 1, 3);
    *result = IntBits(Hash(args[0], Flag(args, num_args, 1), Flag(args, num_args, 2)));
  });
}

// ffi.GetFirstStructuralMismatch(lhs, rhs, map_free_vars: bool, skip_tensor_content: bool)
//   -> None | [AccessPath, AccessPath]
int FirstMismatchGlobal(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return GuardCBoundary([&] {
    CheckFlags("ffi.GetFirstStructuralMismatch", args, num_args, 2, 4);
    *result =
        FirstMismatch(args[0], args[1], Flag(args, num_args, 2), Flag(args, num_args, 3)).release();
  });
}

__attribute__((constructor)) void RegisterStructuralGlobals() {
  RegisterAtLoad("ffi.StructuralHash and ffi.GetFirstStructuralMismatch", [] {
    SetGlobalFunction("ffi.StructuralHash",
                      Function::FromSafeCall(nullptr, StructuralHashGlobal, nullptr), true);
    SetGlobalFunction("ffi.GetFirstStructuralMismatch",
                      Function::FromSafeCall(nullptr, FirstMismatchGlobal, nullptr), true);
  });
}

}  // namespace

namespace internal {

bool StructuralEqualValues(const TVMFFIAny& lhs, const TVMFFIAny& rhs, bool map_free_vars,
                           bool skip_tensor_content) {
  return Equal(lhs, rhs, map_free_vars, skip_tensor_content);
}

uint64_t StructuralHashValue(const TVMFFIAny& value, bool map_free_vars, bool skip_tensor_content) {
  return Hash(value, map_free_vars, skip_tensor_content);
}

}  // namespace internal
}  // namespace ffijit

namespace tvm {
namespace ffi {

using ffijit::internal::WithTvmErrors;

bool StructuralEqual::Equal(const Any& lhs, const Any& rhs, bool map_free_vars,
                            bool skip_tensor_content) {
  return WithTvmErrors(
      [&] { return ffijit::Equal(lhs.data_, rhs.data_, map_free_vars, skip_tensor_content); });
}

OptionalObject StructuralEqual::GetFirstMismatch(const Any& lhs, const Any& rhs, bool map_free_vars,
                                                 bool skip_tensor_content) {
  return WithTvmErrors([&] {
    ffijit::Any found =
        ffijit::FirstMismatch(lhs.data_, rhs.data_, map_free_vars, skip_tensor_content);
    return OptionalObject(ObjectRef::Adopt(found.is_none() ? nullptr : found.release().v_obj));
  });
}

uint64_t StructuralHash::Hash(const Any& value, bool map_free_vars, bool skip_tensor_content) {
  return WithTvmErrors(
      [&] { return ffijit::Hash(value.data_, map_free_vars, skip_tensor_content); });
}

}  // namespace ffi
}  // namespace tvm
