// The comparison the differential suites make: one packed call on one executor (an entry point
// and its handle) reduced to comparable text -- status, result or error, whether the native was
// reached and what it saw -- and the check that every executor's run agrees with the
// interpreter's.
#ifndef FFIJIT_TESTS_ORC_DIFFERENTIAL_H_
#define FFIJIT_TESTS_ORC_DIFFERENTIAL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ffijit/c_api.h"
#include "plan/call_plan.h"

namespace ffijit::testing {

struct CallOutcome {
  int status = 0;
  std::string value;      // the result, or "Kind: message / result <the result slot>"
  bool called = false;    // whether the native was reached
  std::string arguments;  // what it saw (DescribeParameterWords), when it was reached
};

// Calls entry(handle, args, &result) once and fills status and value; an object result is
// released. The caller fills `called` and `arguments` from its recording native.
CallOutcome CallPacked(TVMFFISafeCallType entry, void* handle, std::vector<TVMFFIAny>& args);

// Same status, value and reach, and (when reached) the same arguments.
bool SameOutcome(const CallOutcome& a, const CallOutcome& b);
std::string DescribeOutcome(const CallOutcome& outcome);

// One executor's run of a call: its name (for messages) and outcome.
using NamedOutcome = std::pair<std::string, CallOutcome>;

// Every run must agree with the first (the interpreter's). A case where one does not counts once
// in *failures; the first ten are reported with the plan and every run.
void ExpectAgree(const std::string& context, const CallPlan& plan,
                 const std::vector<NamedOutcome>& runs, int64_t* failures);

}  // namespace ffijit::testing

#endif  // FFIJIT_TESTS_ORC_DIFFERENTIAL_H_
