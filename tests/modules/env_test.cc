// The env API: per-thread streams, the tensor allocator, frontend signal hooks, and bad input.
#include <gtest/gtest.h>

#include <climits>
#include <thread>

#include "ffijit/c_env_api.h"
#include "ffijit/error.h"

namespace ffijit {
namespace {

TEST(EnvStreamTest, SetReturnsThePreviousStreamPerDevice) {
  int a = 0, b = 0;
  EXPECT_EQ(TVMFFIEnvGetStream(kDLCUDA, 0), nullptr);
  TVMFFIStreamHandle original = &b;
  ASSERT_EQ(TVMFFIEnvSetStream(kDLCUDA, 0, &a, &original), 0);
  EXPECT_EQ(original, nullptr);
  EXPECT_EQ(TVMFFIEnvGetStream(kDLCUDA, 0), &a);
  EXPECT_EQ(TVMFFIEnvGetStream(kDLCUDA, 1), nullptr);
  EXPECT_EQ(TVMFFIEnvGetStream(kDLROCM, 0), nullptr);
  ASSERT_EQ(TVMFFIEnvSetStream(kDLCUDA, 0, &b, &original), 0);
  EXPECT_EQ(original, &a);
  ASSERT_EQ(TVMFFIEnvSetStream(kDLCUDA, 0, nullptr, nullptr), 0);  // no out pointer is fine
  EXPECT_EQ(TVMFFIEnvGetStream(kDLCUDA, 0), nullptr);
}

TEST(EnvStreamTest, StreamsArePerThread) {
  int a = 0;
  ASSERT_EQ(TVMFFIEnvSetStream(kDLCUDA, 3, &a, nullptr), 0);
  TVMFFIStreamHandle seen = &a;
  std::thread([&] { seen = TVMFFIEnvGetStream(kDLCUDA, 3); }).join();
  EXPECT_EQ(seen, nullptr);
  EXPECT_EQ(TVMFFIEnvGetStream(kDLCUDA, 3), &a);
  ASSERT_EQ(TVMFFIEnvSetStream(kDLCUDA, 3, nullptr, nullptr), 0);
}

TEST(EnvStreamTest, LargeIdsNeedNoTableAndNegativeIdsAreErrors) {
  int a = 0;
  ASSERT_EQ(TVMFFIEnvSetStream(INT32_MAX, INT32_MAX, &a, nullptr), 0);
  EXPECT_EQ(TVMFFIEnvGetStream(INT32_MAX, INT32_MAX), &a);
  ASSERT_EQ(TVMFFIEnvSetStream(INT32_MAX, INT32_MAX, nullptr, nullptr), 0);

  TVMFFIStreamHandle original = &a;
  EXPECT_EQ(TVMFFIEnvSetStream(-1, 0, &a, &original), -1);
  Error type_error = Error::MoveFromRaised();
  EXPECT_EQ(type_error.kind(), "ValueError");
  EXPECT_EQ(type_error.message(), "TVMFFIEnvSetStream: negative device type -1");
  EXPECT_EQ(original, &a) << "untouched on failure";
  EXPECT_EQ(TVMFFIEnvSetStream(0, -5, &a, nullptr), -1);
  EXPECT_EQ(Error::MoveFromRaised().message(), "TVMFFIEnvSetStream: negative device id -5");
  EXPECT_EQ(TVMFFIEnvGetStream(-1, 0), nullptr);
  EXPECT_EQ(TVMFFIEnvGetStream(0, -1), nullptr);
}

int AllocatorA(DLTensor*, DLManagedTensorVersioned**, void*,
               void (*)(void*, const char*, const char*)) {
  return 0;
}
int AllocatorB(DLTensor*, DLManagedTensorVersioned**, void*,
               void (*)(void*, const char*, const char*)) {
  return 0;
}

TEST(EnvAllocatorTest, ThreadLocalFirstThenGlobalAndTheOriginalIsThePreviousOne) {
  EXPECT_EQ(TVMFFIEnvGetTensorAllocator(), nullptr);
  DLPackTensorAllocator original = AllocatorB;
  ASSERT_EQ(TVMFFIEnvSetTensorAllocator(AllocatorA, 0, &original), 0);
  EXPECT_EQ(original, nullptr) << "the previous allocator, not the new one";
  EXPECT_EQ(TVMFFIEnvGetTensorAllocator(), &AllocatorA);
  DLPackTensorAllocator other_thread = AllocatorA;
  std::thread([&] { other_thread = TVMFFIEnvGetTensorAllocator(); }).join();
  EXPECT_EQ(other_thread, nullptr) << "not written to the global context";

  ASSERT_EQ(TVMFFIEnvSetTensorAllocator(AllocatorB, 1, &original), 0);
  EXPECT_EQ(original, &AllocatorA);
  std::thread([&] { other_thread = TVMFFIEnvGetTensorAllocator(); }).join();
  EXPECT_EQ(other_thread, &AllocatorB) << "the global one, for threads without their own";
  ASSERT_EQ(TVMFFIEnvSetTensorAllocator(AllocatorA, 0, nullptr), 0);
  EXPECT_EQ(TVMFFIEnvGetTensorAllocator(), &AllocatorA) << "this thread's own first";

  ASSERT_EQ(TVMFFIEnvSetTensorAllocator(nullptr, 1, nullptr), 0);
  EXPECT_EQ(TVMFFIEnvGetTensorAllocator(), nullptr);
}

int pending_signal = 0;
int ensure_calls = 0;
int release_calls = 0;
void* release_state = nullptr;
int CheckSignalsHook() {
  return pending_signal;
}
void* EnsureHook() {
  ++ensure_calls;
  return &ensure_calls;
}
void ReleaseHook(void* state) {
  ++release_calls;
  release_state = state;
}

TEST(EnvSignalsTest, TheFrontendHookDecides) {
  EXPECT_EQ(TVMFFIEnvCheckSignals(), 0) << "no hook: no signal";
  ASSERT_EQ(TVMFFIEnvRegisterCAPI("PyErr_CheckSignals", reinterpret_cast<void*>(CheckSignalsHook)),
            0);
  pending_signal = 0;
  EXPECT_EQ(TVMFFIEnvCheckSignals(), 0);
  pending_signal = 1;
  EXPECT_EQ(TVMFFIEnvCheckSignals(), -1);
  // With the lock hooks, the check runs between Ensure and Release, and Release gets Ensure's
  // state.
  ASSERT_EQ(TVMFFIEnvRegisterCAPI("PyGILState_Ensure", reinterpret_cast<void*>(EnsureHook)), 0);
  ASSERT_EQ(TVMFFIEnvRegisterCAPI("PyGILState_Release", reinterpret_cast<void*>(ReleaseHook)), 0);
  EXPECT_EQ(TVMFFIEnvCheckSignals(), -1);
  EXPECT_EQ(ensure_calls, 1);
  EXPECT_EQ(release_calls, 1);
  EXPECT_EQ(release_state, &ensure_calls);
  pending_signal = 0;
  EXPECT_EQ(TVMFFIEnvCheckSignals(), 0);
  EXPECT_EQ(release_calls, 2);
  // Unregistering (NULL) turns the check off again.
  ASSERT_EQ(TVMFFIEnvRegisterCAPI("PyErr_CheckSignals", nullptr), 0);
  ASSERT_EQ(TVMFFIEnvRegisterCAPI("PyGILState_Ensure", nullptr), 0);
  ASSERT_EQ(TVMFFIEnvRegisterCAPI("PyGILState_Release", nullptr), 0);
  pending_signal = 1;
  EXPECT_EQ(TVMFFIEnvCheckSignals(), 0);
  pending_signal = 0;
}

TEST(EnvSignalsTest, UnknownApiNamesAreValueErrors) {
  EXPECT_EQ(TVMFFIEnvRegisterCAPI("PyErr_Occurred", nullptr), -1);
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("Unknown env API PyErr_Occurred"), std::string::npos)
      << error.message();
  EXPECT_EQ(TVMFFIEnvRegisterCAPI(nullptr, nullptr), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  EXPECT_EQ(TVMFFIEnvModRegisterContextSymbol(nullptr, nullptr), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
}

}  // namespace
}  // namespace ffijit
