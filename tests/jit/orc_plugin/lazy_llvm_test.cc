// libffijit_jit.so loads its LLVM plugin (libffijit_orc.so, and with it libLLVM) on the first
// thing that needs LLVM, never before: registering functions and calling them on the interpreter
// maps neither. Links the shared library, as a user's program does, and is the only test of its
// binary: the process's mappings are the subject.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "ffijit/jit.h"
#include "ffijit/register.h"

namespace ffijit {
namespace {

int64_t Mix(int64_t a, int64_t b) {
  return 3 * a - b;
}

// Whether a file whose name contains `needle` is mapped into this process.
bool Mapped(const std::string& needle) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(needle) != std::string::npos) return true;
  }
  return false;
}

int64_t CallMix(const Function& f, int64_t a, int64_t b) {
  return f(a, b).cast<int64_t>();
}

TEST(LazyLlvm, InterpreterNeverLoadsLlvmTheFirstCompileDoes) {
  ASSERT_FALSE(Mapped("libLLVM")) << "libLLVM mapped before anything asked for it";
  ASSERT_FALSE(Mapped("libffijit_orc"));

  // Registered before the plugin exists: one going hot after 3 calls, one never on its own.
  Function counted, never;
  {
    ScopedJitOptions options({JitPolicy::kAfterCalls, 3, 0});
    counted = MakeFunction("lazy_counted", &Mix);
  }
  {
    ScopedJitOptions options({JitPolicy::kNever, 0, 0});
    never = MakeFunction("lazy_never", &Mix);
  }
  EXPECT_EQ(CallMix(never, 5, 2), 13);
  EXPECT_EQ(CallMix(counted, 1, 1), 2);
  EXPECT_EQ(CallMix(counted, 2, 1), 5);
  // Asking whether something is compiled needs no LLVM to say no.
  EXPECT_FALSE(IsJitCompiled(counted));
  EXPECT_FALSE(IsJitCompiled(never));
  EXPECT_FALSE(Mapped("libLLVM")) << "registration or the interpreter loaded LLVM";
  EXPECT_FALSE(Mapped("libffijit_orc"));

  // The third call reaches the count: the compile it queues loads the plugin.
  EXPECT_EQ(CallMix(counted, 3, 1), 8);
  EXPECT_TRUE(Mapped("libffijit_orc"));
  EXPECT_TRUE(Mapped("libLLVM"));
  JitEngine::Default().WaitIdle();
  EXPECT_TRUE(IsJitCompiled(counted));
  EXPECT_EQ(CallMix(counted, 4, 1), 11);

  // Registered before the load, compiled after it on request.
  EXPECT_FALSE(IsJitCompiled(never));
  JitEngine::Default().CompileNow(never);
  EXPECT_TRUE(IsJitCompiled(never));
  EXPECT_EQ(CallMix(never, 5, 2), 13);

  // Registered after the load: the plugin's own hook attaches it.
  Function eager;
  {
    ScopedJitOptions options({JitPolicy::kEager, 0, 0});
    eager = MakeFunction("lazy_eager", &Mix);
  }
  JitEngine::Default().WaitIdle();
  EXPECT_TRUE(IsJitCompiled(eager));
  EXPECT_EQ(CallMix(eager, 7, 1), 20);
  EXPECT_TRUE(JitAvailable());
}

}  // namespace
}  // namespace ffijit
