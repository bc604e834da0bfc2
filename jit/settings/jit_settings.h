// The JIT settings every build has, LLVM or not: the tiering policy a new function gets, the
// default engine's options, and the log where JIT problems are reported. Every FFIJIT_JIT*
// environment variable is read here.
#ifndef FFIJIT_JIT_SETTINGS_JIT_SETTINGS_H_
#define FFIJIT_JIT_SETTINGS_JIT_SETTINGS_H_

#include <cstdint>
#include <string>

#include "base/plugin_export.h"
#include "ffijit/jit/jit.h"

namespace ffijit {

// The policy for a function registered now on this thread: a live ScopedJitOptions, else the
// default (SetDefaultJitOptions, initially from FFIJIT_JIT).
FFIJIT_JIT_PLUGIN_API JitOptions JitOptionsForNewFunction();

// The calls a function makes on its first thunk (stencil or cold tier) before its hot compile is
// queued; 0: never (hot_after_calls <= 0, or JitPolicy::kStencils, which queues no LLVM compile).
inline int64_t HotAfterCalls(const JitOptions& options) {
  if (options.policy == JitPolicy::kStencils) return 0;
  return options.hot_after_calls > 0 ? options.hot_after_calls : 0;
}

// The options of JitEngine::Default(): FFIJIT_JIT_CACHE_DIR (the persistent cache) and
// FFIJIT_JIT_HOT_MAX (a count >= 0; anything else keeps the default and says so on the JIT log).
FFIJIT_JIT_PLUGIN_API JitEngineOptions DefaultEngineOptions();

// Reports a JIT problem through the sink of SetJitLogSink, else once per distinct line on stderr
// (unless FFIJIT_JIT_LOG=0).
FFIJIT_JIT_PLUGIN_API void LogJit(const std::string& line);

}  // namespace ffijit

#endif  // FFIJIT_JIT_SETTINGS_JIT_SETTINGS_H_
