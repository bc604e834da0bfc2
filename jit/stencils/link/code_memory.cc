// Executable memory for stencil thunks (code_memory.h): chunks of a memfd mapped twice, writable
// and read+execute, handed out by a bump pointer under a lock; a chunk goes when its last block
// does. Where memfd_create is refused (a sandbox), each block is a private mapping of its own,
// written, then sealed read+execute.
#include "stencils/link/code_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace ffijit::stencils {

struct CodeChunk {
  uint8_t* exec = nullptr;
  uint8_t* write = nullptr;
  size_t size = 0;
  size_t used = 0;
  int64_t blocks = 0;  // blocks allocated from it and not yet freed
};

namespace {

constexpr size_t kChunkBytes = size_t{256} << 10;
constexpr size_t kBlockAlign = 64;

std::atomic<int64_t> live_blocks{0}, mapped_chunks{0};
std::mutex chunk_mutex;
CodeChunk* current = nullptr;  // guarded by chunk_mutex: where the next block goes

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// A page-aligned address 64 MiB below `near` (a hint only, never MAP_FIXED), or none.
void* HintBelow(const void* near) {
  const size_t page = PageSize();
  uintptr_t hint = reinterpret_cast<uintptr_t>(near) & ~(uintptr_t{page} - 1);
  return reinterpret_cast<void*>(hint > (uintptr_t{64} << 20) ? hint - (uintptr_t{64} << 20) : 0);
}

std::string Errno(const char* what) {
  return std::string(what) + " of stencil code failed: " + std::strerror(errno);
}

// A chunk of `size` bytes with its two views; nullptr (and *why) when the system refuses.
CodeChunk* MapChunk(size_t size, const void* near, std::string* why) {
  const int fd = memfd_create("ffijit-stencils", MFD_CLOEXEC);
  if (fd < 0) {
    *why = Errno("memfd_create");
    return nullptr;
  }
  CodeChunk* chunk = nullptr;
  void* exec = MAP_FAILED;
  void* write = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    *why = Errno("ftruncate");
  } else if ((exec = mmap(HintBelow(near), size, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0)) ==
             MAP_FAILED) {
    *why = Errno("mmap");
  } else if ((write = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
             MAP_FAILED) {
    *why = Errno("mmap");
    munmap(exec, size);
  } else {
    chunk = new CodeChunk{static_cast<uint8_t*>(exec), static_cast<uint8_t*>(write), size, 0, 0};
    mapped_chunks.fetch_add(1, std::memory_order_relaxed);
  }
  close(fd);  // the mappings keep the memory
  return chunk;
}

void UnmapChunk(CodeChunk* chunk) {
  munmap(chunk->exec, chunk->size);
  munmap(chunk->write, chunk->size);
  mapped_chunks.fetch_sub(1, std::memory_order_relaxed);
  delete chunk;
}

// One private mapping for one block: written, then sealed by mprotect.
CodeBlock AllocatePrivate(size_t bytes, const void* near, std::string* why) {
  const size_t page = PageSize();
  const size_t size = (bytes + page - 1) / page * page;
  void* p = mmap(HintBelow(near), size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    *why = Errno("mmap");
    return {};
  }
  live_blocks.fetch_add(1, std::memory_order_relaxed);
  return {static_cast<uint8_t*>(p), static_cast<uint8_t*>(p), size, nullptr};
}

}  // namespace

CodeBlock AllocateWritable(size_t bytes, const void* near, std::string* why) {
  const size_t size = (bytes + kBlockAlign - 1) / kBlockAlign * kBlockAlign;
  {
    std::lock_guard<std::mutex> lock(chunk_mutex);
    if (current == nullptr || current->size - current->used < size) {
      const size_t page = PageSize();
      const size_t chunk_size = std::max(kChunkBytes, (size + page - 1) / page * page);
      std::string refused;  // the private mapping says why if it fails too
      CodeChunk* fresh = MapChunk(chunk_size, near, &refused);
      if (fresh == nullptr) return AllocatePrivate(bytes, near, why);
      // A full chunk goes when its last block does (now, if it has none left).
      if (current != nullptr && current->blocks == 0) UnmapChunk(current);
      current = fresh;
    }
    CodeChunk* chunk = current;
    CodeBlock block{chunk->exec + chunk->used, chunk->write + chunk->used, size, chunk};
    chunk->used += size;
    ++chunk->blocks;
    live_blocks.fetch_add(1, std::memory_order_relaxed);
    return block;
  }
}

bool Seal(const CodeBlock& block, std::string* why) {
  if (block.chunk == nullptr && mprotect(block.base, block.size, PROT_READ | PROT_EXEC) != 0) {
    *why = Errno("mprotect");
    return false;
  }
  // AArch64 needs the data and instruction caches made coherent for the executable view; a no-op
  // on x86-64. No fence here: the code reaches other threads only through its entry point, which
  // its maker publishes with a release store (SetSafeCall) or hands to the one caller that asked.
  __builtin___clear_cache(reinterpret_cast<char*>(block.base),
                          reinterpret_cast<char*>(block.base + block.size));
  return true;
}

void Free(const CodeBlock& block) {
  if (block.base == nullptr) return;
  live_blocks.fetch_sub(1, std::memory_order_relaxed);
  if (block.chunk == nullptr) {
    munmap(block.base, block.size);
    return;
  }
  std::lock_guard<std::mutex> lock(chunk_mutex);
  CodeChunk* chunk = block.chunk;
  if (--chunk->blocks == 0 && chunk != current) UnmapChunk(chunk);
}

int64_t LiveCodeBlocks() {
  return live_blocks.load(std::memory_order_relaxed);
}

int64_t MappedCodeChunks() {
  return mapped_chunks.load(std::memory_order_relaxed);
}

}  // namespace ffijit::stencils
