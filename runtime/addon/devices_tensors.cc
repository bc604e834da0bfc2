// ffijit's device-string and tensor functions (c_ext.h) over TVM FFI's own library: the text
// work is ffijit's (runtime/portable/dtype_text.cc), the String and Tensor objects TVM FFI's.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "ffijit/c_ext.h"
#include "ffijit/dtype.h"
#include "ffijit/error.h"

using namespace ffijit;

namespace {

// The most dimensions an empty tensor may have (as ffijit's runtime allows).
constexpr int32_t kMaxDims = 64;

struct EmptyTensor {
  DLManagedTensor managed;
  int64_t shape[kMaxDims];
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
    if (str == nullptr || (str->data == nullptr && str->size != 0)) {
      throw ValueError("FFIJITDeviceFromString: `str` is NULL");
    }
    if (out == nullptr) throw ValueError("FFIJITDeviceFromString: `out` is NULL");
    *out = ParseDevice(std::string_view(str->data, str->size));
  });
}

int FFIJITDeviceToString(const DLDevice* device, TVMFFIAny* out) {
  return GuardCBoundary([&] {
    if (device == nullptr) throw ValueError("FFIJITDeviceToString: `device` is NULL");
    if (out == nullptr) throw ValueError("FFIJITDeviceToString: `out` is NULL");
    std::string text = DeviceToString(*device);
    TVMFFIByteArray bytes{text.data(), text.size()};
    if (TVMFFIStringFromByteArray(&bytes, out) != 0) throw Error::MoveFromRaised();
  });
}

int FFIJITTensorCreateEmpty(const int64_t* shape, int32_t ndim, DLDataType dtype, DLDevice device,
                            TVMFFIObjectHandle* out) {
  return GuardCBoundary([&] {
    if (out == nullptr) throw ValueError("FFIJITTensorCreateEmpty: `out` is NULL");
    if (ndim < 0 || ndim > kMaxDims) {
      throw ValueError("FFIJITTensorCreateEmpty: ndim " + std::to_string(ndim) + " is not in 0.." +
                       std::to_string(kMaxDims));
    }
    if (ndim > 0 && shape == nullptr) throw ValueError("FFIJITTensorCreateEmpty: `shape` is NULL");
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
    // TVM FFI's library takes the storage over (and frees it through the deleter, also when it
    // refuses the tensor).
    if (TVMFFITensorFromDLPack(managed, 0, 1, out) != 0) throw Error::MoveFromRaised();
  });
}

}  // extern "C"
