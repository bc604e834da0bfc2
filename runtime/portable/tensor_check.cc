// The producer checks of tensor_check.h, and FFIJITTensorCheck, their C entry.
#include "tensor_check.h"

#include <climits>
#include <string>

#include "ffijit/c_ext.h"
#include "ffijit/error.h"

namespace ffijit::portable {
namespace {

// The bytes one element takes (sub-byte types rounded up, as DLPack's consumers do).
uint64_t ElementBytes(DLDataType dtype) {
  return (static_cast<uint64_t>(dtype.bits) * dtype.lanes + 7) / 8;
}

}  // namespace

void ThrowBadTensor(const char* func, const std::string& what) {
  throw Error("ValueError", std::string(func) + ": " + what);
}

// Checks what a producer (a DLPack exporter, a view's prototype) says about a tensor before any of
// its arrays is read beyond `ndim` entries: the count, the shape, the element type, the data
// pointer and the extent the strides and offset address. A DLTensor is the producer's word only;
// every later reader (natives included) trusts what passes here.
void CheckTensor(const DLTensor& src, const char* func) {
  if (src.ndim < 0) ThrowBadTensor(func, "negative ndim " + std::to_string(src.ndim));
  if (src.ndim > kMaxTensorDims) {
    ThrowBadTensor(func, "ndim " + std::to_string(src.ndim) + " is more than the " +
                             std::to_string(kMaxTensorDims) + " dimensions ffijit accepts");
  }
  if (src.ndim > 0 && src.shape == nullptr) {
    ThrowBadTensor(func, "shape is NULL but ndim is " + std::to_string(src.ndim));
  }
  if (src.dtype.bits == 0 || src.dtype.lanes == 0) {
    ThrowBadTensor(func, "data type with no storage (bits " + std::to_string(src.dtype.bits) +
                             ", lanes " + std::to_string(src.dtype.lanes) + ")");
  }
  // The product of the non-zero dimensions must fit (with room for the element size) even when a
  // zero makes the tensor empty: readers multiply dimensions in any order (numpy refuses such
  // shapes likewise).
  constexpr uint64_t kMaxElements = uint64_t{1} << 62;
  uint64_t elements = 1;
  bool empty = false;
  for (int32_t i = 0; i < src.ndim; ++i) {
    const int64_t dim = src.shape[i];
    if (dim < 0) {
      ThrowBadTensor(func,
                     "negative dimension " + std::to_string(dim) + " at axis " + std::to_string(i));
    }
    if (dim == 0) {
      empty = true;
    } else if (uint64_t product = 0;
               __builtin_mul_overflow(elements, static_cast<uint64_t>(dim), &product) ||
               product > kMaxElements) {  // a multiplication: a division per axis costs more
      ThrowBadTensor(func, "the shape's element count overflows (dimension " + std::to_string(dim) +
                               " at axis " + std::to_string(i) + ")");
    } else {
      elements = product;
    }
  }
  if (empty) elements = 0;
  if (src.byte_offset > static_cast<uint64_t>(INT64_MAX)) {
    ThrowBadTensor(func, "byte_offset " + std::to_string(src.byte_offset) + " is out of range");
  }
  if (elements == 0) return;  // no element is ever addressed: data may be NULL, strides anything
  if (src.data == nullptr) {
    ThrowBadTensor(func, "data is NULL but the tensor has " + std::to_string(elements) +
                             " elements (DLPack allows NULL data only for empty tensors)");
  }
  // The lowest and highest element offsets the strides reach, then the byte range they span from
  // `data`: each must be computable in int64 and land inside the address space. Every dimension
  // is at least 1 here.
  bool overflow = false;
  int64_t low = 0, high = src.strides != nullptr ? 0 : static_cast<int64_t>(elements) - 1;
  for (int32_t i = 0; src.strides != nullptr && i < src.ndim && !overflow; ++i) {
    int64_t reach = 0;
    overflow = __builtin_mul_overflow(src.shape[i] - 1, src.strides[i], &reach);
    if (!overflow) {
      overflow = reach < 0 ? __builtin_add_overflow(low, reach, &low)
                           : __builtin_add_overflow(high, reach, &high);
    }
  }
  const int64_t item = static_cast<int64_t>(ElementBytes(src.dtype));
  int64_t byte_low = 0, byte_high = 0;
  if (!overflow) overflow = __builtin_mul_overflow(low, item, &byte_low);
  if (!overflow) overflow = __builtin_add_overflow(high, int64_t{1}, &byte_high);
  if (!overflow) overflow = __builtin_mul_overflow(byte_high, item, &byte_high);
  if (!overflow) {
    overflow = __builtin_add_overflow(byte_low, static_cast<int64_t>(src.byte_offset), &byte_low);
  }
  if (!overflow) {
    overflow = __builtin_add_overflow(byte_high, static_cast<int64_t>(src.byte_offset), &byte_high);
  }
  const auto address = reinterpret_cast<uintptr_t>(src.data);
  if (!overflow) {
    overflow = (byte_low < 0 && static_cast<uintptr_t>(-(byte_low + 1)) >= address) ||
               static_cast<uintptr_t>(byte_high) > UINTPTR_MAX - address;
  }
  if (overflow) {
    ThrowBadTensor(func,
                   "the shape, strides and byte_offset address memory beyond what a pointer "
                   "can reach (the byte extent overflows)");
  }
}

void CheckVersionedProducer(const DLManagedTensorVersioned& from, const char* func) {
  if (from.version.major != FFIJIT_DLPACK_MAJOR) {
    throw Error("ValueError", std::string(func) + ": unsupported DLPack major version " +
                                  std::to_string(from.version.major) + " (expected " +
                                  std::to_string(FFIJIT_DLPACK_MAJOR) + ")");
  }
  if (from.flags & DLPACK_FLAG_BITMASK_READ_ONLY) {
    throw Error("ValueError", std::string(func) +
                                  ": the DLPack tensor is read-only "
                                  "(DLPACK_FLAG_BITMASK_READ_ONLY) and ffijit tensors are writable "
                                  "(a native may write them): pass a writable copy");
  }
  CheckTensor(from.dl_tensor, func);
}

}  // namespace ffijit::portable

extern "C" int FFIJITTensorCheckVersioned(const DLManagedTensorVersioned* from, const char* func) {
  return ffijit::GuardCBoundary([&] {
    ffijit::details::RequireNonNull(from, "FFIJITTensorCheckVersioned", "from");
    ffijit::portable::CheckVersionedProducer(*from,
                                             func != nullptr ? func : "FFIJITTensorCheckVersioned");
  });
}

extern "C" int FFIJITTensorCheck(const DLTensor* tensor, const char* func) {
  return ffijit::GuardCBoundary([&] {
    ffijit::details::RequireNonNull(tensor, "FFIJITTensorCheck", "tensor");
    ffijit::portable::CheckTensor(*tensor, func != nullptr ? func : "FFIJITTensorCheck");
  });
}
