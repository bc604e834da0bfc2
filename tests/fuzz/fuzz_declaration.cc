// libFuzzer target: the iree.abi.declaration reader and printer.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ffijit/error.h"
#include "ffijit/reflect/metadata.h"

// Any input either parses or raises a ValueError. What parses prints as a declaration (or is
// refused with a ValueError) that reads back to the same signature and name, and through JSON
// (which refuses output storage, having no way to state it).
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ffijit::Signature sig;
  std::string name;
  try {
    sig = ffijit::ParseDeclaration(text, &name);
  } catch (const ffijit::Error& e) {
    if (e.kind() != "ValueError") std::abort();
    return 0;
  }
  if (sig.output_storage.empty()) {
    if (ffijit::ParseJson(ffijit::PrintJson(sig)) != sig) std::abort();
  } else {
    try {
      ffijit::PrintJson(sig);
      std::abort();
    } catch (const ffijit::Error& e) {
      if (e.kind() != "ValueError") std::abort();
    }
  }
  std::string printed;
  try {
    printed = ffijit::PrintDeclaration(sig, name);
  } catch (const ffijit::Error& e) {
    // Quoted function names and names IREE's printer never writes have no printed form.
    if (e.kind() != "ValueError") std::abort();
    return 0;
  }
  std::string name2;
  if (ffijit::ParseDeclaration(printed, &name2) != sig || name2 != name) std::abort();
  if (ffijit::PrintDeclaration(ffijit::ParseDeclaration(printed), name) != printed) std::abort();
  return 0;
}
