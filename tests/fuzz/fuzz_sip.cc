// libFuzzer target: the SIP parser, printer, index paths, builder and Combine.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ffijit/error.h"
#include "ffijit/reflect/metadata.h"

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

// A Signature leaf order: empty, or a permutation of 0..leaves-1 other than the identity.
bool IsLeafOrder(const std::vector<int32_t>& order, size_t leaves) {
  if (order.empty()) return true;
  if (order.size() != leaves) return false;
  std::vector<bool> seen(leaves, false);
  bool identity = true;
  for (size_t k = 0; k < leaves; ++k) {
    const int32_t at = order[k];
    if (at < 0 || static_cast<size_t>(at) >= leaves || seen[static_cast<size_t>(at)]) return false;
    seen[static_cast<size_t>(at)] = true;
    identity = identity && static_cast<size_t>(at) == k;
  }
  return !identity;
}

}  // namespace

// Any input either parses or raises a ValueError. What parses prints back to a string that parses
// to the same tree; its index paths rebuild a tree with the same paths; Combine with a raw
// signature of matching arity succeeds (its leaf orders empty or a non-identity permutation) or
// raises a ValueError.
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
    if (!IsLeafOrder(sig.arg_leaf_order, in.size()) ||
        !IsLeafOrder(sig.result_leaf_order, out.size())) {
      std::abort();
    }
    ffijit::CanonicalString(sig);
    ffijit::PrintJson(sig);
  } catch (const ffijit::Error& e) {
    if (e.kind() != "ValueError") std::abort();
  }
  return 0;
}
