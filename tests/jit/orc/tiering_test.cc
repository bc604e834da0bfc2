// Tiering and the thunk cache: policies, the swap, sharing, release, batches, the disk cache.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "ffijit/error.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "ffijit/registry.h"
#include "finishes_in_time.h"
#include "interpreter/bound_function.h"
#include "settings/jit_settings.h"

namespace ffijit::testing {
namespace {

// Each test uses its own native signatures: the default engine's cache is process-wide, and a
// signature another test compiled would be installed at registration.
int64_t Add3(int64_t a, int64_t b, int64_t c) {
  return a + b + c;
}
int32_t Mix16(int16_t a, uint16_t b, int8_t c) {
  return a * 1000 + b - c;
}
double Scale(double x, int32_t k) {
  return x * k;
}
double Shift(double x, int32_t k) {
  return x + k;
}
uint8_t Low8(uint64_t v, bool flip) {
  return static_cast<uint8_t>(flip ? ~v : v);
}
int16_t Narrow(int64_t v, float f) {
  return static_cast<int16_t>(v + static_cast<int64_t>(f));
}
float Halve(float x, uint32_t n) {
  return x / static_cast<float>(n);
}
int64_t Count4(int8_t a, int8_t b, int16_t c, uint8_t d) {
  return a + b + c + d;
}
int64_t Diff2(int64_t a, int32_t b) {
  return a - b;
}

// The RuntimeError CompileNow throws for `f`; a test failure (and "") when it compiles.
std::string CompileError(JitEngine& engine, const Function& f) {
  try {
    engine.CompileNow(f);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "RuntimeError");
    return e.message();
  }
  ADD_FAILURE() << "compiled";
  return "";
}

// With the stencil tier off: these suites follow the LLVM tiers (tests/jit/stencils has its own).
template <typename F>
Function Make(const char* name, F* fn, JitOptions options) {
  options.stencils = false;
  ScopedJitOptions scope(options);
  return MakeFunction(name, fn);
}

TEST(Tiering, EagerCompilesInTheBackgroundAndSwaps) {
  Function f = Make("mix16", &Mix16, {JitPolicy::kEager, 0});
  EXPECT_EQ(f(int64_t{3}, int64_t{7}, int64_t{2}).cast<int64_t>(), 3005);  // works at once
  JitEngine::Default().WaitIdle();
  EXPECT_TRUE(IsJitCompiled(f));
  EXPECT_EQ(f(int64_t{-1}, int64_t{65535}, int64_t{-128}).cast<int64_t>(), -1000 + 65535 + 128);
}

TEST(Tiering, AfterCallsCompilesOnceTheCountIsReached) {
  Function f = Make("scale", &Scale, {JitPolicy::kAfterCalls, 5});
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(f(1.5, int64_t{2}).cast<double>(), 3.0);
  JitEngine::Default().WaitIdle();
  EXPECT_FALSE(IsJitCompiled(f));
  EXPECT_DOUBLE_EQ(f(1.5, int64_t{4}).cast<double>(), 6.0);  // the fifth call
  JitEngine::Default().WaitIdle();
  EXPECT_TRUE(IsJitCompiled(f));
  EXPECT_DOUBLE_EQ(f(2.0, int64_t{-3}).cast<double>(), -6.0);
}

TEST(Tiering, NeverStaysInterpretedButCompileNowWorks) {
  Function f = Make("low8", &Low8, {JitPolicy::kNever, 0});
  for (int i = 0; i < 300; ++i) f(int64_t{0x1ff}, false);
  JitEngine::Default().WaitIdle();
  EXPECT_FALSE(IsJitCompiled(f));
  ASSERT_NO_THROW(JitEngine::Default().CompileNow(f));
  EXPECT_TRUE(IsJitCompiled(f));
  EXPECT_EQ(f(int64_t{0x1ff}, false).cast<int64_t>(), 0xff);
  EXPECT_EQ(f(int64_t{0x10f}, true).cast<int64_t>(), 0xf0);
  // Compiling again is a no-op that succeeds.
  EXPECT_NO_THROW(JitEngine::Default().CompileNow(f));
  EXPECT_TRUE(IsJitCompiled(f));
}

TEST(Tiering, GlobalDefaultPolicyApplies) {
  JitOptions saved = DefaultJitOptions();
  SetDefaultJitOptions({JitPolicy::kNever, 0});
  Function f = MakeFunction("count4", &Count4);
  SetDefaultJitOptions(saved);
  for (int i = 0; i < 300; ++i) f(int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4});
  JitEngine::Default().WaitIdle();
  EXPECT_FALSE(IsJitCompiled(f));
}

TEST(Tiering, InterpretOnlyAndForeignFunctionsAreRefusedWithAReason) {
  RegisterOptions options;
  options.interpret_only = true;
  Function f = MakeFunction("add3", &Add3, options);
  EXPECT_EQ(CompileError(JitEngine::Default(), f),
            "the function stays interpreted: the function was registered interpret-only");
  EXPECT_EQ(f(int64_t{1}, int64_t{2}, int64_t{3}).cast<int64_t>(), 6);

  Function packed =
      Function::FromPacked([](const AnyView*, int32_t, Any* result) { *result = Any(int64_t{1}); });
  EXPECT_EQ(CompileError(JitEngine::Default(), packed),
            "the function stays interpreted: not a function made by ffijit's registration");
  EXPECT_FALSE(IsJitCompiled(packed));
  EXPECT_EQ(CompileError(JitEngine::Default(), Function()),
            "the function stays interpreted: not a Function object");
  EXPECT_FALSE(IsJitCompiled(Function()));

  // A batch compiles what it can and gives the others their reasons, in order, without throwing.
  Function good = Make("add3", &Add3, {JitPolicy::kNever, 0});
  CompileResults batch = JitEngine::Default().CompileNow({f, good, packed});
  EXPECT_EQ(batch.installed, 1);
  ASSERT_EQ(batch.reasons.size(), 3u);
  EXPECT_EQ(batch.reasons[0],
            "the function stays interpreted: the function was registered interpret-only");
  EXPECT_EQ(batch.reasons[1], "");
  EXPECT_EQ(batch.reasons[2],
            "the function stays interpreted: not a function made by ffijit's registration");
  EXPECT_TRUE(IsJitCompiled(good));
}

int64_t MemoryPassed(int64_t a, int64_t b) {
  return a - b;
}

// A plan the thunk compiler cannot emit (a parameter passed in memory, which no current type
// needs, forced here on a bound function) falls back: the function stays interpreted and keeps
// working, the reason reaches the caller and the JIT log once, and the engine counts it.
TEST(Tiering, AnUncompilablePlanStaysInterpretedWithALoggedReason) {
  std::vector<std::string> logged;
  SetJitLogSink([&logged](const std::string& line) { logged.push_back(line); });
  JitEngine engine;
  Function f = Make("memory_passed", &MemoryPassed, {JitPolicy::kNever, 0});
  auto* plan = const_cast<CallPlan*>(reinterpret_cast<BoundFunction*>(f.get())->plan);
  plan->params[1].abi = AbiLocation{AbiClass::kMemory, 0};
  std::string why = CompileError(engine, f);
  SetJitLogSink(nullptr);
  EXPECT_EQ(why, "the function stays interpreted: parameter 1 is passed in memory");
  EXPECT_FALSE(IsJitCompiled(f));
  EXPECT_EQ(f(int64_t{50}, int64_t{8}).cast<int64_t>(), 42);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_EQ(logged[0],
            "ffijit: `memory_passed(i64, i64) -> i64` stays interpreted: parameter 1 is passed in "
            "memory");
  JitStats stats = engine.Stats();
  EXPECT_EQ(stats.fallbacks, 1);
  EXPECT_EQ(stats.thunks_compiled, 0);
  EXPECT_EQ(stats.live_thunks, 0);
}

TEST(ThunkCache, OneThunkPerSignatureTheTargetComesThroughTheHandle) {
  JitEngine engine;
  JitOptions never{JitPolicy::kNever, 0};
  std::vector<Function> fns;
  for (int i = 0; i < 1000; ++i)
    fns.push_back(Make("scale_or_shift", i % 2 ? &Scale : &Shift, never));
  CompileResults results = engine.CompileNow(fns);
  ASSERT_EQ(results.installed, 1000) << results.reasons[0];
  EXPECT_EQ(results.reasons, std::vector<std::string>(1000));
  JitStats stats = engine.Stats();
  EXPECT_EQ(stats.live_thunks, 1);
  EXPECT_EQ(stats.thunks_compiled, 1);
  EXPECT_EQ(stats.live_units, 1);
  EXPECT_EQ(stats.installs, 1000);
  for (int i = 0; i < 4; ++i) {
    double want = i % 2 ? 2.5 * 4 : 2.5 + 4;
    EXPECT_DOUBLE_EQ(fns[static_cast<size_t>(i)](2.5, int64_t{4}).cast<double>(), want);
  }
  // A function registered after the compile costs no LLVM work.
  Function late = Make("scale", &Scale, never);
  ASSERT_NO_THROW(engine.CompileNow(late));
  EXPECT_EQ(engine.Stats().modules_compiled, stats.modules_compiled);
  EXPECT_EQ(engine.Stats().cache_hits, stats.cache_hits + 1);
  fns.clear();
  late = Function();
  EXPECT_EQ(engine.Stats().live_thunks, 0);
  EXPECT_EQ(engine.Stats().live_units, 0);
}

// The count that asks for the hot tier costs every cold call a load, a store and a compare: a
// signature's thunk comes in a counting variant, for functions that may go hot, and one without.
TEST(ThunkCache, OnlyFunctionsThatMayGoHotCountTheirCalls) {
  JitEngine engine;
  const JitOptions may_go_hot{JitPolicy::kNever, 0, 1000};
  const JitOptions never_hot{JitPolicy::kNever, 0, 0};
  Function counted = Make("diff_counted", &Diff2, may_go_hot);
  Function uncounted = Make("diff_uncounted", &Diff2, never_hot);
  CompileResults results = engine.CompileNow({counted, uncounted});
  ASSERT_EQ(results.installed, 2);
  EXPECT_EQ(engine.Stats().thunks_compiled, 2);
  EXPECT_EQ(engine.Stats().live_thunks, 2);
  auto bound = [](const Function& f) { return reinterpret_cast<BoundFunction*>(f.get()); };
  EXPECT_NE(bound(counted)->cell.safe_call, bound(uncounted)->cell.safe_call);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(counted(int64_t{9}, int64_t{i}).cast<int64_t>(), 9 - i);
    EXPECT_EQ(uncounted(int64_t{9}, int64_t{i}).cast<int64_t>(), 9 - i);
  }
  EXPECT_EQ(bound(counted)->calls_until_hot.load(), 1000 - 5);
  EXPECT_EQ(bound(uncounted)->calls_until_hot.load(), 0);
  // Another function that never goes hot shares the uncounted thunk.
  Function another = Make("diff_uncounted_too", &Diff2, never_hot);
  ASSERT_NO_THROW(engine.CompileNow(another));
  EXPECT_EQ(bound(another)->cell.safe_call, bound(uncounted)->cell.safe_call);
  EXPECT_EQ(engine.Stats().thunks_compiled, 2);
}

TEST(ThunkCache, MemoryStaysFlatOverRegisterRemoveCycles) {
  JitEngine engine;
  JitOptions never{JitPolicy::kNever, 0};
  // With one function keeping the thunk alive, cycles reuse it.
  Function keeper = Make("narrow", &Narrow, never);
  ASSERT_NO_THROW(engine.CompileNow(keeper));
  for (int i = 0; i < 3000; ++i) {
    RegisterOptions options;
    options.allow_override = true;
    Function f = Register("orc_cycle", reinterpret_cast<void*>(&Narrow),
                          SignatureOf<decltype(&Narrow)>(), options);
    ASSERT_NO_THROW(engine.CompileNow(f));
    ASSERT_EQ(f(int64_t{i}, 1.0f).cast<int64_t>(), static_cast<int16_t>(i + 1));
    f = Function();
    RemoveGlobalFunction("orc_cycle");
  }
  JitStats stats = engine.Stats();
  EXPECT_EQ(stats.live_thunks, 1);
  EXPECT_EQ(stats.live_units, 1);
  EXPECT_EQ(stats.units_created, 1);
  // Without a keeper every cycle compiles and frees its code again.
  keeper = Function();
  EXPECT_EQ(engine.Stats().live_units, 0);
  for (int i = 0; i < 50; ++i) {
    Function f = Make("halve", &Halve, never);
    ASSERT_NO_THROW(engine.CompileNow(f));
    EXPECT_EQ(engine.Stats().live_units, 1);
  }
  stats = engine.Stats();
  EXPECT_EQ(stats.live_units, 0);
  EXPECT_EQ(stats.live_thunks, 0);
  EXPECT_EQ(stats.units_created, stats.units_removed);
  EXPECT_EQ(stats.object_bytes_live, 0);
}

TEST(ThunkCache, NewSignaturesArrivingTogetherCompileInOneModule) {
  JitEngine engine;
  JitOptions never{JitPolicy::kNever, 0};
  std::vector<Function> fns = {Make("a", &Add3, never),   Make("b", &Mix16, never),
                               Make("c", &Scale, never),  Make("d", &Low8, never),
                               Make("e", &Narrow, never), Make("f", &Halve, never),
                               Make("g", &Count4, never)};
  ASSERT_EQ(engine.CompileNow(fns).installed, 7);
  EXPECT_EQ(engine.Stats().modules_compiled, 1);
  EXPECT_EQ(engine.Stats().thunks_compiled, 7);
  EXPECT_EQ(engine.Stats().live_units, 1);
  EXPECT_EQ(fns[0](int64_t{1}, int64_t{2}, int64_t{3}).cast<int64_t>(), 6);
  EXPECT_FLOAT_EQ(fns[5](3.0f, int64_t{2}).cast<double>(), 1.5);
  // The shared object stays until its last thunk's last user is gone.
  fns.resize(1);
  EXPECT_EQ(engine.Stats().live_units, 1);
  EXPECT_EQ(engine.Stats().live_thunks, 1);
  fns.clear();
  EXPECT_EQ(engine.Stats().live_units, 0);
}

TEST(ThunkCache, PersistentCacheIsReusedByAnotherEngine) {
  auto dir =
      std::filesystem::temp_directory_path() / ("ffijit_orc_cache_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  JitOptions never{JitPolicy::kNever, 0};
  {
    JitEngine first({dir.string()});
    Function f = Make("count4", &Count4, never);
    ASSERT_NO_THROW(first.CompileNow(f));
    EXPECT_EQ(first.Stats().disk_hits, 0);
    EXPECT_EQ(first.Stats().thunks_compiled, 1);
  }
  {
    JitEngine second({dir.string()});
    Function f = Make("count4", &Count4, never);
    ASSERT_NO_THROW(second.CompileNow(f));
    EXPECT_EQ(second.Stats().disk_hits, 1);
    EXPECT_EQ(second.Stats().modules_compiled, 0);
    EXPECT_EQ(f(int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}).cast<int64_t>(), 10);
  }
  // Damaged objects are not trusted: the next engine compiles afresh, and says so.
  for (auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().extension() == ".o") std::ofstream(entry.path(), std::ios::trunc) << "garbage";
  }
  {
    std::vector<std::string> logged;
    SetJitLogSink([&logged](const std::string& line) { logged.push_back(line); });
    JitEngine third({dir.string()});
    Function f = Make("count4", &Count4, never);
    ASSERT_NO_THROW(third.CompileNow(f));
    SetJitLogSink(nullptr);
    EXPECT_EQ(third.Stats().disk_hits, 0);
    EXPECT_EQ(third.Stats().thunks_compiled, 1);
    EXPECT_EQ(third.Stats().cache_errors, 1);
    ASSERT_EQ(logged.size(), 1u);
    EXPECT_EQ(logged[0].rfind("ffijit: persistent JIT cache: damaged entry: cannot load ", 0), 0u)
        << logged[0];
    EXPECT_NE(logged[0].find("(compiling instead)"), std::string::npos) << logged[0];
    EXPECT_EQ(f(int64_t{1}, int64_t{1}, int64_t{1}, int64_t{1}).cast<int64_t>(), 4);
  }
  std::filesystem::remove_all(dir);
}

// A damaged reference file (the name -> object link) is reported and counted, then replaced.
TEST(ThunkCache, ADamagedCacheReferenceIsReportedAndReplaced) {
  auto dir = std::filesystem::temp_directory_path() /
             ("ffijit_orc_cache_ref_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  JitOptions never{JitPolicy::kNever, 0};
  {
    JitEngine first({dir.string()});
    Function f = Make("halve", &Halve, never);
    ASSERT_NO_THROW(first.CompileNow(f));
    EXPECT_EQ(first.Stats().cache_errors, 0);
  }
  int damaged = 0;
  for (auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().extension() == ".ref") {
      std::ofstream(entry.path(), std::ios::trunc) << "no newline here";
      ++damaged;
    }
  }
  ASSERT_EQ(damaged, 1);
  std::vector<std::string> logged;
  SetJitLogSink([&logged](const std::string& line) { logged.push_back(line); });
  {
    JitEngine second({dir.string()});
    Function f = Make("halve", &Halve, never);
    ASSERT_NO_THROW(second.CompileNow(f));
    EXPECT_EQ(second.Stats().disk_hits, 0);
    EXPECT_EQ(second.Stats().cache_errors, 1);
    EXPECT_FLOAT_EQ(f(3.0f, int64_t{2}).cast<double>(), 1.5);
  }
  {
    JitEngine third({dir.string()});  // the compile rewrote the reference
    Function f = Make("halve", &Halve, never);
    ASSERT_NO_THROW(third.CompileNow(f));
    EXPECT_EQ(third.Stats().disk_hits, 1);
    EXPECT_EQ(third.Stats().cache_errors, 0);
  }
  SetJitLogSink(nullptr);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_EQ(logged[0].rfind("ffijit: persistent JIT cache: damaged entry: ", 0), 0u) << logged[0];
  EXPECT_NE(logged[0].find(".ref is not a cache reference"), std::string::npos) << logged[0];
  std::filesystem::remove_all(dir);
}

TEST(ThunkCache, AnUnwritableCacheDirectoryOnlyCostsTheCacheAndIsReported) {
  std::vector<std::string> logged;
  SetJitLogSink([&logged](const std::string& line) { logged.push_back(line); });
  JitEngine engine({"/proc/ffijit-cannot-write-here"});
  Function f = Make("add3", &Add3, {JitPolicy::kNever, 0});
  ASSERT_NO_THROW(engine.CompileNow(f));
  SetJitLogSink(nullptr);
  EXPECT_EQ(f(int64_t{1}, int64_t{2}, int64_t{3}).cast<int64_t>(), 6);
  EXPECT_EQ(engine.Stats().cache_errors, 1);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_EQ(logged[0].rfind("ffijit: persistent JIT cache: cannot save: cannot create "
                            "/proc/ffijit-cannot-write-here/",
                            0),
            0u)
      << logged[0];
}

// Stats() may run while another thread creates the engine (TSan checks the two agree on a lock).
TEST(Tiering, StatsRaceTheEngineCreation) {
  for (int round = 0; round < 5; ++round) {
    JitEngine engine;
    Function f = Make("narrow", &Narrow, {JitPolicy::kNever, 0});
    std::atomic<bool> compiled{false};
    std::thread reader([&] {
      do {
        JitStats stats = engine.Stats();
        EXPECT_GE(stats.live_units, 0);
        EXPECT_LE(stats.live_units, 1);
      } while (!compiled.load());
    });
    EXPECT_NO_THROW(engine.CompileNow(f));
    compiled = true;
    reader.join();
    EXPECT_EQ(engine.Stats().live_units, 1);
    EXPECT_EQ(engine.Stats().thunks_compiled, 1);
  }
}

// The JIT log calls its sink without holding its own lock: a sink may log, or replace itself.
TEST(JitSettings, ASinkThatLogsOrReplacesItselfDoesNotDeadlock) {
  std::vector<std::string> logged;
  SetJitLogSink([&logged](const std::string& line) {
    logged.push_back(line);
    if (line.rfind("nested: ", 0) != 0) LogJit("nested: " + line);
  });
  ASSERT_TRUE(ffijit_tests::FinishesInTime([] { LogJit("outer"); }))
      << "a sink that logs deadlocked";
  EXPECT_EQ(logged, (std::vector<std::string>{"outer", "nested: outer"}));

  std::vector<std::string> after;
  SetJitLogSink([&after](const std::string& line) {
    after.push_back(line);
    SetJitLogSink([&after](const std::string& next) { after.push_back("replaced: " + next); });
  });
  ASSERT_TRUE(ffijit_tests::FinishesInTime([] {
    LogJit("first");
    LogJit("second");
  })) << "a sink that replaces itself deadlocked";
  SetJitLogSink(nullptr);
  EXPECT_EQ(after, (std::vector<std::string>{"first", "replaced: second"}));
}

TEST(Tiering, CallsRacingTheSwapAllSucceed) {
  Function f = Make("add3", &Add3, {JitPolicy::kAfterCalls, 50});
  std::atomic<int64_t> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int64_t i = 0; i < 3000; ++i) {
        if (f(i, int64_t{t}, int64_t{1}).cast<int64_t>() != i + t + 1) wrong++;
      }
    });
  }
  for (auto& th : threads) th.join();
  JitEngine::Default().WaitIdle();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_TRUE(IsJitCompiled(f));
}

TEST(Tiering, FunctionsDyingWhileQueuedAreSafe) {
  // Queued compiles hold a reference: dropping every other reference at once is fine. Each
  // function is still compiled and installed, then freed with its last reference (the queue's),
  // which releases its thunk: nothing stays behind.
  JitEngine::Default().WaitIdle();
  const JitStats before = JitEngine::Default().Stats();
  for (int i = 0; i < 20; ++i) {
    Function f = Make("mix16", &Mix16, {JitPolicy::kEager, 0});
  }
  JitEngine::Default().WaitIdle();
  const JitStats after = JitEngine::Default().Stats();
  EXPECT_EQ(after.installs - before.installs, 20);
  EXPECT_EQ(after.fallbacks, before.fallbacks);
  EXPECT_EQ(after.live_thunks, before.live_thunks);
  EXPECT_EQ(after.live_units, before.live_units);
}

}  // namespace
}  // namespace ffijit::testing
