// Runtime micro-benchmarks: refcounting, Any construction, typed calls packed vs direct, and the
// C++ call operator (Function::operator()) with object and string arguments.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "ffijit/ffijit.h"

namespace {

using ffijit::Any;
using ffijit::Function;

// Uncontended strong increment + decrement through the inline header path.
void BM_RefCount_IncDec(benchmark::State& state) {
  ffijit::Array array{1};
  TVMFFIObject* obj = array.get();
  for (auto _ : state) {
    ffijit::details::IncRef(obj);
    benchmark::DoNotOptimize(FFIJITHeaderStrongCount(obj));
    ffijit::details::DecRef(obj);
  }
}
BENCHMARK(BM_RefCount_IncDec)->Name("BM_RefCount/incdec");

// The same through the exported C functions (what C callers and generated code pay).
void BM_RefCount_IncDecCApi(benchmark::State& state) {
  ffijit::Array array{1};
  TVMFFIObjectHandle obj = array.get();
  for (auto _ : state) {
    TVMFFIObjectIncRef(obj);
    TVMFFIObjectDecRef(obj);
  }
}
BENCHMARK(BM_RefCount_IncDecCApi)->Name("BM_RefCount/incdec_c_api");

void BM_AnyFrom_Int(benchmark::State& state) {
  int64_t value = 42;
  for (auto _ : state) {
    benchmark::DoNotOptimize(value);
    Any any(value);
    benchmark::DoNotOptimize(any);
  }
}
BENCHMARK(BM_AnyFrom_Int)->Name("BM_AnyFrom/int");

void BM_AnyFrom_SmallStr(benchmark::State& state) {
  std::string text = "seven77";
  for (auto _ : state) {
    benchmark::DoNotOptimize(text.data());
    Any any(text);
    benchmark::DoNotOptimize(any);
  }
}
BENCHMARK(BM_AnyFrom_SmallStr)->Name("BM_AnyFrom/small_str");

void BM_AnyFrom_LongStr(benchmark::State& state) {
  std::string text = "a string long enough to need the heap";
  for (auto _ : state) {
    benchmark::DoNotOptimize(text.data());
    Any any(text);
    benchmark::DoNotOptimize(any);
  }
}
BENCHMARK(BM_AnyFrom_LongStr)->Name("BM_AnyFrom/long_str");

__attribute__((noinline)) int64_t Add3(int64_t a, int64_t b, int64_t c) {
  return a + b + c;
}

// Called through a volatile pointer so the compiler cannot inline the call away.
void BM_TypedCall_Direct(benchmark::State& state) {
  int64_t (*volatile target)(int64_t, int64_t, int64_t) = Add3;
  int64_t a = 1, b = 2, c = 3;
  for (auto _ : state) {
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(target(a, b, c));
  }
}
BENCHMARK(BM_TypedCall_Direct)->Name("BM_TypedCall/direct");

void BM_TypedCall_Packed(benchmark::State& state) {
  Function add = Function::FromTyped(Add3, "add3");
  TVMFFIAny args[3] = {};
  for (int i = 0; i < 3; ++i) {
    args[i].type_index = kTVMFFIInt;
    args[i].v_int64 = i + 1;
  }
  TVMFFIObjectHandle handle = add.get();
  for (auto _ : state) {
    TVMFFIAny result;
    result.type_index = kTVMFFINone;
    benchmark::DoNotOptimize(args);
    if (TVMFFIFunctionCall(handle, args, 3, &result) != 0) {
      state.SkipWithError("call failed");
      break;
    }
    benchmark::DoNotOptimize(result.v_int64);
  }
}
BENCHMARK(BM_TypedCall_Packed)->Name("BM_TypedCall/packed");

// The callee reads both arguments without copying them, so the time is the caller's packing (and
// the reference counting or string allocation that packing may do) plus the typed dispatch.
Function StringTensorCallee() {
  return Function::FromTyped(
      [](std::string_view text, ffijit::Tensor tensor) {
        return static_cast<int64_t>(text.size()) + tensor.ndim();
      },
      "string_tensor");
}

const std::string kLongText = "a string argument well over seven bytes";

void BM_CppCall_StringTensor(benchmark::State& state) {
  Function callee = StringTensorCallee();
  ffijit::String text(kLongText);
  ffijit::Tensor tensor = ffijit::Tensor::Empty({4}, ffijit::ParseDataType("float32"));
  for (auto _ : state) {
    benchmark::DoNotOptimize(callee(text, tensor));
  }
}
BENCHMARK(BM_CppCall_StringTensor)->Name("BM_CppCall/String_Tensor");

void BM_CppCall_StdStringTensor(benchmark::State& state) {
  Function callee = StringTensorCallee();
  ffijit::Tensor tensor = ffijit::Tensor::Empty({4}, ffijit::ParseDataType("float32"));
  for (auto _ : state) {
    benchmark::DoNotOptimize(callee(kLongText, tensor));
  }
}
BENCHMARK(BM_CppCall_StdStringTensor)->Name("BM_CppCall/std_string_Tensor");

}  // namespace
