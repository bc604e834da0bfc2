// The hot tier: the count on the cold tier, the per-function optimised thunk and its swap, the cap,
// release with the function, refusals, and a native given as IR in the thunk's own module; and the
// arity check both tiers fold into their check runs differently.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "ffijit/error.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "interpreter/bound_function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "orc/codegen/thunk_codegen.h"
#include "orc/tiers/unit_compiler.h"

namespace ffijit::testing {
namespace {

// Natives of signatures no other suite compiles (the default engine's thunk cache is shared).
int64_t HotWeigh(int64_t a, int32_t b, int64_t c) {
  return a * 100 + b * 10 + c;
}
double HotBlend(double x, float y, int16_t k) {
  return x + static_cast<double>(y) * k;
}
uint32_t HotFold(uint32_t a, uint8_t b) {
  return a ^ b;
}
int64_t HotPair(int64_t a, int64_t b) {
  return a - b;
}
int64_t HotWide(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g,
                int64_t h, int64_t i, double j) {
  return a + b + c + d + e + f + g + h + i + static_cast<int64_t>(j);
}

// With the stencil tier off: these suites follow the LLVM tiers (tests/jit/stencils has its own).
template <typename F>
Function Make(const char* name, F* fn, JitOptions options) {
  options.stencils = false;
  ScopedJitOptions scope(options);
  return MakeFunction(name, fn);
}

// The error of calling `f` with `args`, as "Kind: message"; "" (and a test failure) on success.
std::string ErrorOf(const Function& f, std::vector<Any> args) {
  try {
    f.CallPacked(reinterpret_cast<TVMFFIAny*>(args.data()), static_cast<int32_t>(args.size()));
  } catch (const Error& e) {
    return e.kind() + ": " + e.message();
  }
  ADD_FAILURE() << "the call succeeded";
  return "";
}

// The RuntimeError message CompileHotNow throws; "" (and a test failure) when it compiles.
std::string HotError(JitEngine& engine, const Function& f) {
  try {
    engine.CompileHotNow(f);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "RuntimeError");
    return e.message();
  }
  ADD_FAILURE() << "compiled";
  return "";
}

TEST(HotTier, AfterEnoughCallsOnTheColdTierTheFunctionGoesHot) {
  Function f = Make("hot_weigh", &HotWeigh, {JitPolicy::kEager, 0, 50});
  JitEngine::Default().WaitIdle();
  ASSERT_TRUE(IsJitCompiled(f));
  EXPECT_FALSE(IsHotCompiled(f));
  for (int64_t i = 0; i < 49; ++i) EXPECT_EQ(f(i, 2, 3).cast<int64_t>(), i * 100 + 23);
  JitEngine::Default().WaitIdle();
  EXPECT_FALSE(IsHotCompiled(f)) << "49 calls are fewer than 50";
  EXPECT_EQ(f(1, 2, 3).cast<int64_t>(), 123);  // the 50th
  JitEngine::Default().WaitIdle();
  EXPECT_TRUE(IsHotCompiled(f));
  EXPECT_TRUE(IsJitCompiled(f));
  EXPECT_EQ(f(-4, -5, 6).cast<int64_t>(), -400 - 50 + 6);
  EXPECT_EQ(reinterpret_cast<BoundFunction*>(f.get())->calls_until_hot.load(), 0)
      << "the hot thunk does not count";
}

TEST(HotTier, AZeroCountNeverGoesHot) {
  Function f = Make("hot_weigh", &HotWeigh, {JitPolicy::kEager, 0, 0});
  JitEngine::Default().WaitIdle();
  ASSERT_TRUE(IsJitCompiled(f));
  for (int64_t i = 0; i < 2000; ++i) f(i, 1, 1);
  JitEngine::Default().WaitIdle();
  EXPECT_FALSE(IsHotCompiled(f));
}

TEST(HotTier, FallbackCallsCountTooAndGoHotNotColdAgain) {
  // Errors run the interpreter (the cold thunk's fallback), which counts on the same field.
  JitEngine::Default().WaitIdle();
  const int64_t compiled_before = JitEngine::Default().Stats().thunks_compiled;
  Function f = Make("hot_fold", &HotFold, {JitPolicy::kAfterCalls, 3, 20});
  for (int i = 0; i < 3; ++i) f(int64_t{1}, int64_t{2});
  JitEngine::Default().WaitIdle();
  ASSERT_TRUE(IsJitCompiled(f));
  for (int i = 0; i < 10; ++i) ErrorOf(f, {Any(-1), Any(2)});  // range errors
  JitEngine::Default().WaitIdle();
  EXPECT_TRUE(IsHotCompiled(f));
  EXPECT_EQ(JitEngine::Default().Stats().thunks_compiled - compiled_before, 2)
      << "one cold thunk and one hot thunk";
  EXPECT_EQ(f(int64_t{0xf0}, int64_t{0x0f}).cast<int64_t>(), 0xff);
}

TEST(HotTier, ResultsAndErrorsMatchTheInterpreter) {
  RegisterOptions interpreted;
  interpreted.interpret_only = true;
  Function interp = MakeFunction("hot_blend", &HotBlend, interpreted);
  Function hot = Make("hot_blend", &HotBlend, {JitPolicy::kNever, 0, 0});
  ASSERT_NO_THROW(JitEngine::Default().CompileHotNow(hot));
  ASSERT_TRUE(IsHotCompiled(hot));
  EXPECT_FALSE(IsHotCompiled(interp));
  for (Function* f : {&interp, &hot}) {
    EXPECT_DOUBLE_EQ((*f)(1.5, 2.0, int64_t{3}).cast<double>(), 7.5);
    EXPECT_DOUBLE_EQ((*f)(int64_t{2}, int64_t{1}, true).cast<double>(), 3.0);
  }
  const std::vector<std::vector<Any>> bad = {
      {Any(1.0), Any(2.0)},                    // arity
      {Any(1.0), Any(2.0), Any(40000)},        // range
      {Any(1.0), Any("no"), Any(1)},           // type
      {Any(nullptr), Any(2.0), Any(1)},        // None for a double
      {Any(1.0), Any(2.0), Any(1), Any(1.0)},  // arity
  };
  for (const auto& args : bad) {
    std::string want = ErrorOf(interp, args);
    EXPECT_FALSE(want.empty());
    EXPECT_EQ(ErrorOf(hot, args), want);
  }
}

// The cold tier checks the arity in the same run as the tags, reading a constant of zeros instead
// of the caller's arguments when the count is wrong: any count, fewer or more, and a signature
// wider than that constant's default size, must fail as the interpreter fails.
TEST(HotTier, EveryWrongArityFailsOnBothTiersAsInTheInterpreter) {
  RegisterOptions interpreted;
  interpreted.interpret_only = true;
  Function interp = MakeFunction("hot_wide", &HotWide, interpreted);
  Function cold = Make("hot_wide", &HotWide, {JitPolicy::kNever, 0, 0});
  ASSERT_NO_THROW(JitEngine::Default().CompileNow(cold));
  Function hot = Make("hot_wide", &HotWide, {JitPolicy::kNever, 0, 0});
  ASSERT_NO_THROW(JitEngine::Default().CompileHotNow(hot));
  ASSERT_TRUE(IsJitCompiled(cold));
  ASSERT_FALSE(IsHotCompiled(cold));
  ASSERT_TRUE(IsHotCompiled(hot));
  std::vector<Any> args;
  for (int64_t i = 1; i <= 9; ++i) args.push_back(Any(i));
  args.push_back(Any(0.5));
  for (Function* f : {&interp, &cold, &hot}) {
    EXPECT_EQ(f->CallPacked(reinterpret_cast<TVMFFIAny*>(args.data()), 10).cast<int64_t>(), 45);
  }
  for (size_t count = 0; count <= 12; ++count) {
    if (count == 10) continue;
    std::vector<Any> wrong(args.begin(), args.begin() + std::min<size_t>(count, 10));
    while (wrong.size() < count) wrong.push_back(Any(int64_t{1}));
    const std::string want = ErrorOf(interp, wrong);
    EXPECT_NE(want.find("10"), std::string::npos) << want;
    EXPECT_EQ(ErrorOf(cold, wrong), want) << count << " arguments";
    EXPECT_EQ(ErrorOf(hot, wrong), want) << count << " arguments";
  }
}

TEST(HotTier, ACompileNowAfterTheHotThunkKeepsTheHotThunk) {
  Function f = Make("hot_pair", &HotPair, {JitPolicy::kNever, 0, 0});
  ASSERT_NO_THROW(JitEngine::Default().CompileHotNow(f));
  TVMFFISafeCallType hot = reinterpret_cast<BoundFunction*>(f.get())->cell.safe_call;
  ASSERT_NO_THROW(JitEngine::Default().CompileNow(f));  // the cold tier, compiled late
  EXPECT_EQ(reinterpret_cast<BoundFunction*>(f.get())->cell.safe_call, hot);
  EXPECT_TRUE(IsHotCompiled(f));
  ASSERT_NO_THROW(JitEngine::Default().CompileHotNow(f));  // again: a no-op
  EXPECT_EQ(reinterpret_cast<BoundFunction*>(f.get())->cell.safe_call, hot);
  EXPECT_EQ(f(int64_t{9}, int64_t{4}).cast<int64_t>(), 5);
}

TEST(HotTier, TheCapBoundsHotThunksWhichGoWithTheirFunctions) {
  JitEngineOptions options;
  options.max_hot_thunks = 2;
  JitEngine engine(options);
  std::vector<Function> fns;
  for (int i = 0; i < 3; ++i) fns.push_back(Make("hot_pair", &HotPair, {JitPolicy::kNever, 0, 0}));
  ASSERT_NO_THROW(engine.CompileHotNow(fns[0]));
  ASSERT_NO_THROW(engine.CompileHotNow(fns[1]));
  const JitStats two = engine.Stats();
  EXPECT_EQ(two.hot_thunks_live, 2);
  EXPECT_EQ(two.hot_compiled, 2);
  EXPECT_EQ(two.live_units, 2) << "each hot thunk is its own unit";
  EXPECT_EQ(HotError(engine, fns[2]),
            "the function has no hot-tier thunk: the hot tier's cap of 2 thunks "
            "(JitEngineOptions::max_hot_thunks) is reached");
  EXPECT_FALSE(IsHotCompiled(fns[2]));
  EXPECT_EQ(fns[2](int64_t{3}, int64_t{1}).cast<int64_t>(), 2);  // still served
  EXPECT_EQ(engine.Stats().hot_refused, 1);

  fns[0] = Function();  // its hot thunk's code goes with it
  const JitStats one = engine.Stats();
  EXPECT_EQ(one.hot_thunks_live, 1);
  EXPECT_EQ(one.live_units, 1);
  EXPECT_EQ(one.units_removed, 1);
  ASSERT_NO_THROW(engine.CompileHotNow(fns[2]));
  EXPECT_TRUE(IsHotCompiled(fns[2]));
  fns.clear();
  const JitStats none = engine.Stats();
  EXPECT_EQ(none.hot_thunks_live, 0);
  EXPECT_EQ(none.live_units, 0);
  EXPECT_EQ(none.object_bytes_live, 0);
}

TEST(HotTier, FunctionsWithoutAHotTierSayWhy) {
  RegisterOptions interpreted;
  interpreted.interpret_only = true;
  Function interp = MakeFunction("hot_pair", &HotPair, interpreted);
  EXPECT_EQ(HotError(JitEngine::Default(), interp),
            "the function has no hot-tier thunk: the function was registered interpret-only");
  Function packed = Function::FromTyped([](int64_t a) { return a; });
  EXPECT_EQ(HotError(JitEngine::Default(), packed),
            "the function has no hot-tier thunk: not a function made by ffijit's registration");
  EXPECT_EQ(HotError(JitEngine::Default(), Function()),
            "the function has no hot-tier thunk: not a Function object");
  EXPECT_FALSE(IsHotCompiled(packed));
  EXPECT_FALSE(IsHotCompiled(Function()));
}

TEST(HotTier, CallsRacingTheHotSwapAllSucceed) {
  Function f = Make("hot_weigh", &HotWeigh, {JitPolicy::kEager, 0, 500});
  std::atomic<int64_t> wrong{0};
  std::vector<std::thread> threads;
  // Calls go on until the hot thunk is in (the cold one arrives in the background first), and at
  // least 3000 per thread; the deadline only bounds a failure.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int64_t i = 0;
           i < 3000 || (!IsHotCompiled(f) && std::chrono::steady_clock::now() < deadline); ++i) {
        if (f(i, t, 1).cast<int64_t>() != i * 100 + t * 10 + 1) wrong++;
      }
    });
  }
  for (auto& th : threads) th.join();
  JitEngine::Default().WaitIdle();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_TRUE(IsHotCompiled(f));
}

// ---- the codegen hook for natives given as IR (inlining into the hot thunk) ----

// Compiles, with a fresh engine, one optimised hot thunk for `fn` whose native is `define`d in the
// thunk's module.
orc::CompiledSymbol CompileWithIrNative(
    orc::UnitCompiler& engine, BoundFunction* fn,
    std::function<llvm::Function*(llvm::Module&, llvm::FunctionType*)> define) {
  const CallPlan* plan = fn->plan;
  std::vector<orc::CompileRequest> request;
  request.push_back({"", [plan, define](llvm::Module& module, const std::string& symbol) {
                       orc::ThunkOptions options = orc::HotThunkOptions(nullptr);
                       options.native = define(module, orc::NativeCallType(*plan, module));
                       return orc::EmitThunk(*plan, module, symbol, options);
                     }});
  return std::move(engine.Compile(std::move(request), orc::CodeGenLevel::kOptimized)[0]);
}

TEST(HotTierCodegen, ANativeDefinedInTheModuleIsTheOneCalled) {
  std::string error;
  auto engine = orc::UnitCompiler::Create(orc::ThunkRuntimeSymbols(), "", &error);
  ASSERT_TRUE(engine) << error;
  Function f = Make("hot_pair", &HotPair, {JitPolicy::kNever, 0, 0});
  auto* fn = reinterpret_cast<BoundFunction*>(f.get());
  // The IR native computes a * 7 + b: not HotPair, so the result says which one ran.
  orc::CompiledSymbol compiled =
      CompileWithIrNative(*engine, fn, [](llvm::Module& module, llvm::FunctionType* type) {
        auto* native =
            llvm::Function::Create(type, llvm::Function::InternalLinkage, "ir_native", module);
        llvm::IRBuilder<> b(llvm::BasicBlock::Create(module.getContext(), "", native));
        b.CreateRet(b.CreateAdd(b.CreateMul(native->getArg(0), b.getInt64(7)), native->getArg(1)));
        return native;
      });
  ASSERT_NE(compiled.address, nullptr) << compiled.failure;
  auto thunk = reinterpret_cast<TVMFFISafeCallType>(compiled.address);
  TVMFFIAny args[2] = {Any(6).raw(), Any(5).raw()};
  TVMFFIAny result{};
  ASSERT_EQ(thunk(fn, args, 2, &result), 0);
  EXPECT_EQ(result.type_index, kTVMFFIInt);
  EXPECT_EQ(result.v_int64, 47);
  // Errors still take the interpreter (which calls the real native's plan checks).
  args[1] = Any("x").raw();
  EXPECT_EQ(thunk(fn, args, 2, &result), -1);
  Error e = Error::MoveFromRaised();
  EXPECT_EQ(e.kind(), "TypeError");
  engine->Release(compiled.unit);
}

TEST(HotTierCodegen, ANativeOfTheWrongIrTypeIsRefused) {
  std::string error;
  auto engine = orc::UnitCompiler::Create(orc::ThunkRuntimeSymbols(), "", &error);
  ASSERT_TRUE(engine) << error;
  Function f = Make("hot_pair", &HotPair, {JitPolicy::kNever, 0, 0});
  auto* fn = reinterpret_cast<BoundFunction*>(f.get());
  orc::CompiledSymbol compiled =
      CompileWithIrNative(*engine, fn, [](llvm::Module& module, llvm::FunctionType*) {
        auto* i32 = llvm::Type::getInt32Ty(module.getContext());
        return llvm::Function::Create(llvm::FunctionType::get(i32, {i32, i32}, false),
                                      llvm::Function::ExternalLinkage, "wrong_native", module);
      });
  EXPECT_EQ(compiled.address, nullptr);
  EXPECT_EQ(compiled.failure, "the native's IR type differs from the one its plan calls it with");
  EXPECT_EQ(engine->Counters().live_units, 0);
}

}  // namespace
}  // namespace ffijit::testing
