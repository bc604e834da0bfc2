// Registered natives called the way code compiled from TVM FFI's C++ headers calls a Function:
// through the C++ `call` entry at header+32, interpreted and JIT-compiled, failures thrown as
// tvm::ffi::Error (tests/runtime/tvm_header_style.h).
#include <gtest/gtest.h>

#include <string>

#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "runtime/tvm_header_style.h"

namespace ffijit::testing {
namespace {

// A signature no other test in this binary uses, so the process-wide thunk cache starts cold.
int64_t MulAdd3(int64_t a, int32_t b, int16_t c) {
  return a * b + c;
}

TVMFFIAny Int(int64_t v) {
  TVMFFIAny any{};
  any.type_index = kTVMFFIInt;
  any.v_int64 = v;
  return any;
}

void ExpectCallsAndThrows(const Function& f) {
  TVMFFIAny args[] = {Int(6), Int(7), Int(-2)};
  TVMFFIAny result{};
  ffijit_test::CallAt32(f.get(), args, 3, &result);
  EXPECT_EQ(result.type_index, kTVMFFIInt);
  EXPECT_EQ(result.v_int64, 40);

  TVMFFIAny bad[] = {Int(1), Int(int64_t{1} << 40), Int(0)};
  TVMFFIAny untouched{};
  try {
    ffijit_test::CallAt32(f.get(), bad, 3, &untouched);
    FAIL() << "expected tvm::ffi::Error";
  } catch (const tvm::ffi::Error& err) {
    EXPECT_EQ(err.kind(), "ValueError");
    EXPECT_NE(err.message().find("argument #1"), std::string::npos) << err.message();
  }
  EXPECT_EQ(untouched.type_index, kTVMFFINone);
}

TEST(HeaderCall, InterpretedNativeHasAWorkingCallEntry) {
  RegisterOptions options;
  options.interpret_only = true;
  Function f = MakeFunction("muladd3_interp", &MulAdd3, options);
  ExpectCallsAndThrows(f);
  EXPECT_FALSE(IsJitCompiled(f));
}

TEST(HeaderCall, JitCompiledNativeKeepsItsCallEntry) {
  Function f = MakeFunction("muladd3_jit", &MulAdd3);
  ASSERT_NO_THROW(JitEngine::Default().CompileNow(f));
  ASSERT_TRUE(IsJitCompiled(f));
  ExpectCallsAndThrows(f);
}

}  // namespace
}  // namespace ffijit::testing
