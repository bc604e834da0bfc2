// ffijit's device-string and tensor functions (c_ext.h) over TVM FFI's own library: the text
// work is ffijit's (runtime/portable/dtype_text.cc), the String and Tensor objects TVM FFI's.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "../portable/tensor_check.h"
#include "ffijit/c_ext.h"
#include "ffijit/dtype.h"
#include "ffijit/error.h"

using namespace ffijit;

namespace {

struct EmptyTensor {
  DLManagedTensor managed;
  int64_t shape[portable::kMaxTensorDims];
};

void FreeEmptyTensor(DLManagedTensor* managed) {
  auto* tensor = reinterpret_cast<EmptyTensor*>(managed);
  std::free(tensor->managed.dl_tensor.data);
  delete tensor;
}

// Bytes of a compact tensor of `dtype` and `shape`; a ValueError past 2^46 bytes.
uint64_t StorageBytes(const int64_t* shape, int32_t ndim, DLDataType dtype) {
  uint64_t bytes = (static_cast<uint64_t>(dtype.bits) * dtype.lanes + 7) / 8;
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] < 0) {
      throw ValueError("FFIJITTensorCreateEmpty: negative dimension " + std::to_string(shape[i]));
    }
    if (shape[i] != 0 && bytes > (uint64_t{1} << 46) / static_cast<uint64_t>(shape[i])) {
      throw ValueError("FFIJITTensorCreateEmpty: tensor too large");
    }
    bytes *= static_cast<uint64_t>(shape[i]);
  }
  return bytes;
}

}  // namespace

extern "C" {

int FFIJITDeviceFromString(const TVMFFIByteArray* str, DLDevice* out) {
  return GuardCBoundary([&] {
    details::RequireNonNull(str, "FFIJITDeviceFromString", "str");
    details::RequireNonNull(out, "FFIJITDeviceFromString", "out");
    if (str->data == nullptr && str->size != 0) {
      throw ValueError("FFIJITDeviceFromString: NULL data with nonzero size");
    }
    *out = ParseDevice(std::string_view(str->data, str->size));
  });
}

int FFIJITDeviceToString(const DLDevice* device, TVMFFIAny* out) {
  return GuardCBoundary([&] {
    details::RequireNonNull(device, "FFIJITDeviceToString", "device");
    details::RequireNonNull(out, "FFIJITDeviceToString", "out");
    std::string text = DeviceToString(*device);
    TVMFFIByteArray bytes{text.data(), text.size()};
    if (TVMFFIStringFromByteArray(&bytes, out) != 0) throw Error::MoveFromRaised();
  });
}

int FFIJITTensorCreateEmpty(const int64_t* shape, int32_t ndim, DLDataType dtype, DLDevice device,
                            TVMFFIObjectHandle* out) {
  return GuardCBoundary([&] {
    details::RequireNonNull(out, "FFIJITTensorCreateEmpty", "out");
    if (ndim < 0 || ndim > portable::kMaxTensorDims) {
      throw ValueError("FFIJITTensorCreateEmpty: ndim " + std::to_string(ndim) + " is not in 0.." +
                       std::to_string(portable::kMaxTensorDims));
    }
    if (ndim > 0) details::RequireNonNull(shape, "FFIJITTensorCreateEmpty", "shape");
    if (device.device_type != kDLCPU) {
      throw ValueError("FFIJITTensorCreateEmpty: only cpu tensors can be allocated, not " +
                       DeviceToString(device));
    }
    if (dtype.lanes == 0 || dtype.bits == 0) {
      throw ValueError("FFIJITTensorCreateEmpty: data type with no storage");
    }
    constexpr size_t kAlignment = 64;
    uint64_t bytes = StorageBytes(shape, ndim, dtype);
    size_t padded = (static_cast<size_t>(bytes) + kAlignment - 1) / kAlignment * kAlignment;
    auto tensor = std::make_unique<EmptyTensor>();
    void* data = std::aligned_alloc(kAlignment, padded == 0 ? kAlignment : padded);
    if (data == nullptr) throw std::bad_alloc();
    std::memset(data, 0, padded == 0 ? kAlignment : padded);
    std::copy(shape, shape + ndim, tensor->shape);
    DLTensor& view = tensor->managed.dl_tensor;
    view.data = data;
    view.device = device;
    view.ndim = ndim;
    view.dtype = dtype;
    view.shape = tensor->shape;
    tensor->managed.deleter = FreeEmptyTensor;
    DLManagedTensor* managed = &tensor.release()->managed;
    // TVM FFI's library takes the storage over; it asks nothing of a compact tensor it could refuse
    // (no alignment, contiguity holds), and should it fail all the same the storage is freed here.
    if (TVMFFITensorFromDLPack(managed, 0, 1, out) != 0) {
      FreeEmptyTensor(managed);
      throw Error::MoveFromRaised();
    }
  });
}

}  // extern "C"
