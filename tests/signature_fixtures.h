// Test helper: a Signature from its argument and result types, in one expression.
#ifndef FFIJIT_TESTS_SIGNATURE_FIXTURES_H_
#define FFIJIT_TESTS_SIGNATURE_FIXTURES_H_

#include <utility>
#include <vector>

#include "ffijit/reflect/signature.h"

namespace ffijit_tests {

inline ffijit::Signature Sig(std::vector<ffijit::TypePtr> args,
                             std::vector<ffijit::TypePtr> results,
                             ffijit::CallConvention convention = ffijit::CallConvention::kPlain) {
  ffijit::Signature sig;
  sig.args = std::move(args);
  sig.results = std::move(results);
  sig.convention = convention;
  return sig;
}

}  // namespace ffijit_tests

#endif  // FFIJIT_TESTS_SIGNATURE_FIXTURES_H_
