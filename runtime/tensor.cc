// Tensor objects: DLPack import/export (legacy and versioned), unsafe views and compact CPU
// allocation.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "ffijit/dtype.h"
#include "ffijit/object.h"
#include "internal.h"
#include "object_internal.h"
#include "portable/tensor_check.h"

namespace ffijit {
namespace {

// A Tensor, laid out as TVM FFI's TensorObj up to FFIJIT_TVM_FFI_TENSOR_OBJECT_SIZE
// (header-compiled code reads, and at e98b94e1 writes, that part inline): the DLTensor at +24, then
// per revision
//  - e98b94e1 (96 bytes): `Optional<Shape> shape_data_` @72 and `strides_data_` @80 (a Shape object
//    pointer or NULL; header code fills a NULL one lazily in Tensor::shape()/strides()), then the
//    `std::atomic<DLManagedTensorVersioned*>` export cache @88 that ToDLPackVersioned fills once.
//    ffijit's tensors always hold both Shapes, and their DLTensor points into them.
//  - v0.1.13 (72 bytes): nothing more. Header code reads shape and strides through the DLTensor
//    only (and requires strides whenever ndim > 0), so ffijit keeps both arrays inline after the
//    object, and every export is a fresh struct.
#define FFIJIT_TENSOR_HAS_SHAPE_CACHE (FFIJIT_TVM_FFI_TENSOR_OBJECT_SIZE == 96)
static_assert(FFIJIT_TVM_FFI_TENSOR_OBJECT_SIZE == 96 || FFIJIT_TVM_FFI_TENSOR_OBJECT_SIZE == 72,
              "a Tensor layout this file does not know");
struct TensorObject {
  TVMFFIObject header;
  DLTensor tensor;
#if FFIJIT_TENSOR_HAS_SHAPE_CACHE
  TVMFFIObject* shape_data;
  TVMFFIObject* strides_data;
  std::atomic<DLManagedTensorVersioned*> cached_versioned;
#endif
  // ffijit's own part, after TVM FFI's.
  DLManagedTensor* legacy_producer;
  DLManagedTensorVersioned* versioned_producer;
  void* owned_data;
  TVMFFIObject* view_source;  // the object an unsafe view keeps alive (one strong reference)
  // v0.1.13: shape[ndim] then strides[ndim] follow the object.
};
static_assert(offsetof(TensorObject, tensor) == 24, "Tensor DLTensor at +24");
static_assert(offsetof(TensorObject, legacy_producer) == FFIJIT_TVM_FFI_TENSOR_OBJECT_SIZE,
              "ffijit's part starts where TVM FFI's TensorObj ends");
static_assert(sizeof(TensorObject) % alignof(int64_t) == 0, "the inline arrays are aligned");
#if FFIJIT_TENSOR_HAS_SHAPE_CACHE
static_assert(offsetof(TensorObject, shape_data) == 72, "Tensor shape_data_ at +72");
static_assert(offsetof(TensorObject, strides_data) == 80, "Tensor strides_data_ at +80");
static_assert(offsetof(TensorObject, cached_versioned) == 88, "Tensor export cache at +88");
static_assert(sizeof(std::atomic<DLManagedTensorVersioned*>) == 8, "the cache is one pointer");

// Releases the part every TensorObj shares (+72..+96): header-compiled code may have filled it.
void ReleaseSharedPart(TensorObject* obj) {
  if (obj->shape_data) details::DecRef(obj->shape_data);
  if (obj->strides_data) details::DecRef(obj->strides_data);
  // The cached export struct is allocated with `new`, by ffijit or by header code alike.
  delete obj->cached_versioned.load(std::memory_order_acquire);
}
#else
int64_t* InlineDims(TensorObject* obj) {
  return reinterpret_cast<int64_t*>(obj + 1);
}
#endif

void TensorDeleter(void* self, int flags) {
  auto* obj = static_cast<TensorObject*>(self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    if (obj->legacy_producer && obj->legacy_producer->deleter) {
      obj->legacy_producer->deleter(obj->legacy_producer);
    }
    if (obj->versioned_producer && obj->versioned_producer->deleter) {
      obj->versioned_producer->deleter(obj->versioned_producer);
    }
    std::free(obj->owned_data);
    if (obj->view_source) details::DecRef(obj->view_source);
#if FFIJIT_TENSOR_HAS_SHAPE_CACHE
    ReleaseSharedPart(obj);
#endif
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(obj);
}

#if FFIJIT_TENSOR_HAS_SHAPE_CACHE
// A new Shape object holding `dims` (one strong reference).
TVMFFIObject* NewShape(const int64_t* dims, size_t ndim) {
  TVMFFIObjectHandle shape = nullptr;
  if (FFIJITShapeCreate(dims, ndim, &shape) != 0) throw Error::MoveFromRaised();
  return static_cast<TVMFFIObject*>(shape);
}

int64_t* ShapeData(TVMFFIObject* shape) {
  return const_cast<int64_t*>(reinterpret_cast<TVMFFIShapeCell*>(shape + 1)->data);
}
#endif

// Compact row-major strides for `shape`.
void CompactStrides(const int64_t* shape, size_t ndim, int64_t* strides) {
  int64_t stride = 1;
  for (size_t i = ndim; i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i] > 0 ? shape[i] : 1;
  }
}

bool IsCompact(const int64_t* shape, const int64_t* strides, size_t ndim) {
  int64_t expected = 1;
  for (size_t i = ndim; i-- > 0;) {
    if (shape[i] == 1) continue;  // a size-1 dimension's stride never matters
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

// A new tensor object viewing `src` (checked by portable::CheckTensor), with private copies of
// shape and strides.
TensorObject* NewTensorObject(const DLTensor& src, int32_t require_alignment,
                              int32_t require_contiguous, const char* func) {
  portable::CheckTensor(src, func);
  // Strides on the stack (portable::CheckTensor bounds ndim): importing a tensor is on the path of
  // every Python call that passes an array to a callee that may keep it.
  const size_t ndim = static_cast<size_t>(src.ndim);
  int64_t compact_strides[portable::kMaxTensorDims];
  const int64_t* strides = src.strides;
  if (strides == nullptr) {
    CompactStrides(src.shape, ndim, compact_strides);
    strides = compact_strides;
  }
  if (require_contiguous && !IsCompact(src.shape, strides, ndim)) {
    throw Error("ValueError", std::string(func) + ": the tensor is not contiguous");
  }
  if (require_alignment > 0) {
    auto address = reinterpret_cast<uintptr_t>(src.data) + src.byte_offset;
    if (address % static_cast<uintptr_t>(require_alignment) != 0) {
      throw Error("ValueError", std::string(func) + ": data is not aligned to " +
                                    std::to_string(require_alignment) + " bytes");
    }
  }
#if FFIJIT_TENSOR_HAS_SHAPE_CACHE
  auto* obj = reinterpret_cast<TensorObject*>(
      internal::AllocObject(sizeof(TensorObject), kTVMFFITensor, TensorDeleter));
  ObjectPtr<> owner = ObjectPtr<>::Adopt(&obj->header);  // frees it if a Shape cannot be made
  obj->tensor = src;
  obj->shape_data = NewShape(src.shape, ndim);
  obj->strides_data = NewShape(strides, ndim);
  obj->tensor.shape = ShapeData(obj->shape_data);
  obj->tensor.strides = ShapeData(obj->strides_data);
  owner.release();
#else
  auto* obj = reinterpret_cast<TensorObject*>(internal::AllocObject(
      sizeof(TensorObject) + 2 * ndim * sizeof(int64_t), kTVMFFITensor, TensorDeleter));
  obj->tensor = src;
  // Never NULL, even for ndim 0: header code may take either pointer as an empty array.
  int64_t* dims = InlineDims(obj);
  // Element by element: tensors have few dimensions, and an inlined memcpy of a variable size
  // becomes `rep movsq`, whose start-up costs more than the copy.
  for (size_t i = 0; i < ndim; ++i) {
    dims[i] = src.shape[i];
    dims[ndim + i] = strides[i];
  }
  obj->tensor.shape = dims;
  obj->tensor.strides = dims + ndim;
#endif
  return obj;
}

TensorObject* TensorOf(TVMFFIObjectHandle handle, const char* func) {
  auto* obj = static_cast<TVMFFIObject*>(handle);
  internal::RequireNonNull(obj, func, "from");
  if (!IsInstance(obj->type_index, kTVMFFITensor)) {
    throw Error("TypeError", std::string(func) + ": expected an ffi.Tensor but got `" +
                                 TypeIndexToKey(obj->type_index) + "`");
  }
  return reinterpret_cast<TensorObject*>(obj);
}

// The deleter of a legacy export: drops the tensor reference (manager_ctx) and frees the struct.
void DeleteLegacyExport(DLManagedTensor* self) {
  details::DecRef(static_cast<TVMFFIObject*>(self->manager_ctx));
  delete self;
}

#if FFIJIT_TENSOR_HAS_SHAPE_CACHE
// The deleter of the cached versioned export: it only drops the reference that export took; the
// struct lives until the tensor dies.
void DropCachedExportReference(DLManagedTensorVersioned* self) {
  details::DecRef(static_cast<TVMFFIObject*>(self->manager_ctx));
}
#else
// The deleter of a versioned export: drops the tensor reference (manager_ctx), frees the struct.
void DeleteVersionedExport(DLManagedTensorVersioned* self) {
  details::DecRef(static_cast<TVMFFIObject*>(self->manager_ctx));
  delete self;
}
#endif

}  // namespace
}  // namespace ffijit

using namespace ffijit;

extern "C" {

int TVMFFITensorFromDLPack(DLManagedTensor* from, int32_t require_alignment,
                           int32_t require_contiguous, TVMFFIObjectHandle* out) {
  // On failure the producer keeps ownership of `from`: its deleter is not called.
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(from, "TVMFFITensorFromDLPack", "from");
    internal::RequireNonNull(out, "TVMFFITensorFromDLPack", "out");
    TensorObject* obj = NewTensorObject(from->dl_tensor, require_alignment, require_contiguous,
                                        "TVMFFITensorFromDLPack");
    obj->legacy_producer = from;
    *out = obj;
  });
}

int TVMFFITensorFromDLPackVersioned(DLManagedTensorVersioned* from, int32_t require_alignment,
                                    int32_t require_contiguous, TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(from, "TVMFFITensorFromDLPackVersioned", "from");
    internal::RequireNonNull(out, "TVMFFITensorFromDLPackVersioned", "out");
    // The version comes first: a struct of another major version may lay out everything after
    // it differently, so nothing else is read until it matches.
    portable::CheckVersionedProducer(*from, "TVMFFITensorFromDLPackVersioned");
    TensorObject* obj = NewTensorObject(from->dl_tensor, require_alignment, require_contiguous,
                                        "TVMFFITensorFromDLPackVersioned");
    obj->versioned_producer = from;
    *out = obj;
  });
}

int TVMFFITensorToDLPack(TVMFFIObjectHandle from, DLManagedTensor** out) {
  return internal::GuardCBoundary([&] {
    TensorObject* obj = TensorOf(from, "TVMFFITensorToDLPack");
    internal::RequireNonNull(out, "TVMFFITensorToDLPack", "out");
    auto* managed = new DLManagedTensor();
    managed->dl_tensor = obj->tensor;
    managed->manager_ctx = &obj->header;
    managed->deleter = &DeleteLegacyExport;
    details::IncRef(&obj->header);
    *out = managed;
  });
}

int TVMFFITensorToDLPackVersioned(TVMFFIObjectHandle from, DLManagedTensorVersioned** out) {
  return internal::GuardCBoundary([&] {
    TensorObject* obj = TensorOf(from, "TVMFFITensorToDLPackVersioned");
    internal::RequireNonNull(out, "TVMFFITensorToDLPackVersioned", "out");
#if FFIJIT_TENSOR_HAS_SHAPE_CACHE
    // One export struct per tensor, cached at +88 (shared with header-compiled code's inline
    // ToDLPackVersioned, which uses the same slot the same way); every call adds a reference.
    DLManagedTensorVersioned* cached = obj->cached_versioned.load(std::memory_order_acquire);
    if (cached == nullptr) {
      auto* fresh = new DLManagedTensorVersioned();
      fresh->version = DLPackVersion{FFIJIT_DLPACK_MAJOR, FFIJIT_DLPACK_MINOR};
      fresh->manager_ctx = &obj->header;
      fresh->deleter = &DropCachedExportReference;
      fresh->flags = 0;
      fresh->dl_tensor = obj->tensor;
      if (obj->cached_versioned.compare_exchange_strong(cached, fresh, std::memory_order_release,
                                                        std::memory_order_acquire)) {
        cached = fresh;
      } else {
        delete fresh;  // another thread won; `cached` now holds its struct
      }
    }
    details::IncRef(&obj->header);
    *out = cached;
#else
    // A fresh struct per call, as header code's ToDLPackVersioned makes: the tensor has no cache.
    auto* managed = new DLManagedTensorVersioned();
    managed->version = DLPackVersion{FFIJIT_DLPACK_MAJOR, FFIJIT_DLPACK_MINOR};
    managed->manager_ctx = &obj->header;
    managed->deleter = &DeleteVersionedExport;
    managed->flags = 0;
    managed->dl_tensor = obj->tensor;
    details::IncRef(&obj->header);
    *out = managed;
#endif
  });
}

#if FFIJIT_TVM_FFI_HAS_TENSOR_UNSAFE_VIEW
int TVMFFITensorCreateUnsafeView(TVMFFIObjectHandle source, const DLTensor* prototype,
                                 TVMFFIObjectHandle* out) {
  // TVM FFI validates nothing here; ffijit checks the prototype as it checks an import
  // (portable::CheckTensor) rather than making a tensor that crashes its readers.
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(source, "TVMFFITensorCreateUnsafeView", "source");
    internal::RequireNonNull(prototype, "TVMFFITensorCreateUnsafeView", "prototype");
    internal::RequireNonNull(out, "TVMFFITensorCreateUnsafeView", "out");
    TensorObject* obj = NewTensorObject(*prototype, 0, 0, "TVMFFITensorCreateUnsafeView");
    details::IncRef(static_cast<TVMFFIObject*>(source));
    obj->view_source = static_cast<TVMFFIObject*>(source);
    *out = obj;
  });
}
#endif

int FFIJITTensorCreateEmpty(const int64_t* shape, int32_t ndim, DLDataType dtype, DLDevice device,
                            TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(out, "FFIJITTensorCreateEmpty", "out");
    if (ndim < 0) {
      throw Error("ValueError", "FFIJITTensorCreateEmpty: negative ndim " + std::to_string(ndim));
    }
    if (ndim > portable::kMaxTensorDims) {  // before the shape is read
      portable::ThrowBadTensor("FFIJITTensorCreateEmpty",
                               "ndim " + std::to_string(ndim) + " is more than the " +
                                   std::to_string(portable::kMaxTensorDims) +
                                   " dimensions ffijit accepts");
    }
    if (ndim > 0) internal::RequireNonNull(shape, "FFIJITTensorCreateEmpty", "shape");
    if (RawDeviceType(device) != kDLCPU) {
      throw Error("ValueError", "FFIJITTensorCreateEmpty: only cpu tensors can be allocated, not " +
                                    DeviceToString(device));
    }
    if (dtype.lanes == 0 || dtype.bits == 0) {
      throw Error("ValueError", "FFIJITTensorCreateEmpty: data type with no storage");
    }
    uint64_t bytes = (static_cast<uint64_t>(dtype.bits) * dtype.lanes + 7) / 8;
    for (int32_t i = 0; i < ndim; ++i) {
      if (shape[i] < 0) {
        throw Error("ValueError",
                    "FFIJITTensorCreateEmpty: negative dimension " + std::to_string(shape[i]));
      }
      if (shape[i] != 0 && bytes > (uint64_t{1} << 46) / static_cast<uint64_t>(shape[i])) {
        throw Error("ValueError", "FFIJITTensorCreateEmpty: tensor too large");
      }
      bytes *= static_cast<uint64_t>(shape[i]);
    }
    // The storage first, so that the tensor is checked as it will be (its data never NULL).
    constexpr size_t kAlignment = 64;
    size_t padded = (static_cast<size_t>(bytes) + kAlignment - 1) / kAlignment * kAlignment;
    if (padded == 0) padded = kAlignment;
    std::unique_ptr<void, void (*)(void*)> data(std::aligned_alloc(kAlignment, padded), std::free);
    if (data == nullptr) throw std::bad_alloc();
    std::memset(data.get(), 0, padded);
    DLTensor view{};
    view.data = data.get();
    view.ndim = ndim;
    view.shape = const_cast<int64_t*>(shape);
    view.dtype = dtype;
    view.device = device;
    TensorObject* obj = NewTensorObject(view, 0, 0, "FFIJITTensorCreateEmpty");
    ObjectPtr<> owner = ObjectPtr<>::Adopt(&obj->header);
    obj->owned_data = data.release();
    *out = owner.release();
  });
}

}  // extern "C"
