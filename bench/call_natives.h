// The five native functions of the call benchmarks, their signatures and packed arguments.
//
// Shared by bench_call.cc (direct / interpreter / libffi) and bench_jit.cc (JIT thunks), so every
// path calls the very same code (call_natives.c) with the very same values.
#ifndef FFIJIT_BENCH_CALL_NATIVES_H_
#define FFIJIT_BENCH_CALL_NATIVES_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ffijit/ffijit.h"
#include "ffijit/reflect/signature.h"

namespace ffijit::bench {

// Defined in call_natives.c (C, another translation unit: a direct call really calls).
extern "C" {
int64_t BenchNativeI64x3(int64_t a, int64_t b, int64_t c);
double BenchNativeMixed(int64_t a, double b, int32_t c, float d, void* p);
int64_t BenchNativeDevDtype(DLDevice dev, DLDataType dtype, int64_t k);
int64_t BenchNativeTensor(DLTensor* t);
int64_t BenchNativeStr(const char* s);
}

// One benchmark case: the native, its signature, and packed arguments that satisfy it.
struct CallCase {
  const char* name;    // the `<signature>` part of BM_Call/<path>/<signature>
  const char* symbol;  // the native's name in call_natives.c (and its bitcode)
  void* fn;
  Signature sig;
  std::vector<Any> args;
};

inline Signature BenchSig(std::vector<TypePtr> args, TypePtr result) {
  Signature sig;
  sig.args = std::move(args);
  sig.results.push_back(std::move(result));
  return sig;
}

// The five cases every BM_Call path runs, built once and kept for the whole run (benchmarks hold
// references to them). Inline: one instance across the bench files.
inline const std::vector<CallCase>& CallCases() {
  static const std::vector<CallCase>* built = [] {
    static int dummy = 0;
    auto i64 = Type::Scalar(ScalarKind::kI64);
    std::vector<CallCase> cases;
    cases.push_back({"i64_i64_i64",
                     "BenchNativeI64x3",
                     reinterpret_cast<void*>(&BenchNativeI64x3),
                     BenchSig({i64, i64, i64}, i64),
                     {Any(1), Any(2), Any(3)}});
    cases.push_back({"i64_f64_i32_f32_ptr",
                     "BenchNativeMixed",
                     reinterpret_cast<void*>(&BenchNativeMixed),
                     BenchSig({i64, Type::Scalar(ScalarKind::kF64), Type::Scalar(ScalarKind::kI32),
                               Type::Scalar(ScalarKind::kF32), Type::Simple(TypeKind::kOpaquePtr)},
                              Type::Scalar(ScalarKind::kF64)),
                     {Any(1), Any(2.5), Any(3), Any(4.5), Any(static_cast<void*>(&dummy))}});
    cases.push_back(
        {"dev_dtype_i64",
         "BenchNativeDevDtype",
         reinterpret_cast<void*>(&BenchNativeDevDtype),
         BenchSig({Type::Simple(TypeKind::kDevice), Type::Simple(TypeKind::kDataType), i64}, i64),
         {Any(Device(kDLCUDA, 1)), Any(DataType::Float(32)), Any(7)}});
    cases.push_back({"tensor",
                     "BenchNativeTensor",
                     reinterpret_cast<void*>(&BenchNativeTensor),
                     BenchSig({Type::NDArray(ScalarKind::kF32, 2, {-1, -1})}, i64),
                     {Any(Tensor::Empty({4, 8}, DataType::Float(32)))}});
    cases.push_back({"str",
                     "BenchNativeStr",
                     reinterpret_cast<void*>(&BenchNativeStr),
                     BenchSig({Type::Simple(TypeKind::kStr)}, i64),
                     {Any(std::string("a string object, not inline"))}});
    return new std::vector<CallCase>(std::move(cases));
  }();
  return *built;
}

}  // namespace ffijit::bench

#endif  // FFIJIT_BENCH_CALL_NATIVES_H_
