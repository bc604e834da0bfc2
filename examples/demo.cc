// ffijit's headline example: native functions registered at run time, called through one packed
// calling convention on each tier (interpreter, JIT thunk), with a per-call cost table against a
// direct call and one clear error.
//
//   ./build.sh demo        (runs build/release/bin/example_demo)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ffijit/ffijit.h"
#include "ffijit/jit/register.h"
#if FFIJIT_HAVE_LLVM
#include "ffijit/jit/jit.h"
#endif

namespace {

// ---- Three ordinary native functions: ffijit knows nothing about them at compile time. ----

__attribute__((noinline)) double Scale(double x, int64_t k) {
  return x * static_cast<double>(k);
}
__attribute__((noinline)) int64_t Add(int64_t a, int64_t b) {
  return a + b;
}
__attribute__((noinline)) double Mix(int32_t a, float b, double c) {
  return a * static_cast<double>(b) + c;
}

// Their signatures, written three ways.
constexpr const char* kScaleJson = R"({"a":[["named","x","f64"],["named","k","i64"]],"r":["f64"]})";
constexpr const char* kMixRaw =
    "I14!S3!t6S1!S3!t2R6!S3!t2";  // (sint32, float32, float64) -> float64

// ---- Small helpers for the output. ----

bool HaveJit() {
#if FFIJIT_HAVE_LLVM
  return ffijit::JitAvailable();
#else
  return false;
#endif
}

#if FFIJIT_HAVE_LLVM
bool IsCompiled(const ffijit::Function& f) {
  return ffijit::IsJitCompiled(f);
}
#endif

// The first line of DescribeFunction is the declaration ffijit uses in its messages.
std::string Declaration(const ffijit::Function& f) {
  std::string plan = ffijit::DescribeFunction(f);
  return plan.substr(0, plan.find('\n'));
}

ffijit::RegisterOptions GlobalName(const char* name) {
  ffijit::RegisterOptions options;
  options.global_name = name;
  return options;
}

int failures = 0;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::printf("  !! unexpected result: %s\n", what);
    ++failures;
  }
}

TVMFFIAny Int(int64_t v) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIInt;
  a.v_int64 = v;
  return a;
}
TVMFFIAny Float(double v) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIFloat;
  a.v_float64 = v;
  return a;
}

// Median nanoseconds per call of `body` (which makes `calls` calls), over `runs` runs.
template <typename Body>
double NsPerCall(Body body, int calls, int runs = 7) {
  body(calls / 4);  // warm up caches, branch predictors and the clock
  std::vector<double> samples;
  for (int r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    body(calls);
    auto stop = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::nano>(stop - start).count() / calls);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

// The packed cost: one TVMFFIFunctionCall per iteration with prepared arguments, exactly what any
// TVM-FFI caller pays. Results are scalars, so nothing needs releasing.
double PackedNs(const ffijit::Function& f, std::vector<TVMFFIAny> args, int calls) {
  double sink = 0;
  double ns = NsPerCall(
      [&](int n) {
        for (int i = 0; i < n; ++i) {
          TVMFFIAny result{};
          if (TVMFFIFunctionCall(f.get(), args.data(), static_cast<int32_t>(args.size()),
                                 &result) != 0) {
            ++failures;
            return;
          }
          sink += result.type_index == kTVMFFIFloat ? result.v_float64 : result.v_int64;
        }
      },
      calls);
  Check(sink != 0, "the packed calls returned results");
  return ns;
}

// The baseline: the same native function called through a pointer the compiler cannot see through.
template <typename R, typename... A, typename... V>
double DirectNs(R (*fn)(A...), int calls, V... values) {
  R (*volatile target)(A...) = fn;
  double sink = 0;
  double ns = NsPerCall(
      [&](int n) {
        for (int i = 0; i < n; ++i) sink += static_cast<double>(target(values...));
      },
      calls);
  Check(sink != 0, "the direct calls returned results");
  return ns;
}

}  // namespace

int main() {
  using ffijit::Any;
  using ffijit::Function;
  std::printf("ffijit demo: native functions registered at run time, called through TVM FFI's\n");
  std::printf(
      "packed convention int(handle, const TVMFFIAny* args, int n, TVMFFIAny* result).\n\n");

#if FFIJIT_HAVE_LLVM
  // Keep every function on the interpreter until we ask for its thunk, so that the cost table
  // measures one tier at a time (the default policy compiles after 100 calls, in the background).
  ffijit::ScopedJitOptions manual({ffijit::JitPolicy::kNever, 0});
#endif

  // 1. Register: a name for messages, the address, the signature; options.global_name is the
  // name callers look the function up by.
  Function scale = ffijit::Register("scale", reinterpret_cast<void*>(&Scale), kScaleJson,
                                    ffijit::MetadataFormat::kJson, GlobalName("demo.scale"));
  Function add = ffijit::Register("add", &Add, GlobalName("demo.add"));  // deduced signature
  Function mix = ffijit::Register("mix", reinterpret_cast<void*>(&Mix), kMixRaw,
                                  ffijit::MetadataFormat::kRaw, GlobalName("demo.mix"));

  std::printf("1. Registered three functions:\n");
  std::printf("   %-11s from iree.abi JSON     %s\n", "demo.scale", Declaration(scale).c_str());
  std::printf("   %-11s deduced from C++ type  %s\n", "demo.add", Declaration(add).c_str());
  std::printf("   %-11s from a raw signature   %s\n\n", "demo.mix", Declaration(mix).c_str());

  // 2. Call them by global name, as any caller of the packed convention would.
  std::printf("2. Called by global name:\n");
  Function by_name = ffijit::GetGlobalFunctionOrThrow("demo.scale");
  double r1 = by_name(1.5, 4).cast<double>();
  double r2 =
      ffijit::CallWithKeywords(by_name, {}, {{"k", Any(3)}, {"x", Any(0.5)}}).cast<double>();
  int64_t r3 = ffijit::GetGlobalFunctionOrThrow("demo.add")(40, 2).cast<int64_t>();
  double r4 = ffijit::GetGlobalFunctionOrThrow("demo.mix")(2, 0.25, 10.0).cast<double>();
  std::printf("   demo.scale(1.5, 4)        = %g\n", r1);
  std::printf("   demo.scale(k=3, x=0.5)    = %g   (keyword arguments)\n", r2);
  std::printf("   demo.add(40, 2)           = %lld\n", static_cast<long long>(r3));
  std::printf("   demo.mix(2, 0.25, 10.0)   = %g\n\n", r4);
  Check(r1 == 6.0 && r2 == 1.5 && r3 == 42 && r4 == 10.5, "interpreted results");

  // 3. Tiers: measure the interpreter, then swap in the JIT thunk and measure again.
  constexpr int kCalls = 300000;
  struct Row {
    const char* name;
    double direct, interp, jit;
  };
  std::vector<Row> rows = {
      {"demo.scale", DirectNs(&Scale, kCalls, 1.5, int64_t{4}),
       PackedNs(scale, {Float(1.5), Int(4)}, kCalls), NAN},
      {"demo.add", DirectNs(&Add, kCalls, int64_t{40}, int64_t{2}),
       PackedNs(add, {Int(40), Int(2)}, kCalls), NAN},
      {"demo.mix", DirectNs(&Mix, kCalls, int32_t{2}, 0.25f, 10.0),
       PackedNs(mix, {Int(2), Float(0.25), Float(10.0)}, kCalls), NAN},
  };

  bool jit_ok = false;
  std::printf("3. Tiers: every function starts on the interpreter.\n");
#if FFIJIT_HAVE_LLVM
  if (HaveJit()) {
    auto start = std::chrono::steady_clock::now();
    ffijit::CompileResults results = ffijit::JitEngine::Default().CompileNow({scale, add, mix});
    const int64_t compiled = results.installed;
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    jit_ok = compiled == 3;
    if (jit_ok) {
      std::printf(
          "   JitEngine::Default().CompileNow built 3 thunks as one LLVM module in %.1f ms\n", ms);
      std::printf("   (this first compile includes starting LLVM) and swapped each function's\n");
      std::printf("   entry point: IsJitCompiled = %s, %s, %s\n", IsCompiled(scale) ? "yes" : "no",
                  IsCompiled(add) ? "yes" : "no", IsCompiled(mix) ? "yes" : "no");
      double j1 = scale(1.5, 4).cast<double>();
      int64_t j3 = add(40, 2).cast<int64_t>();
      double j4 = mix(2, 0.25, 10.0).cast<double>();
      Check(IsCompiled(scale) && IsCompiled(add) && IsCompiled(mix), "all three compiled");
      Check(j1 == r1 && j3 == r3 && j4 == r4, "JIT results equal interpreted results");
      std::printf("   same results through the thunks: %g, %lld, %g\n\n", j1,
                  static_cast<long long>(j3), j4);
      rows[0].jit = PackedNs(scale, {Float(1.5), Int(4)}, kCalls);
      rows[1].jit = PackedNs(add, {Int(40), Int(2)}, kCalls);
      rows[2].jit = PackedNs(mix, {Int(2), Float(0.25), Float(10.0)}, kCalls);
    } else {
      std::string why;
      for (const std::string& reason : results.reasons) {
        if (!reason.empty()) why += (why.empty() ? "" : "; ") + reason;
      }
      std::printf("   the JIT could not compile the thunks: %s\n\n", why.c_str());
      ++failures;
    }
  }
#endif
  if (!HaveJit()) {
    std::printf("   The JIT is not available in this build (FFIJIT_ENABLE_JIT=OFF): every call\n");
    std::printf("   runs on the interpreter, with the same results and errors.\n\n");
  }

  std::printf("4. Cost per call, median of 7 runs of %d calls:\n\n", kCalls);
  std::printf("   %-11s %9s %12s", "function", "direct", "interpreter");
  if (jit_ok) std::printf(" %10s", "jit thunk");
  std::printf("\n");
  for (const Row& row : rows) {
    std::printf("   %-11s %6.1f ns %9.1f ns", row.name, row.direct, row.interp);
    if (jit_ok) std::printf(" %7.1f ns", row.jit);
    std::printf("\n");
  }
  std::printf("\n   direct = a call through a function pointer; the packed columns add checking\n");
  std::printf("   every TVMFFIAny tag, converting it and boxing the result.\n\n");

  // 5. A mistake, reported with the function, its signature and the argument at fault.
  std::printf("5. A wrong argument type is a clear error, never a crash:\n");
  std::printf("   demo.scale(\"four\", 4)\n");
  try {
    scale("four", 4);
    Check(false, "a string for an f64 was accepted");
  } catch (const ffijit::Error& e) {
    std::printf("   -> %s:\n      %s\n", e.kind().c_str(), e.message().c_str());
    Check(e.kind() == "TypeError", "the error kind is TypeError");
  }

  ffijit::RemoveGlobalFunction("demo.scale");
  ffijit::RemoveGlobalFunction("demo.add");
  ffijit::RemoveGlobalFunction("demo.mix");
  if (failures != 0) {
    std::printf("\ndemo FAILED (%d unexpected results)\n", failures);
    return 1;
  }
  std::printf("\ndemo done.\n");
  return 0;
}
