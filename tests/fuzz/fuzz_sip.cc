// libFuzzer target: the SIP parser, printer, index paths, builder and Combine.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ffijit/error.h"
#include "ffijit/metadata.h"

namespace {

// Paths of a parsed SIP, or nothing when its raw indices are not exactly 0..n-1.
bool Paths(const ffijit::SipSignature& sip, std::vector<ffijit::SipPath>* in,
           std::vector<ffijit::SipPath>* out) {
  try {
    *in = sip.InputPaths();
    *out = sip.ResultPaths();
    return true;
  } catch (const ffijit::Error& e) {
    if (e.kind() != "ValueError") std::abort();
    return false;
  }
}

}  // namespace

// Any input either parses or raises a ValueError. What parses prints back to a string that parses
// to the same tree; its index paths rebuild a tree with the same paths; Combine with a raw
// signature of matching arity succeeds or raises a ValueError.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ffijit::SipSignature sip;
  try {
    sip = ffijit::ParseSip(text);
  } catch (const ffijit::Error& e) {
    if (e.kind() != "ValueError") std::abort();
    return 0;
  }
  const std::string printed = ffijit::PrintSip(sip);
  if (ffijit::PrintSip(ffijit::ParseSip(printed)) != printed) std::abort();
  ffijit::ReadableSip(sip.inputs);
  ffijit::ReadableSip(sip.results);

  std::vector<ffijit::SipPath> in, out;
  if (!Paths(sip, &in, &out)) return 0;
  const ffijit::SipSignature rebuilt = ffijit::SipSignature::FromIndexPaths(in, out);
  if (rebuilt.InputPaths() != in || rebuilt.ResultPaths() != out) std::abort();

  ffijit::Signature raw;
  for (size_t i = 0; i < in.size(); ++i)
    raw.args.push_back(ffijit::Type::Scalar(ffijit::ScalarKind::kI32));
  for (size_t i = 0; i < out.size(); ++i) raw.results.push_back(ffijit::Type::Object());
  try {
    const ffijit::Signature sig = ffijit::Combine(raw, sip);
    ffijit::CanonicalString(sig);
    ffijit::PrintJson(sig);
  } catch (const ffijit::Error& e) {
    if (e.kind() != "ValueError") std::abort();
  }
  return 0;
}
