// FFIJITMakeNativeCallback: native callbacks from C, over any Function, with their keep-alive.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "ffijit/error.h"
#include "ffijit/function.h"
#include "ffijit/jit/bridge.h"

namespace ffijit::testing {
namespace {

constexpr const char* kI64ToI64 = R"({"a":["i64"],"r":["i64"]})";

// The raised error's "Kind: message", after a C call returned -1.
std::string TakeRaised() {
  return Error::MoveFromRaised().what();
}

Function Doubler() {
  return Function::FromTyped([](int64_t x) { return x * 2; });
}

TEST(CallbackCApi, APointerCallsTheFunctionWhileTheKeepaliveLives) {
  Function doubled = Doubler();
  void* pointer = nullptr;
  TVMFFIObjectHandle keepalive = nullptr;
  ASSERT_EQ(FFIJITMakeNativeCallback(doubled.get(), kI64ToI64, kFFIJITFormatJson, 0, &pointer,
                                     &keepalive),
            0)
      << TakeRaised();
  ASSERT_NE(pointer, nullptr);
  EXPECT_EQ(reinterpret_cast<int64_t (*)(int64_t)>(pointer)(21), 42);
  // The keep-alive is a Function calling `func` too.
  Function kept = Function::Adopt(keepalive);
  EXPECT_EQ(kept(5).cast<int64_t>(), 10);
  doubled = Function();  // the callback holds its own reference
  EXPECT_EQ(reinterpret_cast<int64_t (*)(int64_t)>(pointer)(-4), -8);
}

TEST(CallbackCApi, TheStatusConventionReportsTheFunctionsError) {
  Function failing = Function::FromTyped([](int64_t x) -> int64_t {
    if (x < 0) throw ValueError("negative input");
    return x + 1;
  });
  void* pointer = nullptr;
  TVMFFIObjectHandle keepalive = nullptr;
  ASSERT_EQ(FFIJITMakeNativeCallback(failing.get(), kI64ToI64, kFFIJITFormatJson,
                                     kFFIJITStatusConvention, &pointer, &keepalive),
            0)
      << TakeRaised();
  Function keep = Function::Adopt(keepalive);
  auto call = reinterpret_cast<int (*)(int64_t, int64_t*)>(pointer);
  int64_t out = 0;
  EXPECT_EQ(call(1, &out), 0);
  EXPECT_EQ(out, 2);
  EXPECT_EQ(call(-1, &out), -1);
  EXPECT_EQ(TakeRaised(), "ValueError: negative input");
}

TEST(CallbackCApi, BadArgumentsAreClearErrors) {
  Function doubled = Doubler();
  void* pointer = nullptr;
  TVMFFIObjectHandle keepalive = nullptr;
  EXPECT_EQ(FFIJITMakeNativeCallback(doubled.get(), kI64ToI64, kFFIJITFormatJson, 64, &pointer,
                                     &keepalive),
            -1);
  EXPECT_EQ(TakeRaised(),
            "ValueError: FFIJITMakeNativeCallback: unknown flags 64 (a callback takes only "
            "kFFIJITStatusConvention)");
  Any text = Any(std::string("not a function, a long enough string"));
  EXPECT_EQ(FFIJITMakeNativeCallback(text.raw().v_obj, kI64ToI64, kFFIJITFormatJson, 0, &pointer,
                                     &keepalive),
            -1);
  EXPECT_EQ(TakeRaised(), "TypeError: FFIJITMakeNativeCallback: `func` is not an ffi.Function");
  EXPECT_EQ(
      FFIJITMakeNativeCallback(nullptr, kI64ToI64, kFFIJITFormatJson, 0, &pointer, &keepalive), -1);
  EXPECT_NE(TakeRaised().find("func"), std::string::npos);
  EXPECT_EQ(FFIJITMakeNativeCallback(doubled.get(), "{\"a\":[\"i65\"],\"r\":[]}", kFFIJITFormatJson,
                                     0, &pointer, &keepalive),
            -1);
  const std::string bad_type = TakeRaised();
  EXPECT_NE(bad_type.find("i65"), std::string::npos) << bad_type;
  EXPECT_EQ(
      FFIJITMakeNativeCallback(doubled.get(), kI64ToI64, kFFIJITFormatJson, 0, nullptr, &keepalive),
      -1);
  EXPECT_NE(TakeRaised().find("out_fnptr"), std::string::npos);
}

}  // namespace
}  // namespace ffijit::testing
