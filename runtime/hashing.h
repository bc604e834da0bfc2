// The hash primitives of TVM FFI's stable hashing (StableHashCombine / StableHashBytes of its
// public base_details.h) and a type's key hash, shared by the structural hash
// (extra/structural_hash.cc) and the recursive hash of the dataclass API (extra/dataclass.cc),
// whose values must match the original's numbers exactly.
#ifndef FFIJIT_RUNTIME_HASHING_H_
#define FFIJIT_RUNTIME_HASHING_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ffijit/c_api.h"

namespace ffijit::internal {

inline uint64_t HashCombine(uint64_t key, uint64_t value) {
  return key ^ (value + 0x9e3779b9ull + (key << 6) + (key >> 2));
}

// Little-endian 8-byte words (the tail zero-padded), each folded in as
// result = (result * 1099511628211 + word) mod (2^31 - 1), the product wrapping first.
inline uint64_t HashBytes(std::string_view bytes) {
  constexpr uint64_t kMultiplier = 1099511628211ull;
  constexpr uint64_t kMod = 2147483647ull;
  uint64_t result = 0;
  for (size_t i = 0; i < bytes.size(); i += 8) {
    uint64_t word = 0;
    const size_t end = bytes.size() < i + 8 ? bytes.size() : i + 8;
    for (size_t k = i; k < end; ++k) {
      word |= uint64_t{static_cast<unsigned char>(bytes[k])} << (8 * (k - i));
    }
    result = (result * kMultiplier + word) % kMod;
  }
  return result;
}

// The registered hash of a type's key (what header code reads as GetTypeKeyHash), 0 for an index
// that has no type.
inline uint64_t TypeKeyHash(int32_t type_index) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  return info != nullptr ? info->type_key_hash : 0;
}

}  // namespace ffijit::internal

#endif  // FFIJIT_RUNTIME_HASHING_H_
