// Modules: loading shared libraries, functions by name, context symbols, library_ctx lookups,
// library_bin, the system library, imports and cycles, user subclasses, and the drop-in runtime.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "catch_error.h"
#include "ffijit/c_env_api.h"
#include "ffijit/module.h"
#include "ffijit/registry.h"
#include "ffijit/tensor.h"
#include "user_module.h"

namespace ffijit {
namespace {

std::string ModulePath(const std::string& name) {
  return std::string(FFIJIT_TEST_MODULE_DIR) + "/" + name + ".so";
}

using ffijit_tests::CatchError;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ModuleTest, LoadsALibraryAndCallsItsFunctions) {
  Module mod = Module::Load(ModulePath("basic_module"));
  EXPECT_EQ(mod.type_index(), kTVMFFIModule);
  EXPECT_EQ(mod.kind(), "library");
  EXPECT_EQ(mod.property_mask(), 3);  // binary-serializable | runnable
  std::optional<Function> add_one = mod.GetFunction("add_one");
  ASSERT_TRUE(add_one.has_value());
  EXPECT_EQ((*add_one)(41).cast<int64_t>(), 42);
  EXPECT_TRUE(mod.ImplementsFunction("add_one"));
  EXPECT_FALSE(mod.GetFunction("no_such_function").has_value());
  EXPECT_FALSE(mod.ImplementsFunction("no_such_function"));
}

TEST(ModuleTest, ReadsTensorArguments) {
  Module mod = Module::Load(ModulePath("basic_module"));
  Function sum = *mod.GetFunction("sum_f64");
  const int64_t shape[] = {2, 3};
  TVMFFIObjectHandle handle = nullptr;
  ASSERT_EQ(
      FFIJITTensorCreateEmpty(shape, 2, DLDataType{kDLFloat, 64, 1}, DLDevice{kDLCPU, 0}, &handle),
      0);
  ObjectPtr<> tensor = ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle));
  auto* dl = reinterpret_cast<DLTensor*>(tensor.get() + 1);
  for (int i = 0; i < 6; ++i) static_cast<double*>(dl->data)[i] = i + 0.5;
  // As a DLTensorPtr view (what a binding passes for a foreign tensor).
  TVMFFIAny arg{};
  arg.type_index = kTVMFFIDLTensorPtr;
  arg.v_ptr = dl;
  EXPECT_DOUBLE_EQ(sum.CallPacked(&arg, 1).cast<double>(), 18.0);
  // As a Tensor object.
  arg.type_index = kTVMFFITensor;
  arg.v_obj = tensor.get();
  EXPECT_DOUBLE_EQ(sum.CallPacked(&arg, 1).cast<double>(), 18.0);
  Error wrong = CatchError([&] { sum(1); });
  EXPECT_EQ(wrong.kind(), "TypeError");
}

TEST(ModuleTest, ErrorsRaisedInsideAModuleArriveWithKindAndMessage) {
  Function fail = *Module::Load(ModulePath("basic_module")).GetFunction("fail");
  Error error = CatchError([&] { fail("boom"); });
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "fail: boom");
}

TEST(ModuleTest, ModuleCodeSeesTheCallersStream) {
  Function stream = *Module::Load(ModulePath("basic_module")).GetFunction("stream");
  int marker = 0;
  ASSERT_EQ(TVMFFIEnvSetStream(kDLCUDA, 1, &marker, nullptr), 0);
  EXPECT_EQ(stream(static_cast<int64_t>(kDLCUDA), 1).cast<void*>(), &marker);
  EXPECT_EQ(stream(static_cast<int64_t>(kDLCUDA), 0).cast<void*>(), nullptr);
  ASSERT_EQ(TVMFFIEnvSetStream(kDLCUDA, 1, nullptr, nullptr), 0);
}

TEST(ModuleTest, FunctionsKeepTheLibraryLoadedUntilTheLastReferenceGoes) {
  const std::string path = ModulePath("empty_module");
  ASSERT_EQ(dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr);
  {
    Module mod = Module::Load(path);
    void* loaded = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    EXPECT_NE(loaded, nullptr);
    if (loaded) dlclose(loaded);
  }
  EXPECT_EQ(dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr) << "dlclose'd with the module";

  const std::string ctx_path = ModulePath("ctx_module");
  std::optional<Function> func;
  {
    Module mod = Module::Load(ctx_path);
    func = mod.GetFunction("lookup_twice");
  }
  void* still = dlopen(ctx_path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(still, nullptr) << "the function holds the module";
  if (still) dlclose(still);
  func.reset();
  EXPECT_EQ(dlopen(ctx_path.c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr);
}

TEST(ModuleTest, ALibraryLoadedTwiceStaysLoadedUntilBothModulesAreGone) {
  const std::string path = ModulePath("empty_module");
  ASSERT_EQ(dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr);
  std::optional<Module> first = Module::Load(path);
  std::optional<Module> second = Module::Load(path);
  EXPECT_NE(first->get(), second->get()) << "each load makes its own module";
  first.reset();
  void* still = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(still, nullptr) << "the second module holds the library";
  if (still) dlclose(still);
  second.reset();
  EXPECT_EQ(dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr) << "dlclose'd with the last";
  // Loaded again after that: a fresh load, not the closed handle.
  Module reloaded = Module::Load(path);
  void* back = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(back, nullptr);
  if (back) dlclose(back);
}

TEST(ModuleTest, LoadingASharedLibraryCallsTheRegisteredLoader) {
  // Module::Load runs the built-in ".so" loader's body directly only while that loader is the
  // registered one: a replacement is called instead.
  const std::string loader = "ffi.Module.load_from_file.so";
  Function builtin = GetGlobalFunctionOrThrow(loader);
  std::vector<std::string> seen;
  SetGlobalFunction(loader, Function::FromTyped([&](std::string file, std::string format) {
                      seen.push_back(file + " as " + format);
                      return builtin(file, format);
                    }),
                    true);
  const std::string path = ModulePath("basic_module");
  std::optional<Module> mod;
  std::string error;
  try {
    mod = Module::Load(path);
  } catch (const Error& e) {
    error = e.what();
  }
  SetGlobalFunction(loader, builtin, true);
  EXPECT_EQ(error, "");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], path + " as so");
  ASSERT_TRUE(mod.has_value());
  EXPECT_TRUE(mod->GetFunction("add_one").has_value());
  seen.clear();
  Module direct = Module::Load(path);  // the built-in again
  EXPECT_TRUE(seen.empty());
}

TEST(ModuleTest, ContextSymbolsAreWrittenIntoLibrariesLoadedAfterwards) {
  static int context_value = 7;
  ASSERT_EQ(TVMFFIEnvModRegisterContextSymbol("ffijit_test_context", &context_value), 0);
  Module mod = Module::Load(ModulePath("basic_module"));
  EXPECT_EQ((*mod.GetFunction("context"))().cast<void*>(), &context_value);
  // A library without the symbol is left alone.
  EXPECT_NO_THROW(Module::Load(ModulePath("empty_module")));
}

TEST(ModuleTest, ASymbolThatIsNotCodeIsATypeError) {
  Module mod = Module::Load(ModulePath("basic_module"));
  Error error = CatchError([&] { mod.GetFunction("not_code"); });
  EXPECT_EQ(error.kind(), "TypeError");
  EXPECT_TRUE(Contains(error.message(), "__tvm_ffi_not_code")) << error.message();
  EXPECT_TRUE(Contains(error.message(), "not a function")) << error.message();
}

TEST(ModuleTest, ALibraryWithoutTvmFfiSymbolsLoadsAndHasNoFunctions) {
  Module mod = Module::Load(ModulePath("empty_module"));
  EXPECT_FALSE(mod.GetFunction("ffijit_test_plain_function").has_value());
  EXPECT_FALSE(mod.GetFunction("").has_value());
}

TEST(ModuleTest, BadFilesAreClearErrors) {
  Error missing = CatchError([] { Module::Load("/nonexistent/dir/missing.so"); });
  EXPECT_EQ(missing.kind(), "InternalError");
  EXPECT_TRUE(Contains(missing.message(), "/nonexistent/dir/missing.so")) << missing.message();

  const auto dir = std::filesystem::temp_directory_path() / "ffijit_module_test";
  std::filesystem::create_directories(dir);
  const std::string text_file = (dir / "not_a_library.so").string();
  std::ofstream(text_file) << "this is not an ELF file\n";
  Error not_lib = CatchError([&] { Module::Load(text_file); });
  EXPECT_EQ(not_lib.kind(), "InternalError");
  EXPECT_TRUE(Contains(not_lib.message(), "Failed to load dynamic shared library"))
      << not_lib.message();
  EXPECT_TRUE(Contains(not_lib.message(), text_file)) << not_lib.message();

  Error unknown = CatchError([] { Module::Load("model.params"); });
  EXPECT_EQ(unknown.kind(), "RuntimeError");
  EXPECT_TRUE(Contains(unknown.message(), "Loader for `.params` files is not registered"))
      << unknown.message();
  Error no_ext = CatchError([] { Module::Load("some.dir/module"); });
  EXPECT_EQ(no_ext.kind(), "RuntimeError");
  EXPECT_TRUE(Contains(no_ext.message(), "Failed to get file format")) << no_ext.message();
  // .dll/.dylib/.dso go to the shared-library loader.
  Error dylib = CatchError([] { Module::Load("/nonexistent/x.dylib"); });
  EXPECT_EQ(dylib.kind(), "InternalError");
  std::filesystem::remove_all(dir);
}

TEST(ModuleTest, LibraryCtxLooksUpImportsThenGlobalsAndCaches) {
  Module ctx = Module::Load(ModulePath("ctx_module"));
  Module basic = Module::Load(ModulePath("basic_module"));
  Function call_by_name = *ctx.GetFunction("call_by_name");
  // Nothing imported yet: add_one is nowhere.
  Error none = CatchError([&] { call_by_name("add_one", 1); });
  EXPECT_EQ(none.kind(), "RuntimeError");
  EXPECT_EQ(none.message(),
            "Cannot find function add_one in the imported modules or global registry.");
  ctx.Import(basic);
  EXPECT_EQ(call_by_name("add_one", 1).cast<int64_t>(), 2);
  // Globals come after imports.
  SetGlobalFunction("module_test.negate", Function::FromTyped([](int64_t x) { return -x; }), true);
  EXPECT_EQ(call_by_name("module_test.negate", 5).cast<int64_t>(), -5);
  // The library's own functions are not searched.
  Error own = CatchError([&] { call_by_name("lookup_twice", 0); });
  EXPECT_EQ(own.kind(), "RuntimeError");
  // The second lookup comes from the cache: the same function object.
  EXPECT_TRUE((*ctx.GetFunction("lookup_twice"))("add_one").cast<bool>());
  RemoveGlobalFunction("module_test.negate");
}

TEST(ModuleTest, LookupFromImportsRejectsBadArguments) {
  TVMFFIObjectHandle out = nullptr;
  EXPECT_EQ(TVMFFIEnvModLookupFromImports(nullptr, "x", &out), -1);
  Error null_ctx = Error::MoveFromRaised();
  EXPECT_EQ(null_ctx.kind(), "ValueError");
  EXPECT_TRUE(Contains(null_ctx.message(), "library_ctx")) << null_ctx.message();
  // Something that is not a module context (its "header" is not a Module's).
  struct {
    void* vptr;
    TVMFFIObject header;
  } fake{nullptr, TVMFFIObject{kTVMFFIStr, 1, 1, {nullptr}}};
  EXPECT_EQ(TVMFFIEnvModLookupFromImports(&fake, "x", &out), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  Module basic = Module::Load(ModulePath("basic_module"));
  void* ctx = CppObjectOf(basic);
  EXPECT_EQ(TVMFFIEnvModLookupFromImports(ctx, nullptr, &out), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  EXPECT_EQ(TVMFFIEnvModLookupFromImports(ctx, "x", nullptr), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
}

TEST(ModuleTest, ImportsAreSearchedDepthFirstAndCyclesRejected) {
  Module a = Module::Load(ModulePath("empty_module"));
  Module b = Module::Load(ModulePath("ctx_module"));
  Module c = Module::Load(ModulePath("basic_module"));
  a.Import(b);
  b.Import(c);
  EXPECT_FALSE(a.GetFunction("add_one").has_value());
  std::optional<Function> found = a.GetFunction("add_one", /*query_imports=*/true);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ((*found)(1).cast<int64_t>(), 2);
  EXPECT_TRUE(a.ImplementsFunction("add_one", true));

  Error cycle = CatchError([&] { c.Import(a); });
  EXPECT_EQ(cycle.kind(), "RuntimeError");
  EXPECT_EQ(cycle.message(), "Cyclic dependency detected during import");
  Error self = CatchError([&] { a.Import(a); });
  EXPECT_EQ(self.kind(), "RuntimeError");
  Error null_import = CatchError([&] { a.Import(Module()); });
  EXPECT_EQ(null_import.kind(), "TypeError");

  a.ClearImports();
  EXPECT_FALSE(a.GetFunction("add_one", true).has_value());
  // b still imports c.
  EXPECT_TRUE(b.GetFunction("add_one", true).has_value());
}

TEST(ModuleTest, LookupsAndImportChangesFromManyThreads) {
  Module ctx = Module::Load(ModulePath("ctx_module"));
  Module basic = Module::Load(ModulePath("basic_module"));
  Module empty = Module::Load(ModulePath("empty_module"));
  ctx.Import(basic);
  Function call_by_name = *ctx.GetFunction("call_by_name");
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int64_t i = 0; i < 300; ++i) {
        if (call_by_name("add_one", i + t).cast<int64_t>() != i + t + 1) ++wrong;
        // Imports of `empty` change under the other threads' feet: found or not, never torn.
        std::optional<Function> f = empty.GetFunction("add_one", true);
        if (f && (*f)(i).cast<int64_t>() != i + 1) ++wrong;
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < 300; ++i) {
      empty.Import(basic);
      empty.ClearImports();
    }
  });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ModuleTest, ImportsArrayLivesAtHeaderPlus24) {
  Module a = Module::Load(ModulePath("empty_module"));
  Module c = Module::Load(ModulePath("basic_module"));
  a.Import(c);
  // The C++ object starts with the vptr, 8 bytes before the header.
  EXPECT_EQ(static_cast<char*>(CppObjectOf(a)) + 8, reinterpret_cast<char*>(a.get()));
  auto* imports = *reinterpret_cast<TVMFFIObject**>(reinterpret_cast<char*>(a.get()) + 24);
  ASSERT_NE(imports, nullptr);
  EXPECT_EQ(imports->type_index, kTVMFFIArray);
  Array view(ObjectPtr<>::Borrow(imports));
  ASSERT_EQ(view.size(), 1);
  EXPECT_EQ(view[0].raw().v_obj, c.get());
  auto* cache = *reinterpret_cast<TVMFFIObject**>(reinterpret_cast<char*>(a.get()) + 32);
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(cache->type_index, kTVMFFIMap);
}

class LibraryBinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SetGlobalFunction("ffi.Module.load_from_bytes.ffijit_test",
                      Function::FromTyped([](Bytes payload) {
                        if (payload.view() != "payload") throw ValueError("unexpected payload");
                        return Module::Load(ModulePath("basic_module"));
                      }),
                      true);
  }
  void TearDown() override { RemoveGlobalFunction("ffi.Module.load_from_bytes.ffijit_test"); }
};

TEST_F(LibraryBinTest, BuildsTheModulesAndImportsItDescribes) {
  Module root = Module::Load(ModulePath("bin_module_0"));
  EXPECT_EQ(root.kind(), "library");
  EXPECT_TRUE((*root.GetFunction("ctx_is_set"))().cast<bool>());
  EXPECT_FALSE(root.GetFunction("add_one").has_value());
  std::optional<Function> add_one = root.GetFunction("add_one", true);
  ASSERT_TRUE(add_one.has_value());
  EXPECT_EQ((*add_one)(9).cast<int64_t>(), 10);
}

TEST_F(LibraryBinTest, MalformedBlobsAreErrors) {
  const std::pair<int, std::string> cases[] = {
      {1, "claims 1000000 entries"},
      {2, "child index 7 is out of range"},
      {3, "exceeds the symbol's"},
      {4, "Cyclic dependency"},
  };
  for (const auto& [index, expected] : cases) {
    Error error =
        CatchError([&] { Module::Load(ModulePath("bin_module_" + std::to_string(index))); });
    EXPECT_EQ(error.kind(), "InternalError") << index;
    EXPECT_TRUE(Contains(error.message(), "malformed __tvm_ffi__library_bin")) << error.message();
    EXPECT_TRUE(Contains(error.message(), expected)) << error.message();
  }
  Error no_loader = CatchError([] { Module::Load(ModulePath("bin_module_5")); });
  EXPECT_EQ(no_loader.kind(), "RuntimeError");
  EXPECT_TRUE(Contains(no_loader.message(), "ffi.Module.load_from_bytes.no_such_kind"))
      << no_loader.message();
}

extern "C" void* ffijit_test_syslib_ctx;

TEST(SystemLibTest, FindsRegisteredFunctionsByPrefix) {
  Module sys = Module::SystemLib();
  EXPECT_EQ(sys.kind(), "library");
  EXPECT_EQ((*sys.GetFunction("triple"))(2).cast<int64_t>(), 6);
  EXPECT_EQ(Module::SystemLib(), sys) << "one module per prefix";
  EXPECT_EQ(ffijit_test_syslib_ctx, CppObjectOf(sys));
  // The prefixed name first, then the plain one.
  Module mine = Module::SystemLib("mylib_");
  EXPECT_NE(mine, sys);
  EXPECT_EQ((*mine.GetFunction("triple"))(2).cast<int64_t>(), 1006);
  EXPECT_FALSE(sys.GetFunction("missing").has_value());
  // Looked up at GetFunction time: a symbol registered after the module was made is found.
  ASSERT_EQ(TVMFFIEnvModRegisterSystemLibSymbol(
                "__tvm_ffi_late",
                reinterpret_cast<void*>(+[](void*, const TVMFFIAny*, int32_t, TVMFFIAny* result) {
                  *result = TVMFFIAny{};
                  result->type_index = kTVMFFIInt;
                  result->v_int64 = 5;
                  return 0;
                })),
            0);
  EXPECT_EQ((*sys.GetFunction("late"))().cast<int64_t>(), 5);
  Error bad_prefix = CatchError([] { GetGlobalFunctionOrThrow("ffi.SystemLib")(1); });
  EXPECT_EQ(bad_prefix.kind(), "TypeError");
  EXPECT_EQ(TVMFFIEnvModRegisterSystemLibSymbol(nullptr, nullptr), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
}

TEST(UserModuleTest, ASubclassOfModuleObjWorksThroughTheRuntime) {
  Module user = MakeUserModule();
  EXPECT_EQ(user.kind(), "user");
  EXPECT_EQ(user.property_mask(), 0);
  EXPECT_EQ((*user.GetFunction("greet"))(3).cast<int64_t>(), 300);
  EXPECT_TRUE(user.ImplementsFunction("greet"));
  EXPECT_FALSE(user.GetFunction("other").has_value());
  // Reached through another module's imports.
  Module basic = Module::Load(ModulePath("basic_module"));
  basic.Import(user);
  EXPECT_EQ((*basic.GetFunction("greet", true))(2).cast<int64_t>(), 200);
  // And through a library's context lookup.
  Module ctx = Module::Load(ModulePath("ctx_module"));
  ctx.Import(basic);
  EXPECT_EQ((*ctx.GetFunction("call_by_name"))("greet", 4).cast<int64_t>(), 400);
  // Default slots: no write support, no formats.
  Error write =
      CatchError([&] { GetGlobalFunctionOrThrow("ffi.ModuleWriteToFile")(user, "out.o", "o"); });
  EXPECT_EQ(write.kind(), "RuntimeError");
  EXPECT_EQ(write.message(), "Module[user] does not support WriteToFile");
  EXPECT_EQ(GetGlobalFunctionOrThrow("ffi.ModuleGetWriteFormats")(user).cast<Array>().size(), 0);
  // The subclass's own InspectSource and metadata; the library module keeps the defaults.
  EXPECT_EQ(GetGlobalFunctionOrThrow("ffi.ModuleInspectSource")(user, "").cast<std::string>(),
            "user source as ");
  EXPECT_EQ(GetGlobalFunctionOrThrow("ffi.ModuleInspectSource")(basic, "").cast<std::string>(), "");
  EXPECT_TRUE(
      GetGlobalFunctionOrThrow("ffi.ModuleGetFunctionMetadata")(basic, "add_one", false).is_none());
}

// The vtable order is the ABI: header-compiled callers index it directly. On v0.1.13
// GetFunctionDoc is slot 4, moving GetFunctionMetadata to 5 and InspectSource to 9 (e98b94e1: 4
// and 8, no docstrings).
#if FFIJIT_TVM_FFI_MODULE_HAS_FUNCTION_DOC
constexpr int kDocSlot = 4, kMetadataSlot = 5, kInspectSourceSlot = 9;
#else
constexpr int kMetadataSlot = 4, kInspectSourceSlot = 8;
#endif

TEST(UserModuleTest, VirtualSlotsSitWhereTheRevisionPutsThem) {
  Module user = MakeUserModule();
#if FFIJIT_TVM_FFI_MODULE_HAS_FUNCTION_DOC
  EXPECT_EQ(CallStringSlot(user, kDocSlot, "greet"), std::optional<std::string>(kUserGreetDoc));
  EXPECT_EQ(CallStringSlot(user, kDocSlot, "other"), std::nullopt);
#endif
  EXPECT_EQ(CallStringSlot(user, kMetadataSlot, "greet"),
            std::optional<std::string>(kUserGreetMetadata));
  EXPECT_EQ(CallStringSlot(user, kMetadataSlot, "other"), std::nullopt);
  EXPECT_EQ(CallStringSlot(user, kInspectSourceSlot, "c"),
            std::optional<std::string>("user source as c"));
  // The runtime's own library module has the same order (its defaults answer None).
  Module basic = Module::Load(ModulePath("basic_module"));
  EXPECT_EQ(CallStringSlot(basic, kMetadataSlot, "add_one"), std::nullopt);
  EXPECT_EQ(CallStringSlot(basic, kInspectSourceSlot, ""), std::optional<std::string>(""));
}

TEST(UserModuleTest, DocAndMetadataGlobalsReachTheSubclassAndSearchImports) {
  Module user = MakeUserModule();
  Function metadata = GetGlobalFunctionOrThrow("ffi.ModuleGetFunctionMetadata");
  EXPECT_EQ(metadata(user, "greet", false).cast<std::string>(), kUserGreetMetadata);
  Module basic = Module::Load(ModulePath("basic_module"));
  basic.Import(user);
  EXPECT_TRUE(metadata(basic, "greet", false).is_none());
  EXPECT_EQ(metadata(basic, "greet", true).cast<std::string>(), kUserGreetMetadata);
  EXPECT_EQ(GetGlobalFunctionOrThrow("ffi.ModuleInspectSource")(user, "ll").cast<std::string>(),
            "user source as ll");
#if FFIJIT_TVM_FFI_MODULE_HAS_FUNCTION_DOC
  Function doc = GetGlobalFunctionOrThrow("ffi.ModuleGetFunctionDoc");
  EXPECT_EQ(doc(user, "greet", false).cast<std::string>(), kUserGreetDoc);
  EXPECT_TRUE(doc(user, "other", true).is_none());
  EXPECT_TRUE(doc(basic, "greet", false).is_none());
  EXPECT_EQ(doc(basic, "greet", true).cast<std::string>(), kUserGreetDoc);
#else
  EXPECT_FALSE(GetGlobalFunction("ffi.ModuleGetFunctionDoc").has_value());
#endif
}

#if FFIJIT_TVM_FFI_MODULE_HAS_FUNCTION_DOC
TEST(ModuleTest, LibraryModulesAnswerDocAndMetadataFromTheirGetters) {
  Module mod = Module::Load(ModulePath("doc_module"));
  Function doc = GetGlobalFunctionOrThrow("ffi.ModuleGetFunctionDoc");
  Function metadata = GetGlobalFunctionOrThrow("ffi.ModuleGetFunctionMetadata");
  EXPECT_EQ(doc(mod, "twice", false).cast<std::string>(),
            "Returns twice its argument, a docstring long enough for a heap string.");
  EXPECT_EQ(metadata(mod, "twice", false).cast<std::string>(), "{\"type_schema\": \"int(int)\"}");
  EXPECT_TRUE(doc(mod, "plain", true).is_none());
  EXPECT_TRUE(metadata(mod, "plain", true).is_none());
  EXPECT_TRUE(doc(mod, "missing", true).is_none());
  // The same through the vtable slots.
  EXPECT_EQ(CallStringSlot(mod, kDocSlot, "twice"),
            std::optional<std::string>(
                "Returns twice its argument, a docstring long enough for a heap string."));
  EXPECT_EQ(CallStringSlot(mod, kMetadataSlot, "plain"), std::nullopt);
  // Found through imports.
  Module basic = Module::Load(ModulePath("basic_module"));
  basic.Import(mod);
  EXPECT_EQ(metadata(basic, "twice", true).cast<std::string>(), "{\"type_schema\": \"int(int)\"}");
  // A getter returning something other than a str is a clear error.
  Error bad = CatchError([&] { doc(mod, "bad_doc", false); });
  EXPECT_EQ(bad.kind(), "TypeError");
  EXPECT_TRUE(Contains(bad.message(), "__tvm_ffi__doc_bad_doc")) << bad.message();
}
#endif

TEST(UserModuleTest, TheExportedCppStaticFunctionsWork) {
  static int first = 1, second = 2;
  ASSERT_EQ(TVMFFIEnvModRegisterContextSymbol("module_test_ctx_a", &first), 0);
  ASSERT_EQ(TVMFFIEnvModRegisterContextSymbol("module_test_ctx_b", &second), 0);
  auto seen = VisitContextSymbolsFromCpp();
  auto a = std::find(seen.begin(), seen.end(),
                     std::make_pair(std::string("module_test_ctx_a"), static_cast<void*>(&first)));
  auto b = std::find(seen.begin(), seen.end(),
                     std::make_pair(std::string("module_test_ctx_b"), static_cast<void*>(&second)));
  ASSERT_NE(a, seen.end());
  ASSERT_NE(b, seen.end());
  EXPECT_LT(a, b) << "in registration order";

  Module mod = LoadFromFileFromCpp(ModulePath("basic_module"));
  EXPECT_EQ((*mod.GetFunction("add_one"))(1).cast<int64_t>(), 2);
  CaughtTvmError error = LoadFromFileErrorFromCpp("no_extension");
  ASSERT_TRUE(error.caught);
  EXPECT_EQ(error.kind, "RuntimeError");
  EXPECT_FALSE(error.message.empty());
  // The same failure through the C convention keeps kind and message.
  Error through_c =
      CatchError([] { GetGlobalFunctionOrThrow("ffi.ModuleLoadFromFile")("no_extension"); });
  EXPECT_EQ(through_c.kind(), error.kind);
  EXPECT_EQ(through_c.message(), error.message);
}

TEST(UserModuleTest, TheExportedModuleMembersThrowTvmFfiError) {
  // What header-compiled code catches: tvm::ffi::Error, with the kind and message of the failure.
  Module basic = Module::Load(ModulePath("basic_module"));
  CaughtTvmError not_code = GetFunctionErrorFromCpp(basic, "not_code");
  ASSERT_TRUE(not_code.caught);
  EXPECT_EQ(not_code.kind, "TypeError");
  EXPECT_TRUE(Contains(not_code.message, "not a function")) << not_code.message;
  // Found through the imports of another module: the error still reaches the C++ caller.
  Module user = MakeUserModule();
  user.Import(basic);
  CaughtTvmError through_imports = GetFunctionErrorFromCpp(user, "not_code");
  ASSERT_TRUE(through_imports.caught);
  EXPECT_EQ(through_imports.message, not_code.message);
  CaughtTvmError cycle = ImportModuleErrorFromCpp(basic, user);
  ASSERT_TRUE(cycle.caught);
  EXPECT_EQ(cycle.kind, "RuntimeError");
  EXPECT_EQ(cycle.message, "Cyclic dependency detected during import");
  // Error::what() is the revision's: the message alone on v0.1.13, the traceback text before.
#if FFIJIT_TVM_FFI_ERROR_WHAT_IS_MESSAGE
  EXPECT_EQ(cycle.what, cycle.message);
#else
  EXPECT_TRUE(Contains(cycle.what, "Traceback (most recent call last):")) << cycle.what;
  EXPECT_TRUE(Contains(cycle.what, "RuntimeError: " + cycle.message)) << cycle.what;
#endif
  // The ffi.Module* globals report the same errors through the C convention, not InternalError
  // or a RuntimeError wrapping what().
  Error global = CatchError(
      [&] { GetGlobalFunctionOrThrow("ffi.ModuleGetFunction")(user, "not_code", true); });
  EXPECT_EQ(global.kind(), "TypeError");
  EXPECT_EQ(global.message(), not_code.message);
  Error global_cycle =
      CatchError([&] { GetGlobalFunctionOrThrow("ffi.ModuleImportModule")(basic, user); });
  EXPECT_EQ(global_cycle.kind(), "RuntimeError");
  EXPECT_EQ(global_cycle.message(), cycle.message);
  // And the C lookup from a library's context.
  Module ctx = Module::Load(ModulePath("ctx_module"));
  ctx.Import(user);
  Error lookup = CatchError([&] { (*ctx.GetFunction("call_by_name"))("not_code", 1); });
  EXPECT_EQ(lookup.kind(), "TypeError");
  EXPECT_TRUE(Contains(lookup.message(), "not a function")) << lookup.message();
}

TEST(ModuleGlobalsTest, RejectBadArguments) {
  Function get = GetGlobalFunctionOrThrow("ffi.ModuleGetFunction");
  Error not_module = CatchError([&] { get(1, "x", false); });
  EXPECT_EQ(not_module.kind(), "TypeError");
  EXPECT_TRUE(Contains(not_module.message(), "argument #0")) << not_module.message();
  Error none = CatchError([&] { get(nullptr, "x", false); });
  EXPECT_EQ(none.kind(), "TypeError");
  Error arity = CatchError([&] { get(Module::SystemLib()); });
  EXPECT_EQ(arity.kind(), "TypeError");
  Error load = CatchError([] { GetGlobalFunctionOrThrow("ffi.ModuleLoadFromFile")(3); });
  EXPECT_EQ(load.kind(), "TypeError");
}

TEST(DropInTest, AModuleLinkedAgainstTvmFfiSharesTheOneRuntime) {
  Module linked = Module::Load(ModulePath("linked_module"));
  // Its constructor registered a global in our registry.
  std::optional<Function> answer = GetGlobalFunction("linked_module.answer");
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ((*answer)().cast<int64_t>(), 42);
  // It finds our globals.
  SetGlobalFunction("module_test.plus1", Function::FromTyped([](int64_t x) { return x + 1; }),
                    true);
  EXPECT_EQ((*linked.GetFunction("call_global"))("module_test.plus1", 1).cast<int64_t>(), 2);
  RemoveGlobalFunction("module_test.plus1");
  // libtvm_ffi.so resolved to the runtime already loaded, not a second copy.
  const std::string dropin = std::string(FFIJIT_TVM_FFI_DIR) + "/libtvm_ffi.so";
  void* by_tvm_name = dlopen(dropin.c_str(), RTLD_NOW | RTLD_NOLOAD);
  void* by_ffijit_name = dlopen("libffijit_runtime.so", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(by_tvm_name, nullptr);
  EXPECT_EQ(by_tvm_name, by_ffijit_name);
  dlclose(by_tvm_name);
  if (by_ffijit_name) dlclose(by_ffijit_name);
}

TEST(DropInTest, AModuleLinkedAgainstTheDropInDirectoryLoads) {
  if (GetGlobalFunction("linked_module.answer")) RemoveGlobalFunction("linked_module.answer");
  Module linked = Module::Load(ModulePath("dropin_linked_module"));
  EXPECT_EQ(GetGlobalFunctionOrThrow("linked_module.answer")().cast<int64_t>(), 42);
  // A built-in global of every revision (testing.* is not the runtime's own on TVM FFI 0.1).
  EXPECT_EQ((*linked.GetFunction("call_global"))("ffi.Shape", 5).cast<Shape>()[0], 5);
}

}  // namespace
}  // namespace ffijit
