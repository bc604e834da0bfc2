// What object.cc defines for the runtime's other sources: allocating an object.
#ifndef FFIJIT_RUNTIME_OBJECT_INTERNAL_H_
#define FFIJIT_RUNTIME_OBJECT_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "ffijit/c_api.h"

namespace ffijit::internal {

// Allocates `size` zeroed bytes for an object and initialises its header (one strong, one weak
// reference). The deleter frees the memory with std::free when flag 2 arrives.
TVMFFIObject* AllocObject(size_t size, int32_t type_index, void (*deleter)(void*, int));
// As AllocObject, but zeroes only the first `zeroed` bytes (at least the header): for objects whose
// tail the caller writes in full (a string's characters, an array's items). Inline, so that a
// constant `zeroed` becomes a few stores rather than a memset call.
inline TVMFFIObject* AllocObjectZeroing(size_t size, size_t zeroed, int32_t type_index,
                                        void (*deleter)(void*, int)) {
  // malloc + memset rather than calloc: glibc's calloc skips the per-thread cache that malloc
  // takes small blocks from, which made every object allocation half again as slow. GCC folds
  // malloc followed by a memset of zero into calloc, so the empty asm hides where `memory` came
  // from.
  void* memory = std::malloc(size);
  if (memory == nullptr) throw std::bad_alloc();
  asm("" : "+r"(memory));
  std::memset(memory, 0, zeroed);
  auto* obj = static_cast<TVMFFIObject*>(memory);
  FFIJITHeaderInit(obj, type_index, deleter);
  return obj;
}

}  // namespace ffijit::internal

#endif  // FFIJIT_RUNTIME_OBJECT_INTERNAL_H_
