// FinishesInTime: runs a body on its own thread and reports whether it returned in time, so a test
// of a would-be deadlock fails instead of hanging the suite.
#ifndef FFIJIT_TESTS_FINISHES_IN_TIME_H_
#define FFIJIT_TESTS_FINISHES_IN_TIME_H_

#include <chrono>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <thread>

namespace ffijit_tests {

// True when `body` returned (its exception, if any, is rethrown here) within `limit`. A body that
// deadlocked is left behind on its detached thread: the test fails, and the process goes on.
inline bool FinishesInTime(std::function<void()> body,
                           std::chrono::seconds limit = std::chrono::seconds(20)) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread([body = std::move(body), done] {
    try {
      body();
      done->set_value();
    } catch (...) {
      done->set_exception(std::current_exception());
    }
  }).detach();
  if (finished.wait_for(limit) != std::future_status::ready) return false;
  finished.get();
  return true;
}

}  // namespace ffijit_tests

#endif  // FFIJIT_TESTS_FINISHES_IN_TIME_H_
