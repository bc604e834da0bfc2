// The benchmark's yardstick is honest: each hand-written safe_call (bench/handwritten.c) gives the
// results and errors the interpreter, the cold-tier thunk and the hot-tier thunk give, on the
// benchmark's arguments and on every wrong form of each of them.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "call_natives.h"
#include "ffijit/c_ext.h"
#include "ffijit/error.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "handwritten.h"
#include "interpreter/bound_function.h"

namespace ffijit::testing {
namespace {

using bench::CallCase;
using bench::CallCases;

static_assert(offsetof(BoundFunction, target) == FFIJIT_BENCH_TARGET_OFFSET,
              "handwritten.c reads the native where a registered function keeps it");

// "status: value" of one call, the error as "Kind: message".
std::string Outcome(const Function& f, std::vector<TVMFFIAny> args) {
  TVMFFIAny result{};
  int status = TVMFFIFunctionCall(f.get(), args.data(), static_cast<int32_t>(args.size()), &result);
  if (status != 0) {
    Error e = Error::MoveFromRaised();
    return "error " + e.kind() + ": " + e.message();
  }
  Any owned = Any::Adopt(result);
  std::string text = "ok " + std::to_string(result.type_index) + ":";
  if (result.type_index == kTVMFFIFloat) return text + std::to_string(result.v_float64);
  return text + std::to_string(result.v_int64);
}

// Every argument list the executors must agree on: the case's own, each argument replaced by
// each other form, one argument too few and one too many.
std::vector<std::vector<TVMFFIAny>> Variants(const CallCase& c, std::vector<Any>* keep) {
  static int dummy = 0;
  static DLTensor loose_tensor = [] {
    static int64_t shape[2] = {3, 5};
    DLTensor t{};
    t.dtype = DLDataType{kDLFloat, 32, 1};
    t.ndim = 2;
    t.shape = shape;
    return t;
  }();
  static const char* raw_text = "raw characters";
  std::vector<Any> forms = {
      Any(nullptr),
      Any(7),
      Any(int64_t{1} << 40),  // fits no i32
      Any(-3),
      Any(true),
      Any(2.75),
      Any(static_cast<void*>(&dummy)),
      Any(DataType::Float(32)),
      Any(Device(kDLCPU, 0)),
      Any(std::string("short")),
      Any(std::string("a string long enough to be an object")),
      // A NUL inside, which a C string would end at: refused, never cut short.
      Any(std::string("a\0b", 3)),
      Any(std::string("a string object with a NUL\0 inside", 35)),
      Any(Tensor::Empty({4, 8}, DataType::Float(32))),
      Any(Tensor::Empty({4, 8}, DataType::Int(32))),
      Any(Tensor::Empty({2, 2, 2}, DataType::Float(32))),
      Any(Bytes(std::string("bytes"))),
  };
  for (const Any& a : forms) keep->push_back(a);
  std::vector<TVMFFIAny> raw_forms;
  for (const Any& a : forms) raw_forms.push_back(a.raw());
  TVMFFIAny raw{};
  raw.type_index = kTVMFFIRawStr;
  raw.v_c_str = raw_text;
  raw_forms.push_back(raw);
  raw.v_c_str = nullptr;  // a NULL RawStr
  raw_forms.push_back(raw);
  raw.type_index = kTVMFFIDLTensorPtr;
  raw.v_ptr = &loose_tensor;
  raw_forms.push_back(raw);
  raw.v_ptr = nullptr;  // a NULL DLTensorPtr
  raw_forms.push_back(raw);
  raw = TVMFFIAny{};
  raw.type_index = kTVMFFISmallStr;  // longer than a small string can be
  raw.small_str_len = 9;
  std::memcpy(raw.v_bytes, "12345678", 8);
  raw_forms.push_back(raw);

  std::vector<TVMFFIAny> base;
  for (const Any& a : c.args) base.push_back(a.raw());
  std::vector<std::vector<TVMFFIAny>> out = {base};
  for (size_t i = 0; i < base.size(); ++i) {
    for (const TVMFFIAny& form : raw_forms) {
      std::vector<TVMFFIAny> v = base;
      v[i] = form;
      out.push_back(v);
    }
  }
  out.push_back(std::vector<TVMFFIAny>(base.begin(), base.end() - 1));
  std::vector<TVMFFIAny> more = base;
  more.push_back(base[0]);
  out.push_back(more);
  return out;
}

TEST(Handwritten, EachYardstickAgreesWithTheInterpreterAndBothThunkTiers) {
  for (const CallCase& c : CallCases()) {
    SCOPED_TRACE(c.name);
    RegisterOptions interpreted;
    interpreted.interpret_only = true;
    Function interp = MakeFunction(std::string("hw_") + c.name, c.fn, c.sig, interpreted);
    ScopedJitOptions never({JitPolicy::kNever, 0, 0});
    Function cold = MakeFunction(std::string("hw_") + c.name, c.fn, c.sig);
    Function hot = MakeFunction(std::string("hw_") + c.name, c.fn, c.sig);
    Function handwritten = MakeFunction(std::string("hw_") + c.name, c.fn, c.sig);
    ASSERT_NO_THROW(JitEngine::Default().CompileNow(cold));
    ASSERT_NO_THROW(JitEngine::Default().CompileHotNow(hot));
    auto* bound = reinterpret_cast<BoundFunction*>(handwritten.get());
    ASSERT_EQ(bound->cell.safe_call, &InterpreterSafeCall);
    FFIJITBenchHandwrittenInit(&InterpreterSafeCall);
    TVMFFISafeCallType entry = FFIJITBenchHandwrittenFor(c.name);
    ASSERT_NE(entry, nullptr);
    SetSafeCall(bound, entry);

    std::vector<Any> keep;
    int64_t successes = 0, errors = 0;
    for (const auto& args : Variants(c, &keep)) {
      const std::string want = Outcome(interp, args);
      EXPECT_EQ(Outcome(handwritten, args), want);
      EXPECT_EQ(Outcome(cold, args), want);
      EXPECT_EQ(Outcome(hot, args), want);
      (want.rfind("ok", 0) == 0 ? successes : errors)++;
    }
    // The benchmark's own arguments succeed, and most wrong forms are errors.
    EXPECT_EQ(Outcome(handwritten,
                      [&] {
                        std::vector<TVMFFIAny> v;
                        for (const Any& a : c.args) v.push_back(a.raw());
                        return v;
                      }())
                  .rfind("ok", 0),
              0u);
    EXPECT_GT(successes, 0);
    EXPECT_GT(errors, successes);
  }
}

TEST(Handwritten, ThereIsOneForEveryBenchmarkCase) {
  for (const CallCase& c : CallCases()) EXPECT_NE(FFIJITBenchHandwrittenFor(c.name), nullptr);
  EXPECT_EQ(FFIJITBenchHandwrittenFor("no such case"), nullptr);
}

}  // namespace
}  // namespace ffijit::testing
