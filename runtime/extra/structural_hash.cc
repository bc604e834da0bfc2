// Structural hashing of values, as TVM FFI's C++ API `StructuralHash::Hash` (apache/tvm-ffi
// e98b94e1, include/tvm/ffi/extra/structural_hash.h) and the global `ffi.StructuralHash`. Values
// are walked the way structural_equal.cc compares them, which states the semantics.
//
// - Hash values follow TVM FFI's algorithm (StableHashCombine / StableHashBytes of the public
//   headers, seeded by type_key_hash), so equal values hash equally and the numbers match TVM FFI
//   built with libstdc++. One deliberate difference: a SmallBytes value hashes like the same bytes
//   in a Bytes object (TVM FFI hashes the inline form as a POD, unequal to the heap form although
//   the two compare equal).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../container_internal.h"
#include "../cxx_abi/shims.h"
#include "../hashing.h"
#include "../internal.h"
#include "../reflected.h"
#include "../string_internal.h"
#include "ffijit/c_ext.h"
#include "ffijit/container.h"
#include "ffijit/function.h"
#include "ffijit/registry.h"
#include "structural.h"
#include "structural_common.h"

namespace ffijit {
namespace {

using details::IsBytesForm;
using details::IsStrForm;
using internal::ArrayCell;
using internal::BorrowFunction;
using internal::CheckFlags;
using internal::DefRegion;
using internal::DefRegionArgument;
using internal::DefRegionScope;
using internal::FieldDefRegion;
using internal::FieldsDefRegion;
using internal::Flag;
using internal::ForEachField;
using internal::HashBytes;
using internal::HashCombine;
using internal::InitialDefRegion;
using internal::KindOf;
using internal::kNoDefRegion;
using internal::MemberDefRegion;
using internal::ReadField;
using internal::ShapeCell;
using internal::TensorBytes;
using internal::TensorOf;
using internal::TypeAttrFunction;
using internal::TypeKeyHash;
using internal::TypeKeyOf;

TVMFFIAny IntBits(uint64_t value) {
  TVMFFIAny out{};
  out.type_index = kTVMFFIInt;
  out.v_uint64 = value;
  return out;
}

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

uint64_t Hash(const TVMFFIAny& v, bool map_free_vars, bool skip_tensor_content) {
  return HashHandler(map_free_vars, skip_tensor_content).Hash(v);
}

// ffi.StructuralHash(value, map_free_vars: bool, skip_tensor_content: bool) -> int
int StructuralHashGlobal(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return GuardCBoundary([&] {
    CheckFlags("ffi.StructuralHash", args, num_args, 1, 3);
    *result = IntBits(Hash(args[0], Flag(args, num_args, 1), Flag(args, num_args, 2)));
  });
}

__attribute__((constructor)) void RegisterStructuralHashGlobal() {
  RegisterAtLoad("ffi.StructuralHash", [] {
    SetGlobalFunction("ffi.StructuralHash",
                      Function::FromSafeCall(nullptr, StructuralHashGlobal, nullptr), true);
  });
}

}  // namespace

namespace internal {

uint64_t StructuralHashValue(const TVMFFIAny& value, bool map_free_vars, bool skip_tensor_content) {
  return Hash(value, map_free_vars, skip_tensor_content);
}

}  // namespace internal
}  // namespace ffijit

namespace tvm {
namespace ffi {

using ffijit::internal::WithTvmErrors;

uint64_t StructuralHash::Hash(const Any& value, bool map_free_vars, bool skip_tensor_content) {
  return WithTvmErrors(
      [&] { return ffijit::Hash(value.data_, map_free_vars, skip_tensor_content); });
}

}  // namespace ffi
}  // namespace tvm
