// Unwind tables of JIT modules under LLVM 19's ORC runtime.
//
// LLVM versions: 19 only (cmake's FFIJIT_LLVM_PATCHES in jit/CMakeLists.txt compiles eh_frames.cc
// for it alone). Trigger: a JIT module with an .eh_frame unloaded, or an object of one removed
// after its initialiser threw. Symptom: ELFNixPlatform 19 registers each linked object's .eh_frame
// with the unwinder and never deregisters it, so a later unwind reads freed memory; the module
// therefore deregisters its objects' eh-frames (recorded by link_records.h) before its code goes.
// LLVM 22's platform deregisters them with the code itself, and a second deregistration aborts in
// libgcc (measured: UnloadTest.RefusedWhileAFunctionHoldsTheModuleThenFreesIt and the
// thread-local unload suites of tests/jit/orc abort on 22 with this patch, pass without it).
// Can go with LLVM 19.
#ifndef FFIJIT_JIT_ORC_LLVM_PATCHES_EH_FRAMES_H_
#define FFIJIT_JIT_ORC_LLVM_PATCHES_EH_FRAMES_H_

namespace ffijit::orc {

#if defined(FFIJIT_LLVM_PATCH_EH_FRAMES)
// Whether a module records and deregisters its objects' eh-frames.
inline constexpr bool kDeregisterEhFrames = true;
// Removes the .eh_frame at `begin` (as the ORC runtime registered it) from the unwinder.
void DeregisterEhFrame(const void* begin);
#else
inline constexpr bool kDeregisterEhFrames = false;
inline void DeregisterEhFrame(const void*) {}
#endif

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_LLVM_PATCHES_EH_FRAMES_H_
