// Structural equality and hashing of values, as TVM FFI's C++ API `StructuralEqual::Equal` and
// `StructuralHash::Hash` (apache/tvm-ffi e98b94e1, include/tvm/ffi/extra/structural_*.h) and the
// global `ffi.StructuralHash`.
//
// Compared by content: every POD value (bits, with every NaN equal to every NaN), strings and
// bytes in any form, Arrays element by element, Maps key by key (keys looked up as the map does,
// values compared structurally), Shapes, and Tensors (shape and dtype, plus the bytes of
// contiguous CPU data unless skip_tensor_content). Any other object compares by identity — what
// TVM FFI does for types without a structural equality kind. Not implemented: reflected types
// compared field by field, free-variable mapping (map_free_vars is accepted and has no effect
// here), and GetFirstMismatch's access paths. Hash values agree with this equality; they are
// ffijit's own, not TVM FFI's numbers.
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>

#include "../internal.h"
#include "ffijit/c_ext.h"
#include "shims.h"

namespace ffijit {
namespace {

using details::IsBytesForm;
using details::IsStrForm;

const FFIJITArrayCell& ArrayCell(const TVMFFIAny& v) {
  return *reinterpret_cast<const FFIJITArrayCell*>(v.v_obj + 1);
}
const TVMFFIShapeCell& ShapeCell(const TVMFFIAny& v) {
  return *reinterpret_cast<const TVMFFIShapeCell*>(v.v_obj + 1);
}
const DLTensor& TensorOf(const TVMFFIAny& v) {
  return *reinterpret_cast<const DLTensor*>(v.v_obj + 1);
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

bool Equal(const TVMFFIAny& a, const TVMFFIAny& b, bool skip_tensor_content) {
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
  if (a.v_obj == b.v_obj) return true;
  switch (a.type_index) {
    case kTVMFFIArray: {
      const FFIJITArrayCell &l = ArrayCell(a), &r = ArrayCell(b);
      if (l.size != r.size) return false;
      for (int64_t i = 0; i < l.size; ++i) {
        if (!Equal(l.data[i], r.data[i], skip_tensor_content)) return false;
      }
      return true;
    }
    case kTVMFFIMap: {
      int64_t ln = 0, rn = 0;
      if (FFIJITMapSize(a.v_obj, &ln) || FFIJITMapSize(b.v_obj, &rn)) throw Error::MoveFromRaised();
      if (ln != rn) return false;
      bool same = true;
      internal::MapForEach(a.v_obj, [&](const TVMFFIAny& key, const TVMFFIAny& value) {
        const TVMFFIAny* other = nullptr;
        if (!same) return;
        if (FFIJITMapGet(b.v_obj, &key, &other) != 0) throw Error::MoveFromRaised();
        same = other != nullptr && Equal(value, *other, skip_tensor_content);
      });
      return same;
    }
    case kTVMFFIShape: {
      const TVMFFIShapeCell &l = ShapeCell(a), &r = ShapeCell(b);
      return l.size == r.size &&
             (l.size == 0 || std::memcmp(l.data, r.data, l.size * sizeof(int64_t)) == 0);
    }
    case kTVMFFITensor: {
      const DLTensor &l = TensorOf(a), &r = TensorOf(b);
      if (l.ndim != r.ndim) return false;
      for (int32_t i = 0; i < l.ndim; ++i) {
        if (l.shape[i] != r.shape[i]) return false;
      }
      if (l.dtype.code != r.dtype.code || l.dtype.bits != r.dtype.bits ||
          l.dtype.lanes != r.dtype.lanes) {
        return false;
      }
      return skip_tensor_content || TensorBytes(l) == TensorBytes(r);
    }
    default:
      return false;  // distinct objects of other types (identity was checked above)
  }
}

uint64_t Mix(uint64_t seed, uint64_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
}
uint64_t HashText(std::string_view text) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

uint64_t Hash(const TVMFFIAny& v, bool skip_tensor_content) {
  std::string_view text;
  if (IsStrForm(v.type_index) || IsBytesForm(v.type_index)) {
    internal::ViewBytes(v, &text);
    return Mix(IsStrForm(v.type_index) ? kTVMFFIStr : kTVMFFIBytes, HashText(text));
  }
  uint64_t seed = static_cast<uint64_t>(static_cast<int64_t>(v.type_index));
  if (v.type_index < kTVMFFIStaticObjectBegin) {
    if (v.type_index == kTVMFFIFloat && std::isnan(v.v_float64)) return Mix(seed, 0x7ff8);
    return Mix(Mix(seed, v.zero_padding), v.v_uint64);
  }
  switch (v.type_index) {
    case kTVMFFIArray: {
      const FFIJITArrayCell& cell = ArrayCell(v);
      uint64_t h = Mix(seed, static_cast<uint64_t>(cell.size));
      for (int64_t i = 0; i < cell.size; ++i) h = Mix(h, Hash(cell.data[i], skip_tensor_content));
      return h;
    }
    case kTVMFFIMap: {
      int64_t n = 0;
      if (FFIJITMapSize(v.v_obj, &n)) throw Error::MoveFromRaised();
      // Entries combine by addition: equality does not depend on their order.
      uint64_t sum = 0;
      internal::MapForEach(v.v_obj, [&](const TVMFFIAny& key, const TVMFFIAny& value) {
        // Keys match by the map's own key equality: strings by content, objects by identity.
        sum += Mix(Hash(key, skip_tensor_content), Hash(value, skip_tensor_content));
      });
      return Mix(Mix(seed, static_cast<uint64_t>(n)), sum);
    }
    case kTVMFFIShape: {
      const TVMFFIShapeCell& cell = ShapeCell(v);
      uint64_t h = Mix(seed, cell.size);
      for (size_t i = 0; i < cell.size; ++i) h = Mix(h, static_cast<uint64_t>(cell.data[i]));
      return h;
    }
    case kTVMFFITensor: {
      const DLTensor& t = TensorOf(v);
      uint64_t h = Mix(seed, static_cast<uint64_t>(t.ndim));
      for (int32_t i = 0; i < t.ndim; ++i) h = Mix(h, static_cast<uint64_t>(t.shape[i]));
      h = Mix(h, (uint64_t{t.dtype.code} << 24) | (uint64_t{t.dtype.bits} << 16) | t.dtype.lanes);
      return skip_tensor_content ? h : Mix(h, HashText(TensorBytes(t)));
    }
    default:
      return Mix(seed, reinterpret_cast<uintptr_t>(v.v_obj));
  }
}

[[noreturn]] void ThrowTvm(const Error& error) {
  throw tvm::ffi::Error(static_cast<TVMFFIObject*>(error.ToObject()));
}

// ffi.StructuralHash(value, map_free_vars: bool, skip_tensor_content: bool) -> int
int StructuralHashGlobal(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return GuardCBoundary([&] {
    if (num_args < 1 || num_args > 3) {
      throw Error("TypeError", "ffi.StructuralHash: expected 1 to 3 arguments but got " +
                                   std::to_string(num_args));
    }
    for (int32_t i = 1; i < num_args; ++i) {
      if (args[i].type_index != kTVMFFIBool && args[i].type_index != kTVMFFIInt) {
        throw Error("TypeError",
                    "ffi.StructuralHash: argument #" + std::to_string(i) + " must be a bool");
      }
    }
    bool skip = num_args == 3 && args[2].v_int64 != 0;
    TVMFFIAny value{};
    value.type_index = kTVMFFIInt;
    value.v_int64 = static_cast<int64_t>(Hash(args[0], skip));
    *result = value;
  });
}

__attribute__((constructor)) void RegisterStructuralGlobals() {
  TVMFFIObjectHandle func = nullptr;
  if (TVMFFIFunctionCreate(nullptr, StructuralHashGlobal, nullptr, &func) != 0) return;
  TVMFFIByteArray name{"ffi.StructuralHash", 18};
  TVMFFIFunctionSetGlobal(&name, func, 1);
  TVMFFIObjectDecRef(func);
}

}  // namespace
}  // namespace ffijit

namespace tvm {
namespace ffi {

bool StructuralEqual::Equal(const Any& lhs, const Any& rhs, bool /*map_free_vars*/,
                            bool skip_tensor_content) {
  try {
    return ffijit::Equal(lhs.data_, rhs.data_, skip_tensor_content);
  } catch (const ffijit::Error& e) {
    ffijit::ThrowTvm(e);
  }
}

uint64_t StructuralHash::Hash(const Any& value, bool /*map_free_vars*/, bool skip_tensor_content) {
  try {
    return ffijit::Hash(value.data_, skip_tensor_content);
  } catch (const ffijit::Error& e) {
    ffijit::ThrowTvm(e);
  }
}

}  // namespace ffi
}  // namespace tvm
