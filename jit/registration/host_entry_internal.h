// What the host-entry C API (host_entry.cc) shares with the build's compiler of entries: the JIT's
// (orc/entries/host_entry_compiler.cc) or the one of a build without LLVM
// (without_llvm/jit_unavailable.cc).
#ifndef FFIJIT_JIT_REGISTRATION_HOST_ENTRY_INTERNAL_H_
#define FFIJIT_JIT_REGISTRATION_HOST_ENTRY_INTERNAL_H_

#include <cstdint>

#include "ffijit/host_entry.h"
#include "interpreter/bound_function.h"

struct FFIJITHostEntry {
  void* address = nullptr;
  int64_t compile_ns = 0;
  TVMFFIObject* function = nullptr;  // one strong reference
  void* code = nullptr;              // what release_code frees
  void (*release_code)(void* code) = nullptr;
};

namespace ffijit::details {

// Compiles fn's entry; throws ffijit::Error saying why there is none. The caller fills `function`.
FFIJITHostEntry* CompileHostEntry(const BoundFunction* fn, const FFIJITHostModel& model, int flags);

}  // namespace ffijit::details

#endif  // FFIJIT_JIT_REGISTRATION_HOST_ENTRY_INTERNAL_H_
