// Inlined hot thunks: natives of LLVM bitcode whose hot-tier thunk holds their body. Each native
// (every conversion kind, the status convention, several results, the benchmark's five) is made
// three times from one JIT module -- interpreted, on the cold tier, hot -- and every call, right
// or wrong, must give the same result or the same error on all three. Natives the hot tier cannot
// inline fall back to a hot thunk calling them by address, saying why; modules released while
// their functions are hot stay valid as long as the functions (ASan checks the rest).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "any_fixtures.h"
#include "call_natives.h"
#include "catch_error.h"
#include "ffijit/c_ext.h"
#include "ffijit/jit/bridge.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/jit_module.h"
#include "ffijit/tensor.h"
#include "signature_fixtures.h"

namespace {

using ffijit_tests::Canonical;

using ffijit::Any;
using ffijit::CallConvention;
using ffijit::Function;
using ffijit::JitEngine;
using ffijit::JitModule;
using ffijit::ScalarKind;
using ffijit::Signature;
using ffijit::Type;
using ffijit::TypeKind;
using ffijit::TypePtr;

std::string Ir(const std::string& file) {
  return std::string(FFIJIT_JIT_FIXTURES) + "/ir/" + file;
}

TypePtr S(ScalarKind k) {
  return Type::Scalar(k);
}
TypePtr K(TypeKind k) {
  return Type::Simple(k);
}
using ffijit_tests::Sig;

// The result of calling `f`, or "Kind: message" of its error.
std::string Outcome(const Function& f, std::vector<Any> args) {
  try {
    Any result =
        f.CallPacked(reinterpret_cast<TVMFFIAny*>(args.data()), static_cast<int32_t>(args.size()));
    return Canonical(result.raw());
  } catch (const ffijit::Error& e) {
    return e.kind() + ": " + e.message();
  }
}

// Captures the JIT log while alive.
class LogCapture {
 public:
  LogCapture() {
    ffijit::SetJitLogSink([this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mutex_);
      lines_ += line + "\n";
    });
  }
  ~LogCapture() { ffijit::SetJitLogSink(nullptr); }
  std::string text() {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }

 private:
  std::mutex mutex_;
  std::string lines_;
};

// FFIJITFunctionTier's answer for `f`, checking that the call itself succeeded.
int TierFromC(const Function& f) {
  int tier = -1;
  EXPECT_EQ(FFIJITFunctionTier(f.get(), &tier), 0);
  return tier;
}

// One native of a bitcode module on the three executors.
struct Executors {
  Function interpreted, cold, hot;
};

Executors Make(const JitModule& mod, const std::string& symbol, const Signature& sig) {
  Executors e;
  ffijit::ScopedJitOptions never({ffijit::JitPolicy::kNever, 0, 0});
  ffijit::RegisterOptions interpret_only;
  interpret_only.interpret_only = true;
  e.interpreted = mod.MakeNative(symbol, sig, interpret_only);
  e.cold = mod.MakeNative(symbol, sig);
  JitEngine::Default().CompileNow(e.cold);
  e.hot = mod.MakeNative(symbol, sig);
  JitEngine::Default().CompileHotNow(e.hot);
  EXPECT_FALSE(ffijit::IsJitCompiled(e.interpreted));
  EXPECT_TRUE(ffijit::IsJitCompiled(e.cold));
  EXPECT_FALSE(ffijit::IsHotCompiled(e.cold));
  EXPECT_TRUE(ffijit::IsHotCompiled(e.hot));
  EXPECT_EQ(TierFromC(e.interpreted), kFFIJITTierInterpreted);
  EXPECT_EQ(TierFromC(e.cold), kFFIJITTierLlvm);
  return e;
}

// Every call gives the same outcome on the three executors; returns the interpreter's outcomes.
std::vector<std::string> ExpectAgree(const Executors& e, const std::string& symbol,
                                     const std::vector<std::vector<Any>>& calls) {
  std::vector<std::string> outcomes;
  for (size_t i = 0; i < calls.size(); ++i) {
    const std::string interpreted = Outcome(e.interpreted, calls[i]);
    EXPECT_EQ(Outcome(e.cold, calls[i]), interpreted) << symbol << " call " << i;
    EXPECT_EQ(Outcome(e.hot, calls[i]), interpreted) << symbol << " call " << i;
    outcomes.push_back(interpreted);
  }
  return outcomes;
}

bool IsError(const std::string& outcome) {
  return outcome.find("Error: ") != std::string::npos;
}

struct Case {
  const char* symbol;
  Signature sig;
  std::vector<std::vector<Any>> calls;
};

std::vector<Case> ConversionCases(void* some_pointer, const Any& tensor, const Any& wrong_tensor) {
  const TypePtr i64 = S(ScalarKind::kI64);
  const TypePtr f64 = S(ScalarKind::kF64);
  const Any str = Any(std::string("a string object, not inline"));
  std::vector<Case> cases;
  cases.push_back({"in_small_ints",
                   Sig({S(ScalarKind::kI8), S(ScalarKind::kU8), S(ScalarKind::kI16),
                        S(ScalarKind::kU16), S(ScalarKind::kI32), S(ScalarKind::kU32)},
                       {i64}),
                   {{-128, 255, -32768, 65535, -2147483647 - 1, int64_t{4294967295}},
                    {1, 2, 3, 4, 5, 6},
                    {true, false, true, 0, -1, 7},
                    {128, 0, 0, 0, 0, 0},
                    {0, -1, 0, 0, 0, 0},
                    {0, 0, 0, 0, int64_t{2147483648}, 0},
                    {0, 0, 0, 0, 0, int64_t{-1}},
                    {1.5, 0, 0, 0, 0, 0},
                    {1, 2, 3, 4, 5},
                    {"x", 2, 3, 4, 5, 6}}});
  cases.push_back(
      {"in_ret_i8", Sig({i64}, {S(ScalarKind::kI8)}), {{5}, {50}, {-50}, {100}, {"x"}}});
  cases.push_back(
      {"in_ret_u16", Sig({i64}, {S(ScalarKind::kU16)}), {{0}, {64535}, {-1000}, {1.5}}});
  cases.push_back({"in_u64",
                   Sig({S(ScalarKind::kU64)}, {S(ScalarKind::kU64)}),
                   {{int64_t{1} << 40}, {int64_t{1} << 62}, {-1}}});
  cases.push_back({"in_not",
                   Sig({S(ScalarKind::kI1)}, {S(ScalarKind::kI1)}),
                   {{true}, {false}, {0}, {7}, {1.0}}});
  cases.push_back(
      {"in_f32",
       Sig({S(ScalarKind::kF32), f64}, {S(ScalarKind::kF32)}),
       {{1.5, 2.25}, {int64_t{16777217}, 0.1}, {1e300, 1.0}, {true, -0.5}, {"1", 2.0}}});
  cases.push_back({"in_f16",
                   Sig({S(ScalarKind::kF16), S(ScalarKind::kF32)}, {S(ScalarKind::kF16)}),
                   {{1.5, 2.0}, {65504.0, 1000.0}, {0.1, 0.2}, {int64_t{3}, -1.0}, {"x", 1.0}}});
  cases.push_back({"in_ptr",
                   Sig({K(TypeKind::kOpaquePtr), i64}, {K(TypeKind::kOpaquePtr)}),
                   {{some_pointer, 8}, {nullptr, 0}, {nullptr, 16}, {1, 2}}});
  cases.push_back({"in_strlen",
                   Sig({K(TypeKind::kStr)}, {i64}),
                   {{str}, {Any(std::string("short"))}, {Any(std::string(""))}, {nullptr}, {5}}});
  cases.push_back({"in_str_tail",
                   Sig({K(TypeKind::kStr)}, {K(TypeKind::kStr)}),
                   {{Any(std::string("abc"))}, {Any(std::string(""))}, {str}, {5}}});
  cases.push_back({"in_bytes",
                   Sig({K(TypeKind::kBytes)}, {i64}),
                   {{Any(ffijit::Bytes("xyz"))},
                    {Any(std::string("a longer string value"))},
                    {Any(ffijit::Bytes(""))},
                    {1}}});
  cases.push_back({"in_dtype",
                   Sig({K(TypeKind::kDataType), i64}, {K(TypeKind::kDataType)}),
                   {{Any(ffijit::DataType::Float(32)), 4},
                    {Any(std::string("int8")), 2},
                    {Any(std::string("not a dtype")), 2},
                    {7, 1}}});
  cases.push_back({"in_device",
                   Sig({K(TypeKind::kDevice)}, {K(TypeKind::kDevice)}),
                   {{Any(ffijit::Device(kDLCUDA, 3))},
                    {Any(std::string("cpu"))},
                    {Any(std::string("nowhere"))}}});
  cases.push_back({"in_tensor",
                   Sig({Type::NDArray(ScalarKind::kF32, 2, {-1, -1})}, {i64}),
                   {{tensor}, {wrong_tensor}, {nullptr}, {3}}});
  cases.push_back(
      {"in_object", Sig({Type::Object("", true)}, {i64}), {{tensor}, {str}, {nullptr}, {4}}});
  cases.push_back(
      {"in_any", Sig({K(TypeKind::kUnknown)}, {i64}), {{9}, {2.5}, {str}, {nullptr}, {}}});
  cases.push_back({"in_nothing", Sig({i64}, {}), {{1}, {}, {"x"}}});
  cases.push_back({"in_status", Sig({i64}, {i64}, CallConvention::kStatus), {{21}, {-1}, {"x"}}});
  cases.push_back({"in_status_silent", Sig({i64}, {i64}, CallConvention::kStatus), {{21}, {-1}}});
  cases.push_back({"in_two", Sig({f64, f64}, {f64, f64}), {{5.0, 3.0}, {1, 2.5}, {1.0}}});
  cases.push_back({"in_table", Sig({i64}, {i64}), {{0}, {3}, {7}, {12}, {"x"}}});
  cases.push_back({"in_call_helper", Sig({i64}, {i64}), {{3}, {-7}, {2.5}}});
  return cases;
}

class InlinedHotThunk : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    natives_ = new JitModule(JitModule::Create("inline natives"));
    natives_->AddFile(Ir("inline_natives.bc"));
  }
  static void TearDownTestSuite() {
    delete natives_;
    natives_ = nullptr;
  }
  static JitModule* natives_;
};
JitModule* InlinedHotThunk::natives_ = nullptr;

TEST_F(InlinedHotThunk, EveryConversionKindAgreesWithTheInterpreterAndTheColdTier) {
  static int target = 0;
  Any tensor = Any(ffijit::Tensor::Empty({4, 8}, ffijit::DataType::Float(32)));
  Any wrong_tensor = Any(ffijit::Tensor::Empty({4}, ffijit::DataType::Float(32)));
  const int64_t inlined_before = JitEngine::Default().Stats().hot_inlined;
  int64_t made = 0;
  for (const Case& c : ConversionCases(&target, tensor, wrong_tensor)) {
    Executors e = Make(*natives_, c.symbol, c.sig);
    EXPECT_TRUE(ffijit::IsHotInlined(e.hot)) << c.symbol;
    EXPECT_EQ(TierFromC(e.hot), kFFIJITTierHotInlined) << c.symbol;
    EXPECT_EQ(ffijit::Tier(e.hot), kFFIJITTierHotInlined) << c.symbol;
    EXPECT_FALSE(ffijit::IsHotInlined(e.cold)) << c.symbol;
    EXPECT_FALSE(ffijit::IsHotInlined(e.interpreted)) << c.symbol;
    std::vector<std::string> outcomes = ExpectAgree(e, c.symbol, c.calls);
    ++made;
    // The first call of every case is right (it reaches the native), and some later one is not.
    EXPECT_FALSE(IsError(outcomes[0])) << c.symbol << ": " << outcomes[0];
    bool any_error = false;
    for (const std::string& outcome : outcomes) any_error = any_error || IsError(outcome);
    EXPECT_TRUE(any_error) << c.symbol << " has no call that fails";
  }
  EXPECT_EQ(JitEngine::Default().Stats().hot_inlined - inlined_before, made);
}

// Seeded random argument lists for a signature: each value drawn from every kind of packed value
// (often the kind the parameter takes, at its edges), sometimes one argument too few or too many.
class RandomArguments {
 public:
  RandomArguments(uint64_t seed, const Any& tensor, const Any& wrong_tensor, void* pointer)
      : rng_(seed) {
    any_ = {Any(0),
            Any(-1),
            Any(127),
            Any(128),
            Any(255),
            Any(-32769),
            Any(65536),
            Any(int64_t{2147483648}),
            Any(int64_t{-4294967296}),
            Any(int64_t{1} << 62),
            Any(true),
            Any(false),
            Any(1.5),
            Any(-0.0),
            Any(1e10),
            Any(3.0e38),
            Any(nullptr),
            Any(pointer),
            Any(std::string("ab")),
            Any(std::string("a string of more than seven bytes")),
            Any(std::string("")),
            Any(std::string("float32")),
            Any(std::string("cuda:2")),
            Any(ffijit::Bytes("b\x01")),
            Any(ffijit::DataType::Float(16)),
            Any(ffijit::Device(kDLCPU, 0)),
            tensor,
            wrong_tensor};
  }

  std::vector<Any> For(const Signature& sig) {
    std::vector<Any> args;
    for (size_t i = 0; i < sig.args.size(); ++i) args.push_back(Pick());
    const uint64_t arity = rng_() % 20;
    if (arity == 0) args.push_back(Pick());
    if (arity == 1 && !args.empty()) args.pop_back();
    return args;
  }

 private:
  Any Pick() { return any_[rng_() % any_.size()]; }
  std::mt19937_64 rng_;
  std::vector<Any> any_;
};

TEST_F(InlinedHotThunk, RandomArgumentsAgreeOnEveryExecutor) {
  static int target = 0;
  Any tensor = Any(ffijit::Tensor::Empty({2, 3}, ffijit::DataType::Float(32)));
  Any wrong_tensor = Any(ffijit::Tensor::Empty({2, 3}, ffijit::DataType::Int(32)));
  RandomArguments random(20261123, tensor, wrong_tensor, &target);
  int64_t calls = 0, successes = 0;
  for (const Case& c : ConversionCases(&target, tensor, wrong_tensor)) {
    Executors e = Make(*natives_, c.symbol, c.sig);
    ASSERT_TRUE(ffijit::IsHotInlined(e.hot)) << c.symbol;
    std::vector<std::vector<Any>> lists;
    for (int i = 0; i < 150; ++i) lists.push_back(random.For(c.sig));
    for (const std::string& outcome : ExpectAgree(e, c.symbol, lists)) {
      ++calls;
      if (!IsError(outcome)) ++successes;
    }
  }
  // Both outcomes occur often enough for the agreement to mean something.
  EXPECT_GT(successes, calls / 10) << successes << " of " << calls;
  EXPECT_LT(successes, calls * 9 / 10) << successes << " of " << calls;
}

TEST_F(InlinedHotThunk, ResultsAndErrorsAreTheExpectedOnes) {
  // Spot checks that the agreement above is about right answers.
  Executors small = Make(*natives_, "in_small_ints",
                         Sig({S(ScalarKind::kI8), S(ScalarKind::kU8), S(ScalarKind::kI16),
                              S(ScalarKind::kU16), S(ScalarKind::kI32), S(ScalarKind::kU32)},
                             {S(ScalarKind::kI64)}));
  EXPECT_EQ(small.hot(-1, 2, -3, 4, -5, 6).cast<int64_t>(), -1 + 6 - 15 + 28 - 55 + 78);
  ffijit::Error range = ffijit_tests::CatchError([&] { small.hot(128, 0, 0, 0, 0, 0); });
  ffijit::Error range_interpreted =
      ffijit_tests::CatchError([&] { small.interpreted(128, 0, 0, 0, 0, 0); });
  EXPECT_EQ(range.kind(), "ValueError");
  EXPECT_EQ(range.message(), range_interpreted.message());

  Executors status =
      Make(*natives_, "in_status",
           Sig({S(ScalarKind::kI64)}, {S(ScalarKind::kI64)}, CallConvention::kStatus));
  EXPECT_EQ(status.hot(21).cast<int64_t>(), 42);
  ffijit::Error raised = ffijit_tests::CatchError([&] { status.hot(-1); });
  EXPECT_EQ(raised.kind(), "ValueError");
  EXPECT_EQ(raised.message(), "in_status: a must not be negative");

  Executors f16 = Make(*natives_, "in_f16",
                       Sig({S(ScalarKind::kF16), S(ScalarKind::kF32)}, {S(ScalarKind::kF16)}));
  EXPECT_EQ(f16.hot(1.5, 2.0).cast<double>(), 3.5);
  Executors strlen_native =
      Make(*natives_, "in_strlen", Sig({K(TypeKind::kStr)}, {S(ScalarKind::kI64)}));
  EXPECT_EQ(strlen_native.hot("seven!!").cast<int64_t>(), 7);
}

TEST_F(InlinedHotThunk, TheModulesVariablesAndFunctionsAreTheOnesItsCodeUses) {
  const Signature unary = Sig({S(ScalarKind::kI64)}, {S(ScalarKind::kI64)});
  auto* counter = static_cast<int64_t*>(natives_->Lookup("in_counter"));
  ASSERT_NE(counter, nullptr);
  Executors count = Make(*natives_, "in_count", unary);
  ASSERT_TRUE(ffijit::IsHotInlined(count.hot));
  *counter = 0;
  EXPECT_EQ(count.hot(5).cast<int64_t>(), 5);
  EXPECT_EQ(count.interpreted(2).cast<int64_t>(), 7);
  EXPECT_EQ(count.hot(3).cast<int64_t>(), 10);
  EXPECT_EQ(*counter, 10) << "the inlined code updates the module's variable, not a copy";

  Executors exported = Make(*natives_, "in_call_exported", unary);
  EXPECT_TRUE(ffijit::IsHotInlined(exported.hot));
  *counter = 4;
  EXPECT_EQ(exported.hot(2).cast<int64_t>(), (2 * 3 + 4) * 2);
  EXPECT_EQ(exported.interpreted(2).cast<int64_t>(), (2 * 3 + 4) * 2);
}

TEST_F(InlinedHotThunk, NativesItCannotInlineAreCalledByAddressAndTheLogSaysWhy) {
  const Signature unary = Sig({S(ScalarKind::kI64)}, {S(ScalarKind::kI64)});
  struct Refusal {
    const char* symbol;
    Signature sig;
    const char* why;
  };
  const std::vector<Refusal> refusals = {
      {"in_hidden_state", unary, "uses the module-internal variable `hidden_total`"},
      {"in_thread_local", unary, "uses the thread-local `in_tls_value`"},
      {"in_address_taken", unary, "uses the address of the module-internal function `Twice`"},
      {"in_constant_address", unary, "uses the module-internal variable `kOnes`"},
      {"in_two_args",
       Sig({S(ScalarKind::kI64), S(ScalarKind::kI64), S(ScalarKind::kI64)}, {S(ScalarKind::kI64)}),
       "the native has 2 IR parameters, its signature passes 3"},
      {"in_recursive", unary, "LLVM did not inline it"},
  };
  for (const Refusal& r : refusals) {
    LogCapture log;
    Executors e = Make(*natives_, r.symbol, r.sig);
    EXPECT_FALSE(ffijit::IsHotInlined(e.hot)) << r.symbol;
    EXPECT_EQ(TierFromC(e.hot), kFFIJITTierHot) << r.symbol;  // hot, calling the native
    EXPECT_NE(log.text().find("the hot-tier thunk calls its native out of line"), std::string::npos)
        << log.text();
    EXPECT_NE(log.text().find(r.why), std::string::npos) << r.symbol << ": " << log.text();
    const std::string symbol = r.symbol;
    if (symbol == "in_hidden_state" || symbol == "in_thread_local") {
      // Stateful: the three executors run the module's one native, so they share one total.
      const int64_t base = e.interpreted(int64_t{0}).cast<int64_t>();
      EXPECT_EQ(e.hot(int64_t{5}).cast<int64_t>(), base + 5) << symbol;
      EXPECT_EQ(e.cold(int64_t{2}).cast<int64_t>(), base + 7) << symbol;
      EXPECT_EQ(e.interpreted(int64_t{1}).cast<int64_t>(), base + 8) << symbol;
      ExpectAgree(e, symbol, {{"x"}, {}});
    } else if (r.sig.args.size() == 3) {
      ExpectAgree(e, symbol, {{10, 3, 0}, {1, 2, 3}, {1.5, 2, 3}});
    } else {
      ExpectAgree(e, symbol, {{1}, {2}, {5}, {"x"}});
    }
  }
}

TEST(InlinedHotThunkFallback, ANativeThatCatchesExceptionsIsCalledByAddress) {
  JitModule mod = JitModule::Create("catching");
  mod.AddFile(Ir("inline_catching.bc"));
  LogCapture log;
  Executors e = Make(mod, "in_catching", Sig({S(ScalarKind::kI64)}, {S(ScalarKind::kI64)}));
  EXPECT_FALSE(ffijit::IsHotInlined(e.hot));
  EXPECT_NE(log.text().find("handles exceptions"), std::string::npos) << log.text();
  EXPECT_EQ(e.hot(4).cast<int64_t>(), 40);
  EXPECT_EQ(e.hot(-4).cast<int64_t>(), -1);  // thrown and caught inside the module's code
  ExpectAgree(e, "in_catching", {{4}, {-4}, {"x"}});
}

TEST(InlinedHotThunkFallback, ANativeOfAnObjectFileHasNoIrToInline) {
  JitModule mod = JitModule::Create("object");
  mod.AddFile(std::string(FFIJIT_JIT_FIXTURES) + "/clang/base.o");
  LogCapture log;
  Executors e = Make(mod, "chain_base", Sig({S(ScalarKind::kI64)}, {S(ScalarKind::kI64)}));
  EXPECT_FALSE(ffijit::IsHotInlined(e.hot));
  EXPECT_EQ(log.text(), "") << "nothing was tried, so nothing is reported";
  EXPECT_EQ(e.hot(int64_t{4}).cast<int64_t>(), 40);
  ExpectAgree(e, "chain_base", {{4}, {-4}, {"x"}});
}

TEST(InlinedHotThunkBenchmark, TheFiveBenchmarkSignaturesInline) {
  JitModule mod = JitModule::Create("bench natives");
  mod.AddFile(Ir("call_natives.bc"));
  for (const ffijit::bench::CallCase& c : ffijit::bench::CallCases()) {
    Executors e = Make(mod, c.symbol, c.sig);
    EXPECT_TRUE(ffijit::IsHotInlined(e.hot)) << c.name;
    std::vector<std::vector<Any>> calls = {c.args};
    // Every argument wrong in turn, and the wrong arity.
    for (size_t i = 0; i < c.args.size(); ++i) {
      std::vector<Any> wrong = c.args;
      wrong[i] = Any(std::string("wrong"));
      calls.push_back(wrong);
    }
    calls.push_back({});
    std::vector<std::string> outcomes = ExpectAgree(e, c.name, calls);
    // The bitcode computes what the benchmark's own compile of the same source does.
    Function process = ffijit::MakeFunction(std::string("process_") + c.name, c.fn, c.sig);
    EXPECT_EQ(Outcome(process, c.args), outcomes[0]) << c.name;
  }
}

TEST(InlinedHotThunkLifetime, TheModuleLivesAsLongAsItsHotFunctions) {
  const Signature unary = Sig({S(ScalarKind::kI64)}, {S(ScalarKind::kI64)});
  Function count, table;
  int64_t* counter = nullptr;
  {
    JitModule mod = JitModule::Create("released");
    mod.AddFile(Ir("inline_natives.bc"));
    counter = static_cast<int64_t*>(mod.Lookup("in_counter"));
    ffijit::ScopedJitOptions never({ffijit::JitPolicy::kNever, 0, 0});
    count = mod.MakeNative("in_count", unary);
    table = mod.MakeNative("in_table", unary);
    JitEngine::Default().CompileHotNow(count);
    JitEngine::Default().CompileHotNow(table);
  }  // the module handle is gone; the functions keep the module (and its variables) alive
  ASSERT_TRUE(ffijit::IsHotInlined(count));
  ASSERT_TRUE(ffijit::IsHotInlined(table));
  *counter = 0;
  for (int64_t i = 1; i <= 100; ++i) EXPECT_EQ(count(int64_t{1}).cast<int64_t>(), i);
  EXPECT_EQ(*counter, 100);
  const int64_t live = JitEngine::Default().Stats().hot_thunks_live;
  count = Function();  // its hot thunk goes; the module stays for `table`
  EXPECT_EQ(JitEngine::Default().Stats().hot_thunks_live, live - 1);
  EXPECT_EQ(table(int64_t{4}).cast<int64_t>(), 11);
  table = Function();  // the last user: thunk, then module, freed (ASan: nothing touched after)
  EXPECT_EQ(JitEngine::Default().Stats().hot_thunks_live, live - 2);
}

TEST(InlinedHotThunkLifetime, ReleasedWhileTheBackgroundCompileRuns) {
  const Signature unary = Sig({S(ScalarKind::kI64)}, {S(ScalarKind::kI64)});
  for (int round = 0; round < 5; ++round) {
    JitModule mod = JitModule::Create("racing");
    mod.AddFile(Ir("inline_natives.bc"));
    // Eager cold tier, hot after one call on it: the hot compile is queued by the first call.
    ffijit::ScopedJitOptions eager({ffijit::JitPolicy::kEager, 0, 1});
    Function f = mod.MakeNative("in_call_helper", unary);
    JitEngine::Default().WaitIdle();
    std::thread caller([f] {
      for (int i = 0; i < 200; ++i) EXPECT_EQ(f(int64_t{3}).cast<int64_t>(), 10 + 17);
    });
    caller.join();
    // Drop both handles while the hot compile may still run: the queue holds the function.
    f = Function();
    mod = JitModule();
    JitEngine::Default().WaitIdle();
  }
  SUCCEED();
}

}  // namespace
