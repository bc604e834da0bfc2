// The copy-and-patch tier (jit/stencils/): every conversion at its edges against the interpreter
// (same result, same error kind and message), W^X of the code, release with the function, and the
// tiering (registration installs a stencil thunk, which counts its way to the hot tier).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "differential.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "interpreter/bound_function.h"
#include "random_case.h"
#include "register_canaries.h"
#include "stencils/link/code_memory.h"
#include "stencils/thunks/stencil_tier.h"

namespace ffijit::testing {
namespace {

using stencils::MakeStencilThunk;
using stencils::StencilThunk;
using stencils::StencilThunkEntry;

template <typename T>
T Id(T x) {
  return x;
}
int64_t Sum6(int64_t a, int32_t b, int16_t c, int8_t d, uint32_t e, uint8_t f) {
  return a + b + c + d + static_cast<int64_t>(e) + f;
}
double Mix(float a, double b, int32_t c, float d, double e, bool f) {
  return static_cast<double>(a) * 2 + b * 3 + c + static_cast<double>(d) / 4 + e + (f ? 100 : 0);
}
int64_t Length(const char* s) {
  return s == nullptr ? -1 : static_cast<int64_t>(std::strlen(s));
}
int64_t TypeOf(TVMFFIObject* o) {
  return o == nullptr ? -1 : o->type_index;
}
// Enough parameters that some go on the stack on both platforms, of narrow and float types too.
double Many(int64_t a, int32_t b, int16_t c, int8_t d, uint8_t e, uint16_t f, uint32_t g, bool h,
            int8_t i, int16_t j, double k, float l, double m, float n, double o, float p, double q,
            float r, float s, double t) {
  return static_cast<double>(a + b + c + d + e + f + g + h) * 1000 + i * 100 + j * 10 + k + l +
         m * 2 + n * 3 + o * 4 + p * 5 + q * 6 + r * 7 + s * 8 + t * 9;
}
uint64_t Huge() {
  return UINT64_MAX;
}
void Nothing(int64_t) {}
int Status(int64_t code) {
  return static_cast<int>(code);
}

TVMFFIAny Ptr(void* p) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIOpaquePtr;
  a.v_ptr = p;
  return a;
}

// A function of `fn` that stays on the interpreter, and its stencil thunk (no count).
struct Subject {
  Function function;
  StencilThunk* thunk = nullptr;
  BoundFunction* bound() const { return reinterpret_cast<BoundFunction*>(function.get()); }
  ~Subject() { stencils::ReleaseStencilThunk(thunk); }
};

template <typename F>
std::unique_ptr<Subject> Make(const char* name, F* fn) {
  ScopedJitOptions never({JitPolicy::kNever, 0});
  auto s = std::make_unique<Subject>();
  s->function = MakeFunction(name, fn);
  std::string why;
  s->thunk = MakeStencilThunk(s->bound(), false, &why);
  EXPECT_NE(s->thunk, nullptr) << name << ": " << why;
  return s;
}

enum class Path { kInline, kFallback, kAny };

// Calls both executors with `args` and expects the same status and result or error, and the
// stencil thunk to have converted the call inline or left it to the interpreter as `path` says.
void ExpectSame(const Subject& s, std::vector<TVMFFIAny> args, const std::string& what,
                Path path = Path::kAny) {
  std::vector<TVMFFIAny> copy = args;
  CallOutcome interpreted = CallPacked(&InterpreterSafeCall, s.bound(), args);
  const int64_t fallbacks = stencils::Counters().fallbacks;
  CallOutcome stenciled = CallPacked(StencilThunkEntry(s.thunk), s.bound(), copy);
  const bool fell_back = stencils::Counters().fallbacks != fallbacks;
  if (path != Path::kAny) {
    EXPECT_EQ(fell_back, path == Path::kFallback) << what << ": fallback taken or not";
  }
  EXPECT_TRUE(SameOutcome(interpreted, stenciled))
      << what << "\n  interpreter: " << DescribeOutcome(interpreted)
      << "\n  stencil:     " << DescribeOutcome(stenciled);
}

// Values around every integer range's edges, of both signs, and the wrong forms.
std::vector<TVMFFIAny> IntegerEdges() {
  std::vector<TVMFFIAny> values;
  for (int64_t v : {int64_t{0},
                    int64_t{1},
                    int64_t{-1},
                    int64_t{INT8_MIN} - 1,
                    int64_t{INT8_MIN},
                    int64_t{INT8_MAX},
                    int64_t{INT8_MAX} + 1,
                    int64_t{UINT8_MAX},
                    int64_t{UINT8_MAX} + 1,
                    int64_t{INT16_MIN} - 1,
                    int64_t{INT16_MIN},
                    int64_t{INT16_MAX},
                    int64_t{INT16_MAX} + 1,
                    int64_t{UINT16_MAX},
                    int64_t{UINT16_MAX} + 1,
                    int64_t{INT32_MIN} - 1,
                    int64_t{INT32_MIN},
                    int64_t{INT32_MAX},
                    int64_t{INT32_MAX} + 1,
                    int64_t{UINT32_MAX},
                    int64_t{UINT32_MAX} + 1,
                    INT64_MIN,
                    INT64_MAX}) {
    values.push_back(Int(v));
  }
  values.push_back(BoolValue(true));
  values.push_back(BoolValue(false));
  values.push_back(FloatValue(1.5));
  values.push_back(FloatValue(-0.0));
  values.push_back(NoneValue());
  values.push_back(Ptr(nullptr));
  return values;
}

template <typename T>
void CheckIntegerConversion(const char* name) {
  auto s = Make(name, &Id<T>);
  const ConversionInfo& info = InfoOf(s->bound()->plan->params[0].conversion);
  for (const TVMFFIAny& v : IntegerEdges()) {
    const bool int_form = v.type_index == kTVMFFIInt || v.type_index == kTVMFFIBool;
    const bool fits = std::is_same_v<T, bool> || (v.v_int64 >= info.min && v.v_int64 <= info.max);
    ExpectSame(*s, {v},
               std::string(name) + "(" + std::to_string(v.v_int64) + ", tag " +
                   std::to_string(v.type_index) + ")",
               int_form && fits ? Path::kInline : Path::kFallback);
  }
  // Arity errors.
  ExpectSame(*s, {}, std::string(name) + "()", Path::kFallback);
  ExpectSame(*s, {Int(1), Int(2)}, std::string(name) + "(1, 2)", Path::kFallback);
}

TEST(StencilTier, IntegersAndBoolAtTheirEdges) {
  CheckIntegerConversion<int8_t>("id_i8");
  CheckIntegerConversion<int16_t>("id_i16");
  CheckIntegerConversion<int32_t>("id_i32");
  CheckIntegerConversion<int64_t>("id_i64");
  CheckIntegerConversion<uint8_t>("id_u8");
  CheckIntegerConversion<uint16_t>("id_u16");
  CheckIntegerConversion<uint32_t>("id_u32");
  CheckIntegerConversion<uint64_t>("id_u64");
  CheckIntegerConversion<bool>("id_bool");
}

TEST(StencilTier, FloatsFromEveryForm) {
  auto f64 = Make("id_f64", &Id<double>);
  auto f32 = Make("id_f32", &Id<float>);
  std::vector<TVMFFIAny> values = {FloatValue(0.0),
                                   FloatValue(-0.0),
                                   FloatValue(1.0 / 3),
                                   FloatValue(1e300),
                                   FloatValue(-1e-300),
                                   FloatValue(NAN),
                                   FloatValue(INFINITY),
                                   FloatValue(3.4028235677973366e38),
                                   Int(0),
                                   Int(-7),
                                   Int(INT64_MAX),
                                   Int(INT64_MIN),
                                   Int((int64_t{1} << 53) + 1),
                                   BoolValue(true),
                                   NoneValue(),
                                   Ptr(nullptr)};
  for (const TVMFFIAny& v : values) {
    char what[64];
    std::snprintf(what, sizeof what, "tag %d payload %016" PRIx64, v.type_index, v.v_uint64);
    const Path path = v.type_index >= kTVMFFIInt && v.type_index <= kTVMFFIFloat ? Path::kInline
                                                                                 : Path::kFallback;
    ExpectSame(*f64, {v}, std::string("f64 ") + what, path);
    ExpectSame(*f32, {v}, std::string("f32 ") + what, path);
  }
}

TEST(StencilTier, PointersStringsAndObjects) {
  auto ptr = Make("id_ptr", &Id<void*>);
  int x = 0;
  for (const TVMFFIAny& v : {Ptr(&x), Ptr(nullptr), NoneValue(), Int(5), FloatValue(1)}) {
    ExpectSame(*ptr, {v}, "ptr tag " + std::to_string(v.type_index),
               v.type_index == kTVMFFIOpaquePtr || v.type_index == kTVMFFINone ? Path::kInline
                                                                               : Path::kFallback);
  }
  auto str = Make("length", &Length);
  ObjectPool pool;
  std::string with_nul("ab\0cd", 5);
  std::vector<TVMFFIAny> strings = {pool.String(""),
                                    pool.String("abc"),
                                    pool.String("1234567"),
                                    pool.String("a much longer string"),
                                    pool.String(with_nul),
                                    pool.String(std::string("x\0", 2)),
                                    pool.RawStr("raw text"),
                                    pool.Bytes("bytes"),
                                    NoneValue(),
                                    Int(3)};
  TVMFFIAny raw_null{};
  raw_null.type_index = kTVMFFIRawStr;
  strings.push_back(raw_null);
  TVMFFIAny str_null{};
  str_null.type_index = kTVMFFIStr;
  strings.push_back(str_null);
  TVMFFIAny small_too_long = pool.String("abc");
  small_too_long.small_str_len = 9;
  strings.push_back(small_too_long);
  for (size_t i = 0; i < strings.size(); ++i) {
    // The first five well-formed NUL-free strings, and the RawStr, convert inline.
    ExpectSame(*str, {strings[i]}, "str value " + std::to_string(i),
               i < 4 || i == 6 ? Path::kInline : Path::kFallback);
  }
  auto obj = Make("type_of", &TypeOf);
  for (const TVMFFIAny& v : {pool.String("a longer string object"), pool.Array({Int(1)}),
                             NoneValue(), Int(1), str_null}) {
    ExpectSame(*obj, {v}, "object tag " + std::to_string(v.type_index),
               v.type_index >= kTVMFFIStaticObjectBegin && v.v_obj != nullptr ? Path::kInline
                                                                              : Path::kFallback);
  }
}

// Str objects of every length up to past four 16-byte blocks, without a NUL (converted inline) and
// with one at every position (the interpreter's), as the interpreter decides each.
TEST(StencilTier, StringsOfEveryLengthWithAndWithoutANul) {
  auto str = Make("length_of_every", &Length);
  ObjectPool pool;
  for (size_t n = 8; n <= 70; ++n) {
    std::string text(n, 'x');
    for (size_t i = 0; i < n; ++i) text[i] = static_cast<char>('a' + i % 26);
    ExpectSame(*str, {pool.String(text)}, "length " + std::to_string(n), Path::kInline);
    for (size_t at = 0; at < n; ++at) {
      std::string with_nul = text;
      with_nul[at] = '\0';
      ExpectSame(*str, {pool.String(with_nul)},
                 "length " + std::to_string(n) + ", NUL at " + std::to_string(at), Path::kFallback);
    }
  }
}

// A Str whose bytes end at a page's end, before a page that cannot be read: the NUL scan reads no
// byte past that page (a fault here would end the test). The object is made here (a header of
// type Str and its {data, size}): only the stencil sees it, on its inline path.
int64_t AddressOf(const char* s) {
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(s));
}
TEST(StencilTier, AStringAtAPagesEndIsScannedWithoutReadingPastIt) {
  auto str = Make("address_at_page_end", &AddressOf);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* pages = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(pages, MAP_FAILED);
  ASSERT_EQ(mprotect(static_cast<char*>(pages) + page, page, PROT_NONE), 0);
  struct {
    TVMFFIObject header;
    const char* data;
    int64_t size;
  } object{};
  object.header.type_index = kTVMFFIStr;
  for (size_t n = 1; n <= 40; ++n) {
    char* data = static_cast<char*>(pages) + page - n;
    std::memset(data, 'y', n);
    object.data = data;
    object.size = static_cast<int64_t>(n);
    TVMFFIAny arg{};
    arg.type_index = kTVMFFIStr;
    arg.v_obj = &object.header;
    TVMFFIAny result{};
    const int64_t fallbacks = stencils::Counters().fallbacks;
    ASSERT_EQ(StencilThunkEntry(str->thunk)(str->bound(), &arg, 1, &result), 0) << n;
    EXPECT_EQ(stencils::Counters().fallbacks, fallbacks) << n;
    EXPECT_EQ(result.type_index, kTVMFFIInt) << n;
    EXPECT_EQ(result.v_int64, AddressOf(data)) << n;
  }
  munmap(pages, 2 * page);
}

#if defined(__x86_64__)
// Every way out of an x86-64 thunk (the epilogue, with and without a frame, after an inline
// conversion or a boxer's call, a status native's error, the fail stencil from an argument or the
// entry's arity, with and without a frame, counting or not) leaves the registers the C ABI keeps
// as they were, and agrees with the interpreter.
TEST(StencilTier, EveryWayOutKeepsTheCallersRegisters) {
  auto expect_kept = [&](const Subject& s, std::vector<TVMFFIAny> args, const std::string& what) {
    std::vector<TVMFFIAny> copy = args;
    CallOutcome interpreted = CallPacked(&InterpreterSafeCall, s.bound(), args);
    TVMFFIAny result{};
    uint64_t out[6] = {};
    CallOutcome stenciled;
    stenciled.status = static_cast<int>(ffijit_tests::CallWithCanaries(
        reinterpret_cast<const void*>(StencilThunkEntry(s.thunk)),
        reinterpret_cast<uint64_t>(s.bound()), reinterpret_cast<uint64_t>(copy.data()), copy.size(),
        reinterpret_cast<uint64_t>(&result), out));
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(out[i], ffijit_tests::kRegisterCanaries[i]) << what << ": register " << i;
    // The outcome as CallPacked records it, from the same call made again.
    stenciled = CallPacked(StencilThunkEntry(s.thunk), s.bound(), copy);
    EXPECT_TRUE(SameOutcome(interpreted, stenciled))
        << what << "\n  interpreter: " << DescribeOutcome(interpreted)
        << "\n  stencil:     " << DescribeOutcome(stenciled);
  };
  auto sum = Make("kept_sum6", &Sum6);
  expect_kept(*sum, {Int(1), Int(-2), Int(3), Int(-4), Int(5), Int(6)}, "inline");
  expect_kept(*sum, {Int(1), Int(-2), Int(3), Int(-400), Int(5), Int(6)}, "an argument fails");
  expect_kept(*sum, {Int(1)}, "the arity fails");
  auto huge = Make("kept_huge", &Huge);
  expect_kept(*huge, {}, "the boxer raises");
  auto many = Make("kept_many", &Many);
  std::vector<TVMFFIAny> good = {
      Int(1),          Int(-2),         Int(3),          Int(-4),          Int(5),
      Int(6),          Int(7),          BoolValue(true), Int(-9),          Int(10),
      FloatValue(1.5), FloatValue(2.5), FloatValue(3.5), FloatValue(4.5),  FloatValue(5.5),
      FloatValue(6.5), FloatValue(7.5), FloatValue(8.5), FloatValue(9.25), FloatValue(10.5)};
  expect_kept(*many, good, "a frame, inline");
  std::vector<TVMFFIAny> bad = good;
  bad[19] = NoneValue();
  expect_kept(*many, bad, "a frame, an argument fails");
  expect_kept(*many, {Int(1)}, "a frame, the arity fails");
  {
    ScopedJitOptions never({JitPolicy::kNever, 0});
    Signature sig = SignatureOf<int (*)(int64_t)>();
    sig.results.clear();
    sig.convention = CallConvention::kStatus;
    Subject status;
    status.function = MakeFunction("kept_status", reinterpret_cast<void*>(&Status), sig);
    std::string why;
    status.thunk = MakeStencilThunk(status.bound(), false, &why);
    ASSERT_NE(status.thunk, nullptr) << why;
    expect_kept(status, {Int(0)}, "status 0");
    expect_kept(status, {Int(3)}, "status 3");
  }
  // Counting thunks.
  for (bool frame : {false, true}) {
    ScopedJitOptions never({JitPolicy::kNever, 0});
    Subject counted;
    counted.function =
        frame ? MakeFunction("kept_counted_many", &Many) : MakeFunction("kept_counted_sum6", &Sum6);
    std::string why;
    counted.thunk = MakeStencilThunk(counted.bound(), true, &why);
    ASSERT_NE(counted.thunk, nullptr) << why;
    std::vector<TVMFFIAny> args =
        frame ? good : std::vector<TVMFFIAny>{Int(1), Int(-2), Int(3), Int(-4), Int(5), Int(6)};
    // (A count that runs out jumps to the fallback before the entry saves anything, as a wrong
    // arity does; running it out here would ask for the hot tier.)
    counted.bound()->calls_until_hot.store(1000);
    expect_kept(counted, args, frame ? "counted with a frame" : "counted");
    EXPECT_EQ(counted.bound()->calls_until_hot.load(), 998);
    counted.bound()->calls_until_hot.store(0);
  }
}
#endif

int64_t Describe(DLTensor* t) {
  return t->ndim * 1000 + t->dtype.bits * 10 + t->dtype.code;
}

// Tensor objects and DLTensorPtrs, checked (element type and rank) and unchecked, against every
// way to fail the checks; static dims are not the stencils'.
TEST(StencilTier, Tensors) {
  ScopedJitOptions never({JitPolicy::kNever, 0});
  ObjectPool pool;
  const DLDataType f32{kDLFloat, 32, 1}, i64{kDLInt, 64, 1};
  int64_t shape2[2] = {2, 3};
  DLTensor raw{};
  raw.ndim = 2;
  raw.dtype = f32;
  raw.shape = shape2;
  DLTensor no_shape = raw;
  no_shape.shape = nullptr;
  DLTensor negative = raw;
  negative.ndim = -1;
  DLTensor scalar = raw;
  scalar.ndim = 0;
  scalar.shape = nullptr;
  auto ptr = [](DLTensor* t) {
    TVMFFIAny a{};
    a.type_index = kTVMFFIDLTensorPtr;
    a.v_ptr = t;
    return a;
  };
  const std::vector<std::pair<TVMFFIAny, bool>> values = {
      {pool.Tensor(f32, {2, 3}), true},
      {pool.Tensor(i64, {2, 3}), false},
      {pool.Tensor(f32, {4}), false},
      {pool.Tensor(f32, {}), false},
      {ptr(&raw), true},
      {ptr(&no_shape), false},
      {ptr(&negative), false},
      {ptr(&scalar), false},
      {ptr(nullptr), false},
      {NoneValue(), false},
      {Int(1), false},
      {pool.String("not a tensor object"), false}};
  Signature checked;
  checked.args.push_back(Type::NDArray(ScalarKind::kF32, 2, {-1, -1}));
  checked.results.push_back(Type::Scalar(ScalarKind::kI64));
  Signature any = SignatureOf<int64_t (*)(DLTensor*)>();
  for (const Signature* sig : {&checked, &any}) {
    Subject s;
    s.function = MakeFunction("describe", reinterpret_cast<void*>(&Describe), *sig);
    std::string why;
    s.thunk = MakeStencilThunk(s.bound(), false, &why);
    ASSERT_NE(s.thunk, nullptr) << why;
    for (size_t i = 0; i < values.size(); ++i) {
      // Checked, only the matching forms convert inline; unchecked, every well-formed tensor.
      const bool well_formed = i < 5 || i == 7;
      const bool inline_form = sig == &checked ? values[i].second : well_formed;
      ExpectSame(
          s, {values[i].first},
          std::string(sig == &checked ? "checked" : "any") + " tensor value " + std::to_string(i),
          inline_form ? Path::kInline : Path::kFallback);
    }
  }
  Signature static_dim;
  static_dim.args.push_back(Type::NDArray(ScalarKind::kF32, 2, {2, -1}));
  static_dim.results.push_back(Type::Scalar(ScalarKind::kI64));
  EXPECT_EQ(stencils::StencilUnsupportedReason(Lower(static_dim, "s")),
            "a tensor parameter with a static dim");
}

// Reads an f16/bf16 parameter's bits out of the vector register it arrives in.
int64_t HalfBits(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return static_cast<int64_t>(bits & 0xffff);
}
int64_t AnyTag(const TVMFFIAny* v) {
  return v->type_index * 1000 + (v->type_index == kTVMFFIInt ? v->v_int64 : 0);
}

TEST(StencilTier, HalfFloatsAndAnyViews) {
  ScopedJitOptions never({JitPolicy::kNever, 0});
  ObjectPool pool;
  for (ScalarKind kind : {ScalarKind::kF16, ScalarKind::kBF16}) {
    Signature sig;
    sig.args.push_back(Type::Scalar(kind));
    sig.results.push_back(Type::Scalar(ScalarKind::kI64));
    Subject s;
    s.function = MakeFunction("half_bits", reinterpret_cast<void*>(&HalfBits), sig);
    std::string why;
    s.thunk = MakeStencilThunk(s.bound(), false, &why);
    ASSERT_NE(s.thunk, nullptr) << why;
    for (const TVMFFIAny& v :
         {FloatValue(1.0), FloatValue(-2.5e-8), FloatValue(65520.0), FloatValue(1e10),
          FloatValue(NAN), Int(2049), Int(-1), Int(INT64_MAX), BoolValue(true)}) {
      ExpectSame(s, {v}, "half value tag " + std::to_string(v.type_index), Path::kInline);
    }
    for (const TVMFFIAny& v : {NoneValue(), Ptr(nullptr), pool.String("1.0")}) {
      ExpectSame(s, {v}, "half value tag " + std::to_string(v.type_index), Path::kFallback);
    }
  }
  auto any = Make("any_tag", &AnyTag);
  TVMFFIAny null_str{};
  null_str.type_index = kTVMFFIStr;
  TVMFFIAny long_small = pool.String("abc");
  long_small.small_str_len = 9;
  for (const TVMFFIAny& v : {Int(5), NoneValue(), FloatValue(2), pool.String("a longer string"),
                             pool.Array({Int(1)}), Ptr(nullptr)}) {
    ExpectSame(*any, {v}, "any tag " + std::to_string(v.type_index), Path::kInline);
  }
  for (const TVMFFIAny& v : {null_str, long_small}) {
    ExpectSame(*any, {v}, "malformed any tag " + std::to_string(v.type_index), Path::kFallback);
  }
}

int64_t BytesSum(TVMFFIByteArray b) {
  int64_t sum = static_cast<int64_t>(b.size) * 1000;
  for (size_t i = 0; i < b.size; ++i) sum += static_cast<unsigned char>(b.data[i]);
  return sum;
}
// Five integers first: on x86-64 the struct no longer fits the registers and goes on the stack.
int64_t BytesLate(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, TVMFFIByteArray bytes) {
  return a + b + c + d + e + BytesSum(bytes);
}

TEST(StencilTier, BytesInRegistersAndOnTheStack) {
  ObjectPool pool;
  TVMFFIByteArray array{"xyz", 3};
  TVMFFIAny array_ptr{};
  array_ptr.type_index = kTVMFFIByteArrayPtr;
  array_ptr.v_ptr = &array;
  TVMFFIAny null_array = array_ptr;
  null_array.v_ptr = nullptr;
  TVMFFIAny long_small = pool.Bytes("ab");
  long_small.small_str_len = 8;
  const std::vector<std::pair<TVMFFIAny, bool>> values = {
      {pool.Bytes("ab"), true},    {pool.Bytes("a longer byte string"), true},
      {pool.String("str"), true},  {pool.String("a longer string object"), true},
      {array_ptr, true},           {null_array, false},
      {pool.RawStr("raw"), false}, {long_small, false},
      {NoneValue(), false},        {Int(1), false}};
  auto sum = Make("bytes_sum", &BytesSum);
  auto late = Make("bytes_late", &BytesLate);
  for (size_t i = 0; i < values.size(); ++i) {
    const Path path = values[i].second ? Path::kInline : Path::kFallback;
    ExpectSame(*sum, {values[i].first}, "bytes value " + std::to_string(i), path);
    ExpectSame(*late, {Int(1), Int(2), Int(3), Int(4), Int(5), values[i].first},
               "late bytes value " + std::to_string(i), path);
  }
}

TEST(StencilTier, SeveralRegistersAndResults) {
  auto sum = Make("sum6", &Sum6);
  ExpectSame(*sum, {Int(1), Int(-2), Int(3), Int(-4), Int(5), Int(6)}, "sum6", Path::kInline);
  ExpectSame(*sum, {Int(1), Int(-2), Int(3), Int(-400), Int(5), Int(6)}, "sum6 range");
  ExpectSame(*sum, {Int(1), Int(-2), Int(3), Int(-4), Int(-5), Int(6)}, "sum6 unsigned");
  auto mix = Make("mix", &Mix);
  ExpectSame(*mix,
             {FloatValue(1.5), FloatValue(2.25), Int(-3), FloatValue(8), Int(4), BoolValue(true)},
             "mix", Path::kInline);
  ExpectSame(*mix, {Int(1), BoolValue(true), Int(7), FloatValue(1e40), FloatValue(-1), Int(0)},
             "mix forms");
  ExpectSame(
      *mix,
      {FloatValue(1.5), FloatValue(2.25), FloatValue(3), FloatValue(8), Int(4), BoolValue(true)},
      "mix error");
  auto many = Make("many", &Many);
  EXPECT_GT(many->bound()->plan->num_stack, 0);
  std::vector<TVMFFIAny> good = {
      Int(1),          Int(-2),         Int(3),          Int(-4),          Int(5),
      Int(6),          Int(7),          BoolValue(true), Int(-9),          Int(10),
      FloatValue(1.5), FloatValue(2.5), FloatValue(3.5), FloatValue(4.5),  FloatValue(5.5),
      FloatValue(6.5), FloatValue(7.5), FloatValue(8.5), FloatValue(9.25), FloatValue(10.5)};
  ExpectSame(*many, good, "many", Path::kInline);
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<TVMFFIAny> bad = good;
    bad[i] = i < 10 ? Int(1000000) : NoneValue();  // out of range for the narrow ones; wrong form
    ExpectSame(*many, bad, "many, argument " + std::to_string(i));
    bad[i] = Ptr(nullptr);
    ExpectSame(*many, bad, "many, argument " + std::to_string(i) + " a pointer", Path::kFallback);
  }
  auto huge = Make("huge", &Huge);
  ExpectSame(*huge, {}, "u64 result above INT64_MAX");
  auto nothing = Make("nothing", &Nothing);
  ExpectSame(*nothing, {Int(3)}, "void result");
}

TEST(StencilTier, StatusConvention) {
  ScopedJitOptions never({JitPolicy::kNever, 0});
  Signature sig = SignatureOf<int (*)(int64_t)>();
  sig.results.clear();
  sig.convention = CallConvention::kStatus;
  Subject s;
  s.function = MakeFunction("status", reinterpret_cast<void*>(&Status), sig);
  std::string why;
  s.thunk = MakeStencilThunk(s.bound(), false, &why);
  ASSERT_NE(s.thunk, nullptr) << why;
  ExpectSame(s, {Int(0)}, "status 0");
  ExpectSame(s, {Int(3)}, "status 3 without an error raised");
}

TEST(StencilTier, UnsupportedPlansSayWhy) {
  using Ten = int64_t (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                          int64_t, int64_t);
  using Twenty = int64_t (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                             int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                             int64_t, int64_t, int64_t, int64_t);
  EXPECT_EQ(stencils::StencilUnsupportedReason(Lower(SignatureOf<Ten>(), "ten")), "");
  EXPECT_EQ(stencils::StencilUnsupportedReason(Lower(SignatureOf<Twenty>(), "twenty")),
            "more than 8 stack slots of arguments");
  Signature keyword;
  keyword.args.push_back(Type::Named("k", Type::Scalar(ScalarKind::kI64)));
  EXPECT_EQ(stencils::StencilUnsupportedReason(Lower(keyword, "k")), "keyword arguments");
  EXPECT_EQ(stencils::StencilUnsupportedReason(Lower(SignatureOf<DLDevice (*)()>(), "r")), "");
  EXPECT_EQ(stencils::StencilUnsupportedReason(Lower(SignatureOf<int64_t (*)(int64_t)>(), "ok")),
            "");
  // Such a function takes today's path: the interpreter, then the cold tier.
  Function f = MakeFunction("twenty", reinterpret_cast<void*>(&Huge), SignatureOf<Twenty>());
  EXPECT_EQ(reinterpret_cast<BoundFunction*>(f.get())->cell.safe_call, &InterpreterSafeCall);
}

// The code's page is mapped read+execute, never writable; releasing the thunk unmaps it.
TEST(StencilTier, CodeIsWxorXAndFreedOnRelease) {
  const int64_t blocks_before = stencils::LiveCodeBlocks();
  auto s = Make("id_i64_wx", &Id<int64_t>);
  EXPECT_EQ(stencils::LiveCodeBlocks(), blocks_before + 1);
  const auto code = reinterpret_cast<uintptr_t>(StencilThunkEntry(s->thunk));
  std::ifstream maps("/proc/self/maps");
  std::string line, perms;
  while (std::getline(maps, line)) {
    uintptr_t lo = 0, hi = 0;
    char p[5] = {};
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %4s", &lo, &hi, p) == 3 &&
        code >= lo && code < hi) {
      perms = p;
    }
  }
  EXPECT_EQ(perms.substr(0, 3), "r-x");
  stencils::ReleaseStencilThunk(s->thunk);
  s->thunk = nullptr;
  EXPECT_EQ(stencils::LiveCodeBlocks(), blocks_before);
}

// Thunks share chunks of pages (a mapping per thunk would cost a page and one of the kernel's
// limited mappings each): a hundred thunks map at most two more chunks, and no mapping of the
// process is writable and executable at once.
TEST(StencilTier, ThunksShareChunksAndNoMappingIsWritableAndExecutable) {
  const int64_t chunks_before = stencils::MappedCodeChunks();
  std::vector<std::unique_ptr<Subject>> subjects;
  for (int i = 0; i < 100; ++i) subjects.push_back(Make("id_i64_pool", &Id<int64_t>));
  EXPECT_LE(stencils::MappedCodeChunks(), chunks_before + 2);
  for (const auto& s : subjects) {
    TVMFFIAny arg = Int(7), result{};
    ASSERT_EQ(StencilThunkEntry(s->thunk)(s->bound(), &arg, 1, &result), 0);
    EXPECT_EQ(result.v_int64, 7);
  }
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%*x-%*x %4s", perms) == 1) {
      EXPECT_FALSE(perms[1] == 'w' && perms[2] == 'x') << line;
    }
  }
}

int64_t Untiered(int64_t a, int32_t b) {
  return a * b;
}

// A thunk that does not count (made for a test, or for a function that never goes hot) never asks
// for the hot tier, whatever the function's count holds: its fallback does not report.
TEST(StencilTier, AnUncountedThunkNeverAsksForTheHotTier) {
  auto s = Make("untiered", &Untiered);
  ASSERT_EQ(s->bound()->calls_until_hot.load(), 0);
  const int64_t hot_before = JitEngine::Default().Stats().hot_compiled;
  for (int i = 0; i < 5; ++i) ExpectSame(*s, {Int(1), FloatValue(2)}, "fallback", Path::kFallback);
  JitEngine::Default().WaitIdle();
  EXPECT_FALSE(IsHotCompiled(s->function));
  EXPECT_EQ(JitEngine::Default().Stats().hot_compiled, hot_before);
}

int64_t Tiered(int64_t a, int16_t b) {
  return a * 3 + b;
}
int64_t NeverTiered(int64_t a, int8_t b) {
  return a - b;
}

// Registration installs the stencil thunk at once; it counts calls and asks for the hot tier; the
// function's death frees it.
TEST(StencilTier, RegistrationInstallsItAndItGoesHot) {
  JitStats before = JitEngine::Default().Stats();
  {
    JitOptions options;
    options.hot_after_calls = 5;
    ScopedJitOptions scope(options);
    Function f = MakeFunction("tiered", &Tiered);
    auto* fn = reinterpret_cast<BoundFunction*>(f.get());
    EXPECT_NE(fn->cell.safe_call, &InterpreterSafeCall);
    EXPECT_EQ(Tier(f), kFFIJITTierStencil);
    EXPECT_TRUE(IsJitCompiled(f));
    EXPECT_FALSE(IsHotCompiled(f));
    JitStats made = JitEngine::Default().Stats();
    EXPECT_EQ(made.stencil_thunks_made, before.stencil_thunks_made + 1);
    EXPECT_EQ(made.stencil_thunks_live, before.stencil_thunks_live + 1);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(f(int64_t{i}, int64_t{-2}).cast<int64_t>(), i * 3 - 2);
    JitEngine::Default().WaitIdle();
    EXPECT_TRUE(IsHotCompiled(f));
    EXPECT_EQ(Tier(f), kFFIJITTierHot);
    EXPECT_EQ(f(int64_t{10}, int64_t{1}).cast<int64_t>(), 31);
  }
  EXPECT_EQ(JitEngine::Default().Stats().stencil_thunks_live, before.stencil_thunks_live);
  {
    // kNever: the interpreter; stencils = false: today's path (interpreter, then the cold tier).
    ScopedJitOptions never({JitPolicy::kNever, 0});
    Function g = MakeFunction("never_tiered", &NeverTiered);
    EXPECT_EQ(reinterpret_cast<BoundFunction*>(g.get())->cell.safe_call, &InterpreterSafeCall);
    EXPECT_EQ(Tier(g), kFFIJITTierInterpreted);
    JitOptions off;
    off.stencils = false;
    ScopedJitOptions no_stencils(off);
    Function h = MakeFunction("never_tiered2", &NeverTiered);
    EXPECT_EQ(reinterpret_cast<BoundFunction*>(h.get())->cell.safe_call, &InterpreterSafeCall);
    // An explicit compile replaces a stencil thunk by the cold tier's.
    ScopedJitOptions on(JitOptions{});
    Function k = MakeFunction("never_tiered3", &NeverTiered);
    EXPECT_NE(reinterpret_cast<BoundFunction*>(k.get())->cell.safe_call, &InterpreterSafeCall);
    EXPECT_EQ(Tier(k), kFFIJITTierStencil);
    JitEngine::Default().CompileNow(k);
    EXPECT_EQ(Tier(k), kFFIJITTierLlvm);
    EXPECT_EQ(k(int64_t{10}, int64_t{3}).cast<int64_t>(), 7);
  }
  EXPECT_EQ(JitEngine::Default().Stats().stencil_thunks_live, before.stencil_thunks_live);
}

// Threads registering and calling functions at once, each on its own stencil thunk; every thunk
// is freed when its function dies.
TEST(StencilTier, ConcurrentRegistrationsAndCalls) {
  const int64_t live_before = JitEngine::Default().Stats().stencil_thunks_live;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &wrong] {
      JitOptions options;
      options.hot_after_calls = 0;
      ScopedJitOptions scope(options);
      for (int i = 0; i < 50; ++i) {
        Function f = MakeFunction("concurrent", &Tiered);
        for (int64_t k = 0; k < 20; ++k) {
          if (f(k, int64_t{t}).cast<int64_t>() != k * 3 + t) ++wrong;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(JitEngine::Default().Stats().stencil_thunks_live, live_before);
}

}  // namespace
}  // namespace ffijit::testing
