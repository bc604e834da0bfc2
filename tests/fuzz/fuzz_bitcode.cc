// libFuzzer target: the JIT's LLVM IR loader (JitModule::AddIR), bitcode or text, which parses,
// verifies, optimises, compiles and links the module.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ffijit/error.h"
#include "ffijit/jit/jit_module.h"
#include "orc/modules/jit_module.h"

// LLVM's binary bitcode reader trusts the counts in its records: a crafted count makes it allocate
// gigabytes (this fuzzer found a 12 GiB request in llvm::AttributeList::get within seconds). That
// is LLVM's reader, which ffijit cannot bound from outside, so binary bitcode is not fuzzed here
// and the guide (12.10) says to load only bitcode you trust; the text form (.ll) is fuzzed.
// Any input either loads (then the module is unloaded again) or fails with an ffijit::Error of
// kind ValueError (malformed or foreign IR) or RuntimeError (code generation or a link failure).
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ffijit::orc::SetRunStaticInitializers(false);  // never run a fuzzed object's code
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.substr(0, 4) == "BC\xC0\xDE" || bytes.substr(0, 4) == "\xDE\xC0\x17\x0B") return 0;
  ffijit::JitModule mod = ffijit::JitModule::Create("fuzz");
  try {
    mod.AddIR(bytes, "fuzz.ll");
  } catch (const ffijit::Error& e) {
    if (e.kind() != "ValueError" && e.kind() != "RuntimeError") std::abort();
  }
  // A released module's code stays until exit (jit_module.h): free each input's at once (no
  // initialiser ran, so no thread holds its thread_locals and the unload is not refused).
  try {
    mod.Unload();
  } catch (const ffijit::Error& e) {
    if (e.kind() != "RuntimeError") std::abort();
  }
  return 0;
}
