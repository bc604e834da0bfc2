// A fixture of the Python suites (test_tier.py): the hot tier forced from Python, which has no API
// for it (a function goes hot after enough calls, compiled in the background), so that a test
// reaches it without waiting on the background compiler. Loaded with ctypes after `import ffijit`,
// so it shares the package's libffijit_jit.
#include "ffijit/error.h"
#include "ffijit/jit/jit.h"

// JitEngine::CompileHotNow on `func` (borrowed): 0, or -1 with the error raised.
extern "C" __attribute__((visibility("default"))) int ffijit_test_compile_hot_now(
    TVMFFIObjectHandle func) {
  return ffijit::GuardCBoundary([&] {
    ffijit::details::RequireNonNull(func, "ffijit_test_compile_hot_now", "func");
    TVMFFIObjectIncRef(func);
    ffijit::JitEngine::Default().CompileHotNow(ffijit::Function::Adopt(func));
  });
}
