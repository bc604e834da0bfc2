// The ABI probe: the target's own lowering is asked where each native value goes; a plan that
// disagrees stays interpreted with the reason, and each verified shape is probed once per process.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ffijit/error.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "interpreter/bound_function.h"
#include "orc/codegen/abi_ir.h"
#include "platform/abi.h"

namespace ffijit::testing {
namespace {

// Signatures no other test uses: a cached thunk or shape would hide the probe.
int64_t Swapped(int16_t a, uint32_t b) {
  return a * 100000 + b;
}
uint16_t ManyDoubles(double a, double b, double c, double d, double e, double f, double g, double h,
                     double i, double j, int8_t k) {
  return static_cast<uint16_t>(a + b + c + d + e + f + g + h + i + j + k);
}

template <typename F>
Function MakeInterpreted(const char* name, F* fn) {
  ScopedJitOptions never({JitPolicy::kNever, 0});
  return MakeFunction(name, fn);
}

// Two integer parameters whose plan says each is in the other's register: the thunk would pass
// them as the plan says, the target reads them as the platform says. The probe sees it.
TEST(AbiProbe, APlacementTheTargetDisagreesWithStaysInterpreted) {
  std::vector<std::string> logged;
  SetJitLogSink([&logged](const std::string& line) { logged.push_back(line); });
  JitEngine engine;
  Function f = MakeInterpreted("swapped", &Swapped);
  auto* plan = const_cast<CallPlan*>(reinterpret_cast<BoundFunction*>(f.get())->plan);
  ASSERT_EQ(plan->params[0].abi.cls, AbiClass::kGpr);
  plan->params[0].abi.slot = 1;
  plan->params[1].abi.slot = 0;
  const std::string want =
      std::string("the target's calling convention disagrees with ") + platform::kHost.name +
      " placement: parameter 0 (`i16`) belongs in integer register 1, the compiled code reads it "
      "from integer register 0";
  try {
    engine.CompileNow(f);
    ADD_FAILURE() << "compiled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "RuntimeError");
    EXPECT_EQ(e.message(), "the function stays interpreted: " + want);
  }
  SetJitLogSink(nullptr);
  EXPECT_FALSE(IsJitCompiled(f));
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_EQ(logged[0], "ffijit: `swapped(i16, u32) -> i64` stays interpreted: " + want);
  JitStats stats = engine.Stats();
  EXPECT_EQ(stats.fallbacks, 1);
  EXPECT_EQ(stats.live_thunks, 0);
  EXPECT_EQ(stats.live_units, 0) << "a unit with nothing accepted is dropped";
}

// Ten doubles and an int8: the vector registers overflow to the stack on both platforms.
TEST(AbiProbe, EachShapeIsProbedOncePerProcess) {
  const int64_t before = orc::AbiProbeStats().probes_run;
  const int64_t rejected = orc::AbiProbeStats().shapes_rejected;
  JitEngine first, second, third;
  Function a = MakeInterpreted("many_doubles", &ManyDoubles);
  first.CompileNow(a);
  EXPECT_EQ(orc::AbiProbeStats().probes_run, before + 1);
  EXPECT_EQ(a(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, int64_t{-5}).cast<int64_t>(), 50);
  // Another engine compiles its own thunk; the shape is known good already.
  Function b = MakeInterpreted("many_doubles", &ManyDoubles);
  second.CompileNow(b);
  EXPECT_TRUE(IsJitCompiled(b));
  EXPECT_EQ(orc::AbiProbeStats().probes_run, before + 1);
  orc::ForgetAbiShapes();
  Function c = MakeInterpreted("many_doubles", &ManyDoubles);
  third.CompileNow(c);
  EXPECT_EQ(orc::AbiProbeStats().probes_run, before + 2);
  EXPECT_EQ(c(1.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.5, int64_t{1}).cast<int64_t>(), 5);
  EXPECT_EQ(orc::AbiProbeStats().shapes_rejected, rejected);
}

// The comparison itself, on made-up records: the words the probe would have stored.
TEST(AbiProbe, TheComparisonNamesWhereTheValueWasRead) {
  Signature sig;
  sig.args = {Type::Scalar(ScalarKind::kI64), Type::Scalar(ScalarKind::kF64)};
  sig.results = {Type::Scalar(ScalarKind::kF64)};
  CallPlan plan = Lower(sig, "f");
  std::vector<uint64_t> frame(static_cast<size_t>(platform::kFrameStackBase));
  for (size_t i = 0; i < frame.size(); ++i) frame[i] = 1000 + i;
  const int64_t x = platform::FrameIndex(platform::kHost, plan.params[0].abi);
  const int64_t d = platform::FrameIndex(platform::kHost, plan.params[1].abi);
  uint64_t ret[platform::kRetWords] = {};
  ret[platform::kRetFpr] = 0x400921FB54442D18u;  // pi, what the probe returns
  uint64_t good[4] = {frame[x], 0, frame[d], 0};
  EXPECT_EQ(orc::CompareProbeRecord(plan, frame.data(), good, ret), "");
  const std::string prefix = std::string("the target's calling convention disagrees with ") +
                             platform::kHost.name + " placement: ";
  uint64_t wrong_register[4] = {frame[x + 1], 0, frame[d], 0};
  EXPECT_EQ(orc::CompareProbeRecord(plan, frame.data(), wrong_register, ret),
            prefix +
                "parameter 0 (`i64`) belongs in integer register 0, the compiled code reads "
                "it from integer register 1");
  uint64_t nowhere[4] = {frame[x], 0, 7, 0};
  EXPECT_EQ(orc::CompareProbeRecord(plan, frame.data(), nowhere, ret),
            prefix +
                "parameter 1 (`f64`) belongs in vector register 0, the compiled code reads "
                "it from no word the caller passed");
  ret[platform::kRetFpr] = 0;
  EXPECT_EQ(orc::CompareProbeRecord(plan, frame.data(), good, ret),
            prefix + "the result does not arrive in the vector result register");
}

}  // namespace
}  // namespace ffijit::testing
