// libFuzzer target: the JIT's LLVM IR loader (JitModule::AddIR), bitcode or text, which parses,
// verifies, optimises, compiles and links the module.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ffijit/error.h"
#include "ffijit/jit_module.h"
#include "orc/jit_module.h"

// Any input either loads (then the module is released again) or fails with an ffijit::Error of
// kind ValueError (malformed or foreign IR) or RuntimeError (code generation or a link failure).
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ffijit::orc::SetRunStaticInitializers(false);  // never run a fuzzed object's code
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    ffijit::JitModule mod = ffijit::JitModule::Create("fuzz");
    mod.AddIR(bytes, "fuzz.bc");
  } catch (const ffijit::Error& e) {
    if (e.kind() != "ValueError" && e.kind() != "RuntimeError") std::abort();
  }
  return 0;
}
