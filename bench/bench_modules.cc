// Module and registry micro-benchmarks: loading a shared-library module and looking up one of its
// functions (the library new to the process, and already loaded by a live module), and listing
// the global function names the way TVM FFI's Python package does (the functor, then each name).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "ffijit/ffijit.h"

namespace {

using ffijit::Any;
using ffijit::Function;
using ffijit::Module;

void LoadAndLookUp() {
  Module mod = Module::Load(FFIJIT_BENCH_LOAD_MODULE);
  benchmark::DoNotOptimize(mod.GetFunction("add_one"));
}

// Each round loads the library from the file (the page cache) and unloads it with the module.
void BM_ModuleLoad_Cold(benchmark::State& state) {
  for (auto _ : state) LoadAndLookUp();
}
BENCHMARK(BM_ModuleLoad_Cold)->Name("BM_ModuleLoad/cold");

// A live module keeps the library loaded: each round finds it in the process.
void BM_ModuleLoad_AlreadyLoaded(benchmark::State& state) {
  Module keep = Module::Load(FFIJIT_BENCH_LOAD_MODULE);
  for (auto _ : state) LoadAndLookUp();
}
BENCHMARK(BM_ModuleLoad_AlreadyLoaded)->Name("BM_ModuleLoad/already_loaded");

void BM_GlobalNames_List(benchmark::State& state) {
  Function functor_of = ffijit::GetGlobalFunctionOrThrow("ffi.FunctionListGlobalNamesFunctor");
  for (auto _ : state) {
    Function functor = functor_of().cast<Function>();
    const int64_t count = functor(-1).cast<int64_t>();
    for (int64_t i = 0; i < count; ++i) benchmark::DoNotOptimize(functor(i));
  }
  state.counters["names"] = static_cast<double>(functor_of().cast<Function>()(-1).cast<int64_t>());
}
BENCHMARK(BM_GlobalNames_List)->Name("BM_GlobalNames/list");

}  // namespace
