// libFuzzer target: the raw signature parser, mangler and readable form.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ffijit/error.h"
#include "ffijit/reflect/metadata.h"

// Any input either parses or raises a ValueError. What parses has a raw form that reads back to
// the same signature, and a readable form.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ffijit::Signature sig;
  try {
    sig = ffijit::ParseRaw(text);
  } catch (const ffijit::Error& e) {
    if (e.kind() != "ValueError") std::abort();
    return 0;
  }
  if (ffijit::ParseRaw(ffijit::PrintRaw(sig)) != sig) std::abort();
  if (ffijit::ReadableRaw(text).empty()) std::abort();
  if (ffijit::ParseJson(ffijit::PrintJson(sig)) != sig) std::abort();
  return 0;
}
