// Unwind tables of JIT code under LLVM 19's ORC runtime.
//
// Workaround for LLVM 19's ORC runtime (ELFNixPlatform). Trigger: JIT code with an .eh_frame
// freed while the process runs (a code unit released, a JIT module unloaded). Symptom: the
// runtime registers each linked object's .eh_frame with the unwinder and never deregisters it, so
// a later unwind reads freed memory. Generated code therefore carries no unwind tables at all,
// and a JIT module deregisters its objects' eh-frames (recorded by link_records.h) before its
// code goes. Can go when the platform deregisters an object's eh-frames with its code.
#ifndef FFIJIT_JIT_ORC_LLVM_PATCHES_EH_FRAMES_H_
#define FFIJIT_JIT_ORC_LLVM_PATCHES_EH_FRAMES_H_

namespace llvm {
class Module;
}  // namespace llvm

namespace ffijit::orc {

// Marks every function defined in `module` nounwind without an unwind table. Nothing unwinds
// through generated code (an exception escaping a native is not caught there either way); copies
// of a native's IR come with clang's uwtable, which goes too.
void StripUnwindTables(llvm::Module& module);

// Removes the .eh_frame at `begin` (as the ORC runtime registered it) from the unwinder.
void DeregisterEhFrame(const void* begin);

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_LLVM_PATCHES_EH_FRAMES_H_
