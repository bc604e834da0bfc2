// Executable memory for stencil thunks, W^X: code is written through a writable view and run
// through a read+execute view of the same pages; no mapping is ever writable and executable. Thunks
// share chunks of pages (a mapping per thunk would cost a page and one of the kernel's limited
// mappings per function); a chunk is unmapped when its last thunk is released.
#ifndef FFIJIT_JIT_STENCILS_LINK_CODE_MEMORY_H_
#define FFIJIT_JIT_STENCILS_LINK_CODE_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace ffijit::stencils {

struct CodeChunk;

struct CodeBlock {
  uint8_t* base = nullptr;   // where the code runs (read+execute)
  uint8_t* write = nullptr;  // where it is written before Seal (writable, never executable)
  size_t size = 0;
  CodeChunk* chunk = nullptr;
};

// At least `bytes` of code space, 64-byte aligned, placed near `near` when the system allows (so
// that rel32 branches to the library reach without a veneer). Empty block + *why on failure.
CodeBlock AllocateWritable(size_t bytes, const void* near, std::string* why);
// Publishes the block's code: read+execute from `base` (its own pages sealed, when the system has
// no shared memory to give two views), the instruction cache synchronized. `write` must not be
// used after. Another thread may run the code once it has acquired the entry point from the
// thread that sealed it (a release store, a lock): Seal itself orders nothing.
bool Seal(const CodeBlock& block, std::string* why);
void Free(const CodeBlock& block);
// Blocks currently allocated, and chunks currently mapped (tests: release frees the code).
int64_t LiveCodeBlocks();
int64_t MappedCodeChunks();

}  // namespace ffijit::stencils

#endif  // FFIJIT_JIT_STENCILS_LINK_CODE_MEMORY_H_
