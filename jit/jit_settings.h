// The JIT settings every build has, LLVM or not: the tiering policy a new function gets and the
// log where JIT problems are reported.
#ifndef FFIJIT_JIT_JIT_SETTINGS_H_
#define FFIJIT_JIT_JIT_SETTINGS_H_

#include <string>

#include "ffijit/jit.h"

namespace ffijit {

// The policy for a function registered now on this thread: a live ScopedJitOptions, else the
// default (SetDefaultJitOptions, initially from FFIJIT_JIT).
JitOptions JitOptionsForNewFunction();

// Reports a JIT problem through the sink of SetJitLogSink, else once per distinct line on stderr
// (unless FFIJIT_JIT_LOG=0).
void LogJit(const std::string& line);

}  // namespace ffijit

#endif  // FFIJIT_JIT_JIT_SETTINGS_H_
