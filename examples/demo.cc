// ffijit's headline example: native functions registered at run time with the default settings,
// called through one packed calling convention on the tiers they get -- a stencil thunk made at
// registration, the interpreter where the stencils do not reach, an LLVM thunk of its own once a
// function is hot -- with each tier's cost per call against a direct call, and one clear error.
//
//   ./build.sh demo        (runs build/release/bin/example_demo)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ffijit/ffijit.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"

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

// Milliseconds `body` takes, run once.
template <typename Body>
double Millis(Body body) {
  auto start = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Registrations timed after the first: the median of this many.
constexpr int kAgain = 5;

// Median microseconds of `make` (a registration), over kAgain runs.
template <typename Make>
double AgainUs(Make make) {
  std::vector<double> samples;
  for (int i = 0; i < kAgain; ++i) samples.push_back(Millis(make) * 1000);
  std::sort(samples.begin(), samples.end());
  return samples[kAgain / 2];
}

// This process's resident memory in MiB (Linux's /proc), or -1.
double ResidentMiB() {
  long pages = 0, resident = -1;
  if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%ld %ld", &pages, &resident) != 2) resident = -1;
    std::fclose(statm);
  }
  return resident < 0 ? -1 : static_cast<double>(resident) * sysconf(_SC_PAGESIZE) / (1 << 20);
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

// Calls per run. 7.25 runs of them stay below the 100000 calls on a stencil thunk after which a
// function goes hot, so the stencil column times the stencil thunk alone.
constexpr int kCalls = 10000;

// The packed cost: one TVMFFIFunctionCall per iteration with prepared arguments, exactly what any
// TVM-FFI caller pays. Results are scalars, so nothing needs releasing.
double PackedNs(const ffijit::Function& f, std::vector<TVMFFIAny> args) {
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
      kCalls);
  Check(sink != 0, "the packed calls returned results");
  return ns;
}

// The baseline: the same native function called through a pointer the compiler cannot see through.
template <typename R, typename... A, typename... V>
double DirectNs(R (*fn)(A...), V... values) {
  R (*volatile target)(A...) = fn;
  double sink = 0;
  double ns = NsPerCall(
      [&](int n) {
        for (int i = 0; i < n; ++i) sink += static_cast<double>(target(values...));
      },
      kCalls);
  Check(sink != 0, "the direct calls returned results");
  return ns;
}

struct Row {
  const char* name;
  ffijit::Function function;
  std::vector<TVMFFIAny> args;
  double direct;
  double first = 0, hot = 0;  // ns per call on the tier at registration, on the hot tier
};

// Compiles each function's hot thunk now (the hot policy would, in the background, after enough
// calls), loading LLVM first; says what it cost. False when there is no JIT.
bool GoHot(const std::vector<Row>& rows) {
  const double before = ResidentMiB();
  bool jit = false;
  const double load_ms =
      Millis([&] { jit = ffijit::JitAvailable(); });  // loads libffijit_orc and libLLVM
  if (!jit) return false;
  ffijit::JitEngine& engine = ffijit::JitEngine::Default();
  std::printf(
      "   loading LLVM (libffijit_orc.so, libLLVM) took %.0f ms; compiling each hot thunk\n",
      load_ms);
  std::printf("   (the first also starts LLVM's JIT session):");
  for (const Row& row : rows) {
    try {
      std::printf(" %s %.1f ms%s", row.name, Millis([&] { engine.CompileHotNow(row.function); }),
                  &row == &rows.back() ? "" : ",");
    } catch (const ffijit::Error& e) {
      std::printf("\n   %s: %s", row.name, e.message().c_str());
    }
    Check(ffijit::IsHotCompiled(row.function), "the function runs its hot thunk");
  }
  std::printf("\n");
  if (before >= 0) {
    std::printf("   resident memory grew by %.0f MiB (FFIJIT_JIT=stencils keeps LLVM out)\n",
                ResidentMiB() - before);
  }
  return true;
}

// The cost table: rows[0] (demo.scale) on the interpreter, the others on `first_tier`.
void PrintCosts(const std::vector<Row>& rows, const char* first_tier, bool jit) {
  std::printf("4. Cost per call, median of 7 runs of %d calls:\n\n", kCalls);
  std::printf("   %-11s %9s   %-24s %s\n", "function", "direct", "tier at registration",
              jit ? "LLVM hot thunk" : "");
  for (const Row& row : rows) {
    std::printf("   %-11s %6.1f ns   %-14s %6.1f ns", row.name, row.direct,
                &row == &rows[0] ? "interpreter*" : first_tier, row.first);
    if (jit) std::printf(" %10.1f ns", row.hot);
    std::printf("\n");
  }
  std::printf("\n   direct = a call through a function pointer; the packed columns add checking\n");
  std::printf("   every TVMFFIAny tag, converting it and boxing the result.\n");
  std::printf("   * timed on a twin registered interpret_only: demo.scale itself leaves the\n");
  std::printf("     interpreter for LLVM's cold thunk on its 100th call.\n\n");
}

}  // namespace

int main() {
  using ffijit::Any;
  using ffijit::Function;
  std::printf("ffijit demo: native functions registered at run time, called through TVM FFI's\n");
  std::printf(
      "packed convention int(handle, const TVMFFIAny* args, int n, TVMFFIAny* result).\n\n");

  // 1. Register: a name for messages, the address, the signature; options.global_name is the
  // name callers look the function up by. The default settings tier them (guide, section 7).
  // Each is timed, then registered again (not globally) to time it after the process's one-time
  // set-up.
  Function scale, add, mix;
  const double scale_first = Millis([&] {
    scale = ffijit::Register("scale", reinterpret_cast<void*>(&Scale), kScaleJson,
                             ffijit::MetadataFormat::kJson, GlobalName("demo.scale"));
  });
  const double add_first = Millis([&] {
    add = ffijit::Register("add", &Add, GlobalName("demo.add"));  // deduced signature
  });
  const double mix_first = Millis([&] {
    mix = ffijit::Register("mix", reinterpret_cast<void*>(&Mix), kMixRaw,
                           ffijit::MetadataFormat::kRaw, GlobalName("demo.mix"));
  });
  auto scale_again = [] {
    ffijit::MakeFunction("scale", reinterpret_cast<void*>(&Scale), kScaleJson,
                         ffijit::MetadataFormat::kJson);
  };
  auto add_again = [] { ffijit::MakeFunction("add", &Add); };
  auto mix_again = [] {
    ffijit::MakeFunction("mix", reinterpret_cast<void*>(&Mix), kMixRaw,
                         ffijit::MetadataFormat::kRaw);
  };
  std::printf("1. Registered three functions. The time to register one, its thunk included (a\n");
  std::printf("   first one also pays one-time set-up, such as the thunks' code memory):\n");
  std::printf("   %-11s %-22s %-30s %7s %7s\n", "", "", "", "first", "again");
  const struct {
    const char* name;
    const char* from;
    const Function& function;
    double first_ms;
    double again_us;
  } registered[] = {{"demo.scale", "from iree.abi JSON", scale, scale_first, AgainUs(scale_again)},
                    {"demo.add", "deduced from C++ type", add, add_first, AgainUs(add_again)},
                    {"demo.mix", "from a raw signature", mix, mix_first, AgainUs(mix_again)}};
  for (const auto& r : registered) {
    std::printf("   %-11s %-22s %-30s %4.0f us %4.1f us\n", r.name, r.from,
                Declaration(r.function).c_str(), r.first_ms * 1000, r.again_us);
  }
#if FFIJIT_HAVE_LLVM
  std::printf(
      "   demo.add and demo.mix each got a stencil thunk: machine code compiled with ffijit,\n");
  std::printf(
      "   copied and patched, without LLVM. demo.scale takes keyword arguments, which the\n");
  std::printf("   stencils do not, so it starts on the interpreter.\n");
#endif
  std::printf("\n");

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
  Check(r1 == 6.0 && r2 == 1.5 && r3 == 42 && r4 == 10.5, "results");

  // Time the tier each function got at registration. demo.scale would leave the interpreter on
  // its 100th call (for LLVM's cold thunk, compiled in the background), so its interpreter is
  // timed on a twin that never leaves it.
  ffijit::RegisterOptions pinned;
  pinned.interpret_only = true;
  Function scale_twin = ffijit::MakeFunction("scale", reinterpret_cast<void*>(&Scale), kScaleJson,
                                             ffijit::MetadataFormat::kJson, pinned);
  std::vector<Row> rows = {
      {"demo.scale", scale, {Float(1.5), Int(4)}, DirectNs(&Scale, 1.5, int64_t{4})},
      {"demo.add", add, {Int(40), Int(2)}, DirectNs(&Add, int64_t{40}, int64_t{2})},
      {"demo.mix", mix, {Int(2), Float(0.25), Float(10.0)}, DirectNs(&Mix, 2, 0.25f, 10.0)}};
  rows[0].first = PackedNs(scale_twin, rows[0].args);
  for (size_t i = 1; i < rows.size(); ++i) rows[i].first = PackedNs(rows[i].function, rows[i].args);

  // 3. The hot tier, which loads LLVM on its first compile.
  std::printf("3. Hot: a function called often gets an LLVM thunk of its own, compiled in the\n");
  std::printf("   background (by default after 100000 calls on its stencil thunk, or on LLVM's\n");
  std::printf("   cold thunk). JitEngine::CompileHotNow asks for it at once:\n");
  const bool jit = GoHot(rows);
  const int64_t stencils = jit ? ffijit::JitEngine::Default().Stats().stencil_thunks_made : 0;
  if (jit) {
    double h1 = scale(1.5, 4).cast<double>();
    int64_t h3 = add(40, 2).cast<int64_t>();
    double h4 = mix(2, 0.25, 10.0).cast<double>();
    Check(h1 == r1 && h3 == r3 && h4 == r4, "hot results equal the first tiers' results");
    std::printf("   same results on the hot thunks: %g, %lld, %g\n\n", h1,
                static_cast<long long>(h3), h4);
    for (Row& row : rows) row.hot = PackedNs(row.function, row.args);
  } else {
    std::printf("   The JIT is not available in this build (FFIJIT_ENABLE_JIT=OFF): every call\n");
    std::printf("   runs on the interpreter, with the same results and errors.\n\n");
  }
  // Process-wide: a thunk for each registration of add and mix, none for scale's.
  if (jit && stencils != 0) {
    Check(stencils == 2 * (1 + kAgain), "a stencil thunk made at each registration of add, mix");
  } else if (jit) {
    std::printf(
        "   (this build has no stencil tier, which needs clang-19 at build time: demo.add\n");
    std::printf("   and demo.mix started on the interpreter too)\n\n");
  }
  const char* first_tier = stencils != 0 ? "stencil thunk" : "interpreter";

  PrintCosts(rows, first_tier, jit);

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
