// Errors: the exception type, Error objects, the thread-local raised slot, tracebacks; on v0.1.13
// the 72-byte cell's backtrace modes, cause chain and extra context, and the new error functions.
#include <gtest/gtest.h>

#include <cstring>
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
  auto* cell = reinterpret_cast<TVMFFIErrorCell*>(static_cast<TVMFFIObject*>(handle) + 1);
  TVMFFIByteArray more{"more trace\n", 11};
#if FFIJIT_TVM_FFI_HAS_ERROR_CAUSE_CHAIN
  // update_backtrace replaces or appends; header code calls it through the cell.
  cell->update_backtrace(handle, &more, kTVMFFIBacktraceUpdateModeReplace);
  EXPECT_EQ(Error::FromObject(handle).traceback(), "more trace\n");
  TVMFFIByteArray older{"older\n", 6};
  cell->update_backtrace(handle, &older, kTVMFFIBacktraceUpdateModeAppend);
  EXPECT_EQ(Error::FromObject(handle).traceback(), "more trace\nolder\n");
  EXPECT_EQ(std::string(cell->backtrace.data, cell->backtrace.size), "more trace\nolder\n");
  EXPECT_EQ(cell->cause_chain, nullptr);
  EXPECT_EQ(cell->extra_context, nullptr);
#else
  // The cell's update_traceback replaces the traceback in place.
  cell->update_traceback(handle, &more);
  EXPECT_EQ(Error::FromObject(handle).traceback(), "more trace\n");
#endif
  ASSERT_EQ(TVMFFIObjectDecRef(handle), 0);
}

TEST(ErrorTest, RegisterAtLoadRunsTheBodyAndReportsAFailureWithoutThrowing) {
  int runs = 0;
  ::testing::internal::CaptureStderr();
  RegisterAtLoad("the counter", [&] { ++runs; });
  RegisterAtLoad("the broken part", [&] {
    ++runs;
    throw Error("MemoryError", "out of memory");
  });
  RegisterAtLoad("the odd part", [] { throw 7; });
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(err,
            "ffijit: cannot register the broken part: MemoryError: out of memory\n"
            "ffijit: cannot register the odd part\n");
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
  EXPECT_EQ(FFIJITHeaderStrongCount(static_cast<TVMFFIObject*>(first)), 2u);
  TVMFFIErrorSetRaisedFromCStr("B", "second");
  EXPECT_EQ(FFIJITHeaderStrongCount(static_cast<TVMFFIObject*>(first)), 1u);
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
#if FFIJIT_TVM_FFI_HAS_ERROR_CAUSE_CHAIN
  TVMFFIObjectHandle created = nullptr;
  ASSERT_EQ(TVMFFIErrorCreate(nullptr, nullptr, nullptr, &created), 0);
  ASSERT_NE(created, nullptr);
  EXPECT_EQ(Error::FromObject(created).kind(), "");
  TVMFFIObjectDecRef(created);
  EXPECT_NE(TVMFFIErrorCreate(nullptr, nullptr, nullptr, nullptr), 0);
#else
  TVMFFIObjectHandle created = TVMFFIErrorCreate(nullptr, nullptr, nullptr);
  ASSERT_NE(created, nullptr);
  EXPECT_EQ(Error::FromObject(created).kind(), "");
  TVMFFIObjectDecRef(created);
#endif
}

#if FFIJIT_TVM_FFI_HAS_ERROR_CAUSE_CHAIN
TVMFFIByteArray Bytes(const char* text) {
  return TVMFFIByteArray{text, std::char_traits<char>::length(text)};
}

TEST(ErrorTest, TheErrorObjectIs96BytesWithTheCellAt24) {
  const TVMFFIByteArray kind = Bytes("ValueError"), message = Bytes("m"), bt = Bytes("b\n");
  TVMFFIObjectHandle handle = nullptr;
  ASSERT_EQ(TVMFFIErrorCreate(&kind, &message, &bt, &handle), 0);
  const auto* bytes = static_cast<const char*>(handle);
  const auto* cell = reinterpret_cast<const TVMFFIErrorCell*>(bytes + 24);
  EXPECT_EQ(std::string(cell->kind.data, cell->kind.size), "ValueError");
  EXPECT_EQ(std::string(cell->message.data, cell->message.size), "m");
  EXPECT_EQ(std::string(cell->backtrace.data, cell->backtrace.size), "b\n");
  TVMFFIObjectHandle cause_at_80 = nullptr, context_at_88 = nullptr;
  std::memcpy(&cause_at_80, bytes + 80, sizeof(void*));
  std::memcpy(&context_at_88, bytes + 88, sizeof(void*));
  EXPECT_EQ(cause_at_80, nullptr);
  EXPECT_EQ(context_at_88, nullptr);
  TVMFFIObjectDecRef(handle);
}

TEST(ErrorTest, CauseChainAndExtraContextAreOwnedByTheCell) {
  const TVMFFIByteArray inner_kind = Bytes("KeyError"), inner_message = Bytes("inner");
  const TVMFFIByteArray outer_kind = Bytes("RuntimeError"), outer_message = Bytes("outer");
  const TVMFFIByteArray empty = Bytes("");
  TVMFFIObjectHandle cause = nullptr;
  ASSERT_EQ(TVMFFIErrorCreate(&inner_kind, &inner_message, &empty, &cause), 0);
  Array context{1, 2};
  TVMFFIObjectHandle outer = nullptr;
  ASSERT_EQ(TVMFFIErrorCreateWithCauseAndExtraContext(&outer_kind, &outer_message, &empty, cause,
                                                      context.get(), &outer),
            0);
  // Borrowed: the new error took references of its own.
  EXPECT_EQ(FFIJITHeaderStrongCount(static_cast<TVMFFIObject*>(cause)), 2u);
  EXPECT_EQ(FFIJITHeaderStrongCount(context.get()), 2u);
  const auto* cell =
      reinterpret_cast<const TVMFFIErrorCell*>(static_cast<TVMFFIObject*>(outer) + 1);
  EXPECT_EQ(cell->cause_chain, cause);
  EXPECT_EQ(cell->extra_context, context.get());
  TVMFFIObjectDecRef(outer);  // releases both
  EXPECT_EQ(FFIJITHeaderStrongCount(static_cast<TVMFFIObject*>(cause)), 1u);
  EXPECT_EQ(FFIJITHeaderStrongCount(context.get()), 1u);
  TVMFFIObjectDecRef(cause);
  // Neither is required.
  ASSERT_EQ(TVMFFIErrorCreateWithCauseAndExtraContext(&outer_kind, &outer_message, &empty, nullptr,
                                                      nullptr, &outer),
            0);
  TVMFFIObjectDecRef(outer);
}

TEST(ErrorTest, ACauseThatIsNotAnErrorIsATypeError) {
  const TVMFFIByteArray kind = Bytes("RuntimeError"), message = Bytes("outer");
  Array not_an_error{1};
  TVMFFIObjectHandle out = reinterpret_cast<TVMFFIObjectHandle>(1);
  ASSERT_EQ(TVMFFIErrorCreateWithCauseAndExtraContext(&kind, &message, nullptr, not_an_error.get(),
                                                      nullptr, &out),
            -1);
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "TypeError");
  EXPECT_NE(error.message().find("the cause is not an ffi.Error"), std::string::npos);
  EXPECT_EQ(FFIJITHeaderStrongCount(not_an_error.get()), 1u) << "nothing retained";
}

TEST(ErrorTest, SetRaisedFromPartsConcatenatesTheNonNullParts) {
  const char* parts[] = {"index ", nullptr, "7", " out of range"};
  TVMFFIErrorSetRaisedFromCStrParts("IndexError", parts, 4);
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "IndexError");
  EXPECT_EQ(error.message(), "index 7 out of range");
  TVMFFIErrorSetRaisedFromCStrParts(nullptr, nullptr, 3);
  Error empty = Error::MoveFromRaised();
  EXPECT_EQ(empty.kind(), "RuntimeError");
  EXPECT_EQ(empty.message(), "");
}

TEST(ErrorTest, BacktraceFormatsTheCallersFrame) {
  const TVMFFIByteArray* line = TVMFFIBacktrace("file.cc", 12, "Func", 0);
  EXPECT_EQ(std::string(line->data, line->size), "  File \"file.cc\", line 12, in Func\n");
  line = TVMFFIBacktrace(nullptr, 1, nullptr, 1);
  EXPECT_EQ(line->size, 0u) << "no frame without a file and function";
}
#else
TEST(ErrorTest, TracebackFormatsALine) {
  const TVMFFIByteArray* line = TVMFFITraceback("file.cc", 12, "Func", 0);
  EXPECT_EQ(std::string(line->data, line->size), "  File \"file.cc\", line 12, in Func\n");
  line = TVMFFITraceback(nullptr, 1, nullptr, 1);
  EXPECT_NE(std::string(line->data, line->size).find("<unknown>"), std::string::npos);
}
#endif

}  // namespace
}  // namespace ffijit
