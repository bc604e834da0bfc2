// Errors: the exception type, Error objects, the thread-local raised slot, tracebacks.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "ffijit/ffijit.h"

namespace ffijit {
namespace {

TEST(ErrorTest, ObjectRoundTripKeepsKindMessageTraceback) {
  Error error("ValueError", "bad value", "trace\n");
  EXPECT_STREQ(error.what(), "ValueError: bad value");
  TVMFFIObjectHandle handle = error.ToObject();
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(static_cast<TVMFFIObject*>(handle)->type_index, kTVMFFIError);
  Error back = Error::FromObject(handle);
  EXPECT_EQ(back.kind(), "ValueError");
  EXPECT_EQ(back.message(), "bad value");
  EXPECT_EQ(back.traceback(), "trace\n");
  // The cell's update_traceback replaces the traceback in place.
  auto* cell = reinterpret_cast<TVMFFIErrorCell*>(static_cast<TVMFFIObject*>(handle) + 1);
  TVMFFIByteArray more{"more trace\n", 11};
  cell->update_traceback(handle, &more);
  EXPECT_EQ(Error::FromObject(handle).traceback(), "more trace\n");
  ASSERT_EQ(TVMFFIObjectDecRef(handle), 0);
}

TEST(ErrorTest, RaisedSlotIsPerThreadAndTakenOnce) {
  Error("KeyError", "main thread").SetRaised();
  std::thread other([] {
    TVMFFIObjectHandle handle = nullptr;
    TVMFFIErrorMoveFromRaised(&handle);
    EXPECT_EQ(handle, nullptr);  // nothing raised on this thread
    TVMFFIErrorSetRaisedFromCStr("TypeError", "other thread");
    EXPECT_EQ(Error::MoveFromRaised().message(), "other thread");
  });
  other.join();
  Error taken = Error::MoveFromRaised();
  EXPECT_EQ(taken.kind(), "KeyError");
  EXPECT_EQ(taken.message(), "main thread");
  Error none = Error::MoveFromRaised();
  EXPECT_EQ(none.kind(), "RuntimeError");
  EXPECT_NE(none.message().find("without raising"), std::string::npos);
}

TEST(ErrorTest, RaisingTwiceKeepsTheLatestAndReleasesTheFirst) {
  TVMFFIObjectHandle first = Error("A", "first").ToObject();
  TVMFFIErrorSetRaised(first);
  EXPECT_EQ(static_cast<TVMFFIObject*>(first)->strong_ref_count, 2u);
  TVMFFIErrorSetRaisedFromCStr("B", "second");
  EXPECT_EQ(static_cast<TVMFFIObject*>(first)->strong_ref_count, 1u);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "B");
  TVMFFIObjectDecRef(first);
}

TEST(ErrorTest, BadInputsToErrorFunctions) {
  TVMFFIErrorSetRaisedFromCStr("ValueError", "pending");
  TVMFFIErrorSetRaised(nullptr);  // clears the slot
  TVMFFIObjectHandle cleared = reinterpret_cast<TVMFFIObjectHandle>(1);
  TVMFFIErrorMoveFromRaised(&cleared);
  EXPECT_EQ(cleared, nullptr);
  Array not_an_error{1};
  TVMFFIErrorSetRaised(not_an_error.get());
  EXPECT_EQ(Error::MoveFromRaised().kind(), "TypeError");
  TVMFFIErrorMoveFromRaised(nullptr);  // ignored, no crash
  TVMFFIErrorSetRaisedFromCStr(nullptr, nullptr);
  Error defaulted = Error::MoveFromRaised();
  EXPECT_EQ(defaulted.kind(), "RuntimeError");
  EXPECT_EQ(defaulted.message(), "");
  Error from_array = Error::FromObject(not_an_error.get());
  EXPECT_EQ(from_array.kind(), "TypeError");
  EXPECT_EQ(Error::FromObject(nullptr).kind(), "RuntimeError");
  TVMFFIObjectHandle created = TVMFFIErrorCreate(nullptr, nullptr, nullptr);
  ASSERT_NE(created, nullptr);
  EXPECT_EQ(Error::FromObject(created).kind(), "");
  TVMFFIObjectDecRef(created);
}

TEST(ErrorTest, TracebackFormatsALine) {
  const TVMFFIByteArray* line = TVMFFITraceback("file.cc", 12, "Func", 0);
  EXPECT_EQ(std::string(line->data, line->size), "  File \"file.cc\", line 12, in Func\n");
  line = TVMFFITraceback(nullptr, 1, nullptr, 1);
  EXPECT_NE(std::string(line->data, line->size).find("<unknown>"), std::string::npos);
}

}  // namespace
}  // namespace ffijit
