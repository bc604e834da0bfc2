// A structure-aware mutation for fuzz_object: rewrites fields of an ELF64 relocatable object (the
// file header, section headers, symbols, relocations, .eh_frame records) with values chosen to
// break what a linker trusts. LLVM is not instrumented, so coverage alone does not steer byte
// mutation into the fields JITLink reads; this does.
#ifndef FFIJIT_TESTS_FUZZ_ELF_MUTATOR_H_
#define FFIJIT_TESTS_FUZZ_ELF_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <random>

namespace ffijit_fuzz {

// Rewrites 1-3 structural fields of the ELF64 little-endian object in data[0, size) in place and
// returns true, or returns false (data untouched) when the input is not such an object.
bool MutateElfFields(uint8_t* data, size_t size, std::minstd_rand& rng);

}  // namespace ffijit_fuzz

#endif  // FFIJIT_TESTS_FUZZ_ELF_MUTATOR_H_
