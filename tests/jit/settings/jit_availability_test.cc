// jit.h in either build: with LLVM the JIT reports itself available; without it every entry point
// still links and says plainly that there is no compiler. The policy settings work in both.
#include <cstdlib>
#include <string>
#include <vector>

#include "ffijit/jit/jit.h"
#include "jit/interp_test_util.h"

namespace ffijit::testing {
namespace {

extern "C" int64_t jit_availability_twice(int64_t x) {
  return 2 * x;
}

TEST(JitAvailability, MatchesTheBuild) {
#if FFIJIT_HAVE_LLVM
  EXPECT_TRUE(JitAvailable());
#else
  EXPECT_FALSE(JitAvailable());
#endif
}

// The environment's policy is read once, in a fresh process (threadsafe death tests re-run the
// binary), so each case sets FFIJIT_JIT before anything asks for the default. A user-mode emulator
// (the AArch64 lane runs the tests under qemu) cannot re-run a foreign binary: there the lane sets
// FFIJIT_TEST_FORK_DEATH_TESTS and each case runs in a forked child instead, which is just as
// fresh because ctest runs every test in a process of its own (nothing read the policy before).
void UseFreshProcessDeathTests() {
  GTEST_FLAG_SET(death_test_style,
                 std::getenv("FFIJIT_TEST_FORK_DEATH_TESTS") != nullptr ? "fast" : "threadsafe");
}

TEST(JitSettings, EnvironmentPolicyIsReadAndABadOneIsReported) {
  UseFreshProcessDeathTests();
  EXPECT_EXIT(
      {
        setenv("FFIJIT_JIT", "after:7", 1);
        JitOptions options = DefaultJitOptions();
        std::exit(options.policy == JitPolicy::kAfterCalls && options.after_calls == 7 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "^$");
  EXPECT_EXIT(
      {
        setenv("FFIJIT_JIT", "never", 1);
        std::exit(DefaultJitOptions().policy == JitPolicy::kNever ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "^$");
  EXPECT_EXIT(
      {
        setenv("FFIJIT_JIT", "stencils", 1);
        std::exit(DefaultJitOptions().policy == JitPolicy::kStencils ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "^$");
  for (const char* bad : {"sometimes", "after:0", "after:x", "after:"}) {
    EXPECT_EXIT(
        {
          setenv("FFIJIT_JIT", bad, 1);
          JitOptions options = DefaultJitOptions();
          std::exit(options.policy == JitPolicy::kAfterCalls && options.after_calls == 100 ? 0 : 1);
        },
        ::testing::ExitedWithCode(0),
        std::string("FFIJIT_JIT=\"") + bad +
            "\" is not eager, never, off, stencils or after:N \\(N > 0\\); using after:100");
  }
}

// The hot tier's policy: FFIJIT_JIT_HOT ("never", "off", "after:N"), read like FFIJIT_JIT.
TEST(JitSettings, EnvironmentHotPolicyIsReadAndABadOneIsReported) {
  UseFreshProcessDeathTests();
  EXPECT_EQ(JitOptions{}.hot_after_calls, 100000);
  EXPECT_EXIT(
      {
        setenv("FFIJIT_JIT_HOT", "after:250", 1);
        std::exit(DefaultJitOptions().hot_after_calls == 250 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "^$");
  EXPECT_EXIT(
      {
        setenv("FFIJIT_JIT", "eager", 1);
        setenv("FFIJIT_JIT_HOT", "never", 1);
        JitOptions options = DefaultJitOptions();
        std::exit(options.policy == JitPolicy::kEager && options.hot_after_calls == 0 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "^$");
  for (const char* bad : {"eager", "after:-3", "after:1x"}) {
    EXPECT_EXIT(
        {
          setenv("FFIJIT_JIT_HOT", bad, 1);
          std::exit(DefaultJitOptions().hot_after_calls == 100000 ? 0 : 1);
        },
        ::testing::ExitedWithCode(0),
        std::string("FFIJIT_JIT_HOT=\"") + bad +
            "\" is not never, off or after:N \\(N > 0\\); using after:100000");
  }
}

#if !FFIJIT_HAVE_LLVM
TEST(JitAvailability, WithoutLlvmFunctionsStayInterpretedAndSayWhy) {
  ScopedJitOptions eager({JitPolicy::kEager, 0});
  Function f = MakeFunction("twice", &jit_availability_twice);
  try {
    JitEngine::Default().CompileNow(f);
    ADD_FAILURE() << "compiled without a JIT";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "RuntimeError");
    EXPECT_EQ(e.message(),
              "the function stays interpreted: this ffijit was built without LLVM "
              "(FFIJIT_ENABLE_JIT=OFF)");
  }
  CompileResults batch = JitEngine::Default().CompileNow(std::vector<Function>{f, f});
  EXPECT_EQ(batch.installed, 0);
  ASSERT_EQ(batch.reasons.size(), 2u);
  EXPECT_NE(batch.reasons[1].find("built without LLVM"), std::string::npos) << batch.reasons[1];
  try {
    JitEngine::Default().CompileHotNow(f);
    ADD_FAILURE() << "compiled a hot thunk without a JIT";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "RuntimeError");
    EXPECT_EQ(e.message(),
              "the function has no hot-tier thunk: this ffijit was built without LLVM "
              "(FFIJIT_ENABLE_JIT=OFF)");
  }
  EXPECT_FALSE(IsJitCompiled(f));
  EXPECT_FALSE(IsHotCompiled(f));
  EXPECT_EQ(f(21).cast<int64_t>(), 42);
  EXPECT_EQ(JitEngine::Default().Stats().thunks_compiled, 0);
}

TEST(JitAvailability, WithoutLlvmNativeCallbacksAreARuntimeError) {
  Function f = MakeFunction("twice", &jit_availability_twice);
  try {
    NativeCallback callback(f, SignatureOf<int64_t (*)(int64_t)>());
    ADD_FAILURE() << "made a callback without a JIT";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "RuntimeError");
    EXPECT_NE(e.message().find("built without LLVM"), std::string::npos);
  }
}
#endif

}  // namespace
}  // namespace ffijit::testing
