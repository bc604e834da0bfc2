// TVMFFIGetCustomAllocator / TVMFFISetCustomAllocator (v0.1.13): the process-wide allocator that
// TVM FFI header code (make_object and friends) takes object space from, and its built-in default.
//
// Header code frees an object by calling the TVMFFIObjectAllocHeader found in the 8 bytes just
// before the body, with the body address only. The built-in allocator therefore puts every body at
// one fixed offset into its block, so that delete_space can find the block from the body alone.
// The runtime's own objects do not come from here: only their own deleters free them.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "ffijit/c_api.h"

#if FFIJIT_TVM_FFI_HAS_CUSTOM_ALLOCATOR

namespace {

// Header code rejects object types aligned beyond max_align_t at compile time, so one offset of
// that size keeps every body aligned and leaves room for the alloc header before it.
constexpr size_t kBodyOffset = alignof(std::max_align_t);
static_assert(kBodyOffset >= sizeof(TVMFFIObjectAllocHeader),
              "the alloc header must fit in the space before the body");
static_assert(kBodyOffset % alignof(TVMFFIObjectAllocHeader) == 0,
              "the alloc header just before the body must be aligned");

TVMFFIObjectAllocHeader* AllocHeaderOf(void* body) {
  return reinterpret_cast<TVMFFIObjectAllocHeader*>(static_cast<char*>(body) -
                                                    sizeof(TVMFFIObjectAllocHeader));
}

void BuiltinDeleteSpace(void* body) {
  if (body != nullptr) std::free(static_cast<char*>(body) - kBodyOffset);
}

// malloc's blocks are aligned to max_align_t, and so is body = block + kBodyOffset. An alignment
// the offset cannot honour (or that is not a power of two) gets NULL rather than a misaligned body.
void* BuiltinAllocate(size_t size, size_t alignment, int32_t /*type_index*/, void* /*context*/) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > kBodyOffset) {
    return nullptr;
  }
  if (size > SIZE_MAX - kBodyOffset) return nullptr;
  void* block = std::malloc(kBodyOffset + size);
  if (block == nullptr) return nullptr;
  void* body = static_cast<char*>(block) + kBodyOffset;
  AllocHeaderOf(body)->delete_space = &BuiltinDeleteSpace;
  return body;
}

TVMFFICustomAllocator builtin_allocator = {&BuiltinAllocate, /*context=*/nullptr};

// Read and written atomically: header code on any thread may allocate while another installs an
// allocator (which must then live for the rest of the process).
TVMFFICustomAllocator* current_allocator = &builtin_allocator;

}  // namespace

extern "C" {

TVMFFICustomAllocator* TVMFFIGetCustomAllocator(void) {
  return __atomic_load_n(&current_allocator, __ATOMIC_ACQUIRE);
}

int TVMFFISetCustomAllocator(TVMFFICustomAllocator* allocator) {
  // Header code calls `allocate` without checking it.
  if (allocator != nullptr && allocator->allocate == nullptr) {
    TVMFFIErrorSetRaisedFromCStr(
        "ValueError", "TVMFFISetCustomAllocator: `allocator->allocate` must not be NULL");
    return -1;
  }
  // Acquire/release: an allocator filled in just before it is installed is seen filled in.
  __atomic_store_n(&current_allocator, allocator != nullptr ? allocator : &builtin_allocator,
                   __ATOMIC_RELEASE);
  return 0;
}

}  // extern "C"

#endif  // FFIJIT_TVM_FFI_HAS_CUSTOM_ALLOCATOR
