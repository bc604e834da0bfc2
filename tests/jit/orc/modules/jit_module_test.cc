// JIT modules of object files: C and C++ objects from gcc and clang-19 loaded, called, released
// and reloaded; static initialisers and finalisers; exceptions; two modules with one symbol; link
// orders; the library context; the CLI; and every bad input, each a clear error after which the
// process and the other modules keep working.
#include <gtest/gtest.h>

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "catch_error.h"
#include "ffijit/c_env_api.h"
#include "ffijit/jit/jit_module.h"
#include "ffijit/module.h"
#include "ffijit/registry.h"
#include "tools/tool_run.h"

namespace {

using ffijit::Any;
using ffijit::Function;
using ffijit::JitModule;
using ffijit::Module;
using ffijit_tests::CatchError;

std::string Fixture(const std::string& compiler, const std::string& file) {
  return std::string(FFIJIT_JIT_FIXTURES) + "/" + compiler + "/" + file;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A file in the build tree holding `bytes`, removed with the object.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& bytes)
      : path_(std::string(FFIJIT_JIT_FIXTURES) + "/" + name) {
    std::ofstream(path_, std::ios::binary) << bytes;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Function Get(const Module& mod, const std::string& name) {
  std::optional<Function> func = mod.GetFunction(name);
  if (!func) throw ffijit::KeyError("no function " + name);
  return *func;
}

class ObjectModuleTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string Object(const std::string& name) const { return Fixture(GetParam(), name + ".o"); }
};

INSTANTIATE_TEST_SUITE_P(Compilers, ObjectModuleTest, ::testing::Values("gcc", "clang"));

TEST_P(ObjectModuleTest, LoadsCallsReleasesAndReloadsACObject) {
  for (int round = 0; round < 2; ++round) {
    Module mod = Module::Load(Object("adder"));
    EXPECT_EQ(mod.kind(), "library");
    EXPECT_EQ(Get(mod, "add")(int64_t{2}, int64_t{40}).cast<int64_t>(), 42);
    EXPECT_EQ(Get(mod, "digits")(int64_t{-12345}).cast<int64_t>(), 6);  // snprintf from libc
    EXPECT_TRUE(mod.ImplementsFunction("add"));
    EXPECT_FALSE(mod.ImplementsFunction("sub"));
    EXPECT_FALSE(mod.GetFunction("sub").has_value());
    ffijit::Error wrong_args = CatchError([&] { Get(mod, "add")("x"); });
    EXPECT_EQ(wrong_args.kind(), "TypeError");
    EXPECT_EQ(wrong_args.message(), "add expects two ints");
    ffijit::Error data = CatchError([&] { mod.GetFunction("not_code"); });
    EXPECT_EQ(data.kind(), "TypeError");
    EXPECT_NE(data.message().find("`__tvm_ffi_not_code`"), std::string::npos) << data.message();
    EXPECT_NE(data.message().find("adder.o"), std::string::npos) << data.message();
  }
}

TEST_P(ObjectModuleTest, AFunctionKeepsItsModuleAlive) {
  Function add = Get(Module::Load(Object("adder")), "add");
  EXPECT_EQ(add(int64_t{1}, int64_t{2}).cast<int64_t>(), 3);
}

TEST_P(ObjectModuleTest, TheLoadersAreTheModuleLoadFromFileGlobals) {
  Function load = ffijit::GetGlobalFunctionOrThrow("ffi.ModuleLoadFromFile");
  Module mod = load(Object("adder")).cast<Module>();
  EXPECT_EQ(Get(mod, "add")(int64_t{5}, int64_t{6}).cast<int64_t>(), 11);
  Module direct =
      ffijit::GetGlobalFunctionOrThrow("ffi.Module.load_from_file.o")(Object("adder"), "o")
          .cast<Module>();
  EXPECT_EQ(Get(direct, "add")(int64_t{1}, int64_t{1}).cast<int64_t>(), 2);
}

TEST_P(ObjectModuleTest, ContextSymbolsAndTheLibraryContextAreSet) {
  static int marker = 0;
  ASSERT_EQ(TVMFFIEnvModRegisterContextSymbol("ffijit_test_context", &marker), 0);
  Module mod = Module::Load(Object("adder"));
  EXPECT_EQ(Get(mod, "context")().cast<void*>(), &marker);

  // call_by_name goes through __tvm_ffi__library_ctx and TVMFFIEnvModLookupFromImports: the
  // imports first, then the globals.
  Module imported = Module::Load(Object("same_b"));
  mod.Import(imported);
  EXPECT_EQ(Get(mod, "call_by_name")("value", int64_t{0}).cast<int64_t>(), 2);
  ffijit::SetGlobalFunction("objmod.twice", Function::FromTyped([](int64_t x) { return 2 * x; }),
                            true);
  EXPECT_EQ(Get(mod, "call_by_name")("objmod.twice", int64_t{21}).cast<int64_t>(), 42);
  ffijit::RemoveGlobalFunction("objmod.twice");
  ffijit::Error missing = CatchError([&] { Get(mod, "call_by_name")("objmod.none", int64_t{0}); });
  EXPECT_EQ(missing.kind(), "RuntimeError");
  EXPECT_NE(missing.message().find("objmod.none"), std::string::npos);
  EXPECT_TRUE(mod.GetFunction("value", /*query_imports=*/true).has_value());
}

// The finalisers the lifecycle object reported, in order.
std::vector<std::string>& Finalized() {
  static std::vector<std::string> steps;
  return steps;
}

TEST_P(ObjectModuleTest, CxxInitialisersFinalisersAndExceptions) {
  ffijit::SetGlobalFunction(
      "objmod.on_fini", Function::FromTyped([](std::string step) { Finalized().push_back(step); }),
      true);
  for (int round = 0; round < 2; ++round) {
    Finalized().clear();
    {
      JitModule mod = JitModule::Load(Object("lifecycle"));
      // Priorities: constructor(101), init_priority(200), (300), then the unprioritised ones.
      EXPECT_EQ(Get(mod, "trace")().cast<std::string>(), "c101,p200,p300,default,");
      // A static constructor registered a global function while the module lives.
      EXPECT_EQ(ffijit::GetGlobalFunctionOrThrow("objmod.registered")().cast<int64_t>(), 42);
      // Thrown and caught inside the object: .eh_frame is registered.
      EXPECT_EQ(Get(mod, "checked_sum")(int64_t{5}).cast<int64_t>(), 10);
      EXPECT_EQ(Get(mod, "checked_sum")(int64_t{-3}).cast<int64_t>(),
                -static_cast<int64_t>(std::string("negative count -3").size()));
      // Raised through the convention: kind and message reach the caller.
      ffijit::Error raised = CatchError([&] { Get(mod, "raise")("why"); });
      EXPECT_EQ(raised.kind(), "ValueError");
      EXPECT_EQ(raised.message(), "raised from the object: why");
      EXPECT_TRUE(Finalized().empty());
      mod.Unload();
    }
    // Unloaded: the destructor function first, then the static objects newest first.
    EXPECT_EQ(Finalized(), (std::vector<std::string>{"fini", "~default", "~p300", "~p200"}));
    EXPECT_FALSE(ffijit::GetGlobalFunction("objmod.registered").has_value());
  }
  ffijit::RemoveGlobalFunction("objmod.on_fini");
}

TEST_P(ObjectModuleTest, TwoModulesMayDefineTheSameSymbol) {
  Module a = Module::Load(Object("same_a"));
  Module b = Module::Load(Object("same_b"));
  EXPECT_EQ(Get(a, "value")().cast<int64_t>(), 1);
  EXPECT_EQ(Get(b, "value")().cast<int64_t>(), 2);
}

TEST_P(ObjectModuleTest, ObjectsAddedToOneModuleSeeEachOther) {
  JitModule mod = JitModule::Create("chain-in-one");
  mod.AddFile(Object("base"));
  mod.AddFile(Object("user"));
  EXPECT_EQ(Get(mod, "chain")(int64_t{4}).cast<int64_t>(), 41);
  EXPECT_NE(mod.Lookup("chain_base"), nullptr);
  EXPECT_EQ(mod.Lookup("no_such_symbol"), nullptr);
}

TEST_P(ObjectModuleTest, ALinkOrderResolvesFromAnotherModuleFirst) {
  Function chain;
  {
    JitModule base = JitModule::Create("base");
    base.AddFile(Object("base"));
    JitModule user = JitModule::Create("user");
    user.SetLinkOrder({base});
    user.AddFile(Object("user"));
    chain = Get(user, "chain");
    // A cycle would keep both alive for ever.
    ffijit::Error cycle = CatchError([&] { base.SetLinkOrder({user}); });
    EXPECT_EQ(cycle.kind(), "RuntimeError");
    EXPECT_NE(cycle.message().find("cycle"), std::string::npos) << cycle.message();
  }
  // The user module keeps the module it links against.
  EXPECT_EQ(chain(int64_t{7}).cast<int64_t>(), 71);
}

TEST_P(ObjectModuleTest, WithoutTheLinkOrderTheSymbolIsUndefined) {
  JitModule user = JitModule::Create("user-alone");
  ffijit::Error error = CatchError([&] { user.AddFile(Object("user")); });
  EXPECT_EQ(error.kind(), "RuntimeError");
  EXPECT_NE(error.message().find("user.o"), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("undefined symbol `chain_base`"), std::string::npos)
      << error.message();
  // The failed object is gone again; the module takes the object once its symbol exists.
  user.AddFile(Object("base"));
  user.AddFile(Object("user"));
  EXPECT_EQ(Get(user, "chain")(int64_t{1}).cast<int64_t>(), 11);
}

// ---- Bad inputs ----

class BadInputTest : public ObjectModuleTest {
 protected:
  void SetUp() override { witness_ = Module::Load(Object("adder")); }
  // The other module and the process keep working after each failure.
  void TearDown() override {
    EXPECT_EQ(Get(witness_, "add")(int64_t{20}, int64_t{22}).cast<int64_t>(), 42);
    EXPECT_EQ(Get(Module::Load(Object("same_a")), "value")().cast<int64_t>(), 1);
  }
  Module witness_;
};

INSTANTIATE_TEST_SUITE_P(Compilers, BadInputTest, ::testing::Values("gcc", "clang"));

TEST_P(BadInputTest, MissingFile) {
  const std::string path = Fixture(GetParam(), "does_not_exist.o");
  ffijit::Error error = CatchError([&] { Module::Load(path); });
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "cannot read `" + path + "`: No such file or directory");
}

TEST_P(BadInputTest, TruncatedObject) {
  const std::string bytes = ReadBytes(Object("adder"));
  ASSERT_GT(bytes.size(), 256u);
  for (size_t keep : {size_t{0}, size_t{16}, size_t{64}, bytes.size() / 2, bytes.size() - 8}) {
    TempFile file("truncated_" + GetParam() + ".o", bytes.substr(0, keep));
    ffijit::Error error = CatchError([&] { Module::Load(file.path()); });
    EXPECT_EQ(error.kind(), "ValueError") << keep << ": " << error.message();
    EXPECT_EQ(error.message().rfind(file.path() + ": ", 0), 0u) << error.message();
  }
}

TEST_P(BadInputTest, CorruptObject) {
  std::string bytes = ReadBytes(Object("adder"));
  // The section header table offset (e_shoff, at 0x28) pointed past the end of the file.
  bytes[0x28 + 6] = 0x7f;
  TempFile file("corrupt_" + GetParam() + ".o", bytes);
  ffijit::Error error = CatchError([&] { Module::Load(file.path()); });
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message().rfind(file.path() + ": not an object file: ", 0), 0u)
      << error.message();
  TempFile text("text_" + GetParam() + ".o", "this is not an object file at all\n");
  ffijit::Error not_object = CatchError([&] { Module::Load(text.path()); });
  EXPECT_EQ(not_object.kind(), "ValueError");
  EXPECT_NE(not_object.message().find("not an object file"), std::string::npos);
}

TEST_P(BadInputTest, ObjectForAnotherArchitecture) {
  const std::string path = Fixture("other", "foreign.o");
  ffijit::Error error = CatchError([&] { Module::Load(path); });
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message().rfind(path + ": an object for " FFIJIT_FOREIGN_ARCH
                                         ", but this machine is " FFIJIT_HOST_ARCH,
                                  0),
            0u)
      << error.message();
}

TEST_P(BadInputTest, SharedLibraryIsNotARelocatableObject) {
  const std::string bytes = ReadBytes(FFIJIT_SHARED_MODULE);
  TempFile file("shared_" + GetParam() + ".o", bytes);
  ffijit::Error error = CatchError([&] { Module::Load(file.path()); });
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("not a relocatable object"), std::string::npos) << error.message();
}

TEST_P(BadInputTest, UndefinedSymbolAtLinkTime) {
  ffijit::Error error = CatchError([&] { Module::Load(Object("undefined")); });
  EXPECT_EQ(error.kind(), "RuntimeError");
  EXPECT_EQ(error.message(), Object("undefined") +
                                 ": cannot link: undefined symbol "
                                 "`ffijit_no_such_function_anywhere`");
}

TEST_P(BadInputTest, DuplicateDefinitionWithinOneModule) {
  JitModule mod = JitModule::Create("twice");
  mod.AddFile(Object("same_a"));
  ffijit::Error error = CatchError([&] { mod.AddFile(Object("same_b")); });
  EXPECT_EQ(error.kind(), "RuntimeError");
  EXPECT_EQ(error.message().rfind(Object("same_b") + ": duplicate definition of symbol `", 0), 0u)
      << error.message();
  // The first object still answers.
  EXPECT_EQ(Get(mod, "value")().cast<int64_t>(), 1);
}

TEST_P(BadInputTest, NoTvmFfiExports) {
  ffijit::Error error = CatchError([&] { Module::Load(Object("noexports")); });
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(
      error.message().rfind(Object("noexports") + " defines no `__tvm_ffi_<name>` function", 0), 0u)
      << error.message();
  // As a helper object of a module it is fine.
  JitModule helpers = JitModule::Create("helpers");
  helpers.AddFile(Object("noexports"));
  EXPECT_NE(helpers.Lookup("plain_helper"), nullptr);
}

TEST_P(BadInputTest, StaticInitialiserThatThrows) {
  for (int round = 0; round < 2; ++round) {
    ffijit::Error error = CatchError([&] { Module::Load(Object("throwing_init")); });
    EXPECT_EQ(error.kind(), "RuntimeError");
    EXPECT_EQ(error.message().rfind(Object("throwing_init") + ": static initializer `", 0), 0u)
        << error.message();
    EXPECT_NE(error.message().find("threw: boom from a static initializer"), std::string::npos)
        << error.message();
  }
}

TEST_P(BadInputTest, UnknownExtensionAndNonJitModules) {
  JitModule mod = JitModule::Create();
  ffijit::Error extension = CatchError([&] { mod.AddFile("kernel.txt"); });
  EXPECT_EQ(extension.kind(), "ValueError");
  EXPECT_EQ(extension.message(),
            "cannot add `kernel.txt` to a JIT module: the extension must be .o, .bc or .ll");
  ffijit::Error shared = CatchError([&] { JitModule::From(Module::Load(FFIJIT_SHARED_MODULE)); });
  EXPECT_EQ(shared.kind(), "TypeError");
  EXPECT_NE(shared.message().find("not a JIT module"), std::string::npos);
  ffijit::Error none = CatchError([&] { JitModule::From(Module()); });
  EXPECT_EQ(none.kind(), "TypeError");
}

// ---- The C API (globals) and the CLI ----

TEST_P(ObjectModuleTest, TheCApiGlobals) {
  Module mod = ffijit::GetGlobalFunctionOrThrow("ffijit.JitModuleCreate")("c-api").cast<Module>();
  Module base = ffijit::GetGlobalFunctionOrThrow("ffijit.JitModuleCreate")("").cast<Module>();
  ffijit::GetGlobalFunctionOrThrow("ffijit.JitModuleAddFile")(base, Object("base"));
  ffijit::GetGlobalFunctionOrThrow("ffijit.JitModuleSetLinkOrder")(mod, ffijit::Array({Any(base)}));
  ffijit::GetGlobalFunctionOrThrow("ffijit.JitModuleAddFile")(mod, Object("user"));
  EXPECT_EQ(Get(mod, "chain")(int64_t{2}).cast<int64_t>(), 21);
  Function native = ffijit::GetGlobalFunctionOrThrow("ffijit.JitModuleMakeNative")(
                        base, "chain_base", "I6!S3!t7R6!S3!t7", "raw")
                        .cast<Function>();
  EXPECT_EQ(native(int64_t{3}).cast<int64_t>(), 30);
  ffijit::Error format = CatchError([&] {
    ffijit::GetGlobalFunctionOrThrow("ffijit.JitModuleMakeNative")(base, "chain_base", "", "yaml");
  });
  EXPECT_EQ(format.kind(), "ValueError");
}

TEST_P(ObjectModuleTest, TheCliCallsAnObjectsFunction) {
  ffijit::testing::ToolResult result =
      ffijit::testing::RunTool("call " + ffijit::testing::Quote(Object("adder")) + " add 1 2");
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.out, "3\n");
  ffijit::testing::ToolResult bad =
      ffijit::testing::RunTool("call " + ffijit::testing::Quote(Object("undefined")) + " broken 1");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("undefined symbol `ffijit_no_such_function_anywhere`"), std::string::npos)
      << bad.err;
}

}  // namespace

// The object's .eh_frame contents as (offset, size) in the file; (0, 0) when it has none.
// The file offset of the first section header `match` accepts (given the header and its name),
// or 0 when none does.
template <typename Match>
static size_t FindSectionHeader(const std::string& bytes, Match match) {
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  auto at = [&](size_t index) { return header.e_shoff + index * sizeof(Elf64_Shdr); };
  Elf64_Shdr names;
  std::memcpy(&names, bytes.data() + at(header.e_shstrndx), sizeof(names));
  for (size_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr shdr;
    std::memcpy(&shdr, bytes.data() + at(i), sizeof(shdr));
    if (match(shdr, std::string(bytes.data() + names.sh_offset + shdr.sh_name))) return at(i);
  }
  return 0;
}

// The .eh_frame section's offset and size in the file ({0, 0} when there is none).
static std::pair<size_t, size_t> EHFrameOf(const std::string& bytes) {
  const size_t at = FindSectionHeader(
      bytes, [](const Elf64_Shdr&, const std::string& name) { return name == ".eh_frame"; });
  if (at == 0) return {0, 0};
  Elf64_Shdr shdr;
  std::memcpy(&shdr, bytes.data() + at, sizeof(shdr));
  return {shdr.sh_offset, shdr.sh_size};
}

// A fuzzed `.bss` of 4 GiB made JITLink allocate and clear it all: refused over a cap instead.
TEST_P(ObjectModuleTest, RejectsZeroFillSectionsOverTheCap) {
  std::string bytes = ReadBytes(Object("adder"));
  const size_t at = FindSectionHeader(
      bytes, [](const Elf64_Shdr& shdr, const std::string&) { return shdr.sh_type == SHT_NOBITS; });
  ASSERT_NE(at, 0u) << "the adder fixture has a .bss section";
  const uint64_t huge = 0xfffffff0;
  std::memcpy(bytes.data() + at + offsetof(Elf64_Shdr, sh_size), &huge, sizeof(huge));
  JitModule mod = JitModule::Create("bss");
  ffijit::Error error = CatchError([&] { mod.AddObject(bytes, "huge_bss.o"); });
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(),
            "huge_bss.o: zero-filled sections (.bss) claim more than 256 MiB, the most an object "
            "module may reserve");
  mod.AddObject(ReadBytes(Object("adder")), "adder.o");
}

// A fuzzed object whose FDE's CIE pointer missed every CIE crashed LLVM 19's .eh_frame parser.
TEST_P(ObjectModuleTest, RejectsAnEHFrameFDEWhoseCIEPointerMissesTheCIE) {
  std::string bytes = ReadBytes(Object("adder"));
  const auto [offset, size] = EHFrameOf(bytes);
  ASSERT_GT(size, 8u) << "the adder fixture has an .eh_frame section";
  uint32_t cie_length = 0;
  std::memcpy(&cie_length, bytes.data() + offset, sizeof(cie_length));
  const size_t fde_id = offset + 4 + cie_length + 4;  // the first FDE's CIE pointer
  ASSERT_LT(fde_id + 4, offset + size);
  uint32_t cie_pointer = 0;
  std::memcpy(&cie_pointer, bytes.data() + fde_id, sizeof(cie_pointer));
  ASSERT_NE(cie_pointer, 0u) << "the record after the first CIE is an FDE";
  cie_pointer += 1;
  std::memcpy(bytes.data() + fde_id, &cie_pointer, sizeof(cie_pointer));

  JitModule mod = JitModule::Create("ehframe");
  ffijit::Error error = CatchError([&] { mod.AddObject(bytes, "bad_cie.o"); });
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("bad_cie.o: corrupt .eh_frame section"), std::string::npos)
      << error.message();
  EXPECT_NE(error.message().find("CIE pointer"), std::string::npos) << error.message();
  // The intact object still loads into the same module.
  mod.AddObject(ReadBytes(Object("adder")), "adder.o");
}
