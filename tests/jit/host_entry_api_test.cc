// The host-entry C API's refusals, in every build: NULL arguments, unknown flags, functions not
// made from metadata, and a build without LLVM.
#include <gtest/gtest.h>

#include <string>

#include "ffijit/bridge.h"
#include "ffijit/error.h"
#include "ffijit/host_entry.h"
#include "ffijit/jit.h"

namespace ffijit::testing {
namespace {

extern "C" int64_t host_api_identity(int64_t x) {
  return x;
}

int Packed(void*, const TVMFFIAny*, int32_t, TVMFFIAny*) {
  return 0;
}

Error Refusal(TVMFFIObjectHandle func, const FFIJITHostModel* model, int flags) {
  FFIJITHostEntry* entry = nullptr;
  EXPECT_NE(FFIJITHostEntryCompile(func, model, flags, &entry), 0);
  EXPECT_EQ(entry, nullptr);
  return Error::MoveFromRaised();
}

TEST(HostEntryApi, RefusesBadArguments) {
  FFIJITHostModel model{};
  TVMFFIObjectHandle f = nullptr;
  ASSERT_EQ(
      FFIJITMakeFunction(reinterpret_cast<void*>(&host_api_identity),
                         R"({"a":["i64"],"r":["i64"],"v":1})", kFFIJITFormatJson, 0, "id", &f),
      0);
  Error null_func = Refusal(nullptr, &model, 0);
  EXPECT_EQ(null_func.kind(), "ValueError");
  EXPECT_NE(null_func.message().find("func"), std::string::npos) << null_func.message();
  EXPECT_EQ(Refusal(f, nullptr, 0).kind(), "ValueError");
  FFIJITHostEntry* entry = nullptr;
  EXPECT_NE(FFIJITHostEntryCompile(f, &model, 0, nullptr), 0);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  Error flags = Refusal(f, &model, 64);
  EXPECT_EQ(flags.kind(), "ValueError");
  EXPECT_NE(flags.message().find("unknown flags 64"), std::string::npos) << flags.message();
  EXPECT_EQ(entry, nullptr);

  TVMFFIObjectHandle packed = nullptr;
  ASSERT_EQ(TVMFFIFunctionCreate(nullptr, &Packed, nullptr, &packed), 0);
  Error not_bound = Refusal(packed, &model, 0);
  EXPECT_EQ(not_bound.kind(), "RuntimeError");
  EXPECT_NE(not_bound.message().find("not made from metadata"), std::string::npos)
      << not_bound.message();
  if (!JitAvailable()) {
    Error no_jit = Refusal(f, &model, 0);
    EXPECT_EQ(no_jit.kind(), "RuntimeError");
    EXPECT_NE(no_jit.message().find("without LLVM"), std::string::npos) << no_jit.message();
  }
  // Accessors and release accept NULL.
  EXPECT_EQ(FFIJITHostEntryAddress(nullptr), nullptr);
  EXPECT_EQ(FFIJITHostEntryCompileNanos(nullptr), 0);
  FFIJITHostEntryRelease(nullptr);
  TVMFFIObjectDecRef(packed);
  TVMFFIObjectDecRef(f);
}

}  // namespace
}  // namespace ffijit::testing
