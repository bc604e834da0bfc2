// libFuzzer target: hand-made DLPack structs (legacy and versioned) against the runtime's imports.
//
// Each input describes one DLManagedTensor or DLManagedTensorVersioned: version and flags, ndim,
// shape and strides (or NULL), dtype, byte_offset, data (a real buffer or NULL) and the import's
// alignment/contiguity requests. The struct may lie about anything the import must check, but
// its pointers stay valid for what DLPack lets a consumer read: shape and strides hold `ndim`
// entries whenever ndim is at most kHonestDims; above that they hold kHonestDims, which the
// import must refuse before reading (ndim is bounded at 64). The data pointer is never read by an
// import, so it is a real buffer or NULL. An import either succeeds with a tensor whose
// description is sound (and that exports and re-imports alike), or fails with a ValueError and
// leaves the producer's struct alone; its deleter runs exactly once in the first case and never
// in the second. Any crash or sanitizer report is a finding.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ffijit/error.h"
#include "ffijit/ffijit.h"
#include "ffijit/tensor.h"

namespace {

constexpr int32_t kHonestDims = 80;  // past the bound of 64, so honest refusals are covered too

// Reads the input front to back; past its end every read is 0.
struct Reader {
  const uint8_t* data;
  size_t size;
  template <typename T>
  T Take() {
    T value{};
    const size_t n = size < sizeof(T) ? size : sizeof(T);
    std::memcpy(&value, data, n);
    data += n;
    size -= n;
    return value;
  }
};

// An int64 that is mostly small (where shapes and strides live) and sometimes anything.
int64_t Dim(Reader& in) {
  const uint8_t mode = in.Take<uint8_t>();
  switch (mode % 4) {
    case 0:
      return mode / 4;  // 0..63
    case 1:
      return -static_cast<int64_t>(mode / 4);  // negative
    case 2:
      return int64_t{1} << (in.Take<uint8_t>() % 63);  // powers of two up to 2**62
    default:
      return in.Take<int64_t>();
  }
}

int deletes = 0;

void Abort(const char* what) {
  std::fprintf(stderr, "fuzz_dlpack: %s\n", what);
  std::abort();
}

// A successful import must describe something sound; the tensor is then exported both ways and
// re-imported, which must succeed too.
void CheckTensor(const ffijit::Tensor& tensor) {
  const DLTensor* t = tensor.dl_tensor();
  if (t->ndim < 0 || t->ndim > 64) Abort("accepted an ndim outside 0..64");
  if (t->ndim > 0 && (t->shape == nullptr || t->strides == nullptr)) Abort("NULL shape/strides");
  // The product of the non-zero dimensions fits in int64 even for an empty tensor.
  int64_t numel = 1;
  bool empty = false;
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] < 0) Abort("accepted a negative dimension");
    if (t->shape[i] == 0) {
      empty = true;
    } else if (__builtin_mul_overflow(numel, t->shape[i], &numel)) {
      Abort("accepted a shape whose element count overflows");
    }
  }
  if (empty) numel = 0;
  if (numel > 0 && t->data == nullptr) Abort("accepted NULL data for a non-empty tensor");
  if (t->dtype.bits == 0 || t->dtype.lanes == 0) Abort("accepted a data type with no storage");
  DLManagedTensorVersioned* versioned = nullptr;
  if (TVMFFITensorToDLPackVersioned(tensor.get(), &versioned) != 0) Abort("export failed");
  TVMFFIObjectHandle again = nullptr;
  if (TVMFFITensorFromDLPackVersioned(versioned, 0, 0, &again) != 0) {
    Abort("a tensor's own export was refused");
  }
  TVMFFIObjectDecRef(again);
  DLManagedTensor* legacy = nullptr;
  if (TVMFFITensorToDLPack(tensor.get(), &legacy) != 0) Abort("legacy export failed");
  if (TVMFFITensorFromDLPack(legacy, 0, 0, &again) != 0) Abort("a legacy export was refused");
  TVMFFIObjectDecRef(again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  Reader in{bytes, size};
  const uint8_t kind = in.Take<uint8_t>();
  const bool use_versioned = kind & 1;
  const bool null_shape = (kind & 2) != 0 && (kind & 4) != 0;
  const bool null_strides = (kind & 8) != 0;
  const bool null_data = (kind & 16) != 0 && (kind & 32) != 0;
  const uint8_t ndim_mode = in.Take<uint8_t>();
  int32_t ndim = ndim_mode < 200 ? ndim_mode % 72 : in.Take<int32_t>();

  const int32_t stored = ndim < 0 ? 0 : (ndim < kHonestDims ? ndim : kHonestDims);
  std::vector<int64_t> shape(static_cast<size_t>(stored) + 1);  // never an empty vector's NULL
  std::vector<int64_t> strides(static_cast<size_t>(stored) + 1);
  for (int32_t i = 0; i < stored; ++i) {
    shape[i] = Dim(in);
    strides[i] = Dim(in);
  }
  std::vector<uint8_t> buffer(64);

  DLTensor t{};
  t.data = null_data ? nullptr : buffer.data();
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = ndim;
  t.dtype = DLDataType{in.Take<uint8_t>(), in.Take<uint8_t>(), in.Take<uint16_t>()};
  t.shape = null_shape ? nullptr : shape.data();
  t.strides = null_strides ? nullptr : strides.data();
  const uint8_t offset_mode = in.Take<uint8_t>();
  t.byte_offset = offset_mode < 128 ? offset_mode : in.Take<uint64_t>();
  const int32_t alignment = in.Take<uint8_t>() % 4 == 0 ? 1 << (in.Take<uint8_t>() % 8) : 0;
  const int32_t contiguous = in.Take<uint8_t>() & 1;

  deletes = 0;
  TVMFFIObjectHandle out = nullptr;
  // Both structs outlive the tensor, which holds the one it was made from until it dies.
  DLManagedTensorVersioned versioned{};
  DLManagedTensor legacy{};
  int rc;
  if (use_versioned) {
    versioned.version = DLPackVersion{in.Take<uint8_t>() % 3u, in.Take<uint8_t>()};
    versioned.flags = in.Take<uint8_t>() % 4;
    versioned.dl_tensor = t;
    versioned.deleter = [](DLManagedTensorVersioned*) { ++deletes; };
    rc = TVMFFITensorFromDLPackVersioned(&versioned, alignment, contiguous, &out);
  } else {
    legacy.dl_tensor = t;
    legacy.deleter = [](DLManagedTensor*) { ++deletes; };
    rc = TVMFFITensorFromDLPack(&legacy, alignment, contiguous, &out);
  }
  if (rc != 0) {
    ffijit::Error error = ffijit::Error::MoveFromRaised();
    if (error.kind() != "ValueError") Abort(("an import failed with " + error.kind()).c_str());
    if (out != nullptr) Abort("a failed import wrote its result");
    if (deletes != 0) Abort("a refused producer's deleter ran");
    return 0;
  }
  {
    ffijit::Tensor tensor(ffijit::ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(out)));
    CheckTensor(tensor);
  }
  if (deletes != 1) Abort("the producer's deleter did not run exactly once");
  return 0;
}
