// BM_Call/<path>/<signature>: one native called directly, via the interpreter, and via libffi.
//
// `direct` is an indirect call with C++ arguments (the native floor); `floor/noop` is
// TVMFFIFunctionCall of a safe_call that returns at once (the packed calling convention's floor).
// `interp` is TVMFFIFunctionCall of a function registered interpret-only (the JIT never takes it).
// `libffi` is the baseline the interpreter replaces: a straightforward marshaller that checks each
// packed argument's tag, converts it into a slot and calls ffi_call with a cif prepared once; it is
// called directly (no packed dispatch), so the comparison favours it slightly.
#include <benchmark/benchmark.h>
#include <ffi.h>

#include <cstring>
#include <vector>

#include "call_natives.h"
#include "ffijit/jit/register.h"

namespace ffijit::bench {
namespace {

// ---- direct ----

// The arguments are made opaque once, so they are run-time values here as in bench_jit.cc's RunCpp
// (typed calls); else the compiler folds the constants into the call and the two loops differ.
template <typename F, typename... A>
void RunDirect(benchmark::State& state, F* fn, A... args) {
  (benchmark::DoNotOptimize(args), ...);
  for (auto _ : state) {
    F* target = fn;
    benchmark::DoNotOptimize(target);  // an indirect call the compiler cannot see through
    auto r = target(args...);
    benchmark::DoNotOptimize(r);
  }
}

void DirectCase(benchmark::State& state, const CallCase& c) {
  static int dummy = 0;
  const std::string name = c.name;
  if (name == "i64_i64_i64") {
    RunDirect(state, &BenchNativeI64x3, int64_t{1}, int64_t{2}, int64_t{3});
  } else if (name == "i64_f64_i32_f32_ptr") {
    RunDirect(state, &BenchNativeMixed, int64_t{1}, 2.5, int32_t{3}, 4.5f,
              static_cast<void*>(&dummy));
  } else if (name == "dev_dtype_i64") {
    RunDirect(state, &BenchNativeDevDtype, DLDevice{kDLCUDA, 1}, DLDataType{kDLFloat, 32, 1},
              int64_t{7});
  } else if (name == "tensor") {
    RunDirect(state, &BenchNativeTensor,
              const_cast<DLTensor*>(reinterpret_cast<const DLTensor*>(c.args[0].raw().v_obj + 1)));
  } else {
    RunDirect(state, &BenchNativeStr,
              reinterpret_cast<const FFIJITBytesCell*>(c.args[0].raw().v_obj + 1)->data);
  }
}

// ---- interpreter ----

void InterpCase(benchmark::State& state, const CallCase& c) {
  RegisterOptions options;
  options.interpret_only = true;
  Function func = MakeFunction(std::string("bench_") + c.name, c.fn, c.sig, options);
  std::vector<TVMFFIAny> args;
  for (const Any& a : c.args) args.push_back(a.raw());
  for (auto _ : state) {
    TVMFFIAny result{};
    int status =
        TVMFFIFunctionCall(func.get(), args.data(), static_cast<int32_t>(args.size()), &result);
    benchmark::DoNotOptimize(status);
    benchmark::DoNotOptimize(result);
  }
}

// ---- the packed-call floor ----

// A safe_call that does nothing but box a result: what any packed call through
// TVMFFIFunctionCall costs before a single argument is looked at.
int NoopSafeCall(void*, const TVMFFIAny*, int32_t, TVMFFIAny* result) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}

void BM_PackedFloor(benchmark::State& state) {
  // A Function object laid out by hand with NoopSafeCall as its entry point (as a registered
  // function's is its thunk), never freed: TVMFFIFunctionCreate would add a trampoline hop.
  struct {
    TVMFFIObject header;
    TVMFFIFunctionCell cell;
  } func{};
  func.header.type_index = kTVMFFIFunction;
  FFIJITHeaderSetCounts(&func.header, 1, 1);
  func.cell.safe_call = &NoopSafeCall;
  TVMFFIAny args[3] = {};
  for (auto _ : state) {
    TVMFFIAny result{};
    int status = TVMFFIFunctionCall(&func, args, 3, &result);
    benchmark::DoNotOptimize(status);
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(BM_PackedFloor)->Name("BM_Call/floor/noop");

// ---- libffi baseline ----

class LibffiMarshaller {
 public:
  LibffiMarshaller(const Signature& sig, void* fn) : fn_(fn) {
    device_elements_[0] = &ffi_type_sint32;
    device_elements_[1] = &ffi_type_sint32;
    device_elements_[2] = nullptr;
    device_type_.type = FFI_TYPE_STRUCT;
    device_type_.elements = device_elements_;
    dtype_elements_[0] = &ffi_type_uint8;
    dtype_elements_[1] = &ffi_type_uint8;
    dtype_elements_[2] = &ffi_type_uint16;
    dtype_elements_[3] = nullptr;
    dtype_type_.type = FFI_TYPE_STRUCT;
    dtype_type_.elements = dtype_elements_;
    for (const TypePtr& t : sig.args) {
      kinds_.push_back(KindOf(*t));
      types_.push_back(FfiTypeOf(kinds_.back()));
    }
    result_kind_ = KindOf(*sig.results[0]);
    ffi_prep_cif(&cif_, FFI_DEFAULT_ABI, static_cast<unsigned>(types_.size()),
                 FfiTypeOf(result_kind_), types_.data());
  }

  int Call(const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
    if (num_args != static_cast<int32_t>(kinds_.size())) return Fail("arity");
    uint64_t storage[8][2];
    void* values[8];
    for (int32_t i = 0; i < num_args; ++i) {
      const TVMFFIAny& a = args[i];
      values[i] = storage[i];
      switch (kinds_[static_cast<size_t>(i)]) {
        case Kind::kI64:
          if (a.type_index != kTVMFFIInt && a.type_index != kTVMFFIBool) return Fail("type");
          storage[i][0] = static_cast<uint64_t>(a.v_int64);
          break;
        case Kind::kI32:
          if (a.type_index != kTVMFFIInt && a.type_index != kTVMFFIBool) return Fail("type");
          if (a.v_int64 < INT32_MIN || a.v_int64 > INT32_MAX) return Fail("range");
          storage[i][0] = static_cast<uint64_t>(a.v_int64);
          break;
        case Kind::kF64: {
          double d;
          if (a.type_index == kTVMFFIFloat) {
            d = a.v_float64;
          } else if (a.type_index == kTVMFFIInt || a.type_index == kTVMFFIBool) {
            d = static_cast<double>(a.v_int64);
          } else {
            return Fail("type");
          }
          std::memcpy(storage[i], &d, sizeof d);
          break;
        }
        case Kind::kF32: {
          float f;
          if (a.type_index == kTVMFFIFloat) {
            f = static_cast<float>(a.v_float64);
          } else if (a.type_index == kTVMFFIInt || a.type_index == kTVMFFIBool) {
            f = static_cast<float>(a.v_int64);
          } else {
            return Fail("type");
          }
          std::memcpy(storage[i], &f, sizeof f);
          break;
        }
        case Kind::kPtr:
          if (a.type_index == kTVMFFIOpaquePtr) {
            storage[i][0] = reinterpret_cast<uintptr_t>(a.v_ptr);
          } else if (a.type_index == kTVMFFINone) {
            storage[i][0] = 0;
          } else {
            return Fail("type");
          }
          break;
        case Kind::kDevice:
          if (a.type_index != kTVMFFIDevice) return Fail("type");
          std::memcpy(storage[i], &a.v_device, sizeof(DLDevice));
          break;
        case Kind::kDataType:
          if (a.type_index != kTVMFFIDataType) return Fail("type");
          std::memcpy(storage[i], &a.v_dtype, sizeof(DLDataType));
          break;
        case Kind::kTensor: {
          const DLTensor* t;
          if (a.type_index == kTVMFFITensor) {
            t = reinterpret_cast<const DLTensor*>(a.v_obj + 1);
          } else if (a.type_index == kTVMFFIDLTensorPtr) {
            t = static_cast<const DLTensor*>(a.v_ptr);
          } else {
            return Fail("type");
          }
          if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->ndim != 2)
            return Fail("tensor");
          storage[i][0] = reinterpret_cast<uintptr_t>(t);
          break;
        }
        case Kind::kStr:
          if (a.type_index == kTVMFFIRawStr) {
            storage[i][0] = reinterpret_cast<uintptr_t>(a.v_c_str);
          } else if (a.type_index == kTVMFFISmallStr) {
            storage[i][0] = reinterpret_cast<uintptr_t>(a.v_bytes);
          } else if (a.type_index == kTVMFFIStr) {
            storage[i][0] = reinterpret_cast<uintptr_t>(
                reinterpret_cast<const FFIJITBytesCell*>(a.v_obj + 1)->data);
          } else {
            return Fail("type");
          }
          break;
      }
    }
    uint64_t ret[2] = {0, 0};
    ffi_call(&cif_, FFI_FN(fn_), ret, values);
    *result = TVMFFIAny{};
    if (result_kind_ == Kind::kF64) {
      result->type_index = kTVMFFIFloat;
      std::memcpy(&result->v_float64, ret, sizeof(double));
    } else {
      result->type_index = kTVMFFIInt;
      result->v_int64 = static_cast<int64_t>(ret[0]);
    }
    return 0;
  }

 private:
  enum class Kind { kI64, kI32, kF64, kF32, kPtr, kDevice, kDataType, kTensor, kStr };

  static Kind KindOf(const Type& t) {
    switch (t.kind) {
      case TypeKind::kScalar:
        return t.scalar == ScalarKind::kI64   ? Kind::kI64
               : t.scalar == ScalarKind::kI32 ? Kind::kI32
               : t.scalar == ScalarKind::kF32 ? Kind::kF32
                                              : Kind::kF64;
      case TypeKind::kOpaquePtr:
        return Kind::kPtr;
      case TypeKind::kDevice:
        return Kind::kDevice;
      case TypeKind::kDataType:
        return Kind::kDataType;
      case TypeKind::kNDArray:
        return Kind::kTensor;
      default:
        return Kind::kStr;
    }
  }

  ffi_type* FfiTypeOf(Kind k) {
    switch (k) {
      case Kind::kI64:
        return &ffi_type_sint64;
      case Kind::kI32:
        return &ffi_type_sint32;
      case Kind::kF64:
        return &ffi_type_double;
      case Kind::kF32:
        return &ffi_type_float;
      case Kind::kDevice:
        return &device_type_;
      case Kind::kDataType:
        return &dtype_type_;
      default:
        return &ffi_type_pointer;
    }
  }

  static int Fail(const char* what) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", what);
    return -1;
  }

  void* fn_;
  ffi_cif cif_;
  std::vector<Kind> kinds_;
  std::vector<ffi_type*> types_;
  Kind result_kind_;
  ffi_type device_type_{};
  ffi_type* device_elements_[3];
  ffi_type dtype_type_{};
  ffi_type* dtype_elements_[4];
};

void LibffiCase(benchmark::State& state, const CallCase& c) {
  LibffiMarshaller marshaller(c.sig, c.fn);
  std::vector<TVMFFIAny> args;
  for (const Any& a : c.args) args.push_back(a.raw());
  for (auto _ : state) {
    TVMFFIAny result{};
    int status = marshaller.Call(args.data(), static_cast<int32_t>(args.size()), &result);
    benchmark::DoNotOptimize(status);
    benchmark::DoNotOptimize(result);
  }
}

const bool kRegistered = [] {
  for (const CallCase& c : CallCases()) {
    const std::string sig = c.name;
    benchmark::RegisterBenchmark(("BM_Call/direct/" + sig).c_str(),
                                 [&c](benchmark::State& s) { DirectCase(s, c); });
    benchmark::RegisterBenchmark(("BM_Call/interp/" + sig).c_str(),
                                 [&c](benchmark::State& s) { InterpCase(s, c); });
    benchmark::RegisterBenchmark(("BM_Call/libffi/" + sig).c_str(),
                                 [&c](benchmark::State& s) { LibffiCase(s, c); });
  }
  return true;
}();

}  // namespace
}  // namespace ffijit::bench
