// The differential suites' comparison of one packed call across executors.
#include "differential.h"

#include <gtest/gtest.h>

#include "any_fixtures.h"
#include "ffijit/error.h"

namespace ffijit::testing {

CallOutcome CallPacked(TVMFFISafeCallType entry, void* handle, std::vector<TVMFFIAny>& args) {
  TVMFFIAny result{};
  CallOutcome outcome;
  outcome.status = entry(handle, args.data(), static_cast<int32_t>(args.size()), &result);
  if (outcome.status == 0) {
    outcome.value = ffijit_tests::Canonical(result);
    if (result.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(result.v_obj);
  } else {
    Error e = Error::MoveFromRaised();
    outcome.value = e.kind() + ": " + e.message();
    // A failed call leaves the result as the caller set it.
    outcome.value += " / result " + ffijit_tests::Canonical(result);
  }
  return outcome;
}

bool SameOutcome(const CallOutcome& a, const CallOutcome& b) {
  return a.status == b.status && a.value == b.value && a.called == b.called &&
         (!a.called || a.arguments == b.arguments);
}

std::string DescribeOutcome(const CallOutcome& outcome) {
  return std::to_string(outcome.status) + " " + outcome.value + " args " +
         (outcome.called ? outcome.arguments : "-");
}

void ExpectAgree(const std::string& context, const CallPlan& plan,
                 const std::vector<NamedOutcome>& runs, int64_t* failures) {
  bool same = true;
  for (size_t i = 1; i < runs.size(); ++i)
    same = same && SameOutcome(runs[0].second, runs[i].second);
  if (same || ++*failures > 10) return;
  std::string text = context + "\n  plan: " + plan.declaration;
  for (const NamedOutcome& run : runs) {
    text += "\n  " + run.first + ": " + DescribeOutcome(run.second);
  }
  ADD_FAILURE() << text;
}

}  // namespace ffijit::testing
