// BM_Call/<path>/<signature> for the compiled and typed paths, and BM_Compile/*: the JIT's compile
// latencies (a stencil thunk, one cold thunk, per thunk in a batch of 100, a cached signature, a
// hot-tier thunk).
//
// Packed paths, each TVMFFIFunctionCall of a registered function with the same arguments:
//   handwritten  the yardstick: a hand-written C safe_call (handwritten.c) installed as the entry
//   handwritten_inlined  the same safe_call with the native's body in its translation unit,
//                inlined by gcc -O2 (handwritten_inlined.c)
//   stencil      the function's copy-and-patch thunk (jit/stencils/), made at registration
//   jit          the shared cold-tier thunk (compiled up front)
//   hot          the function's own hot-tier thunk (compiled up front)
//   hot_inlined  the hot-tier thunk of the native loaded as LLVM bitcode (call_natives.c compiled
//                by the build LLVM's clang -O2) into a JIT module, with the native's body inlined
// C++ paths, each called with C++ arguments:
//   typed_direct ffijit::TypedFunction bound to the registered native: a direct call when the
//                types allow it (not for DLTensor* and const char*, whose conversion can fail)
//   typed        ffijit::TypedFunction over a Function::FromTyped wrapper of the native: the
//                packed fallback (arguments packed as borrowed views)
//   operator     Function::operator() on the same wrapper, what `typed` must not be slower than
// All run the natives and argument values of call_natives.h, like bench_call.cc's paths.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <string_view>
#include <vector>

#include "call_natives.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/jit_module.h"
#include "ffijit/jit/register.h"
#include "ffijit/jit/typed_function.h"
#include "handwritten.h"

namespace ffijit::bench {
namespace {

void RunPacked(benchmark::State& state, const Function& func, const std::vector<Any>& values) {
  std::vector<TVMFFIAny> args;
  for (const Any& a : values) args.push_back(a.raw());
  TVMFFIObjectHandle handle = func.get();
  for (auto _ : state) {
    TVMFFIAny result{};
    int status =
        TVMFFIFunctionCall(handle, args.data(), static_cast<int32_t>(args.size()), &result);
    benchmark::DoNotOptimize(status);
    benchmark::DoNotOptimize(result);
  }
}

// The case's native registered with no tiering of its own (no background compile, never hot).
Function Registered(const CallCase& c, const char* path) {
  ScopedJitOptions never({JitPolicy::kNever, 0, 0});
  return MakeFunction(std::string("bench_") + path + "_" + c.name, c.fn, c.sig);
}

void JitCase(benchmark::State& state, const CallCase& c) {
  Function func = Registered(c, "jit");
  try {
    JitEngine::Default().CompileNow(func);
  } catch (const Error& e) {
    state.SkipWithError(("no thunk: " + e.message()).c_str());
    return;
  }
  RunPacked(state, func, c.args);
}

void HotCase(benchmark::State& state, const CallCase& c) {
  Function func = Registered(c, "hot");
  try {
    JitEngine::Default().CompileHotNow(func);
  } catch (const Error& e) {
    state.SkipWithError(("no hot thunk: " + e.message()).c_str());
    return;
  }
  RunPacked(state, func, c.args);
}

// The case's native registered with the stencil tier on and no hot tier: its stencil thunk.
void StencilCase(benchmark::State& state, const CallCase& c) {
  const int64_t made = JitEngine::Default().Stats().stencil_thunks_made;
  JitOptions options;
  options.hot_after_calls = 0;
  ScopedJitOptions scope(options);
  Function func = MakeFunction(std::string("bench_stencil_") + c.name, c.fn, c.sig);
  if (JitEngine::Default().Stats().stencil_thunks_made != made + 1) {
    state.SkipWithError("no stencil thunk for this signature");
    return;
  }
  RunPacked(state, func, c.args);
}

void HandwrittenCase(benchmark::State& state, const CallCase& c) {
  Function func = Registered(c, "handwritten");
  auto* cell = reinterpret_cast<TVMFFIFunctionCell*>(func.get() + 1);
  // The slow path is the entry it replaces (the interpreter's), as a thunk's fallback is.
  FFIJITBenchHandwrittenInit(cell->safe_call);
  __atomic_store_n(&cell->safe_call, FFIJITBenchHandwrittenFor(c.name), __ATOMIC_RELEASE);
  RunPacked(state, func, c.args);
}

void HandwrittenInlinedCase(benchmark::State& state, const CallCase& c) {
  Function func = Registered(c, "handwritten_inlined");
  auto* cell = reinterpret_cast<TVMFFIFunctionCell*>(func.get() + 1);
  FFIJITBenchHandwrittenInit(cell->safe_call);
  __atomic_store_n(&cell->safe_call, FFIJITBenchHandwrittenInlinedFor(c.name), __ATOMIC_RELEASE);
  RunPacked(state, func, c.args);
}

#ifdef FFIJIT_BENCH_BITCODE
// The JIT module of the natives' bitcode, loaded once for every hot_inlined case.
const JitModule& BitcodeNatives() {
  static const JitModule* natives = [] {
    auto* mod = new JitModule(JitModule::Create("bench natives"));
    mod->AddFile(FFIJIT_BENCH_BITCODE);
    return mod;
  }();
  return *natives;
}

void HotInlinedCase(benchmark::State& state, const CallCase& c) {
  Function func;
  try {
    ScopedJitOptions never({JitPolicy::kNever, 0, 0});
    func = BitcodeNatives().MakeNative(c.symbol, c.sig);
    JitEngine::Default().CompileHotNow(func);
  } catch (const Error& e) {
    state.SkipWithError(("no hot thunk: " + e.message()).c_str());
    return;
  }
  if (!IsHotInlined(func)) {
    state.SkipWithError("the hot thunk did not inline the native (the JIT log says why)");
    return;
  }
  RunPacked(state, func, c.args);
}
#endif

Function TypedWrapper(const std::string& name) {
  if (name == "i64_i64_i64") {
    return Function::FromTyped(
        [](int64_t a, int64_t b, int64_t c) { return BenchNativeI64x3(a, b, c); });
  }
  if (name == "i64_f64_i32_f32_ptr") {
    return Function::FromTyped([](int64_t a, double b, int32_t c, float d, void* p) {
      return BenchNativeMixed(a, b, c, d, p);
    });
  }
  if (name == "dev_dtype_i64") {
    return Function::FromTyped([](DLDevice dev, DLDataType dtype, int64_t k) {
      return BenchNativeDevDtype(dev, dtype, k);
    });
  }
  if (name == "tensor") {
    return Function::FromTyped([](Tensor t) {
      return BenchNativeTensor(
          const_cast<DLTensor*>(reinterpret_cast<const DLTensor*>(t.get() + 1)));
    });
  }
  return Function::FromTyped([](std::string_view s) { return BenchNativeStr(s.data()); });
}

// Calls `body(typed, args...)` with the TypedFunction of the case's C++ types over `f` and the
// case's arguments as C++ values (the natives' own types, except that the tensor travels as a
// Tensor and the string as a const char*).
template <typename Body>
void WithTyped(const CallCase& c, const Function& f, Body&& body) {
  static int dummy = 0;
  const std::string name = c.name;
  if (name == "i64_i64_i64") {
    body(TypedFunction<int64_t(int64_t, int64_t, int64_t)>(f), int64_t{1}, int64_t{2}, int64_t{3});
  } else if (name == "i64_f64_i32_f32_ptr") {
    body(TypedFunction<double(int64_t, double, int32_t, float, void*)>(f), int64_t{1}, 2.5,
         int32_t{3}, 4.5f, static_cast<void*>(&dummy));
  } else if (name == "dev_dtype_i64") {
    body(TypedFunction<int64_t(DLDevice, DLDataType, int64_t)>(f), DLDevice{kDLCUDA, 1},
         DLDataType{kDLFloat, 32, 1}, int64_t{7});
  } else if (name == "tensor") {
    body(TypedFunction<int64_t(const Tensor&)>(f), c.args[0].cast<Tensor>());
  } else {
    body(TypedFunction<int64_t(const char*)>(f),
         static_cast<const char*>(
             reinterpret_cast<const FFIJITBytesCell*>(c.args[0].raw().v_obj + 1)->data));
  }
}

// Arguments by value and opaque, exactly as RunDirect (bench_call.cc) runs the direct call.
template <typename Call, typename... A>
void RunCpp(benchmark::State& state, const Call& call, A... args) {
  (benchmark::DoNotOptimize(args), ...);
  for (auto _ : state) {
    auto r = call(args...);
    benchmark::DoNotOptimize(r);
  }
}

void TypedDirectCase(benchmark::State& state, const CallCase& c) {
  Function func = Registered(c, "typed_direct");
  WithTyped(c, func, [&](const auto& typed, const auto&... args) {
    if (!typed.is_direct()) {
      state.SkipWithError("not direct: the argument's conversion can fail (packed instead)");
      return;
    }
    RunCpp(state, typed, args...);
  });
}

void TypedCase(benchmark::State& state, const CallCase& c) {
  WithTyped(c, TypedWrapper(c.name),
            [&](const auto& typed, const auto&... args) { RunCpp(state, typed, args...); });
}

void OperatorCase(benchmark::State& state, const CallCase& c) {
  Function wrapper = TypedWrapper(c.name);
  WithTyped(c, wrapper, [&](const auto&, const auto&... args) {
    RunCpp(
        state, [&](const auto&... a) { return wrapper(a...); }, args...);
  });
}

// ---- compile latency ----

// Distinct signatures: the digits of `n` in base 8 pick the integer kinds of four arguments.
Signature NthSignature(int64_t n) {
  const ScalarKind kinds[] = {ScalarKind::kI8,  ScalarKind::kI16, ScalarKind::kI32,
                              ScalarKind::kI64, ScalarKind::kU8,  ScalarKind::kU16,
                              ScalarKind::kU32, ScalarKind::kU64};
  Signature sig;
  for (int i = 0; i < 5; ++i, n /= 8) sig.args.push_back(Type::Scalar(kinds[n % 8]));
  sig.args.push_back(Type::Scalar(ScalarKind::kF64));
  sig.results.push_back(Type::Scalar(ScalarKind::kI64));
  return sig;
}

int64_t next_signature = 0;  // never reuse a signature across benchmarks

Function FreshFunction() {
  ScopedJitOptions never({JitPolicy::kNever, 0, 0});
  return MakeFunction("bench_compile", reinterpret_cast<void*>(&BenchNativeI64x3),
                      NthSignature(next_signature++));
}

int64_t ResidentBytes() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * sysconf(_SC_PAGESIZE);
}

// CompileNow without the exception: whether `f` now runs its thunk.
bool Compiles(JitEngine& engine, const Function& f) {
  try {
    engine.CompileNow(f);
    return true;
  } catch (const Error&) {
    return false;
  }
}

void BM_CompileCold(benchmark::State& state) {
  JitEngine engine;
  {  // the engine's one-time LLJIT construction is not a thunk's cost
    Function warm = FreshFunction();
    engine.CompileNow(warm);
  }
  for (auto _ : state) {
    state.PauseTiming();
    Function f = FreshFunction();
    state.ResumeTiming();
    if (!Compiles(engine, f)) state.SkipWithError("compile failed");
    state.PauseTiming();
    f = Function();  // frees the thunk: the next iteration is cold again
    state.ResumeTiming();
  }
}

// A registration that makes a stencil thunk (a signature never seen, each time), and the same
// registration staying interpreted: their difference is the stencil thunk's cost.
void BM_CompileStencil(benchmark::State& state, bool stencils) {
  JitOptions options;
  options.hot_after_calls = 0;
  if (!stencils) options.policy = JitPolicy::kNever;
  const int64_t made = JitEngine::Default().Stats().stencil_thunks_made;
  int64_t n = 0;
  for (auto _ : state) {
    ScopedJitOptions scope(options);
    Function f = MakeFunction("bench_stencil", reinterpret_cast<void*>(&BenchNativeI64x3),
                              NthSignature(next_signature++));
    benchmark::DoNotOptimize(f.get());
    ++n;
    state.PauseTiming();
    f = Function();  // frees the code
    state.ResumeTiming();
  }
  if (stencils && JitEngine::Default().Stats().stencil_thunks_made != made + n) {
    state.SkipWithError("a registration made no stencil thunk");
  }
}

// Like BM_CompileCold, but every signature has a parameter shape no earlier compile had (the
// bits of n + 2 below its leading one pick i64 or f64 per parameter), so each compile also runs
// the ABI probe: the worst case, once per shape per process.
Signature NewShapeSignature(int64_t n) {
  Signature sig;
  uint64_t bits = static_cast<uint64_t>(n) + 2;
  int top = 63 - __builtin_clzll(bits);
  for (int i = top - 1; i >= 0; --i) {
    sig.args.push_back(Type::Scalar((bits >> i) & 1 ? ScalarKind::kF64 : ScalarKind::kI64));
  }
  sig.results.push_back(Type::Scalar(ScalarKind::kI64));
  return sig;
}

void BM_CompileColdNewShape(benchmark::State& state) {
  JitEngine engine;
  int64_t n = 0;
  {
    ScopedJitOptions never({JitPolicy::kNever, 0});
    Function warm = MakeFunction("bench_shape", reinterpret_cast<void*>(&BenchNativeI64x3),
                                 NewShapeSignature(n++));
    engine.CompileNow(warm);
  }
  for (auto _ : state) {
    state.PauseTiming();
    Function f;
    {
      ScopedJitOptions never({JitPolicy::kNever, 0});
      f = MakeFunction("bench_shape", reinterpret_cast<void*>(&BenchNativeI64x3),
                       NewShapeSignature(n++));
    }
    state.ResumeTiming();
    if (!Compiles(engine, f)) state.SkipWithError("compile failed");
    state.PauseTiming();
    f = Function();
    state.ResumeTiming();
  }
}

void BM_CompileBatch100(benchmark::State& state) {
  JitEngine engine;
  {
    Function warm = FreshFunction();
    engine.CompileNow(warm);
  }
  int64_t bytes_before = ResidentBytes();
  int64_t thunks = 0;
  std::vector<std::vector<Function>> kept;  // keep code alive to measure memory per thunk
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<Function> fns;
    for (int i = 0; i < 100; ++i) fns.push_back(FreshFunction());
    state.ResumeTiming();
    if (engine.CompileNow(fns).installed != 100) state.SkipWithError("compile failed");
    state.PauseTiming();
    thunks += 100;
    if (kept.size() < 20) kept.push_back(std::move(fns));
    state.ResumeTiming();
  }
  int64_t kept_thunks = static_cast<int64_t>(kept.size()) * 100;
  JitStats stats = engine.Stats();
  state.counters["per_thunk"] = benchmark::Counter(
      static_cast<double>(thunks), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["object_bytes_per_thunk"] =
      static_cast<double>(stats.object_bytes_live) / static_cast<double>(kept_thunks);
  state.counters["rss_bytes_per_thunk"] =
      static_cast<double>(ResidentBytes() - bytes_before) / static_cast<double>(kept_thunks);
}

// Making a function and attaching the already compiled thunk of its signature: no LLVM work.
// (Timed whole: pausing the timer per iteration would cost more than what is measured.)
void BM_CompileCached(benchmark::State& state) {
  JitEngine engine;
  Function keeper = FreshFunction();
  engine.CompileNow(keeper);
  Signature sig = NthSignature(next_signature - 1);
  ScopedJitOptions never({JitPolicy::kNever, 0, 0});
  for (auto _ : state) {
    Function f = MakeFunction("bench_cached", reinterpret_cast<void*>(&BenchNativeI64x3), sig);
    if (!Compiles(engine, f)) state.SkipWithError("not cached");
  }
}

// The whole registration of a function whose signature is compiled (lowering included).
// One function's hot-tier thunk (O2, default codegen level), and what each one keeps loaded.
void BM_CompileHot(benchmark::State& state) {
  JitEngineOptions options;
  options.max_hot_thunks = 1 << 20;
  JitEngine engine(options);
  {
    Function warm = FreshFunction();
    engine.CompileHotNow(warm);
  }
  int64_t bytes_before = ResidentBytes();
  std::vector<Function> kept;  // keep code alive to measure memory per hot thunk
  const Signature sig = NthSignature(next_signature++);
  for (auto _ : state) {
    state.PauseTiming();
    Function f;
    {
      ScopedJitOptions never({JitPolicy::kNever, 0, 0});
      f = MakeFunction("bench_hot", reinterpret_cast<void*>(&BenchNativeI64x3), sig);
    }
    state.ResumeTiming();
    try {
      engine.CompileHotNow(f);
    } catch (const Error& e) {
      state.SkipWithError(e.message().c_str());
      break;
    }
    state.PauseTiming();
    if (kept.size() < 200) kept.push_back(std::move(f));
    f = Function();
    state.ResumeTiming();
  }
  JitStats stats = engine.Stats();
  const double n = static_cast<double>(kept.size());
  if (n > 0) {
    state.counters["object_bytes_per_thunk"] = static_cast<double>(stats.object_bytes_live) / n;
    state.counters["rss_bytes_per_thunk"] = static_cast<double>(ResidentBytes() - bytes_before) / n;
  }
}

void BM_RegisterCached(benchmark::State& state) {
  ScopedJitOptions eager({JitPolicy::kEager, 0, 0});
  Signature sig = NthSignature(next_signature++);
  Function keeper = MakeFunction("bench_keeper", reinterpret_cast<void*>(&BenchNativeI64x3), sig);
  JitEngine::Default().CompileNow(keeper);
  for (auto _ : state) {
    Function f = MakeFunction("bench_cached", reinterpret_cast<void*>(&BenchNativeI64x3), sig);
    benchmark::DoNotOptimize(f.get());
  }
}

const bool kRegistered = [] {
  for (const CallCase& c : CallCases()) {
    const std::string sig = c.name;
    benchmark::RegisterBenchmark(("BM_Call/handwritten/" + sig).c_str(),
                                 [&c](benchmark::State& s) { HandwrittenCase(s, c); });
    benchmark::RegisterBenchmark(("BM_Call/handwritten_inlined/" + sig).c_str(),
                                 [&c](benchmark::State& s) { HandwrittenInlinedCase(s, c); });
#ifdef FFIJIT_BENCH_BITCODE
    benchmark::RegisterBenchmark(("BM_Call/hot_inlined/" + sig).c_str(),
                                 [&c](benchmark::State& s) { HotInlinedCase(s, c); });
#endif
    benchmark::RegisterBenchmark(("BM_Call/stencil/" + sig).c_str(),
                                 [&c](benchmark::State& s) { StencilCase(s, c); });
    benchmark::RegisterBenchmark(("BM_Call/jit/" + sig).c_str(),
                                 [&c](benchmark::State& s) { JitCase(s, c); });
    benchmark::RegisterBenchmark(("BM_Call/hot/" + sig).c_str(),
                                 [&c](benchmark::State& s) { HotCase(s, c); });
    benchmark::RegisterBenchmark(("BM_Call/typed_direct/" + sig).c_str(),
                                 [&c](benchmark::State& s) { TypedDirectCase(s, c); });
    benchmark::RegisterBenchmark(("BM_Call/typed/" + sig).c_str(),
                                 [&c](benchmark::State& s) { TypedCase(s, c); });
    benchmark::RegisterBenchmark(("BM_Call/operator/" + sig).c_str(),
                                 [&c](benchmark::State& s) { OperatorCase(s, c); });
  }
  benchmark::RegisterBenchmark("BM_Compile/stencil", BM_CompileStencil, true)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_Register/interpreted", BM_CompileStencil, false)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_Compile/cold", BM_CompileCold)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_Compile/cold_new_shape", BM_CompileColdNewShape)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_Compile/batch100", BM_CompileBatch100)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_Compile/cached", BM_CompileCached)->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark("BM_Compile/hot", BM_CompileHot)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_Register/cached", BM_RegisterCached)
      ->Unit(benchmark::kNanosecond);
  return true;
}();

}  // namespace
}  // namespace ffijit::bench
