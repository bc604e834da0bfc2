// The shapes of the generated stencil tables (stencils_generated.h, written at build time by
// extract_stencils.py): a stencil's bytes and the holes the tier patches in each copy.
#ifndef FFIJIT_JIT_STENCILS_LINK_STENCIL_TYPES_H_
#define FFIJIT_JIT_STENCILS_LINK_STENCIL_TYPES_H_

#include <cstdint>

namespace ffijit::stencils {

enum class Machine : uint8_t { kX86_64, kAArch64 };

// How a hole is written (the ELF relocation it came from).
enum class Reloc : uint8_t {
  kAbs32,     // x86-64 R_X86_64_32: the value, zero-extended from 32 bits
  kAbs32S,    // x86-64 R_X86_64_32S: the value, sign-extended from 32 bits
  kPcRel32,   // x86-64 PC32/PLT32: value - place, signed 32 bits (a branch goes through a veneer
              // when out of range)
  kMovwG0,    // AArch64 movz/movk immediate: bits 0..15 of the value
  kMovwG1,    // bits 16..31
  kMovwG2,    // bits 32..47
  kMovwG3,    // bits 48..63
  kBranch26,  // AArch64 B/BL: (value - place) / 4 in 26 bits, +-128 MiB (else a veneer)
};

// What a hole is patched with.
enum class Hole : uint8_t {
  kArity,             // the number of packed arguments
  kOffset,            // the byte offset of the stencil's packed argument in the caller's array
                      // (in a host entry: in the entry's frame)
  kTypeIndex,         // an object parameter's type index
  kSlot,              // a stack parameter's 8-byte slot
  kIndex,             // an out-pointer's result index, a structure element's parameter index,
                      // a host entry tensor's number (at its call: how many tensors)
  kRankPlusOne,       // a tensor parameter's rank + 1 (0: any rank)
  kCheckDtype,        // 1 when a tensor parameter's element type is checked, else 0
  kDtype,             // the element type it must have (DLDataType's 4 bytes)
  kHeaderTypeOffset,  // offsetof(TVMFFIObject, type_index) (revision-dependent)
  kHeaderSize,        // sizeof(TVMFFIObject): where an object's payload starts
  kNext,              // the next stencil of the chain
  kFail,              // the thunk's fallback stencil
  kFallback,          // the fallback into the interpreter (C function)
  kBoxResult,         // FFIJITBoxResult
  kBoxResults,        // FFIJITBoxResults
  kPropagateStatus,   // FFIJITPropagateStatus
  kMemchr,            // memchr
  kResolvePath,       // FFIJITResolvePath
  kAnyDefect,         // details::FindAnyDefect as a function (0: well-formed)
  kF16FromDouble,     // FFIJITDoubleToF16Bits
  kF16FromInt,        // FFIJITInt64ToF16Bits
  kBF16FromDouble,    // FFIJITDoubleToBF16Bits
  kBF16FromInt,       // FFIJITInt64ToBF16Bits
  kObjectOffset,      // a host entry argument's byte offset in the host's object array
  kHostData,          // a host entry's model data (host_stencil_data.h), placed after its code
  kSlow,              // a host argument stencil's out-of-line rest (its rare forms)
  kGeneric,           // a host entry's way to the host's generic path
  kExit,              // a host entry's epilogue
  kSelfCountOffset,   // where a host entry's call count is in its `self`
  kSelfNameOffset,    // where the name a host entry records as the lock holder is in its `self`
  kHostFallback,      // a host entry's model's fallback (C function)
  kCountReached,      // a host entry's model's count_reached (C function)
  // Where a host entry's model keeps an object's type and values (x86-64: displacements).
  kHostTypeOffset,
  kHostIntSizeOffset,
  kHostIntDigitsOffset,
  kHostFloatValueOffset,
  kHostDeviceValueOffset,
  kHostDtypeValueOffset,
};

struct Patch {
  uint16_t offset;  // in the stencil's bytes
  Reloc reloc;
  Hole hole;
  int64_t addend;
};

struct Stencil {
  const uint8_t* code;
  uint16_t size;
  const Patch* patches;
  uint16_t num_patches;
  // The size of the trailing jump to kNext (0 if none), dropped when the next stencil follows.
  uint8_t tail_jump;
};

}  // namespace ffijit::stencils

#endif  // FFIJIT_JIT_STENCILS_LINK_STENCIL_TYPES_H_
