// Thread-local variables of loaded objects beyond what LLVM's JITLink reads itself.
//
// Two workarounds for LLVM 19 and 22 (both compiled: jit/CMakeLists.txt's FFIJIT_LLVM_PATCHES;
// "19" below holds for 22 as well, measured on 22 with each one off: the rewrite's absence fails
// every local-dynamic fixture with JITLink's "Unsupported x86-64 relocation type R_X86_64_TLSLD",
// the image's gives CrossObjectThreadLocalTest two copies of one variable and crashes the
// thread-local suites of tests/jit/orc/modules), each described below with its symptom and when it
// can go: the local-dynamic rewrite (trigger: any static thread-local or C++ thread_local with a
// destructor compiled -fPIC; symptom: JITLink refuses the object) and the thread-local image
// registered by ffijit (trigger: thread-locals in .tdata.<name>/.tbss.<name> sections, an unloaded
// module, or one thread-local used by two objects of a module; symptom: a null dereference, a link
// that fails, or two copies of one variable). The exec-model refusal is not a workaround: no loader
// can serve those models to code loaded after the program started.
//
// JITLink 19 links the general-dynamic model (R_X86_64_TLSGD: __tls_get_addr with a descriptor),
// which the ORC runtime serves: every thread gets its own copy of an object's thread-local data,
// initial values included. It refuses the local-dynamic model (R_X86_64_TLSLD + DTPOFF32), which
// gcc and clang emit for every static thread-local and for the guard of each C++ thread_local
// with a destructor. The local-dynamic form is the general one over a base address: one call
// yields the module's thread-local block, and each variable is a constant offset into it.
// PrepareThreadLocals rewrites it, in a copy of the object, to a form JITLink reads:
//   - each TLSLD becomes a TLSGD of one anchor variable, so the call yields the anchor's copy;
//   - each DTPOFF32 of variable V becomes a PC-relative reference to V, which the plugin below
//     turns into V's offset from the anchor once JITLink has placed both: the ORC runtime copies
//     an object's thread-local data as one block, so offsets within it hold in every thread.
// The rewrite can go when JITLink links R_X86_64_TLSLD and DTPOFF32 itself.
// The exec models (-fpie's TPOFF32 and GOTTPOFF, TPOFF64) address a static TLS block fixed when
// the program started, which code loaded later cannot have: such an object is refused with the
// relocation, the symbol and the fix (-fPIC).
//
// Where the ORC runtime finds an object's thread-local data (workaround for LLVM 19). The
// runtime makes each thread's copy from a range the platform registered per object, and
// ELFNixPlatform 19 registers only the sections named exactly .tdata and .tbss, in JIT memory:
//   - C++ thread-locals in COMDAT groups (an inline function's function-local thread_local, a
//     template's static, an inline variable; -fdata-sections too) live in .tdata.<name> and
//     .tbss.<name>, which it misses: the first access logs "orc runtime error: No thread local
//     data section for key" and dereferences null;
//   - the runtime never forgets a range, so after an unload an object placed where the old one's
//     thread-local data was would fail to link ("Overlapping .tdata sections");
//   - it gives every object its own thread-specific key, under which the runtime keeps a
//     thread's copies: an object using a thread-local another object of the module defines got
//     a second copy of it.
// The plugin therefore gathers every .tdata* and .tbss* section of an object into one section the
// platform does not look for, zero-filled ones made explicit so that they lie together, and
// after the fixups copies it into a block of host memory that is never freed (the object's
// initial thread-local image, typically tens of bytes), points the object's TLS descriptors
// there, makes every descriptor name one key (the first object's) and registers that block with
// the runtime itself. It can go when the platform registers every thread-local section, forgets
// them with the code and keys a module's objects alike.
// A variable aligned beyond 16 bytes is refused: the runtime's per-thread copies are only
// 16-byte aligned.
#ifndef FFIJIT_JIT_ORC_LLVM_PATCHES_THREAD_LOCALS_H_
#define FFIJIT_JIT_ORC_LLVM_PATCHES_THREAD_LOCALS_H_

#include <memory>
#include <string>

#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/TargetParser/Triple.h"

namespace ffijit::orc {

// Checks the thread-local relocations of the ELF object `bytes` (already checked by
// CheckObject) and rewrites local-dynamic ones in place. Throws ValueError naming `file`, the
// relocation and the symbol when the object uses a model loaded code cannot have. When it
// rewrote something, `link_name` becomes the name the object must be linked under (the plugin
// finds its anchor by it); otherwise it is left alone.
void PrepareThreadLocals(std::string& bytes, const std::string& file, const llvm::Triple& host,
                         std::string* link_name);

// Drops what PrepareThreadLocals left for the link of `link_name` when that link never happens.
void ForgetThreadLocals(const std::string& link_name);

// The section every thread-local section of a linked object is gathered into.
inline constexpr const char* kThreadDataSection = "ffijit.thread-data";

// Completes the rewrite at link time and places the objects' thread-local images (see the file
// comment). One per ObjectLinkingLayer; `register_sections` is the ORC runtime's
// __orc_rt_elfnix_register_object_sections.
std::shared_ptr<llvm::orc::ObjectLinkingLayer::Plugin> MakeThreadLocalPlugin(
    llvm::orc::ExecutionSession& session, llvm::orc::ExecutorAddr register_sections);

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_LLVM_PATCHES_THREAD_LOCALS_H_
