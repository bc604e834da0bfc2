// Deregistration of a JIT module's eh-frames under LLVM 19 (eh_frames.h: the defect, when it can
// go).
#include "orc/llvm_patches/eh_frames.h"

// libgcc's unwinder registry, where the ORC runtime registers each object's .eh_frame.
extern "C" void __deregister_frame(const void* begin);

namespace ffijit::orc {

void DeregisterEhFrame(const void* begin) {
  __deregister_frame(begin);
}

}  // namespace ffijit::orc
