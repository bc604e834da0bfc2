// CatchError: runs a body that must throw ffijit::Error and returns the error, recording a test
// failure (and returning an Error of kind "None") when nothing is thrown. ExpectRaisedExcerpt:
// the raised error quotes a 1 MiB input as a bounded excerpt.
#ifndef FFIJIT_TESTS_CATCH_ERROR_H_
#define FFIJIT_TESTS_CATCH_ERROR_H_

#include <gtest/gtest.h>

#include <string>

#include "ffijit/error.h"

namespace ffijit_tests {

template <typename F>
ffijit::Error CatchError(F&& body) {
  try {
    body();
  } catch (const ffijit::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error was thrown";
  return ffijit::Error("None", "");
}

// Takes the thread's raised error and checks that it quotes a 1,048,576-byte input as an excerpt;
// `what` names the call in a failure.
inline void ExpectRaisedExcerpt(const char* what) {
  ffijit::Error e = ffijit::Error::MoveFromRaised();
  EXPECT_LT(e.message().size(), 400u) << what;
  EXPECT_NE(e.message().find("\xe2\x80\xa6 (1048576 bytes)"), std::string::npos) << what;
}

}  // namespace ffijit_tests

#endif  // FFIJIT_TESTS_CATCH_ERROR_H_
