// Structural equality of values, as TVM FFI's C++ API `StructuralEqual::Equal` and
// `StructuralEqual::GetFirstMismatch` (apache/tvm-ffi e98b94e1,
// include/tvm/ffi/extra/structural_equal.h) and the global `ffi.GetFirstStructuralMismatch`;
// v0.1.13 adds definition-region kinds. structural_hash.cc hashes values by the same walk.
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
// - GetFirstMismatch reports the access paths (ffi.reflection.AccessPath, see access_path.h) to
//   the first difference found, or None when the values are equal.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../container_internal.h"
#include "../cxx_abi/shims.h"
#include "../internal.h"
#include "../reflected.h"
#include "../string_internal.h"
#include "access_path.h"
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
using internal::AccessKind;
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
using internal::InitialDefRegion;
using internal::KindOf;
using internal::kNoDefRegion;
using internal::MemberDefRegion;
using internal::ReadField;
using internal::ShapeCell;
using internal::TensorBytes;
using internal::TensorOf;
using internal::TypeAttrFunction;

bool SameTensorMeta(const DLTensor& l, const DLTensor& r) {
  if (l.ndim != r.ndim) return false;
  for (int32_t i = 0; i < l.ndim; ++i) {
    if (l.shape[i] != r.shape[i]) return false;
  }
  return l.dtype.code == r.dtype.code && l.dtype.bits == r.dtype.bits &&
         l.dtype.lanes == r.dtype.lanes;
}

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

// ---- Entry points ----

bool Equal(const TVMFFIAny& a, const TVMFFIAny& b, bool map_free_vars, bool skip_tensor_content) {
  return EqualHandler(map_free_vars, skip_tensor_content).Compare(a, b);
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

// ffi.GetFirstStructuralMismatch(lhs, rhs, map_free_vars: bool, skip_tensor_content: bool)
//   -> None | [AccessPath, AccessPath]
int FirstMismatchGlobal(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return GuardCBoundary([&] {
    CheckFlags("ffi.GetFirstStructuralMismatch", args, num_args, 2, 4);
    *result =
        FirstMismatch(args[0], args[1], Flag(args, num_args, 2), Flag(args, num_args, 3)).release();
  });
}

__attribute__((constructor)) void RegisterStructuralEqualGlobal() {
  RegisterAtLoad("ffi.GetFirstStructuralMismatch", [] {
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

}  // namespace ffi
}  // namespace tvm
