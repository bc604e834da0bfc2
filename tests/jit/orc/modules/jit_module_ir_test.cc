// JIT modules of LLVM IR: .bc and .ll files from clang-19 and an in-memory llvm::Module, compiled
// in the JIT; natives of IR registered with ffijit metadata, on the interpreter and the JIT tier
// alike; malformed and foreign IR refused with clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "catch_error.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/jit_module.h"
#include "ffijit/reflect/deduce.h"
#include "ffijit/registry.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace {

using ffijit::Function;
using ffijit::JitModule;
using ffijit::Module;
using ffijit_tests::CatchError;

std::string Ir(const std::string& file) {
  return std::string(FFIJIT_JIT_FIXTURES) + "/ir/" + file;
}

Function Get(const Module& mod, const std::string& name) {
  std::optional<Function> func = mod.GetFunction(name);
  if (!func) throw ffijit::KeyError("no function " + name);
  return *func;
}

class IrFileTest : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Formats, IrFileTest, ::testing::Values("ir_kernel.bc", "ir_kernel.ll"));

TEST_P(IrFileTest, ExportsAreFoundLikeAnObjects) {
  Module mod = Module::Load(Ir(GetParam()));
  EXPECT_EQ(mod.kind(), "library");
  EXPECT_EQ(Get(mod, "square")(int64_t{7}).cast<int64_t>(), 49);
  ffijit::Error error = CatchError([&] { Get(mod, "square")(1.5); });
  EXPECT_EQ(error.kind(), "TypeError");
  EXPECT_EQ(error.message(), "square expects one int");
}

TEST_P(IrFileTest, NativesRegisteredWithMetadataAgreeOnBothTiers) {
  JitModule mod = JitModule::Create("natives");
  mod.AddFile(Ir(GetParam()));
  ffijit::RegisterOptions interpreted;
  interpreted.interpret_only = true;
  const std::string json = R"({"a":["i64","i64","i64"],"r":["i64"],"v":1})";
  Function slow = mod.MakeNative("ir_mul_add", json, ffijit::MetadataFormat::kJson, interpreted);
  Function fast = mod.MakeNative("ir_mul_add", json, ffijit::MetadataFormat::kJson);
  ffijit::JitEngine::Default().CompileNow(fast);
  EXPECT_FALSE(ffijit::IsJitCompiled(slow));
  EXPECT_TRUE(ffijit::IsJitCompiled(fast));
  for (const Function& f : {slow, fast}) {
    EXPECT_EQ(f(int64_t{6}, int64_t{7}, int64_t{-2}).cast<int64_t>(), 40);
  }
  ffijit::Error slow_error = CatchError([&] { slow(int64_t{1}, "x", int64_t{2}); });
  ffijit::Error fast_error = CatchError([&] { fast(int64_t{1}, "x", int64_t{2}); });
  EXPECT_EQ(slow_error.kind(), "TypeError");
  EXPECT_EQ(slow_error.kind(), fast_error.kind());
  EXPECT_EQ(slow_error.message(), fast_error.message());
  EXPECT_NE(slow_error.message().find("ir_mul_add"), std::string::npos) << slow_error.message();

  Function scale = mod.MakeNative("ir_scale", ffijit::SignatureOf<double (*)(double, int32_t)>());
  EXPECT_DOUBLE_EQ(scale(2.5, int64_t{4}).cast<double>(), 10.0);
}

TEST_P(IrFileTest, ANativeKeepsItsModuleAlive) {
  ffijit::RegisterOptions options;
  options.global_name = "objmod.ir_mul_add";
  options.allow_override = true;
  Function native;
  {
    JitModule mod = JitModule::Create();
    mod.AddFile(Ir(GetParam()));
    native = mod.RegisterNative("ir_mul_add", "I16!S3!t7S3!t7S3!t7R6!S3!t7",
                                ffijit::MetadataFormat::kRaw, options);
  }
  EXPECT_EQ(native(int64_t{2}, int64_t{3}, int64_t{4}).cast<int64_t>(), 10);
  EXPECT_EQ(
      ffijit::GetGlobalFunctionOrThrow("objmod.ir_mul_add")(int64_t{1}, int64_t{1}, int64_t{1})
          .cast<int64_t>(),
      2);
  ffijit::RemoveGlobalFunction("objmod.ir_mul_add");
}

TEST_P(IrFileTest, MakeNativeErrors) {
  JitModule mod = JitModule::Create("errors");
  mod.AddFile(Ir(GetParam()));
  ffijit::Error missing = CatchError(
      [&] { mod.MakeNative("ir_nothing", ffijit::SignatureOf<int64_t (*)(int64_t)>()); });
  EXPECT_EQ(missing.kind(), "KeyError");
  EXPECT_EQ(missing.message(), "JIT module errors defines no symbol `ir_nothing`");
  ffijit::Error data =
      CatchError([&] { mod.MakeNative("ir_table", ffijit::SignatureOf<int64_t (*)(int64_t)>()); });
  EXPECT_EQ(data.kind(), "TypeError");
  EXPECT_EQ(data.message(), "symbol `ir_table` of JIT module errors is data, not a function");
}

TEST(IrModuleTest, AnInMemoryLlvmModule) {
  llvm::LLVMContext context;
  llvm::Module module("in_memory", context);
  llvm::IRBuilder<> builder(context);
  llvm::Type* i64 = builder.getInt64Ty();
  auto* type = llvm::FunctionType::get(i64, {i64, i64}, false);
  auto* function = llvm::Function::Create(type, llvm::Function::ExternalLinkage, "mem_sub", module);
  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", function));
  builder.CreateRet(builder.CreateSub(function->getArg(0), function->getArg(1)));

  JitModule mod = JitModule::Create("memory");
  mod.AddIR(module);
  Function sub = mod.MakeNative("mem_sub", ffijit::SignatureOf<int64_t (*)(int64_t, int64_t)>());
  EXPECT_EQ(sub(int64_t{10}, int64_t{3}).cast<int64_t>(), 7);
  // The caller's module is untouched and may be added again elsewhere.
  EXPECT_EQ(module.getFunction("mem_sub"), function);
}

TEST(IrModuleTest, MalformedBitcode) {
  JitModule mod = JitModule::Create("bad-bc");
  const std::string garbage = std::string("BC\xC0\xDE", 4) + std::string(64, '\x5a');
  ffijit::Error error = CatchError([&] { mod.AddIR(garbage, "garbage.bc"); });
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message().rfind("garbage.bc: malformed bitcode: ", 0), 0u) << error.message();
}

TEST(IrModuleTest, MalformedIrText) {
  JitModule mod = JitModule::Create("bad-ll");
  ffijit::Error error =
      CatchError([&] { mod.AddIR("define i64 @f(i64 %x) {\n  ret i64 %y\n}\n", "bad.ll"); });
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message().rfind("bad.ll:2:11: malformed LLVM IR: ", 0), 0u) << error.message();
  EXPECT_NE(error.message().find("%y"), std::string::npos) << error.message();
}

// Shorter than bitcode's 4-byte magic: LLVM's check would read past the end (fuzz_bitcode).
TEST(IrModuleTest, InputShorterThanTheBitcodeMagicIsMalformedText) {
  JitModule mod = JitModule::Create("short");
  for (std::string_view input : {std::string_view("B"), std::string_view("BC\xC0")}) {
    ffijit::Error error = CatchError([&] { mod.AddIR(input, "short.bc"); });
    EXPECT_EQ(error.kind(), "ValueError");
    EXPECT_EQ(error.message().rfind("short.bc:", 0), 0u) << error.message();
  }
}

TEST(IrModuleTest, IrForAnotherArchitecture) {
  JitModule mod = JitModule::Create("arm");
  ffijit::Error error = CatchError([&] {
    mod.AddIR("target triple = \"" FFIJIT_FOREIGN_ARCH
              "-unknown-linux-gnu\"\ndefine i64 @f() {\n  ret i64 0\n}\n",
              "arm.ll");
  });
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(
      error.message().rfind(
          "arm.ll: IR for `" FFIJIT_FOREIGN_ARCH "-unknown-linux-gnu`, but this machine is ", 0),
      0u)
      << error.message();
}

TEST(IrModuleTest, UndefinedSymbolInIr) {
  JitModule mod = JitModule::Create("undef-ir");
  ffijit::Error error = CatchError([&] {
    mod.AddIR(
        "declare i64 @ffijit_ir_missing(i64)\n"
        "define i64 @g(i64 %x) {\n  %r = call i64 @ffijit_ir_missing(i64 %x)\n  ret i64 %r\n}\n",
        "undef.ll");
  });
  EXPECT_EQ(error.kind(), "RuntimeError");
  EXPECT_EQ(error.message(), "undef.ll: cannot link: undefined symbol `ffijit_ir_missing`");
}

}  // namespace
