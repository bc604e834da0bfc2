// libFuzzer target: the JIT's object-file loader (JitModule::AddObject), which checks, links and
// initialises an ELF relocatable object.
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string_view>

#include "elf_mutator.h"

#include "ffijit/error.h"
#include "ffijit/jit/jit_module.h"
#include "orc/modules/jit_module.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

// Half the mutations rewrite an ELF field that JITLink trusts (elf_mutator.h), half are
// libFuzzer's byte mutations; inputs that are not ELF64 objects get libFuzzer's only.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::minstd_rand rng(seed);
  if (rng() % 2 == 0 && ffijit_fuzz::MutateElfFields(data, size, rng)) return size;
  return LLVMFuzzerMutate(data, size, max_size);
}

// Any input either loads (then the module is unloaded again) or fails with an ffijit::Error of
// kind ValueError (not a loadable object) or RuntimeError (a link failure).
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ffijit::orc::SetRunStaticInitializers(false);  // never run a fuzzed object's code
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ffijit::JitModule mod = ffijit::JitModule::Create("fuzz");
  try {
    mod.AddObject(bytes, "fuzz.o");
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
