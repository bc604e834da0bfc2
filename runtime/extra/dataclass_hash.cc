// RecursiveHash (semantics in dataclass.cc's file comment): TVM FFI's stable hash over a value's
// structure. Each dataclass operation is a file of its own; they share only dataclass_common.h,
// but this one must hash alike whatever dataclass_compare.cc finds equal.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../hashing.h"
#include "../reflected.h"
#include "dataclass_common.h"
#include "ffijit/function.h"

#if FFIJIT_TVM_FFI_HAS_DATACLASS_API

namespace ffijit {
namespace {

using details::IsBytesForm;
using details::IsStrForm;
using internal::DepthGuard;
using internal::ForEachFieldOf;
using internal::HashBytes;
using internal::HashCombine;
using internal::IsMapLike;
using internal::IsSequence;
using internal::MapEntries;
using internal::ReadField;
using internal::SeqCell;
using internal::TextOf;
using internal::TypeAttr;
using internal::TypeAttrHook;
using internal::TypeKeyHash;
using internal::TypeKeyOfIndex;
using internal::ViewOf;

uint64_t HashPod(const TVMFFIAny& v) {
  const auto ti = static_cast<uint64_t>(v.type_index);
  switch (v.type_index) {
    case kTVMFFIBool:
      return HashCombine(ti, v.v_int64 != 0 ? 1 : 0);
    case kTVMFFIFloat: {
      double value = v.v_float64;
      if (std::isnan(value)) value = std::numeric_limits<double>::quiet_NaN();
      if (value == 0.0) value = 0.0;  // -0.0 hashes like 0.0 (they compare equal)
      uint64_t bits = 0;
      std::memcpy(&bits, &value, sizeof bits);
      return HashCombine(ti, bits);
    }
    case kTVMFFIDataType: {
      uint64_t h = HashCombine(ti, v.v_dtype.code);
      h = HashCombine(h, v.v_dtype.bits);
      return HashCombine(h, v.v_dtype.lanes);
    }
    case kTVMFFIDevice: {
      uint64_t h = HashCombine(ti, static_cast<uint64_t>(v.v_device.device_type));
      return HashCombine(h, static_cast<uint64_t>(static_cast<int64_t>(v.v_device.device_id)));
    }
    default:
      return HashCombine(ti, v.v_uint64);
  }
}

class RecursiveHasher {
 public:
  uint64_t Hash(const TVMFFIAny& v) {
    if (v.type_index == kTVMFFINone) return HashCombine(0, 0);
    if (IsStrForm(v.type_index)) return HashCombine(kTVMFFIStr, HashBytes(TextOf(v)));
    if (IsBytesForm(v.type_index)) return HashCombine(kTVMFFIBytes, HashBytes(TextOf(v)));
    if (v.type_index < kTVMFFIStaticObjectBegin) return HashPod(v);
    if (v.v_obj == nullptr) return HashCombine(0, 0);
    TVMFFIObject* obj = v.v_obj;
    if (auto memo = memo_.find(obj); memo != memo_.end()) return memo->second;
    // A cycle back to an object being hashed contributes its type alone.
    if (on_stack_.count(obj) != 0) return TypeKeyHash(obj->type_index);
    DepthGuard guard(&depth_, "RecursiveHash");
    on_stack_.insert(obj);
    const uint64_t h = HashObject(obj);
    on_stack_.erase(obj);
    memo_[obj] = h;
    keep_.push_back(ObjectPtr<>::Borrow(obj));
    return h;
  }

 private:
  uint64_t HashObject(TVMFFIObject* obj) {
    const int32_t type_index = obj->type_index;
    const uint64_t type_hash = TypeKeyHash(type_index);
    if (type_index == kTVMFFIShape) {
      const auto& cell = *reinterpret_cast<const TVMFFIShapeCell*>(obj + 1);
      uint64_t h = HashCombine(type_hash, cell.size);
      for (size_t i = 0; i < cell.size; ++i)
        h = HashCombine(h, static_cast<uint64_t>(cell.data[i]));
      return h;
    }
    if (std::optional<Function> hook = TypeAttrHook("__ffi_hash__", type_index)) {
      Function hash_fn = Function::FromPacked([this](const AnyView* args, int32_t n, Any* result) {
        if (n != 1) {
          throw Error("TypeError", "the __ffi_hash__ callback takes one value, got " +
                                       std::to_string(n) + " arguments");
        }
        *result = Any(static_cast<int64_t>(Hash(args[0].raw())));
      });
      Any out = (*hook)(AnyView(ViewOf(obj)), hash_fn);
      if (out.type_index() != kTVMFFIInt) {
        throw Error("TypeError", "__ffi_hash__ of `" + TypeKeyOfIndex(type_index) +
                                     "` must return an int, not `" + out.type_name() + "`");
      }
      return out.raw().v_uint64;
    }
    if (type_index >= kTVMFFIStaticObjectEnd &&
        (TypeAttr("__ffi_eq__", type_index).type_index != kTVMFFINone ||
         TypeAttr("__ffi_compare__", type_index).type_index != kTVMFFINone)) {
      throw Error("ValueError", "RecursiveHash: type '" + TypeKeyOfIndex(type_index) +
                                    "' defines __ffi_eq__ or __ffi_compare__ but not __ffi_hash__. "
                                    "Add a __ffi_hash__ hook to maintain the invariant "
                                    "RecursiveEq(a,b) => RecursiveHash(a)==RecursiveHash(b).");
    }
    if (IsSequence(type_index)) {
      const FFIJITArrayCell& cell = SeqCell(obj);
      uint64_t h = HashCombine(type_hash, static_cast<uint64_t>(cell.size));
      for (int64_t i = 0; i < cell.size; ++i) {
        h = HashCombine(h, HashCombine(Hash(cell.data[i]), static_cast<uint64_t>(i)));
      }
      return h;
    }
    if (IsMapLike(type_index)) {
      const auto entries = MapEntries(obj);
      uint64_t h = HashCombine(type_hash, entries.size());
      // Sorted entry hashes: the result does not depend on the map's order.
      std::vector<uint64_t> entry_hashes;
      entry_hashes.reserve(entries.size());
      for (const auto& [key, value] : entries) {
        const uint64_t key_hash = Hash(key);
        entry_hashes.push_back(HashCombine(key_hash, Hash(value)));
      }
      std::sort(entry_hashes.begin(), entry_hashes.end());
      for (uint64_t entry : entry_hashes) h = HashCombine(h, entry);
      return h;
    }
    uint64_t h = type_hash;
    ForEachFieldOf(obj, kTVMFFIFieldFlagBitMaskHashOff | kTVMFFIFieldFlagBitMaskCompareOff,
                   [&](const TVMFFIFieldInfo& field) {
                     Any value = ReadField(obj, field);
                     h = HashCombine(h, Hash(value.raw()));
                   });
    return h;
  }

  int depth_ = 0;
  std::unordered_set<TVMFFIObject*> on_stack_;
  std::unordered_map<TVMFFIObject*, uint64_t> memo_;
  std::vector<ObjectPtr<>> keep_;  // memoized objects stay alive while their addresses are keys
};

}  // namespace

namespace internal {

int64_t RecursiveHashOf(const TVMFFIAny& v) {
  return static_cast<int64_t>(RecursiveHasher().Hash(v));
}

}  // namespace internal
}  // namespace ffijit

#endif  // FFIJIT_TVM_FFI_HAS_DATACLASS_API
