// The checks a producer's DLTensor passes before anything reads it (a DLPack import, a view's
// prototype): one home for ffijit's runtime, which runs them in every import, and for the add-on
// build's front ends, which run them before TVM FFI's library (which trusts producers) sees a
// tensor (FFIJITTensorCheck, c_ext.h).
#ifndef FFIJIT_RUNTIME_PORTABLE_TENSOR_CHECK_H_
#define FFIJIT_RUNTIME_PORTABLE_TENSOR_CHECK_H_

#include <cstdint>
#include <string>

#include "ffijit/c_api.h"

namespace ffijit::portable {

// The most dimensions a tensor may have. Nothing in DLPack bounds `ndim`, and TVM FFI v0.1.13
// copies whatever count it is given; but an import copies `shape[0..ndim)` (and strides) from the
// producer, so an unchecked count reads past the producer's arrays. numpy refuses more than
// NPY_MAXDIMS dimensions (32 in numpy 1.x, 64 in numpy 2), and CPython's buffer protocol stops at
// PyBUF_MAX_NDIM (64): 64 admits every tensor those produce and bounds each copy to 512 bytes.
constexpr int32_t kMaxTensorDims = 64;

// A ValueError "<func>: <what>".
[[noreturn]] void ThrowBadTensor(const char* func, const std::string& what);

// Checks what a producer says about a tensor before any of its arrays is read beyond `ndim`
// entries: the count, the shape, the element type, the data pointer and the extent the strides
// and offset address. A ValueError naming `func` otherwise.
void CheckTensor(const DLTensor& src, const char* func);

// CheckTensor for a versioned producer, after its DLPack major version (nothing else is read
// before it matches) and its read-only flag (a Tensor is writable: natives may write it).
void CheckVersionedProducer(const DLManagedTensorVersioned& from, const char* func);

}  // namespace ffijit::portable

#endif  // FFIJIT_RUNTIME_PORTABLE_TENSOR_CHECK_H_
