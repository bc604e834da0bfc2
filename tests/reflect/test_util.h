// Helpers shared by the reflection tests: corpus loading and error-expectation matchers.
#ifndef FFIJIT_TESTS_REFLECT_TEST_UTIL_H_
#define FFIJIT_TESTS_REFLECT_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "ffijit/error.h"

namespace ffijit::testing {

inline nlohmann::json LoadCorpus(const std::string& name) {
  const std::string path = std::string(FFIJIT_SOURCE_DIR) + "/tests/reflect/corpus/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

// Runs `fn`, expecting an ffijit::Error of `kind` whose message contains `needle`; returns the
// message (empty on failure, with the failure recorded).
template <typename Fn>
std::string ErrorOf(Fn&& fn, const std::string& needle, const std::string& kind = "ValueError") {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(e.message().find(needle), std::string::npos)
        << "message `" << e.message() << "` lacks `" << needle << "`";
    return e.message();
  }
  ADD_FAILURE() << "expected a " << kind << " containing `" << needle << "`";
  return "";
}

}  // namespace ffijit::testing

#endif  // FFIJIT_TESTS_REFLECT_TEST_UTIL_H_
