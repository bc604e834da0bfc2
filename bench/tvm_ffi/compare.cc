// The side-by-side benchmark of tools/tvm_ffi_bench_compare.sh: written against TVM FFI's own C++
// headers (v0.1.13 and later v0.1 tags), compiled once from a TVM FFI checkout and run on TVM
// FFI's library and on ffijit's drop-in, so the same machine code measures both. It is not part of
// ffijit's build (its headers are TVM FFI's, which never enter this repository). Each case does
// what a TVM FFI user's program does through the library: packed calls, objects the library
// makes, errors crossing the C ABI, type and global lookups, loading a module and listing globals.
#include <benchmark/benchmark.h>
#include <dlpack/dlpack.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

namespace ffi = tvm::ffi;

// The module file (bench/load_module.c built by the script), from the environment so
// the program needs no rebuild to move.
const char* ModulePath() {
  const char* path = std::getenv("TVM_FFI_BENCH_MODULE");
  return path != nullptr ? path : "compare_module.so";
}

TVMFFIByteArray Bytes(const char* text) {
  return TVMFFIByteArray{text, std::strlen(text)};
}

// ---- Packed calls ----

// The packed floor: TVMFFIFunctionCall of a safe_call that returns at once.
void BM_Call_CApiNoop(benchmark::State& state) {
  ffi::Function noop = ffi::Function::FromPacked([](ffi::PackedArgs, ffi::Any*) {});
  TVMFFIObjectHandle handle = const_cast<ffi::FunctionObj*>(noop.get());
  for (auto _ : state) {
    TVMFFIAny result;
    result.type_index = kTVMFFINone;
    result.v_int64 = 0;
    if (TVMFFIFunctionCall(handle, nullptr, 0, &result) != 0) state.SkipWithError("call failed");
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(BM_Call_CApiNoop)->Name("call/c_api_noop");

// A typed function made in this program, called through the C API with three ints.
void BM_Call_CApiTyped(benchmark::State& state) {
  ffi::Function add = ffi::Function::FromTyped(
      [](int64_t a, int64_t b, int64_t c) -> int64_t { return a + b + c; });
  TVMFFIObjectHandle handle = const_cast<ffi::FunctionObj*>(add.get());
  TVMFFIAny args[3];
  for (int i = 0; i < 3; ++i) {
    args[i].type_index = kTVMFFIInt;
    args[i].zero_padding = 0;
    args[i].v_int64 = i + 1;
  }
  for (auto _ : state) {
    TVMFFIAny result;
    result.type_index = kTVMFFINone;
    result.v_int64 = 0;
    benchmark::DoNotOptimize(args);
    if (TVMFFIFunctionCall(handle, args, 3, &result) != 0) state.SkipWithError("call failed");
    benchmark::DoNotOptimize(result.v_int64);
  }
}
BENCHMARK(BM_Call_CApiTyped)->Name("call/c_api_typed_i64x3");

// A function the library registered, called from C++ (Function::operator()).
void BM_Call_GlobalString(benchmark::State& state) {
  ffi::Function identity = ffi::Function::GetGlobalRequired("ffi.String");
  ffi::String text("a string argument well over seven bytes");
  for (auto _ : state) benchmark::DoNotOptimize(identity(text));
}
BENCHMARK(BM_Call_GlobalString)->Name("call/global_ffi.String");

// The module's exported safe_call through the Function the library wrapped it in.
void BM_Call_ModuleFunction(benchmark::State& state) {
  ffi::Module mod = ffi::Module::LoadFromFile(ModulePath());
  ffi::Function add_one = mod->GetFunction("add_one").value();
  int64_t x = 41;
  for (auto _ : state) {
    benchmark::DoNotOptimize(x);
    benchmark::DoNotOptimize(add_one(x).cast<int64_t>());
  }
}
BENCHMARK(BM_Call_ModuleFunction)->Name("call/module_add_one");

// ---- Objects ----

void BM_Object_IncDecCApi(benchmark::State& state) {
  ffi::Function object = ffi::Function::FromPacked([](ffi::PackedArgs, ffi::Any*) {});
  TVMFFIObjectHandle handle = const_cast<ffi::FunctionObj*>(object.get());
  for (auto _ : state) {
    TVMFFIObjectIncRef(handle);
    TVMFFIObjectDecRef(handle);
  }
}
BENCHMARK(BM_Object_IncDecCApi)->Name("object/incdec_c_api");

// The library makes the Array (ffi.Array) and the caller releases it.
void BM_Object_ArrayFromGlobal(benchmark::State& state) {
  ffi::Function make = ffi::Function::GetGlobalRequired("ffi.Array");
  for (auto _ : state) benchmark::DoNotOptimize(make(1, 2, 3, 4));
}
BENCHMARK(BM_Object_ArrayFromGlobal)->Name("object/ffi.Array_4");

void BM_Object_MapFromGlobal(benchmark::State& state) {
  ffi::Function make = ffi::Function::GetGlobalRequired("ffi.Map");
  for (auto _ : state) benchmark::DoNotOptimize(make("a", 1, "b", 2));
}
BENCHMARK(BM_Object_MapFromGlobal)->Name("object/ffi.Map_2");

void BM_Object_MapGetItem(benchmark::State& state) {
  ffi::Function make = ffi::Function::GetGlobalRequired("ffi.Map");
  ffi::Function get = ffi::Function::GetGlobalRequired("ffi.MapGetItem");
  ffi::Any map = make("a", 1, "b", 2, "c", 3);
  for (auto _ : state) benchmark::DoNotOptimize(get(map, "b"));
}
BENCHMARK(BM_Object_MapGetItem)->Name("object/ffi.MapGetItem");

void BM_Object_StringFromBytes(benchmark::State& state) {
  const char* text = "a string long enough to live on the heap";
  const TVMFFIByteArray bytes = Bytes(text);
  for (auto _ : state) {
    TVMFFIAny out;
    if (TVMFFIStringFromByteArray(&bytes, &out) != 0) state.SkipWithError("failed");
    benchmark::DoNotOptimize(out);
    if (out.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(out.v_obj);
  }
}
BENCHMARK(BM_Object_StringFromBytes)->Name("object/string_from_byte_array");

// A tensor imported from DLPack (the library makes the Tensor object) and released.
void NoDelete(DLManagedTensorVersioned*) {}

void BM_Object_TensorFromDLPack(benchmark::State& state) {
  static float data[8] = {};
  static int64_t shape[1] = {8};
  DLManagedTensorVersioned managed{};
  managed.version.major = DLPACK_MAJOR_VERSION;
  managed.version.minor = DLPACK_MINOR_VERSION;
  managed.deleter = NoDelete;
  managed.dl_tensor.data = data;
  managed.dl_tensor.device = DLDevice{kDLCPU, 0};
  managed.dl_tensor.ndim = 1;
  managed.dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
  managed.dl_tensor.shape = shape;
  for (auto _ : state) {
    ffi::Tensor tensor = ffi::Tensor::FromDLPackVersioned(&managed);
    benchmark::DoNotOptimize(tensor.ndim());
  }
}
BENCHMARK(BM_Object_TensorFromDLPack)->Name("object/tensor_from_dlpack");

// ---- Errors ----

void BM_Error_CApiRaiseMove(benchmark::State& state) {
  for (auto _ : state) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "a bad value");
    TVMFFIObjectHandle error = nullptr;
    TVMFFIErrorMoveFromRaised(&error);
    benchmark::DoNotOptimize(error);
    if (error != nullptr) TVMFFIObjectDecRef(error);
  }
}
BENCHMARK(BM_Error_CApiRaiseMove)->Name("error/c_api_raise_move");

// The module's function fails; the C++ caller catches the library's error as ffi::Error.
void BM_Error_ModuleThrowCatch(benchmark::State& state) {
  ffi::Module mod = ffi::Module::LoadFromFile(ModulePath());
  ffi::Function add_one = mod->GetFunction("add_one").value();
  for (auto _ : state) {
    try {
      add_one("not an int");
      state.SkipWithError("no error");
    } catch (const ffi::Error& error) {
      benchmark::DoNotOptimize(error.kind());
    }
  }
}
BENCHMARK(BM_Error_ModuleThrowCatch)->Name("error/module_throw_catch");

// A C++ function of this program throws; the C caller gets the error object.
void BM_Error_CxxThrowCApiCaller(benchmark::State& state) {
  ffi::Function fail = ffi::Function::FromTyped([](int64_t x) -> int64_t {
    TVM_FFI_THROW(ValueError) << "bad value " << x;
    return x;
  });
  TVMFFIObjectHandle handle = const_cast<ffi::FunctionObj*>(fail.get());
  TVMFFIAny arg;
  arg.type_index = kTVMFFIInt;
  arg.zero_padding = 0;
  arg.v_int64 = 7;
  for (auto _ : state) {
    TVMFFIAny result;
    result.type_index = kTVMFFINone;
    result.v_int64 = 0;
    if (TVMFFIFunctionCall(handle, &arg, 1, &result) != -1) state.SkipWithError("no error");
    TVMFFIObjectHandle error = nullptr;
    TVMFFIErrorMoveFromRaised(&error);
    benchmark::DoNotOptimize(error);
    if (error != nullptr) TVMFFIObjectDecRef(error);
  }
}
BENCHMARK(BM_Error_CxxThrowCApiCaller)->Name("error/cxx_throw_c_caller");

// ---- Type lookups ----

void BM_Type_KeyToIndex(benchmark::State& state) {
  const TVMFFIByteArray key = Bytes("ffi.Array");
  for (auto _ : state) {
    int32_t index = -1;
    if (TVMFFITypeKeyToIndex(&key, &index) != 0) state.SkipWithError("failed");
    benchmark::DoNotOptimize(index);
  }
}
BENCHMARK(BM_Type_KeyToIndex)->Name("type/key_to_index");

void BM_Type_GetTypeInfo(benchmark::State& state) {
  int32_t index = kTVMFFIArray;
  for (auto _ : state) {
    benchmark::DoNotOptimize(index);
    benchmark::DoNotOptimize(TVMFFIGetTypeInfo(index));
  }
}
BENCHMARK(BM_Type_GetTypeInfo)->Name("type/get_type_info");

void BM_Type_AttrColumn(benchmark::State& state) {
  const TVMFFIByteArray name = Bytes("__any_hash__");
  for (auto _ : state) benchmark::DoNotOptimize(TVMFFIGetTypeAttrColumn(&name));
}
BENCHMARK(BM_Type_AttrColumn)->Name("type/attr_column");

// ---- Globals ----

void BM_Global_Get(benchmark::State& state) {
  const TVMFFIByteArray name = Bytes("ffi.ArrayGetItem");
  for (auto _ : state) {
    TVMFFIObjectHandle function = nullptr;
    if (TVMFFIFunctionGetGlobal(&name, &function) != 0 || function == nullptr) {
      state.SkipWithError("not found");
    }
    benchmark::DoNotOptimize(function);
    if (function != nullptr) TVMFFIObjectDecRef(function);
  }
}
BENCHMARK(BM_Global_Get)->Name("global/get");

void BM_Global_GetMissing(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ffi::Function::GetGlobal("no.such.global"));
}
BENCHMARK(BM_Global_GetMissing)->Name("global/get_missing");

// Function::ListGlobalNames: the functor, then one call per name.
void BM_Global_ListNames(benchmark::State& state) {
  size_t names = 0;
  for (auto _ : state) {
    std::vector<ffi::String> all = ffi::Function::ListGlobalNames();
    names = all.size();
    benchmark::DoNotOptimize(all.data());
  }
  state.counters["names"] = static_cast<double>(names);
}
BENCHMARK(BM_Global_ListNames)->Name("global/list_names");

// ---- Modules ----

void LoadAndLookUp(benchmark::State& state) {
  ffi::Module mod = ffi::Module::LoadFromFile(ModulePath());
  ffi::Optional<ffi::Function> add_one = mod->GetFunction("add_one");
  if (!add_one.has_value()) state.SkipWithError("add_one not found");
  benchmark::DoNotOptimize(add_one);
}

// Each round loads the library from the file (the page cache) and unloads it with the module.
void BM_Module_LoadCold(benchmark::State& state) {
  for (auto _ : state) LoadAndLookUp(state);
}
BENCHMARK(BM_Module_LoadCold)->Name("module/load_lookup_cold");

// A live module keeps the library loaded: each round finds it in the process.
void BM_Module_LoadAlreadyLoaded(benchmark::State& state) {
  ffi::Module keep = ffi::Module::LoadFromFile(ModulePath());
  for (auto _ : state) LoadAndLookUp(state);
}
BENCHMARK(BM_Module_LoadAlreadyLoaded)->Name("module/load_lookup_already_loaded");

}  // namespace

BENCHMARK_MAIN();
