// A callback into a C library: qsort takes a plain `int (*)(const void*, const void*)`, and
// ffijit::NativeCallback turns a packed ffijit::Function into exactly that. The JIT generates the
// native entry point, which boxes the two pointers, calls the packed function and unboxes the
// int it returns. Needs the JIT: without it the example says so and exits successfully.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "ffijit/ffijit.h"
#include "ffijit/jit/register.h"
#if FFIJIT_HAVE_LLVM
#include "ffijit/jit/jit.h"
#endif

namespace {

struct City {
  const char* name;
  int32_t population_k;  // thousands
};

}  // namespace

int main() {
#if !FFIJIT_HAVE_LLVM
  std::printf(
      "native callbacks need the JIT, which this build does not include "
      "(FFIJIT_ENABLE_JIT=OFF); skipping\n");
  return 0;
#else
  if (!ffijit::JitAvailable()) {
    std::printf("native callbacks need the JIT, which is not available here; skipping\n");
    return 0;
  }

  // The comparator as a packed function. Any packed function works: one written in C against
  // the ABI, one from another language runtime, or this typed C++ lambda. It receives the two
  // `const void*` as OpaquePtr values.
  int64_t comparisons = 0;
  ffijit::Function by_population = ffijit::Function::FromTyped(
      [&comparisons](void* a, void* b) -> int32_t {
        ++comparisons;
        int32_t pa = static_cast<const City*>(a)->population_k;
        int32_t pb = static_cast<const City*>(b)->population_k;
        return (pa > pb) - (pa < pb);
      },
      "by_population");

  // The C type the library expects, as a Signature: (ptr, ptr) -> i32. SignatureOf deduces it
  // from a function type; metadata text ({"a":["ptr","ptr"],"r":["i32"]}) would do as well.
  // Throws ffijit::Error if the JIT cannot build it (a RuntimeError saying why).
  ffijit::NativeCallback compare(by_population, ffijit::SignatureOf<int(void*, void*)>());

  City cities[] = {{"Lyon", 522},  {"Paris", 2103},    {"Nice", 342},
                   {"Lille", 236}, {"Marseille", 873}, {"Toulouse", 504}};
  const size_t n = sizeof(cities) / sizeof(cities[0]);
  std::qsort(cities, n, sizeof(City), compare.as<int(const void*, const void*)>());

  std::printf("qsort with a packed comparator (%lld comparisons):\n",
              static_cast<long long>(comparisons));
  bool sorted = true;
  for (size_t i = 0; i < n; ++i) {
    std::printf("  %-9s %5d k\n", cities[i].name, cities[i].population_k);
    if (i > 0 && cities[i - 1].population_k > cities[i].population_k) sorted = false;
  }
  if (!sorted || comparisons == 0) {
    std::printf("FAILED: the array is not sorted\n");
    return 1;
  }

  // The callback's code and its reference to the function are released with `compare`.
  std::printf("done\n");
  return 0;
#endif
}
