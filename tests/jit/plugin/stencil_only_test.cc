// FFIJIT_JIT=stencils (JitPolicy::kStencils) keeps LLVM out of the process: a function of every
// signature kind the stencil tier covers runs on the stencil thunk it got at registration, however
// often it is called; one the tier does not cover stays on the interpreter; neither maps
// libffijit_orc or libLLVM. Its own binary, linking the shared library as a user's program does:
// the process's mappings are the subject, and the environment's policy is read once, by the first
// registration, which is this test's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ffijit/container.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "ffijit/string.h"
#include "ffijit/tensor.h"
#include "interpreter/bound_function.h"
#include "jit/plugin/mappings.h"
#include "stencils/thunks/stencil_tier.h"

namespace ffijit {
namespace {

using ffijit_tests::Mapped;

// ---- One native per kind of parameter and result the stencil tier takes. ----

// Nine integer parameters: some go on the stack on x86-64 and AArch64 alike.
int64_t Ints(bool a, int8_t b, int16_t c, int32_t d, int64_t e, uint8_t f, uint16_t g, uint32_t h,
             uint64_t i) {
  return (a ? 1 : 0) + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h +
         9 * static_cast<int64_t>(i);
}
// Ten floating-point parameters: the last ones on the stack.
double Floats(float a, double b, float c, double d, double e, double f, double g, double h,
              double i, double j) {
  return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j;
}
float Halve(float x) {
  return x / 2;
}
// f16 and bf16 arrive in vector registers: their bits, read back.
int64_t HalfBits(double a, double b) {
  uint64_t x, y;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  return static_cast<int64_t>((x & 0xffff) << 16 | (y & 0xffff));
}
void* Advance(void* p) {
  return static_cast<char*>(p) + 1;
}
int64_t Length(const char* s) {
  return static_cast<int64_t>(std::strlen(s));
}
int64_t BytesSum(TVMFFIByteArray b) {
  int64_t sum = static_cast<int64_t>(b.size) * 1000;
  for (size_t i = 0; i < b.size; ++i) sum += static_cast<unsigned char>(b.data[i]);
  return sum;
}
int64_t TypeOf(TVMFFIObject* o) {
  return o->type_index;
}
int64_t DtypeDevice(DLDataType t, DLDevice d) {
  return t.code * 100000 + t.bits * 100 + d.device_type * 10 + d.device_id;
}
int64_t AnyTag(const TVMFFIAny* v) {
  return v->type_index * 1000 + (v->type_index == kTVMFFIInt ? v->v_int64 : 0);
}
int64_t Describe(DLTensor* t) {
  return t->ndim * 1000 + t->shape[0] * 10 + t->shape[1];
}
// The leaves of slist<i64, f64> and sdict<k: i32>.
double Leaves(int64_t a, double b, int32_t k) {
  return static_cast<double>(a) + b + k;
}
// Two results, through out-pointers.
void Split(int64_t x, int32_t* half, double* rest) {
  *half = static_cast<int32_t>(x / 2);
  *rest = static_cast<double>(x) - static_cast<double>(x / 2) + 0.5;
}
int64_t g_nothing_seen = 0;
void Nothing(int64_t x) {
  g_nothing_seen = x;
}
int Status(int64_t code) {
  return static_cast<int>(code);
}
bool IsOdd(uint64_t x) {
  return (x & 1) != 0;
}
DLDevice MakeDevice(int32_t id) {
  return DLDevice{kDLCUDA, id};
}
DLDataType MakeDtype(int32_t bits) {
  return DLDataType{kDLFloat, static_cast<uint8_t>(bits), 1};
}
int64_t Keyed(int64_t a, int64_t b) {
  return 10 * a + b;
}

Signature With(Signature sig, std::vector<TypePtr> args, std::vector<TypePtr> results) {
  sig.args = std::move(args);
  sig.results = std::move(results);
  return sig;
}

// A compact text of a result, to compare with the expected one.
std::string Show(const Any& v) {
  const TVMFFIAny& raw = v.raw();
  switch (raw.type_index) {
    case kTVMFFINone:
      return "None";
    case kTVMFFIInt:
      return std::to_string(raw.v_int64);
    case kTVMFFIBool:
      return raw.v_int64 != 0 ? "True" : "False";
    case kTVMFFIFloat:
      return std::to_string(raw.v_float64);
    case kTVMFFIOpaquePtr:
      return "ptr " + std::to_string(reinterpret_cast<uintptr_t>(raw.v_ptr));
    case kTVMFFIDevice:
      return "device " + std::to_string(raw.v_device.device_type) + ":" +
             std::to_string(raw.v_device.device_id);
    case kTVMFFIDataType:
      return "dtype " + std::to_string(raw.v_dtype.code) + "/" + std::to_string(raw.v_dtype.bits);
    case kTVMFFIArray: {
      Array a = v.cast<Array>();
      std::string out = "[";
      for (int64_t i = 0; i < a.size(); ++i) out += (i ? ", " : "") + Show(Any(a[i]));
      return out + "]";
    }
    default:
      return "<" + v.type_name() + ">";
  }
}

struct Case {
  const char* what;
  Function function;
  std::vector<Any> args;
  Any expected;
};

constexpr const char* kText = "a string too long to be small";

// Every case a stencil thunk takes, its arguments in forms the thunk converts inline.
std::vector<Case> StencilCases(const Tensor& tensor, char* buffer) {
  const Signature none;
  Signature status = SignatureOf<int (*)(int64_t)>();
  status.results.clear();
  status.convention = CallConvention::kStatus;
  auto scalar = [](ScalarKind k) { return Type::Scalar(k); };
  const Signature halves =
      With(none, {scalar(ScalarKind::kF16), scalar(ScalarKind::kBF16)}, {scalar(ScalarKind::kI64)});
  const Signature checked_tensor =
      With(none, {Type::NDArray(ScalarKind::kF32, 2, {-1, -1})}, {scalar(ScalarKind::kI64)});
  const Signature structures =
      With(none,
           {Type::Sequence(TypeKind::kSList, {scalar(ScalarKind::kI64), scalar(ScalarKind::kF64)}),
            Type::SDict({"k"}, {scalar(ScalarKind::kI32)})},
           {scalar(ScalarKind::kF64)});
  const Signature two_results =
      With(none, {scalar(ScalarKind::kI64)}, {scalar(ScalarKind::kI32), scalar(ScalarKind::kF64)});
  auto raw = [](const char* name, auto* fn, const Signature& sig) {
    return MakeFunction(name, reinterpret_cast<void*>(fn), sig);
  };
  DLDataType f32{kDLFloat, 32, 1};
  DLDevice cpu1{kDLCPU, 1};
  return {
      {"integers, on the stack too",
       MakeFunction("ints", &Ints),
       {true, -8, -16, -32, -64, 8, 16, 32, 64},
       Ints(true, -8, -16, -32, -64, 8, 16, 32, 64)},
      {"floats, on the stack too",
       MakeFunction("floats", &Floats),
       {0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5},
       Floats(0.5f, 1.5, 2.5f, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5)},
      {"an f32 result", MakeFunction("halve", &Halve), {3.0}, Halve(3.0f)},
      {"f16 and bf16", raw("half_bits", &HalfBits, halves), {1.0, 1.0}, int64_t{0x3C003F80}},
      {"a pointer result",
       MakeFunction("advance", &Advance),
       {static_cast<void*>(buffer)},
       static_cast<void*>(buffer + 1)},
      {"a str", MakeFunction("length", &Length), {std::string(kText)}, Length(kText)},
      {"bytes", MakeFunction("bytes_sum", &BytesSum), {Bytes("xyz")}, int64_t{3363}},
      {"an object", MakeFunction("type_of", &TypeOf), {Array{1, 2}}, int64_t{kTVMFFIArray}},
      {"a DataType and a Device",
       MakeFunction("dtype_device", &DtypeDevice),
       {f32, cpu1},
       DtypeDevice(f32, cpu1)},
      {"any", MakeFunction("any_tag", &AnyTag), {7}, int64_t{kTVMFFIInt * 1000 + 7}},
      {"a tensor", raw("describe", &Describe, checked_tensor), {tensor}, int64_t{2023}},
      {"structure leaves", raw("leaves", &Leaves, structures), {Array{3, 0.5}, Map{{"k", 4}}}, 7.5},
      {"two results", raw("split", &Split, two_results), {int64_t{9}}, Array{4, 5.5}},
      {"a void result", MakeFunction("nothing", &Nothing), {int64_t{6}}, Any()},
      {"the status convention", raw("status", &Status, status), {int64_t{0}}, Any()},
      {"a bool result", MakeFunction("is_odd", &IsOdd), {int64_t{7}}, true},
      {"a Device result", MakeFunction("make_device", &MakeDevice), {2}, MakeDevice(2)},
      {"a DataType result", MakeFunction("make_dtype", &MakeDtype), {16}, MakeDtype(16)},
  };
}

// Whether `f` runs the stencil thunk its registration made (held by its tier state until the LLVM
// plugin, which is not loaded here, would adopt it).
bool OnStencilThunk(const Function& f) {
  const auto* fn = reinterpret_cast<const BoundFunction*>(f.get());
  if (fn->release_tier_state != &ReleasePendingTier || fn->tier_state == nullptr) return false;
  const auto* pending = static_cast<const PendingTier*>(fn->tier_state);
  return pending->early.entry != nullptr && fn->cell.safe_call == pending->early.entry;
}

bool OnInterpreter(const Function& f) {
  return reinterpret_cast<const BoundFunction*>(f.get())->cell.safe_call == &InterpreterSafeCall;
}

Any Call(const Function& f, const std::vector<Any>& args) {
  std::vector<TVMFFIAny> views;
  for (const Any& a : args) views.push_back(a.raw());
  return f.CallPacked(views.data(), static_cast<int32_t>(views.size()));
}

TEST(StencilOnly, EveryCoveredKindStaysOnItsStencilThunkAndNoLlvmIsLoaded) {
  // Hot after 5 calls, were the policy another: this one ignores it.
  setenv("FFIJIT_JIT", "stencils", 1);
  setenv("FFIJIT_JIT_HOT", "after:5", 1);
  ASSERT_EQ(DefaultJitOptions().policy, JitPolicy::kStencils) << "the policy was read before";
  ASSERT_FALSE(Mapped("libLLVM"));
  ASSERT_FALSE(Mapped("libffijit_orc"));
  constexpr int kCalls = 200;

  const stencils::StencilCounters before = stencils::Counters();
  Tensor tensor = Tensor::Empty({2, 3}, DataType(DLDataType{kDLFloat, 32, 1}));
  char buffer[2] = {};
  std::vector<Case> cases = StencilCases(tensor, buffer);
  EXPECT_EQ(stencils::Counters().made - before.made, static_cast<int64_t>(cases.size()));
  for (const Case& c : cases) {
    EXPECT_TRUE(OnStencilThunk(c.function)) << c.what << ": no stencil thunk at registration";
    for (int i = 0; i < kCalls; ++i) {
      std::string got = Show(Call(c.function, c.args));
      if (got != Show(c.expected)) {
        ADD_FAILURE() << c.what << ", call " << i << ": got " << got << ", expected "
                      << Show(c.expected);
        break;
      }
    }
    EXPECT_TRUE(OnStencilThunk(c.function)) << c.what << ": left its stencil thunk";
  }
  EXPECT_EQ(g_nothing_seen, 6);
  // Every call converted its arguments inline: none went through the interpreter.
  EXPECT_EQ(stencils::Counters().fallbacks, before.fallbacks);

  // Keyword arguments are not the stencils': the interpreter, past the count that would compile.
  RegisterOptions named;
  named.arg_names = {"a", "b"};
  Function keyed = MakeFunction("keyed", &Keyed, named);
  for (int64_t i = 0; i < kCalls; ++i) EXPECT_EQ(keyed(i, 3).cast<int64_t>(), 10 * i + 3);
  EXPECT_EQ(CallWithKeywords(keyed, {}, {{"b", Any(1)}, {"a", Any(2)}}).cast<int64_t>(), 21);
  EXPECT_TRUE(OnInterpreter(keyed));

  EXPECT_FALSE(Mapped("libffijit_orc")) << "the stencil-only policy loaded the LLVM plugin";
  EXPECT_FALSE(Mapped("libLLVM")) << "the stencil-only policy loaded LLVM";

  // What asks for LLVM still gets it; the function compiled then never goes hot on its own.
  JitEngine::Default().CompileNow(keyed);
  EXPECT_TRUE(Mapped("libLLVM"));
  EXPECT_TRUE(IsJitCompiled(keyed));
  for (int64_t i = 0; i < kCalls; ++i) EXPECT_EQ(keyed(i, 1).cast<int64_t>(), 10 * i + 1);
  JitEngine::Default().WaitIdle();
  EXPECT_FALSE(IsHotCompiled(keyed));
  EXPECT_EQ(JitEngine::Default().Stats().hot_compiled, 0);
}

}  // namespace
}  // namespace ffijit
