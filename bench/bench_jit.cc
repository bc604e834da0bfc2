// BM_Call/jit|typed/<signature> and BM_Compile/*: JIT thunk calls next to the typed C++ path, and
// the JIT's compile latencies (one cold thunk, per thunk in a batch of 100, a cached signature).
//
// `jit` calls TVMFFIFunctionCall on a function whose thunk was compiled up front; `typed` calls a
// Function::FromTyped wrapper of the same native the same way. Both run the natives and argument
// values of call_natives.h, like BM_Call/direct|interp|libffi in bench_call.cc.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <string_view>
#include <vector>

#include "call_natives.h"
#include "ffijit/jit.h"
#include "ffijit/register.h"

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

void JitCase(benchmark::State& state, const CallCase& c) {
  ScopedJitOptions never({JitPolicy::kNever, 0});
  Function func = MakeFunction(std::string("bench_jit_") + c.name, c.fn, c.sig);
  try {
    JitEngine::Default().CompileNow(func);
  } catch (const Error& e) {
    state.SkipWithError(("no thunk: " + e.message()).c_str());
    return;
  }
  RunPacked(state, func, c.args);
}

Function TypedFunction(const std::string& name) {
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

void TypedCase(benchmark::State& state, const CallCase& c) {
  RunPacked(state, TypedFunction(c.name), c.args);
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
  ScopedJitOptions never({JitPolicy::kNever, 0});
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
  ScopedJitOptions never({JitPolicy::kNever, 0});
  for (auto _ : state) {
    Function f = MakeFunction("bench_cached", reinterpret_cast<void*>(&BenchNativeI64x3), sig);
    if (!Compiles(engine, f)) state.SkipWithError("not cached");
  }
}

// The whole registration of a function whose signature is compiled (lowering included).
void BM_RegisterCached(benchmark::State& state) {
  ScopedJitOptions eager({JitPolicy::kEager, 0});
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
    benchmark::RegisterBenchmark(("BM_Call/jit/" + sig).c_str(),
                                 [&c](benchmark::State& s) { JitCase(s, c); });
    benchmark::RegisterBenchmark(("BM_Call/typed/" + sig).c_str(),
                                 [&c](benchmark::State& s) { TypedCase(s, c); });
  }
  benchmark::RegisterBenchmark("BM_Compile/cold", BM_CompileCold)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_Compile/cold_new_shape", BM_CompileColdNewShape)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_Compile/batch100", BM_CompileBatch100)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_Compile/cached", BM_CompileCached)->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark("BM_Register/cached", BM_RegisterCached)
      ->Unit(benchmark::kNanosecond);
  return true;
}();

}  // namespace
}  // namespace ffijit::bench
