// Thread-local variables of loaded objects beyond what LLVM 19's JITLink reads itself.
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
// The exec models (-fpie's TPOFF32 and GOTTPOFF, TPOFF64) address a static TLS block fixed when
// the program started, which code loaded later cannot have: such an object is refused with the
// relocation, the symbol and the fix (-fPIC).
#ifndef FFIJIT_JIT_ORC_MODULES_THREAD_LOCALS_H_
#define FFIJIT_JIT_ORC_MODULES_THREAD_LOCALS_H_

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

// Completes the rewrite at link time (see the file comment). One per ObjectLinkingLayer.
std::shared_ptr<llvm::orc::ObjectLinkingLayer::Plugin> MakeThreadLocalPlugin();

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_MODULES_THREAD_LOCALS_H_
