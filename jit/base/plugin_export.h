// FFIJIT_JIT_PLUGIN_API marks the few internals of libffijit_jit that its LLVM plugin
// (libffijit_orc, orc_plugin.h) calls: exported so that the plugin links against them, declared
// only in these internal headers, and no part of the public API (include/ffijit/export.h).
#ifndef FFIJIT_JIT_BASE_PLUGIN_EXPORT_H_
#define FFIJIT_JIT_BASE_PLUGIN_EXPORT_H_

#include "ffijit/export.h"

#define FFIJIT_JIT_PLUGIN_API FFIJIT_JIT_API

#endif  // FFIJIT_JIT_BASE_PLUGIN_EXPORT_H_
