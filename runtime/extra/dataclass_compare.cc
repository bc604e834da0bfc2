// RecursiveEq/Lt/Le/Gt/Ge (semantics in dataclass.cc's file comment): one three-way comparison
// over two values' structures, with what equality alone tolerates (NaN, cycles, values without an
// order). Each dataclass operation is a file of its own; they share only dataclass_common.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "../reflected.h"
#include "dataclass_common.h"
#include "ffijit/c_ext.h"
#include "ffijit/function.h"

#if FFIJIT_TVM_FFI_HAS_DATACLASS_API

namespace ffijit {
namespace {

using details::IsBytesForm;
using details::IsStrForm;
using internal::DepthGuard;
using internal::ForEachField;
using internal::IsMapLike;
using internal::IsSequence;
using internal::MapEntries;
using internal::ReadField;
using internal::SeqCell;
using internal::TextOf;
using internal::TypeAttrHook;
using internal::TypeKeyOfIndex;
using internal::ViewOf;

const TVMFFIAny* MapFind(TVMFFIObject* map, const TVMFFIAny& key) {
  const TVMFFIAny* value = nullptr;
  CheckCall(FFIJITMapGet(map, &key, &value));
  return value;
}

int32_t Sign(int64_t v) {
  return v < 0 ? -1 : (v > 0 ? 1 : 0);
}

int32_t CompareText(std::string_view a, std::string_view b) {
  return Sign(a.compare(b));
}

struct PairHash {
  size_t operator()(const std::pair<TVMFFIObject*, TVMFFIObject*>& p) const noexcept {
    const auto a = reinterpret_cast<uintptr_t>(p.first);
    const auto b = reinterpret_cast<uintptr_t>(p.second);
    return a ^ (b * 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
  }
};

class RecursiveComparer {
 public:
  explicit RecursiveComparer(bool eq_only) : eq_only_(eq_only) {}

  // -1, 0 or 1.
  int32_t Compare(const TVMFFIAny& l, const TVMFFIAny& r) {
    const int32_t lt = l.type_index, rt = r.type_index;
    if (lt == kTVMFFINone || rt == kTVMFFINone) {
      return lt == rt ? 0 : (lt == kTVMFFINone ? -1 : 1);
    }
    if ((IsStrForm(lt) && IsStrForm(rt)) || (IsBytesForm(lt) && IsBytesForm(rt))) {
      return CompareText(TextOf(l), TextOf(r));
    }
    if (lt != rt) {
      return Unordered("Cannot compare values of different types: " + TypeKeyOfIndex(lt) + " vs " +
                       TypeKeyOfIndex(rt));
    }
    if (lt < kTVMFFIStaticObjectBegin) return ComparePod(l, r);
    if (l.v_obj == r.v_obj) return 0;
    if (l.v_obj == nullptr) return -1;
    if (r.v_obj == nullptr) return 1;
    if (lt == kTVMFFIShape) return CompareShape(l.v_obj, r.v_obj);
    const std::pair<TVMFFIObject*, TVMFFIObject*> pair(l.v_obj, r.v_obj);
    if (on_stack_.count(pair) != 0) {
      if (eq_only_) return 0;
      throw Error("ValueError", "RecursiveCompare: cyclic reference detected in ordering");
    }
    DepthGuard guard(&depth_, "RecursiveCompare");
    on_stack_.insert(pair);
    struct Pop {
      RecursiveComparer* self;
      std::pair<TVMFFIObject*, TVMFFIObject*> pair;
      ~Pop() { self->on_stack_.erase(pair); }
    } pop{this, pair};
    return CompareObjects(l.v_obj, r.v_obj);
  }

 private:
  // The result for values that have no order: unequal for Eq, else a TypeError.
  int32_t Unordered(const std::string& message) {
    if (eq_only_) return 1;
    throw Error("TypeError", message);
  }

  int32_t ComparePod(const TVMFFIAny& l, const TVMFFIAny& r) {
    switch (l.type_index) {
      case kTVMFFIBool:
        return Sign(int64_t{l.v_int64 != 0} - int64_t{r.v_int64 != 0});
      case kTVMFFIInt:
        return l.v_int64 < r.v_int64 ? -1 : (l.v_int64 > r.v_int64 ? 1 : 0);
      case kTVMFFIFloat: {
        const double a = l.v_float64, b = r.v_float64;
        if (std::isnan(a) || std::isnan(b)) {
          if (eq_only_) return std::isnan(a) && std::isnan(b) ? 0 : 1;
          throw Error("TypeError", "Cannot order NaN values");
        }
        return a < b ? -1 : (a > b ? 1 : 0);
      }
      case kTVMFFIDataType: {
        const DLDataType a = l.v_dtype, b = r.v_dtype;
        if (a.code != b.code) return a.code < b.code ? -1 : 1;
        if (a.bits != b.bits) return a.bits < b.bits ? -1 : 1;
        if (a.lanes != b.lanes) return a.lanes < b.lanes ? -1 : 1;
        return 0;
      }
      case kTVMFFIDevice: {
        const DLDevice a = l.v_device, b = r.v_device;
        if (a.device_type != b.device_type) return a.device_type < b.device_type ? -1 : 1;
        if (a.device_id != b.device_id) return a.device_id < b.device_id ? -1 : 1;
        return 0;
      }
      default:
        if (l.zero_padding == r.zero_padding && l.v_int64 == r.v_int64) return 0;
        return Unordered("Cannot order values of type " + TypeKeyOfIndex(l.type_index));
    }
  }

  static int32_t CompareShape(TVMFFIObject* l, TVMFFIObject* r) {
    const auto& a = *reinterpret_cast<const TVMFFIShapeCell*>(l + 1);
    const auto& b = *reinterpret_cast<const TVMFFIShapeCell*>(r + 1);
    for (size_t i = 0; i < std::min(a.size, b.size); ++i) {
      if (a.data[i] != b.data[i]) return a.data[i] < b.data[i] ? -1 : 1;
    }
    return a.size < b.size ? -1 : (a.size > b.size ? 1 : 0);
  }

  Function Callback(bool as_bool) {
    return Function::FromPacked([this, as_bool](const AnyView* args, int32_t n, Any* result) {
      if (n != 2) {
        throw Error("TypeError", "the comparison callback takes (lhs, rhs), got " +
                                     std::to_string(n) + " arguments");
      }
      const int32_t cmp = Compare(args[0].raw(), args[1].raw());
      if (as_bool) {
        *result = Any(cmp == 0);
      } else {
        *result = Any(static_cast<int64_t>(cmp));
      }
    });
  }

  // The result of a custom hook, or nullopt when the type has none that applies.
  std::optional<int32_t> CustomHook(TVMFFIObject* l, TVMFFIObject* r) {
    const int32_t type_index = l->type_index;
    if (eq_only_) {
      if (std::optional<Function> eq = TypeAttrHook("__ffi_eq__", type_index)) {
        return (*eq)(AnyView(ViewOf(l)), AnyView(ViewOf(r)), Callback(true)).cast<bool>() ? 0 : 1;
      }
    }
    if (std::optional<Function> cmp = TypeAttrHook("__ffi_compare__", type_index)) {
      Any out = (*cmp)(AnyView(ViewOf(l)), AnyView(ViewOf(r)), Callback(false));
      return Sign(out.cast<int64_t>());
    }
    return std::nullopt;
  }

  int32_t CompareObjects(TVMFFIObject* l, TVMFFIObject* r) {
    const int32_t type_index = l->type_index;
    if (type_index >= kTVMFFIStaticObjectEnd) {
      if (std::optional<int32_t> hooked = CustomHook(l, r)) return *hooked;
    }
    if (IsSequence(type_index)) {
      const FFIJITArrayCell &a = SeqCell(l), &b = SeqCell(r);
      for (int64_t i = 0; i < std::min(a.size, b.size); ++i) {
        if (int32_t cmp = Compare(a.data[i], b.data[i])) return cmp;
      }
      return a.size < b.size ? -1 : (a.size > b.size ? 1 : 0);
    }
    if (IsMapLike(type_index)) {
      const auto entries = MapEntries(l);
      if (static_cast<int64_t>(entries.size()) != static_cast<int64_t>(MapEntries(r).size())) {
        return Unordered("Cannot order Map/Dict values");
      }
      for (const auto& [key, value] : entries) {
        const TVMFFIAny* other = MapFind(r, key);
        if (other == nullptr) return Unordered("Cannot order Map/Dict values");
        if (Compare(value, *other) != 0) return Unordered("Cannot order Map/Dict values");
      }
      return 0;
    }
    if (type_index >= kTVMFFIStaticObjectEnd && r->type_index != type_index) {
      return Unordered("Cannot compare objects of different types: " + TypeKeyOfIndex(type_index) +
                       " vs " + TypeKeyOfIndex(r->type_index));
    }
    int32_t result = 0;
    const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
    if (info == nullptr) return 0;
    ForEachField(*info, [&](const TVMFFIFieldInfo& field) {
      if (field.flags & kTVMFFIFieldFlagBitMaskCompareOff) return false;
      Any a = ReadField(l, field), b = ReadField(r, field);
      result = Compare(a.raw(), b.raw());
      return result != 0;
    });
    return result;
  }

  bool eq_only_;
  int depth_ = 0;
  std::unordered_set<std::pair<TVMFFIObject*, TVMFFIObject*>, PairHash> on_stack_;
};

}  // namespace

namespace internal {

int32_t RecursiveCompare(const TVMFFIAny& l, const TVMFFIAny& r, bool eq_only) {
  return RecursiveComparer(eq_only).Compare(l, r);
}

}  // namespace internal
}  // namespace ffijit

#endif  // FFIJIT_TVM_FFI_HAS_DATACLASS_API
