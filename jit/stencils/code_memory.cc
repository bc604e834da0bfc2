// Executable memory for stencil thunks: one private mapping per thunk, written while writable and
// sealed read+execute before publication (W^X), unmapped when the thunk is released.
#include "stencils/code_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace ffijit::stencils {
namespace {

std::atomic<int64_t> live_blocks{0};

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

}  // namespace

CodeBlock AllocateWritable(size_t bytes, const void* near, std::string* why) {
  const size_t page = PageSize();
  const size_t size = (bytes + page - 1) / page * page;
  // A hint only (no MAP_FIXED): a page below the library when free, anywhere otherwise.
  uintptr_t hint = reinterpret_cast<uintptr_t>(near) & ~(uintptr_t{page} - 1);
  hint = hint > (uintptr_t{64} << 20) ? hint - (uintptr_t{64} << 20) : 0;
  void* p = mmap(reinterpret_cast<void*>(hint), size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    *why = std::string("mmap of stencil code failed: ") + std::strerror(errno);
    return {};
  }
  live_blocks.fetch_add(1, std::memory_order_relaxed);
  return {static_cast<uint8_t*>(p), size};
}

bool Seal(const CodeBlock& block, std::string* why) {
  if (mprotect(block.base, block.size, PROT_READ | PROT_EXEC) != 0) {
    *why = std::string("mprotect of stencil code failed: ") + std::strerror(errno);
    return false;
  }
  // AArch64 needs the data and instruction caches made coherent; a no-op on x86-64.
  __builtin___clear_cache(reinterpret_cast<char*>(block.base),
                          reinterpret_cast<char*>(block.base + block.size));
  return true;
}

void Free(const CodeBlock& block) {
  if (block.base == nullptr) return;
  munmap(block.base, block.size);
  live_blocks.fetch_sub(1, std::memory_order_relaxed);
}

int64_t LiveCodeBlocks() {
  return live_blocks.load(std::memory_order_relaxed);
}

}  // namespace ffijit::stencils
