// The tiering policy at work. A function the stencil tier covers gets a thunk made at registration
// (copy-and-patch, no LLVM). Any other is callable at once, on the interpreter; the JIT compiles
// its thunk on a background thread (eagerly, after N calls, or never) and swaps the function's
// entry point atomically. Thunks are cached per signature, so a second function of an already
// compiled signature gets the thunk at registration. The LLVM policies are shown below with the
// stencil tier off, on functions it would otherwise cover.
#include <cstdint>
#include <cstdio>
#include <string>

#include "ffijit/ffijit.h"
#include "ffijit/jit/register.h"

#if !FFIJIT_HAVE_LLVM

int main() {
  std::printf(
      "this build has no JIT (FFIJIT_ENABLE_JIT=OFF): every function stays on the\n"
      "interpreter, so there is no tiering to show; skipping\n");
  return 0;
}

#else
#include "ffijit/jit/jit.h"

namespace {

// Each policy below uses its own signature: the thunk cache is process-wide, and a function whose
// signature is already compiled would skip the policy altogether.
int64_t Twice(int64_t a) {
  return 2 * a;
}
int64_t Add(int64_t a, int64_t b) {
  return a + b;
}
int64_t Sub(int64_t a, int64_t b) {
  return a - b;
}
double Scale(double x, int32_t k) {
  return x * k;
}
int32_t Mix(int16_t a, uint8_t b) {
  return a * 256 + b;
}

}  // namespace

int main() {
  using ffijit::Function;
  using ffijit::JitEngine;
  using ffijit::JitPolicy;
  if (!ffijit::JitAvailable()) {
    std::printf("the JIT is not available here; skipping\n");
    return 0;
  }
  JitEngine& jit = JitEngine::Default();
  int failures = 0;
  auto tier = [](const Function& f) { return ffijit::IsJitCompiled(f) ? "jit" : "interp"; };
  auto expect = [&failures](bool ok, const char* what) {
    if (!ok) {
      std::printf("  FAIL: %s\n", what);
      ++failures;
    }
  };

  // The stencil tier (on by default): a thunk at registration, before any call.
  std::printf("stencil tier:\n");
  {
    const int64_t made = jit.Stats().stencil_thunks_made;
    Function twice = ffijit::MakeFunction("twice", &Twice);
    std::printf("  twice registered: %lld stencil thunk made; twice(21) = %lld\n",
                static_cast<long long>(jit.Stats().stencil_thunks_made - made),
                static_cast<long long>(twice(21).cast<int64_t>()));
    expect(jit.Stats().stencil_thunks_made == made + 1 && twice(21).cast<int64_t>() == 42,
           "a stencil thunk at registration");
  }

  // After N calls (the default policy, with N = 100 unless FFIJIT_JIT says otherwise). The N-th
  // call queues the compile; WaitIdle() here only makes the moment of the swap visible.
  std::printf("policy: after 3 calls\n");
  Function scale;
  {
    ffijit::ScopedJitOptions after3(
        {JitPolicy::kAfterCalls, 3, 100000, false});  // for registrations in scope
    scale = ffijit::MakeFunction("scale", &Scale);
  }
  for (int call = 1; call <= 5; ++call) {
    double r = scale(1.5, call).cast<double>();
    jit.WaitIdle();
    std::printf("  call %d: scale(1.5, %d) = %-4g then on: %s\n", call, call, r, tier(scale));
    expect(r == 1.5 * call, "scale's result");
    expect(ffijit::IsJitCompiled(scale) == (call >= 3), "the swap after the 3rd call");
  }

  // Eager: the compile is queued at registration; calls meanwhile run on the interpreter.
  std::printf("policy: eager\n");
  Function add;
  {
    ffijit::ScopedJitOptions eager({JitPolicy::kEager, 0, 100000, false});
    add = ffijit::MakeFunction("add", &Add);
  }
  int64_t first = add(20, 22).cast<int64_t>();  // never waits for LLVM
  jit.WaitIdle();
  std::printf("  add(20, 22) = %lld at once; after WaitIdle: %s\n", static_cast<long long>(first),
              tier(add));
  expect(first == 42 && ffijit::IsJitCompiled(add), "eager compile");

  // Never: stays interpreted however often it is called, until someone asks explicitly.
  std::printf("policy: never\n");
  Function mix;
  {
    ffijit::ScopedJitOptions never({JitPolicy::kNever, 0});
    mix = ffijit::MakeFunction("mix", &Mix);
  }
  for (int i = 0; i < 1000; ++i) mix(1, 2);
  jit.WaitIdle();
  std::printf("  after 1000 calls: %s\n", tier(mix));
  expect(!ffijit::IsJitCompiled(mix), "never stays interpreted");
  std::string why;
  try {
    jit.CompileNow(mix);  // blocking, on this thread
  } catch (const ffijit::Error& e) {
    why = e.message();  // "the function stays interpreted: <reason>"
  }
  std::printf("  after CompileNow: %s%s%s\n", tier(mix), why.empty() ? "" : ", ", why.c_str());
  expect(why.empty() && mix(1, 2).cast<int64_t>() == 258, "CompileNow");

  // The thunk cache: sub has add's signature (i64, i64) -> i64, whose thunk exists, so under the
  // eager or after-N policy it is installed at registration, before any call.
  std::printf("thunk cache:\n");
  Function sub;
  {
    ffijit::ScopedJitOptions after100({JitPolicy::kAfterCalls, 100, 100000, false});
    sub = ffijit::MakeFunction("sub", &Sub);
  }
  std::printf("  sub registered with add's signature: %s before its first call\n", tier(sub));
  expect(ffijit::IsJitCompiled(sub) && sub(5, 7).cast<int64_t>() == -2, "cache hit");

  ffijit::JitStats stats = jit.Stats();
  std::printf(
      "  engine: %lld thunks compiled in %lld LLVM modules, %lld from the disk cache,\n"
      "          %lld cache hits, %lld live thunks\n",
      static_cast<long long>(stats.thunks_compiled), static_cast<long long>(stats.modules_compiled),
      static_cast<long long>(stats.disk_hits), static_cast<long long>(stats.cache_hits),
      static_cast<long long>(stats.live_thunks));

  // Releasing: a thunk's code is freed when the last function using it is gone.
  add = Function();
  sub = Function();
  std::printf("  after add and sub are released: %lld live thunks\n",
              static_cast<long long>(jit.Stats().live_thunks));
  expect(jit.Stats().live_thunks == stats.live_thunks - 1, "the (i64, i64) -> i64 thunk is freed");

  std::printf(failures == 0 ? "done\n" : "FAILED\n");
  return failures == 0 ? 0 : 1;
}

#endif  // FFIJIT_HAVE_LLVM
