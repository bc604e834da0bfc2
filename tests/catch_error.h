// CatchError: runs a body that must throw ffijit::Error and returns the error, recording a test
// failure (and returning an Error of kind "None") when nothing is thrown.
#ifndef FFIJIT_TESTS_CATCH_ERROR_H_
#define FFIJIT_TESTS_CATCH_ERROR_H_

#include <gtest/gtest.h>

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

}  // namespace ffijit_tests

#endif  // FFIJIT_TESTS_CATCH_ERROR_H_
