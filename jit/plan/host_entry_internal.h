// What the host-entry C API (registration/host_entry.cc) shares with the makers of entries: the
// build's compiler (orc/entries/host_entry_compiler.cc, or without_llvm/jit_unavailable.cc) and
// the stencil tier (stencils/entries/). Below both, so that neither includes the other's folder.
#ifndef FFIJIT_JIT_PLAN_HOST_ENTRY_INTERNAL_H_
#define FFIJIT_JIT_PLAN_HOST_ENTRY_INTERNAL_H_

#include <cstdint>

#include "ffijit/jit/host_entry.h"

struct FFIJITHostEntry {
  void* address = nullptr;
  int64_t compile_ns = 0;
  TVMFFIObject* function = nullptr;  // one strong reference
  void* code = nullptr;              // what release_code frees
  void (*release_code)(void* code) = nullptr;
};

namespace ffijit {
struct BoundFunction;  // interpreter/bound_function.h
}  // namespace ffijit

namespace ffijit::details {

// Compiles fn's entry; throws ffijit::Error saying why there is none. The caller fills `function`.
FFIJITHostEntry* CompileHostEntry(const BoundFunction* fn, const FFIJITHostModel& model, int flags);

}  // namespace ffijit::details

#endif  // FFIJIT_JIT_PLAN_HOST_ENTRY_INTERNAL_H_
