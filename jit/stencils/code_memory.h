// Executable memory for stencil thunks, W^X: a block is mapped writable, filled, then made
// read+execute before anyone can run it; no page is ever writable and executable at once.
#ifndef FFIJIT_JIT_STENCILS_CODE_MEMORY_H_
#define FFIJIT_JIT_STENCILS_CODE_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace ffijit::stencils {

struct CodeBlock {
  uint8_t* base = nullptr;
  size_t size = 0;  // whole pages
};

// Maps at least `bytes` writable (not executable) bytes, near `near` when the system allows (so
// that rel32 branches to the library reach without a veneer). Empty block + *why on failure.
CodeBlock AllocateWritable(size_t bytes, const void* near, std::string* why);
// Makes the block read+execute (never writable again) and synchronizes the instruction cache.
bool Seal(const CodeBlock& block, std::string* why);
void Free(const CodeBlock& block);
// Blocks currently mapped (tests: release frees the code).
int64_t LiveCodeBlocks();

}  // namespace ffijit::stencils

#endif  // FFIJIT_JIT_STENCILS_CODE_MEMORY_H_
