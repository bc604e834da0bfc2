// `ffijit.JitModuleUnload`'s work, declared apart from the plugin seam so that jit/orc/modules
// (which defines it where the ORC objects are linked in) and jit/plugin (whose orc_plugin.cc
// forwards to the plugin's definition in libffijit_jit, and whose module_globals.cc registers the
// global) both include it without a cycle between their folders.
#ifndef FFIJIT_JIT_ORC_MODULES_UNLOAD_GLOBAL_H_
#define FFIJIT_JIT_ORC_MODULES_UNLOAD_GLOBAL_H_

#include "ffijit/module.h"

namespace ffijit::details {
// Unloads the JIT module `mod`, counting the caller's handle and the global's argument.
void UnloadJitModuleGlobal(const Module& mod);
}  // namespace ffijit::details

#endif  // FFIJIT_JIT_ORC_MODULES_UNLOAD_GLOBAL_H_
