// The hash primitives of TVM FFI's stable hashing (StableHashCombine / StableHashBytes of its
// public base_details.h) and a type's key hash, shared by the structural hash
// (extra/structural_hash.cc) and the recursive hash of the dataclass API (extra/dataclass_hash.cc),
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
constexpr uint64_t kHashBytesMod = 2147483647ull;

inline uint64_t HashBytes(std::string_view bytes) {
  constexpr uint64_t kMultiplier = 1099511628211ull;
  constexpr uint64_t kMod = kHashBytesMod;
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

// HashBytes of a SmallStr or SmallBytes value's `size` (<= 7) inline bytes without reading them
// one by one: they are one word, the value's 8 bytes with those past `size` masked off.
inline uint64_t HashSmallBytes(const TVMFFIAny& small) {
  const uint32_t size = small.small_str_len;
  if (size == 0) return 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return (small.v_uint64 & (~uint64_t{0} >> (64 - 8 * size))) % kHashBytesMod;
#else
  return HashBytes(std::string_view(small.v_bytes, size));
#endif
}

// The registered hash of a type's key (what header code reads as GetTypeKeyHash), 0 for an index
// that has no type.
inline uint64_t TypeKeyHash(int32_t type_index) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  return info != nullptr ? info->type_key_hash : 0;
}

}  // namespace ffijit::internal

#endif  // FFIJIT_RUNTIME_HASHING_H_
