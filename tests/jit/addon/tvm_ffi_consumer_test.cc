// A TVM FFI user's program over the add-on build: compiled against TVM FFI's own headers, linked to
// TVM FFI's library alone, it opens libffijit_jit.so, registers natives with FFIJITRegister and
// reaches them, their arguments and results through TVM FFI's C++ API.
#include <dlfcn.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "ffijit/jit/bridge.h"
#include "gtest/gtest.h"

namespace ffi = tvm::ffi;

namespace {

extern "C" int64_t consumer_add3(int64_t a, int64_t b, int64_t c) {
  return a + b + c;
}
extern "C" int64_t consumer_text_address(const char* text) {
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(text));
}
extern "C" int64_t consumer_tensor_data(const DLTensor* tensor) {
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(tensor->data));
}
extern "C" int consumer_pair(int64_t seed, int64_t* first, int64_t* second) {
  *first = seed;
  *second = seed * 2;
  return 0;
}
extern "C" int64_t consumer_apply(void* callback, int64_t x) {
  return reinterpret_cast<int64_t (*)(int64_t)>(callback)(x) + 1;
}

// ffijit's C API, found in the opened library as a TVM FFI user finds an add-on's.
struct Bridge {
  void* library = nullptr;
  decltype(&FFIJITRegister) reg = nullptr;
  decltype(&FFIJITCompileNow) compile_now = nullptr;
  decltype(&FFIJITFunctionTier) tier = nullptr;
  decltype(&FFIJITMakeNativeCallback) make_callback = nullptr;
};

// Opens libffijit_jit.so once, with this process's stderr sent to a file for the duration, so
// that a test can tell whether loading printed anything.
const Bridge& Opened(std::string* load_output = nullptr) {
  static std::string output;
  static const Bridge bridge = [] {
    char path[] = "/tmp/ffijit_addon_load_XXXXXX";
    int file = mkstemp(path);
    fflush(stderr);
    int saved = dup(2);
    dup2(file, 2);
    Bridge b;
    b.library = dlopen(FFIJIT_JIT_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(file);
    std::ifstream in(path);
    output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    unlink(path);
    if (b.library == nullptr) {
      output += dlerror();
      return b;
    }
    b.reg = reinterpret_cast<decltype(&FFIJITRegister)>(dlsym(b.library, "FFIJITRegister"));
    b.compile_now =
        reinterpret_cast<decltype(&FFIJITCompileNow)>(dlsym(b.library, "FFIJITCompileNow"));
    b.tier =
        reinterpret_cast<decltype(&FFIJITFunctionTier)>(dlsym(b.library, "FFIJITFunctionTier"));
    b.make_callback = reinterpret_cast<decltype(&FFIJITMakeNativeCallback)>(
        dlsym(b.library, "FFIJITMakeNativeCallback"));
    return b;
  }();
  if (load_output != nullptr) *load_output = output;
  return bridge;
}

// Registers `fn` under `name` through ffijit and finds it again through TVM FFI's registry.
ffi::Function Register(void* fn, const char* metadata, const char* name, int flags = 0) {
  const Bridge& bridge = Opened();
  if (bridge.reg(fn, metadata, kFFIJITFormatJson, flags, name, nullptr) != 0) {
    throw ffi::details::MoveFromSafeCallRaised();
  }
  return ffi::Function::GetGlobalRequired(name);
}

int TierOf(const ffi::Function& function) {
  int tier = -1;
  EXPECT_EQ(Opened().tier(const_cast<ffi::FunctionObj*>(function.get()), &tier), 0);
  return tier;
}

TEST(AddonConsumer, LoadsSilentlyOverTheOneRuntime) {
  std::string output;
  const Bridge& bridge = Opened(&output);
  ASSERT_NE(bridge.library, nullptr) << output;
  EXPECT_EQ(output, "");
  ASSERT_NE(bridge.reg, nullptr);
  ASSERT_NE(bridge.make_callback, nullptr);
  std::ifstream maps("/proc/self/maps");
  std::string maps_text((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  EXPECT_NE(maps_text.find("/libtvm_ffi.so"), std::string::npos);
  EXPECT_NE(maps_text.find("/libffijit_addon.so"), std::string::npos);
  EXPECT_EQ(maps_text.find("libffijit_runtime"), std::string::npos) << "a second runtime is mapped";
}

TEST(AddonConsumer, CallsAreRightOnEveryTier) {
  const char* metadata = R"({"a":["i64","i64","i64"],"r":["i64"]})";
  ffi::Function interpreted = Register(reinterpret_cast<void*>(&consumer_add3), metadata,
                                       "addon_consumer.add3_interpreted", kFFIJITInterpretOnly);
  ffi::Function registered =
      Register(reinterpret_cast<void*>(&consumer_add3), metadata, "addon_consumer.add3");
  ffi::Function compiled =
      Register(reinterpret_cast<void*>(&consumer_add3), metadata, "addon_consumer.add3_compiled");
  ASSERT_EQ(Opened().compile_now(const_cast<ffi::FunctionObj*>(compiled.get())), 0);
  EXPECT_EQ(TierOf(interpreted), kFFIJITTierInterpreted);
  EXPECT_GE(TierOf(compiled), kFFIJITTierLlvm);
  int64_t wrong = 0;
  for (int64_t i = 0; i < 200000; ++i) {
    const ffi::Function& f = i % 3 == 0 ? interpreted : i % 3 == 1 ? registered : compiled;
    if (f(i, -2 * i, 7).cast<int64_t>() != 7 - i) ++wrong;
  }
  EXPECT_EQ(wrong, 0);
}

TEST(AddonConsumer, AWrongArgumentIsATypeError) {
  ffi::Function f = Register(reinterpret_cast<void*>(&consumer_add3),
                             R"({"a":["i64","i64","i64"],"r":["i64"]})", "addon_consumer.typed");
  try {
    f(ffi::String("seven"), 1, 2);
    FAIL() << "no error";
  } catch (const ffi::Error& error) {
    EXPECT_EQ(error.kind(), "TypeError");
    EXPECT_NE(std::string(error.message()).find("argument #0"), std::string::npos)
        << error.message();
    EXPECT_NE(std::string(error.message()).find("Expected `i64` but got `str`"), std::string::npos)
        << error.message();
  }
}

TEST(AddonConsumer, TheLibrarysStringsAndTensorsAreTakenInPlace) {
  ffi::Function text = Register(reinterpret_cast<void*>(&consumer_text_address),
                                R"({"a":["str"],"r":["i64"]})", "addon_consumer.text");
  ffi::String long_text(std::string(100, 'x'));
  EXPECT_EQ(text(long_text).cast<int64_t>(),
            static_cast<int64_t>(reinterpret_cast<intptr_t>(long_text.data())));

  ffi::Function data =
      Register(reinterpret_cast<void*>(&consumer_tensor_data),
               R"({"a":[["ndarray","f32",1,null]],"r":["i64"]})", "addon_consumer.tensor");
  float storage[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  DLManagedTensor managed{};
  managed.dl_tensor.data = storage;
  managed.dl_tensor.device = DLDevice{kDLCPU, 0};
  managed.dl_tensor.ndim = 1;
  managed.dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
  managed.dl_tensor.shape = shape;
  ffi::Tensor tensor = ffi::Tensor::FromDLPack(&managed);
  EXPECT_EQ(data(tensor).cast<int64_t>(),
            static_cast<int64_t>(reinterpret_cast<intptr_t>(storage)));
}

TEST(AddonConsumer, AStructureResultIsTheLibrarysArray) {
  ffi::Function pair = Register(reinterpret_cast<void*>(&consumer_pair),
                                R"({"a":["i64"],"r":[["slist","i64","i64"]]})",
                                "addon_consumer.pair", kFFIJITStatusConvention);
  ffi::Array<int64_t> result = pair(21).cast<ffi::Array<int64_t>>();
  ASSERT_EQ(result.size(), 2u);
  EXPECT_EQ(result[0], 21);
  EXPECT_EQ(result[1], 42);
}

TEST(AddonConsumer, ANativeCallsBackIntoTheLibrarysFunction) {
  ffi::Function doubled = ffi::Function::FromTyped([](int64_t x) { return x * 2; });
  void* pointer = nullptr;
  TVMFFIObjectHandle keepalive = nullptr;
  ASSERT_EQ(Opened().make_callback(const_cast<ffi::FunctionObj*>(doubled.get()),
                                   R"({"a":["i64"],"r":["i64"]})", kFFIJITFormatJson, 0, &pointer,
                                   &keepalive),
            0);
  ffi::Function apply = Register(reinterpret_cast<void*>(&consumer_apply),
                                 R"({"a":["ptr","i64"],"r":["i64"]})", "addon_consumer.apply");
  EXPECT_EQ(apply(pointer, 20).cast<int64_t>(), 41);
  TVMFFIObjectDecRef(keepalive);
}

#ifdef FFIJIT_ADDON_MODULE_OBJECT
TEST(AddonConsumer, LoadsAnObjectFileCompiledAgainstTvmFfisHeaders) {
  ASSERT_NE(Opened().library, nullptr);
  ffi::Module module = ffi::Module::LoadFromFile(FFIJIT_ADDON_MODULE_OBJECT);
  EXPECT_STREQ(module->kind(), "library");
  ffi::Optional<ffi::Function> add_one = module->GetFunction("add_one");
  ASSERT_TRUE(add_one.has_value());
  EXPECT_EQ((*add_one)(41).cast<int64_t>(), 42);
  EXPECT_EQ((*module->GetFunction("has_context"))().cast<int64_t>(), 1);
  EXPECT_FALSE(module->GetFunction("missing").has_value());
  try {
    (*add_one)(ffi::String("x"));
    FAIL() << "no error";
  } catch (const ffi::Error& error) {
    EXPECT_EQ(error.kind(), "TypeError");
    EXPECT_EQ(error.message(), "add_one takes one int");
  }
}
#endif

}  // namespace
