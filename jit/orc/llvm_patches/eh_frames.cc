// Unwind tables of JIT code under LLVM 19's ORC runtime (eh_frames.h: the defect, when it can go).
#include "orc/llvm_patches/eh_frames.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"

// libgcc's unwinder registry, where the ORC runtime registers each object's .eh_frame.
extern "C" void __deregister_frame(const void* begin);

namespace ffijit::orc {

void StripUnwindTables(llvm::Module& module) {
  for (llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    function.setUWTableKind(llvm::UWTableKind::None);
    function.addFnAttr(llvm::Attribute::NoUnwind);
  }
}

void DeregisterEhFrame(const void* begin) {
  __deregister_frame(begin);
}

}  // namespace ffijit::orc
