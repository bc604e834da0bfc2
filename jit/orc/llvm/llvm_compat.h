// The API differences between the LLVM versions ffijit builds with (cmake/llvm.cmake: 19 and 22),
// each behind one function here, so that the rest of jit/orc is written once. A version check
// anywhere else is a bug; when a version leaves the supported list, its branches go.
#ifndef FFIJIT_JIT_ORC_LLVM_LLVM_COMPAT_H_
#define FFIJIT_JIT_ORC_LLVM_LLVM_COMPAT_H_

#include <functional>
#include <memory>
#include <utility>

#include "llvm/ADT/StringRef.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Layer.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/TargetParser/Triple.h"

namespace ffijit::orc::compat {

// A named JITLink symbol's name. LLVM 19 keeps it as text; later versions intern it in the
// session's pool (a SymbolStringPtr, whose text is its referent).
inline llvm::StringRef SymbolName(const llvm::jitlink::Symbol& symbol) {
#if LLVM_VERSION_MAJOR >= 20
  return *symbol.getName();
#else
  return symbol.getName();
#endif
}

// Gives `module` the target `triple`: LLVM 19 stores the triple as text, later versions as an
// llvm::Triple.
inline void SetTargetTriple(llvm::Module& module, const llvm::Triple& triple) {
#if LLVM_VERSION_MAJOR >= 21
  module.setTargetTriple(triple);
#else
  module.setTargetTriple(triple.str());
#endif
}

// What LLJITBuilder::setObjectLinkingLayerCreator takes, made from `make` (called with the
// session): LLVM 19 passes the target triple as well, later versions do not (the session has it).
using ObjectLayerMaker = std::function<llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>>(
    llvm::orc::ExecutionSession&)>;
inline auto ObjectLinkingLayerCreator(ObjectLayerMaker make) {
#if LLVM_VERSION_MAJOR >= 20
  return make;
#else
  return [make = std::move(make)](llvm::orc::ExecutionSession& session, const llvm::Triple&) {
    return make(session);
  };
#endif
}

}  // namespace ffijit::orc::compat

#endif  // FFIJIT_JIT_ORC_LLVM_LLVM_COMPAT_H_
