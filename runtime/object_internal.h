// What object.cc defines for the runtime's other sources: allocating an object.
#ifndef FFIJIT_RUNTIME_OBJECT_INTERNAL_H_
#define FFIJIT_RUNTIME_OBJECT_INTERNAL_H_

#include <cstddef>
#include <cstdint>

#include "ffijit/c_api.h"

namespace ffijit::internal {

// Allocates `size` zeroed bytes for an object and initialises its header (one strong, one weak
// reference). The deleter frees the memory with std::free when flag 2 arrives.
TVMFFIObject* AllocObject(size_t size, int32_t type_index, void (*deleter)(void*, int));
// As AllocObject, but zeroes only the first `zeroed` bytes (at least the header): for objects whose
// tail the caller writes in full (a string's characters, an array's items).
TVMFFIObject* AllocObjectZeroing(size_t size, size_t zeroed, int32_t type_index,
                                 void (*deleter)(void*, int));

}  // namespace ffijit::internal

#endif  // FFIJIT_RUNTIME_OBJECT_INTERNAL_H_
