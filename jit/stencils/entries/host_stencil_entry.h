// Host entries made from stencils (kFFIJITHostEntryStencil in ffijit/jit/host_entry.h): the entry
// of one function in microseconds, without LLVM, from host_stencils.c's stencils.
#ifndef FFIJIT_JIT_STENCILS_ENTRIES_HOST_STENCIL_ENTRY_H_
#define FFIJIT_JIT_STENCILS_ENTRIES_HOST_STENCIL_ENTRY_H_

#include "ffijit/jit/host_entry.h"
#include "plan/host_entry_internal.h"

namespace ffijit::stencils {

// Makes fn's entry for `model` (checked complete) and `flags`; throws RuntimeError saying why
// there is none. The caller fills `function`.
FFIJITHostEntry* MakeStencilHostEntry(const BoundFunction* fn, const FFIJITHostModel& model,
                                      int flags);

}  // namespace ffijit::stencils

#endif  // FFIJIT_JIT_STENCILS_ENTRIES_HOST_STENCIL_ENTRY_H_
