// Internal view of JIT modules (include/ffijit/jit/jit_module.h) for the rest of the jit library:
// the IR of a native made by JitModule::MakeNative, kept so a later tier can compile a thunk in the
// same LLVM module as the native's body.
#ifndef FFIJIT_JIT_ORC_MODULES_JIT_MODULE_H_
#define FFIJIT_JIT_ORC_MODULES_JIT_MODULE_H_

#include <string>
#include <vector>

#include "ffijit/c_api.h"

namespace llvm::orc {
class JITDylib;
}  // namespace llvm::orc

namespace ffijit::orc {

// When `owner` (BoundFunction::owner) is a live JIT module and `target` one of its natives made
// from LLVM IR: the optimised bitcode of the IR unit defining it and the function's name in it.
bool FindNativeIR(TVMFFIObject* owner, void* target, std::string* bitcode, std::string* function);

// The dylibs the live JIT module `owner` resolves its own code's references in, in order: its
// own, the modules it links against, the platform's. Empty when `owner` is not a JIT module.
std::vector<llvm::orc::JITDylib*> ModuleLinkOrder(TVMFFIObject* owner);

// Whether objects' static initialisers and finalisers run (the default). The loader fuzzers turn
// them off: a fuzzed object's initialiser is arbitrary code, and running it tests nothing of ours.
void SetRunStaticInitializers(bool run);

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_MODULES_JIT_MODULE_H_
