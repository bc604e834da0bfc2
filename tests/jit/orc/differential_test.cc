// Differential suite: the JIT thunk (the shared cold-tier one, and a function's own hot-tier one)
// and the interpreter run the same packed calls on the same plan and must agree byte for byte:
// what reached the native, the status, the result, the error.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <sstream>

#include "differential.h"
#include "ffijit/c_ext.h"
#include "ffijit/error.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "interpreter/bound_function.h"
#include "random_case.h"
#include "recorder.h"
#if FFIJIT_HAVE_STENCILS
#include "stencils/thunks/stencil_tier.h"
#endif

namespace ffijit::testing {
namespace {

// One executor's run of a packed call on the assembly recorder.
CallOutcome Run(TVMFFISafeCallType entry, BoundFunction* fn, std::vector<TVMFFIAny>& args,
                const CaseGenerator::NativeResults& native) {
  ArmRecorder(fn->plan, native.ret_gpr0, native.ret_gpr1, native.ret_fpr0, native.out);
  CallOutcome outcome = CallPacked(entry, fn, args);
  Recording recording = TakeRecording();
  outcome.called = recording.called;
  if (recording.called) outcome.arguments = DescribeArguments(*fn->plan, recording);
  return outcome;
}

// One signature's function, compiled; the interpreter entry stays callable directly.
struct Subject {
  Function function;
  BoundFunction* bound() const { return reinterpret_cast<BoundFunction*>(function.get()); }
};

void ExpectSame(const Subject& subject, std::vector<TVMFFIAny>& args,
                const CaseGenerator::NativeResults& native, const std::string& context,
                int64_t* failures) {
  BoundFunction* fn = subject.bound();
  ExpectAgree(context, *fn->plan,
              {{"interpreter", testing::Run(&InterpreterSafeCall, fn, args, native)},
               {"jit", Run(fn->cell.safe_call, fn, args, native)}},
              failures);
}

// `hot_engine`: also give every function its hot-tier thunk (which then runs the calls).
std::vector<Subject> MakeSubjects(const std::vector<Signature>& sigs,
                                  JitEngine* hot_engine = nullptr) {
  ScopedJitOptions never({JitPolicy::kNever, 0});
  std::vector<Subject> subjects;
  std::vector<Function> functions;
  for (size_t i = 0; i < sigs.size(); ++i) {
    Function f = MakeFunction("case" + std::to_string(i), RecorderAddress(), sigs[i]);
    functions.push_back(f);
    subjects.push_back({std::move(f)});
  }
  CompileResults results = JitEngine::Default().CompileNow(functions);
  EXPECT_EQ(results.installed, static_cast<int64_t>(sigs.size()));
  for (size_t i = 0; i < results.reasons.size(); ++i) {
    EXPECT_EQ(results.reasons[i], "") << CanonicalString(sigs[i]);
  }
  for (const Subject& s : subjects) EXPECT_TRUE(IsJitCompiled(s.function));
  if (hot_engine) {
    for (size_t i = 0; i < subjects.size(); ++i) {
      EXPECT_NO_THROW(hot_engine->CompileHotNow(subjects[i].function)) << CanonicalString(sigs[i]);
      EXPECT_TRUE(IsHotCompiled(subjects[i].function));
    }
  }
  return subjects;
}

// kSignatures random signatures, kCallsPerSignature random calls each, on the cold tier or (with
// `hot_engine`) the hot tier.
void RunRandomCases(uint64_t seed, int signatures, int calls_per_signature, JitEngine* hot_engine) {
  const uint64_t kSeed = seed;
  const int kSignatures = signatures;
  const int kCallsPerSignature = calls_per_signature;
  CaseGenerator gen(kSeed);
  int64_t unlowerable = 0;
  std::vector<Signature> sigs = gen.LowerableSignatures(kSignatures, &unlowerable);
  std::vector<Subject> subjects = MakeSubjects(sigs, hot_engine);
  int64_t failures = 0, cases = 0, structured = 0;
  for (const Subject& s : subjects) structured += !s.bound()->plan->result_shape.empty();
  for (size_t s = 0; s < subjects.size(); ++s) {
    for (int c = 0; c < kCallsPerSignature; ++c) {
      ObjectPool pool;
      std::vector<TVMFFIAny> args = gen.RandomArguments(sigs[s], 0.6, pool);
      CaseGenerator::NativeResults native = gen.RandomResults(*subjects[s].bound()->plan);
      ExpectSame(subjects[s], args, native,
                 "seed " + std::to_string(kSeed) + " signature " + std::to_string(s) + " call " +
                     std::to_string(c),
                 &failures);
      ++cases;
    }
  }
  EXPECT_EQ(failures, 0) << "of " << cases << " cases";
  EXPECT_GE(cases, kSignatures * kCallsPerSignature);
  EXPECT_LT(unlowerable, kSignatures) << "the generator mostly makes callable signatures";
  // Structure results (nested, with gaps, of 0 to 3 leaves each) are part of the matrix.
  EXPECT_GT(structured, kSignatures / 10) << "signatures with a structure result";
}

TEST(Differential, RandomSignaturesAndArguments) {
  RunRandomCases(20261122, 400, 12, nullptr);
}

TEST(Differential, RandomSignaturesAndArgumentsOnTheHotTier) {
  // Its own engine (declared before the functions, so it outlives them), with room for every
  // function's hot thunk.
  JitEngineOptions options;
  options.max_hot_thunks = 1000;
  JitEngine hot_engine(options);
  RunRandomCases(20261123, 250, 12, &hot_engine);
}

#if FFIJIT_HAVE_STENCILS
// The copy-and-patch tier on the same random matrix: every signature it supports gets a stencil
// thunk, which must agree with the interpreter on every call; the rest say why not.
TEST(Differential, RandomSignaturesAndArgumentsOnTheStencilTier) {
  const uint64_t kSeed = 20261128;
  const int kSignatures = 600, kCallsPerSignature = 12;
  CaseGenerator gen(kSeed);
  int64_t unlowerable = 0;
  std::vector<Signature> sigs = gen.LowerableSignatures(kSignatures, &unlowerable);
  ScopedJitOptions never({JitPolicy::kNever, 0});
  int64_t failures = 0, cases = 0, supported = 0, inline_calls = 0;
  for (size_t s = 0; s < sigs.size(); ++s) {
    Function f = MakeFunction("case" + std::to_string(s), RecorderAddress(), sigs[s]);
    auto* fn = reinterpret_cast<BoundFunction*>(f.get());
    std::string why;
    stencils::StencilThunk* thunk = stencils::MakeStencilThunk(fn, false, &why);
    if (thunk == nullptr) {
      EXPECT_EQ(why, stencils::StencilUnsupportedReason(*fn->plan));
      EXPECT_NE(why, "");
      continue;
    }
    ++supported;
    for (int c = 0; c < kCallsPerSignature; ++c) {
      ObjectPool pool;
      std::vector<TVMFFIAny> args = gen.RandomArguments(sigs[s], 0.6, pool);
      CaseGenerator::NativeResults native = gen.RandomResults(*fn->plan);
      const int64_t fallbacks = stencils::Counters().fallbacks;
      CallOutcome stenciled = testing::Run(stencils::StencilThunkEntry(thunk), fn, args, native);
      inline_calls += stencils::Counters().fallbacks == fallbacks;
      ExpectAgree("seed " + std::to_string(kSeed) + " signature " + std::to_string(s) + " call " +
                      std::to_string(c),
                  *fn->plan,
                  {{"interpreter", testing::Run(&InterpreterSafeCall, fn, args, native)},
                   {"stencil", stenciled}},
                  &failures);
      ++cases;
    }
    stencils::ReleaseStencilThunk(thunk);
  }
  EXPECT_EQ(failures, 0) << "of " << cases << " cases";
  // The generator mixes keywords, static tensor dims and long argument lists into some
  // signatures; the stencils cover the rest (75% of this seed's signatures).
  EXPECT_GT(supported, kSignatures / 2) << "signatures with a stencil thunk";
  // Random arguments are mostly of the right form: many calls convert inline.
  EXPECT_GT(inline_calls, cases / 5) << "calls the stencils converted without the interpreter";
  std::printf("stencil tier: %lld of %d signatures supported, %lld of %lld calls inline\n",
              static_cast<long long>(supported), kSignatures, static_cast<long long>(inline_calls),
              static_cast<long long>(cases));
}
#endif

}  // namespace
}  // namespace ffijit::testing
