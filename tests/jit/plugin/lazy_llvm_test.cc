// libffijit_jit.so loads its LLVM plugin (libffijit_orc.so, and with it libLLVM) on the first
// thing that needs LLVM, never before: registering functions and calling them on the interpreter
// maps neither, nor does the stencil tier, nor asking a function's tier. Links the shared library,
// as a user's program does, and is the only test of its binary: the process's mappings are the
// subject.
#include <gtest/gtest.h>

#include <cstdint>

#include "ffijit/jit/bridge.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "jit/plugin/mappings.h"

namespace ffijit {
namespace {

using ffijit_tests::Mapped;

int64_t Mix(int64_t a, int64_t b) {
  return 3 * a - b;
}

int64_t CallMix(const Function& f, int64_t a, int64_t b) {
  return f(a, b).cast<int64_t>();
}

TEST(LazyLlvm, InterpreterNeverLoadsLlvmTheFirstCompileDoes) {
  ASSERT_FALSE(Mapped("libLLVM")) << "libLLVM mapped before anything asked for it";
  ASSERT_FALSE(Mapped("libffijit_orc"));

  // Registered before the plugin exists: on the interpreter, one going to the cold tier after 3
  // calls and one never on its own; on the stencil tier (no LLVM either), one never going hot and
  // one going hot after 2 calls.
  Function counted, never, stencilled, stencil_hot;
  {
    ScopedJitOptions options({JitPolicy::kAfterCalls, 3, 0, /*stencils=*/false});
    counted = MakeFunction("lazy_counted", &Mix);
  }
  {
    ScopedJitOptions options({JitPolicy::kNever, 0, 0});
    never = MakeFunction("lazy_never", &Mix);
  }
  {
    ScopedJitOptions options({JitPolicy::kAfterCalls, 3, 0});
    stencilled = MakeFunction("lazy_stencilled", &Mix);
  }
  {
    ScopedJitOptions options({JitPolicy::kAfterCalls, 3, 2});
    stencil_hot = MakeFunction("lazy_stencil_hot", &Mix);
  }
  EXPECT_EQ(CallMix(never, 5, 2), 13);
  EXPECT_EQ(CallMix(counted, 1, 1), 2);
  EXPECT_EQ(CallMix(counted, 2, 1), 5);
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(CallMix(stencilled, i, 1), 3 * i - 1);
  EXPECT_EQ(CallMix(stencil_hot, 1, 2), 1);
  // Asking for the tier needs no LLVM: a function the plugin never saw is on no LLVM tier.
  EXPECT_FALSE(IsJitCompiled(counted));
  EXPECT_FALSE(IsJitCompiled(never));
  EXPECT_TRUE(IsJitCompiled(stencilled));  // compiled, by the stencil tier
  EXPECT_EQ(Tier(counted), kFFIJITTierInterpreted);
  EXPECT_EQ(Tier(never), kFFIJITTierInterpreted);
  EXPECT_EQ(Tier(stencilled), kFFIJITTierStencil);
  EXPECT_EQ(Tier(stencil_hot), kFFIJITTierStencil);
  EXPECT_FALSE(IsHotCompiled(stencil_hot));
  EXPECT_FALSE(IsHotInlined(stencil_hot));
  int tier = -1;
  EXPECT_EQ(FFIJITFunctionTier(stencilled.get(), &tier), 0);
  EXPECT_EQ(tier, kFFIJITTierStencil);
  EXPECT_EQ(FFIJITFunctionTier(never.get(), &tier), 0);
  EXPECT_EQ(tier, kFFIJITTierInterpreted);
  int compiled = -1;
  EXPECT_EQ(FFIJITIsJitCompiled(stencilled.get(), &compiled), 0);
  EXPECT_EQ(compiled, 1);
  EXPECT_FALSE(Mapped("libLLVM")) << "registration, the interpreter, a stencil or a tier query "
                                     "loaded LLVM";
  EXPECT_FALSE(Mapped("libffijit_orc"));

  // The stencil thunk's second call runs its count out: the hot compile it asks for loads the
  // plugin.
  EXPECT_EQ(CallMix(stencil_hot, 2, 2), 4);
  EXPECT_TRUE(Mapped("libffijit_orc"));
  EXPECT_TRUE(Mapped("libLLVM"));
  JitEngine::Default().WaitIdle();
  EXPECT_TRUE(IsHotCompiled(stencil_hot));
  EXPECT_EQ(Tier(stencil_hot), kFFIJITTierHot);
  // Its state is still the one made before the plugin loaded (nothing asked the plugin for it).
  EXPECT_EQ(Tier(stencilled), kFFIJITTierStencil);
  EXPECT_EQ(CallMix(stencil_hot, 3, 2), 7);
  EXPECT_GE(JitEngine::Default().Stats().stencil_thunks_made, 2);

  // The third call reaches the interpreter's count: the cold compile is queued.
  EXPECT_EQ(CallMix(counted, 3, 1), 8);
  JitEngine::Default().WaitIdle();
  EXPECT_TRUE(IsJitCompiled(counted));
  EXPECT_EQ(Tier(counted), kFFIJITTierLlvm);
  EXPECT_EQ(CallMix(counted, 4, 1), 11);

  // Registered before the load, compiled after it on request.
  EXPECT_FALSE(IsJitCompiled(never));
  JitEngine::Default().CompileNow(never);
  EXPECT_TRUE(IsJitCompiled(never));
  EXPECT_EQ(CallMix(never, 5, 2), 13);

  // Registered after the load: the plugin's own hook attaches it.
  Function eager;
  {
    ScopedJitOptions options({JitPolicy::kEager, 0, 0, /*stencils=*/false});
    eager = MakeFunction("lazy_eager", &Mix);
  }
  JitEngine::Default().WaitIdle();
  EXPECT_TRUE(IsJitCompiled(eager));
  EXPECT_EQ(CallMix(eager, 7, 1), 20);
  EXPECT_TRUE(JitAvailable());
}

}  // namespace
}  // namespace ffijit
