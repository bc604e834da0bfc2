// libFuzzer target: the iree.abi JSON parser and ParseMetadata's detection and reflection dicts.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ffijit/error.h"
#include "ffijit/reflect/metadata.h"

// Any input either parses or raises a ValueError; what parses prints and re-parses to itself.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const ffijit::Signature sig = ffijit::ParseJson(text);
    const std::string printed = ffijit::PrintJson(sig);
    if (ffijit::ParseJson(printed) != sig) std::abort();
    if (ffijit::CanonicalString(sig).empty()) std::abort();
  } catch (const ffijit::Error& e) {
    if (e.kind() != "ValueError") std::abort();
  }
  try {
    ffijit::ParseMetadata(text);
  } catch (const ffijit::Error& e) {
    if (e.kind() != "ValueError") std::abort();
  }
  return 0;
}
