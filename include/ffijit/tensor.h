// Tensor: a refcounted DLTensor with DLPack import/export (legacy and versioned).
//
// Import takes ownership of the producer's managed tensor only on success; its deleter then runs
// exactly once, when the last reference (including exported ones) is gone. NULL strides on import
// mean compact; the Tensor always exposes explicit strides.
#ifndef FFIJIT_TENSOR_H_
#define FFIJIT_TENSOR_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "ffijit/dtype.h"
#include "ffijit/object.h"

namespace ffijit {

class Tensor : public ObjectRef {
 public:
  static constexpr int32_t kTypeIndex = kTVMFFITensor;
  static constexpr const char* kTypeKey = "ffi.Tensor";

  Tensor() noexcept = default;
  explicit Tensor(ObjectPtr<> ptr) noexcept : ObjectRef(std::move(ptr)) {}

  static Tensor FromDLPack(DLManagedTensor* managed, int32_t require_alignment = 0,
                           bool require_contiguous = false) {
    TVMFFIObjectHandle handle = nullptr;
    CheckCall(TVMFFITensorFromDLPack(managed, require_alignment, require_contiguous, &handle));
    return Tensor(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle)));
  }
  static Tensor FromDLPackVersioned(DLManagedTensorVersioned* managed,
                                    int32_t require_alignment = 0,
                                    bool require_contiguous = false) {
    TVMFFIObjectHandle handle = nullptr;
    CheckCall(
        TVMFFITensorFromDLPackVersioned(managed, require_alignment, require_contiguous, &handle));
    return Tensor(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle)));
  }
  // A compact, zeroed CPU tensor.
  static Tensor Empty(const std::vector<int64_t>& shape, DataType dtype,
                      Device device = Device(kDLCPU, 0)) {
    TVMFFIObjectHandle handle = nullptr;
    CheckCall(FFIJITTensorCreateEmpty(shape.data(), static_cast<int32_t>(shape.size()), dtype,
                                      device, &handle));
    return Tensor(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle)));
  }

  // The consumer owns the result and must call its deleter once.
  DLManagedTensor* ToDLPack() const {
    DLManagedTensor* out = nullptr;
    CheckCall(TVMFFITensorToDLPack(get(), &out));
    return out;
  }
  DLManagedTensorVersioned* ToDLPackVersioned() const {
    DLManagedTensorVersioned* out = nullptr;
    CheckCall(TVMFFITensorToDLPackVersioned(get(), &out));
    return out;
  }

  const DLTensor* dl_tensor() const noexcept {
    return defined() ? reinterpret_cast<const DLTensor*>(get() + 1) : nullptr;
  }
  int32_t ndim() const noexcept { return dl_tensor()->ndim; }
  std::vector<int64_t> shape() const {
    return std::vector<int64_t>(dl_tensor()->shape, dl_tensor()->shape + ndim());
  }
  std::vector<int64_t> strides() const {
    return std::vector<int64_t>(dl_tensor()->strides, dl_tensor()->strides + ndim());
  }
  DataType dtype() const noexcept { return dl_tensor()->dtype; }
  Device device() const noexcept { return dl_tensor()->device; }
  void* data() const noexcept { return dl_tensor()->data; }
  int64_t numel() const noexcept {
    int64_t n = 1;
    for (int32_t i = 0; i < ndim(); ++i) n *= dl_tensor()->shape[i];
    return n;
  }
};

}  // namespace ffijit

#endif  // FFIJIT_TENSOR_H_
