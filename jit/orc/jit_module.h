// Internal view of JIT modules (include/ffijit/jit_module.h) for the rest of the jit library: the
// IR of a native made by JitModule::MakeNative, kept so a later tier can compile a thunk in the
// same LLVM module as the native's body.
#ifndef FFIJIT_JIT_ORC_JIT_MODULE_H_
#define FFIJIT_JIT_ORC_JIT_MODULE_H_

#include <string>
#include <vector>

#include "ffijit/c_api.h"

namespace ffijit::orc {

// When `owner` (BoundFunction::owner) is a live JIT module and `target` one of its natives made
// from LLVM IR: the optimised bitcode of the IR unit defining it and the function's name in it.
bool FindNativeIR(TVMFFIObject* owner, void* target, std::string* bitcode, std::string* function);

// The addresses `names` (symbols the IR of one of its natives uses) resolve to from inside the
// live JIT module `owner`, as its own code's references do: its symbols, its link order, the
// process. False, with the reason in *why, when one resolves to nothing.
bool ResolveInModule(TVMFFIObject* owner, const std::vector<std::string>& names,
                     std::vector<void*>* addresses, std::string* why);

// Whether objects' static initialisers and finalisers run (the default). The loader fuzzers turn
// them off: a fuzzed object's initialiser is arbitrary code, and running it tests nothing of ours.
void SetRunStaticInitializers(bool run);

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_JIT_MODULE_H_
