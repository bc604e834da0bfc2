// What structural_equal.cc and structural_hash.cc share: reading containers, tensors and reflected
// objects, the definition regions free variables bind in, and the flag arguments of their globals.
// Errors are ffijit::Error.
#ifndef FFIJIT_RUNTIME_EXTRA_STRUCTURAL_COMMON_H_
#define FFIJIT_RUNTIME_EXTRA_STRUCTURAL_COMMON_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "../reflected.h"
#include "ffijit/any.h"
#include "ffijit/c_ext.h"
#include "ffijit/error.h"
#include "ffijit/function.h"

namespace ffijit::internal {

inline const FFIJITArrayCell& ArrayCell(const TVMFFIAny& v) {
  return *reinterpret_cast<const FFIJITArrayCell*>(v.v_obj + 1);
}
inline const TVMFFIShapeCell& ShapeCell(const TVMFFIAny& v) {
  return *reinterpret_cast<const TVMFFIShapeCell*>(v.v_obj + 1);
}
inline const DLTensor& TensorOf(const TVMFFIAny& v) {
  return *reinterpret_cast<const DLTensor*>(v.v_obj + 1);
}

// The structural kind of a reflected type; a TypeError when the type does not define one.
inline TVMFFISEqHashKind KindOf(const TVMFFITypeInfo& info, const char* operation) {
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

inline Function BorrowFunction(TVMFFIObject* func) {
  return Function(ObjectPtr<>::Borrow(func));
}

inline bool IsCompactTensor(const DLTensor& t) {
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
inline std::string_view TensorBytes(const DLTensor& t) {
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

inline DefRegion InitialDefRegion(bool map_free_vars) {
  return map_free_vars ? kRecursiveDefRegion : kNoDefRegion;
}

// The region a field opens (kNoDefRegion: the field inherits the current one).
inline DefRegion FieldDefRegion(int64_t flags) {
  if (flags & FFIJIT_FIELD_FLAG_SEQ_HASH_DEF_NON_RECURSIVE) return kNonRecursiveDefRegion;
  if (flags & kTVMFFIFieldFlagBitMaskSEqHashDef) return kRecursiveDefRegion;
  return kNoDefRegion;
}

// The def-region argument a custom __s_equal__ / __s_hash__ hook passes to its callback.
inline DefRegion DefRegionArgument(const AnyView& arg, const char* hook) {
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
inline DefRegion MemberDefRegion(DefRegion current, DefRegion opened) {
  return opened != kNoDefRegion ? opened : current;
}

// The region the fields of an object of structural kind `kind` are compared or hashed in: a
// non-recursive region binds the free variable it reaches, not the free variables in its fields.
inline DefRegion FieldsDefRegion(DefRegion current, TVMFFISEqHashKind kind) {
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

inline void CheckFlags(const char* name, const TVMFFIAny* args, int32_t num_args,
                       int32_t first_flag, int32_t max_args) {
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

inline bool Flag(const TVMFFIAny* args, int32_t num_args, int32_t i) {
  return i < num_args && args[i].v_int64 != 0;
}

}  // namespace ffijit::internal

#endif  // FFIJIT_RUNTIME_EXTRA_STRUCTURAL_COMMON_H_
