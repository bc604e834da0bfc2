// Count-taking container constructors refuse a count no storage can hold before reading the
// caller's arrays (FFIJITMapCreate used to read past them until it faulted).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ffijit/ffijit.h"

namespace ffijit {
namespace {

constexpr int64_t kImpossibleCount = int64_t{1} << 62;

// The error a failed C call raised, with its kind and message.
Error TakeRaised(int status) {
  EXPECT_EQ(status, -1);
  return Error::MoveFromRaised();
}

// Every call below gets one well-formed element and a count far beyond it: a constructor that
// read the arrays first would fault or report a malformed value instead.
std::vector<TVMFFIAny> OneInt() {
  TVMFFIAny value{};
  value.type_index = kTVMFFIInt;
  value.v_int64 = 1;
  return {value};
}

TEST(ContainerCountTest, ArrayRefusesAnImpossibleCount) {
  std::vector<TVMFFIAny> items = OneInt();
  TVMFFIObjectHandle out = nullptr;
  Error error = TakeRaised(FFIJITArrayCreate(items.data(), kImpossibleCount, &out));
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "FFIJITArrayCreate: size 4611686018427387904 too large");
  EXPECT_EQ(out, nullptr);
}

TEST(ContainerCountTest, MapRefusesAnImpossibleCountBeforeReadingTheArrays) {
  std::vector<TVMFFIAny> keys = OneInt();
  std::vector<TVMFFIAny> values = OneInt();
  TVMFFIObjectHandle out = nullptr;
  Error error = TakeRaised(FFIJITMapCreate(keys.data(), values.data(), kImpossibleCount, &out));
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "FFIJITMapCreate: size 4611686018427387904 too large");
  EXPECT_EQ(out, nullptr);
  error = TakeRaised(FFIJITMapCreate(keys.data(), values.data(), INT64_MAX, &out));
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("too large"), std::string::npos) << error.message();
  error = TakeRaised(FFIJITMapCreate(keys.data(), values.data(), -1, &out));
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "FFIJITMapCreate: negative size -1");
}

TEST(ContainerCountTest, ShapeRefusesAnImpossibleCountInTheSameWords) {
  int64_t dims[1] = {3};
  TVMFFIObjectHandle out = nullptr;
  const size_t count = SIZE_MAX / sizeof(int64_t);
  Error error = TakeRaised(FFIJITShapeCreate(dims, count, &out));
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "FFIJITShapeCreate: size " + std::to_string(count) + " too large");
  EXPECT_EQ(out, nullptr);
}

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
TEST(ContainerCountTest, ListAndDictRefuseAnImpossibleCount) {
  std::vector<TVMFFIAny> keys = OneInt();
  std::vector<TVMFFIAny> values = OneInt();
  TVMFFIObjectHandle out = nullptr;
  Error error = TakeRaised(FFIJITListCreate(keys.data(), kImpossibleCount, &out));
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "FFIJITListCreate: size 4611686018427387904 too large");
  error = TakeRaised(FFIJITDictCreate(keys.data(), values.data(), kImpossibleCount, &out));
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "FFIJITDictCreate: size 4611686018427387904 too large");
  error = TakeRaised(FFIJITListCreate(keys.data(), -2, &out));
  EXPECT_EQ(error.message(), "FFIJITListCreate: negative size -2");
  EXPECT_EQ(out, nullptr);
}
#endif

}  // namespace
}  // namespace ffijit
