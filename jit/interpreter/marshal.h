// The per-parameter conversion of docs/design.md's contract, inline for the interpreter's hot loop.
//
// ConvertValue never raises for the common outcomes: it returns a status and the caller raises the
// matching error through the shared FFIJITRaise* helpers (so the JIT's thunks, which call the same
// helpers, produce identical messages).
#ifndef FFIJIT_JIT_INTERPRETER_MARSHAL_H_
#define FFIJIT_JIT_INTERPRETER_MARSHAL_H_

#include <cstdint>
#include <cstring>
#include <string>

#include "base/plugin_export.h"
#include "ffijit/any.h"
#include "ffijit/c_api.h"
#include "ffijit/c_ext.h"
#include "interpreter/float16.h"
#include "plan/call_plan.h"

namespace ffijit {

enum class ConvertStatus : uint8_t {
  kOk,
  kBadType,    // the value's type index is not accepted: TypeError
  kBadRange,   // an integer that does not fit: ValueError
  kBadTensor,  // a tensor of the wrong dtype/rank/dims: ValueError
  kBadString,  // a string that does not parse as a DataType / Device: ValueError
  kMalformed,  // the value breaks the validity contract (details::FindAnyDefect): ValueError
  kInnerNul,   // a string with a NUL inside for a C string, which would cut it short: ValueError
};

// Slow forms, out of line (convert.cc): strings parsed as DataType / Device. They leave no error
// raised; a string that does not parse returns kBadString.
FFIJIT_JIT_PLUGIN_API ConvertStatus ConvertDataTypeString(const TVMFFIAny* value, uint64_t out[2]);
FFIJIT_JIT_PLUGIN_API ConvertStatus ConvertDeviceString(const TVMFFIAny* value, uint64_t out[2]);

// The type index of `key`, or kUnresolvedTypeIndex if no type has it (convert.cc; allocates
// nothing, raises nothing).
FFIJIT_JIT_PLUGIN_API int32_t ResolveTypeKey(const std::string& key) noexcept;

// A plan's object type index, resolved from its key the first time a type has it.
inline int32_t ObjectTypeIndexOf(int32_t& cached, const std::string& key) noexcept {
  const int32_t index = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
  if (__builtin_expect(index != kUnresolvedTypeIndex, 1)) return index;
  const int32_t resolved = ResolveTypeKey(key);
  if (resolved != kUnresolvedTypeIndex) __atomic_store_n(&cached, resolved, __ATOMIC_RELEASE);
  return resolved;
}

// The payload cell of a Str/Bytes/Tensor/Array object.
template <typename Cell>
inline Cell* CellOf(TVMFFIObject* obj) {
  return reinterpret_cast<Cell*>(obj + 1);
}

// How an Array's element store (data, size, capacity, data_deleter: the cell at object +24)
// contradicts itself. Checked before a structure path reads an element through it: a NULL `data`
// read as an element pointer once passed for "an error is already set".
enum class ArrayStoreDefect : uint8_t {
  kNone,
  kNegativeSize,  // size < 0
  kNullData,      // size > 0 and data NULL
  kOverCapacity,  // size > capacity: more elements than the storage holds
  kStrayData,     // an Array's elements are inline (at +56) unless a data_deleter owns them
};

// Where an Array stores its elements itself: right after the cell.
inline const TVMFFIAny* InlineArrayItems(TVMFFIObject* array) {
  return reinterpret_cast<const TVMFFIAny*>(CellOf<FFIJITArrayCell>(array) + 1);
}

// The common store, in three compares: inline, within capacity, `size` elements as expected.
inline bool IsPlainArrayStore(TVMFFIObject* array, int64_t expected_size) {
  const FFIJITArrayCell* cell = CellOf<FFIJITArrayCell>(array);
  return cell->size == expected_size && cell->data == InlineArrayItems(array) &&
         cell->size <= cell->capacity;
}

// The store's defect (convert.cc, out of line: the slow path of IsPlainArrayStore). `array` is a
// well-formed value's object (details::FindAnyDefect) under the Array tag.
FFIJIT_JIT_PLUGIN_API ArrayStoreDefect FindArrayStoreDefect(TVMFFIObject* array) noexcept;
// E.g. "an `ffi.Array` (type index 71) of size 2 with a NULL data pointer" (call_errors.cc).
FFIJIT_JIT_PLUGIN_API std::string ArrayStoreDefectText(const TVMFFIAny& array,
                                                       ArrayStoreDefect defect);

inline bool TensorMatches(const TensorCheck& check, const DLTensor* t) {
  if (check.check_dtype && (t->dtype.code != check.dtype.code ||
                            t->dtype.bits != check.dtype.bits || t->dtype.lanes != 1)) {
    return false;
  }
  if (check.rank < 0) return true;
  if (t->ndim != check.rank) return false;
  for (int32_t i = 0; i < check.rank; ++i) {
    int64_t want = check.dims[static_cast<size_t>(i)];
    if (want >= 0 && t->shape[i] != want) return false;
  }
  return true;
}

// Whether a well-formed SmallStr (at most 7 bytes, eighth byte NUL) has a NUL among its
// small_str_len bytes. Branch-free: the bytes at and past the length are set, then the classic
// has-a-zero-byte test runs on the word.
inline bool SmallStrHasNul(const TVMFFIAny& v) {
  uint64_t word;
  std::memcpy(&word, v.v_bytes, sizeof word);
  const uint64_t past_end = ~uint64_t{0} << (8 * (v.small_str_len & 7));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  word |= past_end;
#else
  word |= __builtin_bswap64(past_end);
#endif
  return ((word - 0x0101010101010101ull) & ~word & 0x8080808080808080ull) != 0;
}

// Whether a Str object's bytes hold a NUL: a C string would end there.
inline bool StrObjectHasNul(const TVMFFIObject* str) {
  const auto* cell = reinterpret_cast<const FFIJITBytesCell*>(str + 1);
  return std::memchr(cell->data, 0, cell->size) != nullptr;
}

// Range-checks an integer for an integer conversion and stores it extended to 64 bits.
inline ConvertStatus StoreInteger(Conversion c, int64_t v, uint64_t* out) {
  const ConversionInfo& info = InfoOf(c);
  if (v < info.min || v > info.max) return ConvertStatus::kBadRange;
  *out = static_cast<uint64_t>(v);
  return ConvertStatus::kOk;
}

inline ConvertStatus StoreFloat(Conversion c, const TVMFFIAny* v, uint64_t* out) {
  const bool is_float = v->type_index == kTVMFFIFloat;
  if (!is_float && v->type_index != kTVMFFIInt && v->type_index != kTVMFFIBool) {
    return ConvertStatus::kBadType;
  }
  switch (c) {
    case Conversion::kF64: {
      double d = is_float ? v->v_float64 : static_cast<double>(v->v_int64);
      std::memcpy(out, &d, sizeof d);
      return ConvertStatus::kOk;
    }
    case Conversion::kF32: {
      // One rounding from the exact input (an int64 goes straight to float, not through double).
      float f = is_float ? static_cast<float>(v->v_float64) : static_cast<float>(v->v_int64);
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof f);
      *out = bits;
      return ConvertStatus::kOk;
    }
    case Conversion::kF16:
      *out = is_float ? FFIJITDoubleToF16Bits(v->v_float64) : FFIJITInt64ToF16Bits(v->v_int64);
      return ConvertStatus::kOk;
    default:  // kBF16
      *out = is_float ? FFIJITDoubleToBF16Bits(v->v_float64) : FFIJITInt64ToBF16Bits(v->v_int64);
      return ConvertStatus::kOk;
  }
}

// Converts `v` for `p` into out[0] (and out[1] for the second eightbyte of a kBytes struct).
inline ConvertStatus ConvertValue(const NativeParam& p, const TVMFFIAny* v, uint64_t out[2]) {
  // The validity contract first, whatever the conversion: nothing below reads through a value
  // that breaks it, and every executor reports it before any type mismatch.
  if (__builtin_expect(details::FindAnyDefect(*v) != details::AnyDefect::kNone, 0)) {
    return ConvertStatus::kMalformed;
  }
  const int32_t tag = v->type_index;
  switch (p.conversion) {
    case Conversion::kBool:
      if (tag != kTVMFFIBool && tag != kTVMFFIInt) return ConvertStatus::kBadType;
      out[0] = v->v_int64 != 0;
      return ConvertStatus::kOk;
    case Conversion::kI8:
    case Conversion::kI16:
    case Conversion::kI32:
    case Conversion::kI64:
    case Conversion::kU8:
    case Conversion::kU16:
    case Conversion::kU32:
    case Conversion::kU64:
      if (tag != kTVMFFIInt && tag != kTVMFFIBool) return ConvertStatus::kBadType;
      return StoreInteger(p.conversion, v->v_int64, out);
    case Conversion::kF16:
    case Conversion::kBF16:
    case Conversion::kF32:
    case Conversion::kF64:
      return StoreFloat(p.conversion, v, out);
    case Conversion::kOpaquePtr:
      if (tag == kTVMFFIOpaquePtr) {
        out[0] = reinterpret_cast<uintptr_t>(v->v_ptr);
      } else if (tag == kTVMFFINone) {
        out[0] = 0;
      } else {
        return ConvertStatus::kBadType;
      }
      return ConvertStatus::kOk;
    case Conversion::kStr:
      switch (tag) {
        case kTVMFFIRawStr:
          // A NULL RawStr is no string: like None, accepted only when nullable.
          if (v->v_c_str == nullptr && !p.nullable) return ConvertStatus::kBadType;
          out[0] = reinterpret_cast<uintptr_t>(v->v_c_str);
          return ConvertStatus::kOk;
        case kTVMFFISmallStr:
          // The eighth byte is NUL (the validity contract), so this is NUL-terminated; a NUL
          // inside would end the native's string early. (A RawStr cannot hold one.)
          if (SmallStrHasNul(*v)) return ConvertStatus::kInnerNul;
          out[0] = reinterpret_cast<uintptr_t>(v->v_bytes);
          return ConvertStatus::kOk;
        case kTVMFFIStr:
          if (StrObjectHasNul(v->v_obj)) return ConvertStatus::kInnerNul;
          out[0] = reinterpret_cast<uintptr_t>(CellOf<FFIJITBytesCell>(v->v_obj)->data);
          return ConvertStatus::kOk;
        case kTVMFFINone:
          if (!p.nullable) return ConvertStatus::kBadType;
          out[0] = 0;
          return ConvertStatus::kOk;
        default:
          return ConvertStatus::kBadType;
      }
    case Conversion::kBytes:
      switch (tag) {
        case kTVMFFIByteArrayPtr: {
          const auto* bytes = static_cast<const TVMFFIByteArray*>(v->v_ptr);
          if (bytes == nullptr) return ConvertStatus::kBadType;
          out[0] = reinterpret_cast<uintptr_t>(bytes->data);
          out[1] = bytes->size;
          return ConvertStatus::kOk;
        }
        case kTVMFFISmallBytes:
        case kTVMFFISmallStr:
          out[0] = reinterpret_cast<uintptr_t>(v->v_bytes);
          out[1] = v->small_str_len;
          return ConvertStatus::kOk;
        case kTVMFFIBytes:
        case kTVMFFIStr: {
          const FFIJITBytesCell* cell = CellOf<FFIJITBytesCell>(v->v_obj);
          out[0] = reinterpret_cast<uintptr_t>(cell->data);
          out[1] = cell->size;
          return ConvertStatus::kOk;
        }
        case kTVMFFIRawStr:
          if (v->v_c_str == nullptr) return ConvertStatus::kBadType;
          out[0] = reinterpret_cast<uintptr_t>(v->v_c_str);
          out[1] = std::strlen(v->v_c_str);
          return ConvertStatus::kOk;
        default:
          return ConvertStatus::kBadType;
      }
    case Conversion::kTensor: {
      const DLTensor* t;
      if (tag == kTVMFFIDLTensorPtr) {
        t = static_cast<const DLTensor*>(v->v_ptr);
      } else if (tag == kTVMFFITensor) {
        t = CellOf<DLTensor>(v->v_obj);
      } else {
        return ConvertStatus::kBadType;
      }
      if (t == nullptr) return ConvertStatus::kBadType;
      if (!TensorMatches(p.tensor, t)) return ConvertStatus::kBadTensor;
      out[0] = reinterpret_cast<uintptr_t>(t);
      return ConvertStatus::kOk;
    }
    case Conversion::kDataType:
      if (tag == kTVMFFIDataType) {
        uint32_t bits;
        std::memcpy(&bits, &v->v_dtype, sizeof bits);
        out[0] = bits;
        return ConvertStatus::kOk;
      }
      if (details::IsStrForm(tag)) return ConvertDataTypeString(v, out);
      return ConvertStatus::kBadType;
    case Conversion::kDevice:
      if (tag == kTVMFFIDevice) {
        std::memcpy(out, &v->v_device, sizeof(DLDevice));
        return ConvertStatus::kOk;
      }
      if (details::IsStrForm(tag)) return ConvertDeviceString(v, out);
      return ConvertStatus::kBadType;
    case Conversion::kObject:
      if (tag >= kTVMFFIStaticObjectBegin) {
        const int32_t want = ObjectTypeIndexOf(p.object_type_index, p.object_type_key);
        // An unresolved key names a type nobody registered: no object is an instance of it.
        if (want == kUnresolvedTypeIndex ||
            (want != kTVMFFIObject && tag != want && !FFIJITObjectIsInstance(tag, want))) {
          return ConvertStatus::kBadType;
        }
        out[0] = reinterpret_cast<uintptr_t>(v->v_obj);
        return ConvertStatus::kOk;
      }
      if (tag == kTVMFFINone && p.nullable) {
        out[0] = 0;
        return ConvertStatus::kOk;
      }
      return ConvertStatus::kBadType;
    case Conversion::kAnyView:
      out[0] = reinterpret_cast<uintptr_t>(v);
      return ConvertStatus::kOk;
  }
  return ConvertStatus::kBadType;
}

}  // namespace ffijit

#endif  // FFIJIT_JIT_INTERPRETER_MARSHAL_H_
