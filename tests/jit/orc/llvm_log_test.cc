// LLVM's own errors reach ffijit's JIT log, never stderr directly: with the log switched off
// (FFIJIT_JIT_LOG=0) a failing link prints nothing, and with a sink the sink gets the text.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "ffijit/jit/jit.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "orc/tiers/unit_compiler.h"

namespace ffijit::orc {
namespace {

// A function that calls a symbol nobody defines: it compiles, and its link fails inside LLVM.
std::vector<CompileRequest> UnresolvableRequest() {
  CompileRequest request;
  request.emit = [](llvm::Module& module, const std::string& symbol) -> std::string {
    llvm::LLVMContext& ctx = module.getContext();
    llvm::IRBuilder<> b(ctx);
    auto* type = llvm::FunctionType::get(b.getInt32Ty(), {}, false);
    auto* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, symbol, module);
    b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "", fn));
    auto missing = module.getOrInsertFunction("ffijit_test_symbol_nobody_defines", type);
    b.CreateRet(b.CreateCall(missing));
    return "";
  };
  std::vector<CompileRequest> requests;
  requests.push_back(std::move(request));
  return requests;
}

TEST(LlvmLog, LinkErrorsGoThroughTheJitLog) {
  std::string error;
  auto engine = UnitCompiler::Create({}, "", &error);
  ASSERT_NE(engine, nullptr) << error;

  // Log off: nothing on stderr, and the compile reports its failure.
  setenv("FFIJIT_JIT_LOG", "0", 1);
  ::testing::internal::CaptureStderr();
  std::vector<CompiledSymbol> compiled = engine->Compile(UnresolvableRequest());
  std::string printed = ::testing::internal::GetCapturedStderr();
  unsetenv("FFIJIT_JIT_LOG");
  ASSERT_EQ(compiled.size(), 1u);
  EXPECT_EQ(compiled[0].address, nullptr);
  EXPECT_NE(compiled[0].failure.find("cannot link"), std::string::npos) << compiled[0].failure;
  EXPECT_EQ(printed, "");

  // A sink: LLVM's session error arrives there, still nothing on stderr.
  std::vector<std::string> lines;
  SetJitLogSink([&](const std::string& line) { lines.push_back(line); });
  ::testing::internal::CaptureStderr();
  compiled = engine->Compile(UnresolvableRequest());
  printed = ::testing::internal::GetCapturedStderr();
  SetJitLogSink(nullptr);
  EXPECT_EQ(printed, "");
  bool found = false;
  for (const std::string& line : lines) {
    found |= line.find("JIT session error") != std::string::npos &&
             line.find("ffijit_test_symbol_nobody_defines") != std::string::npos;
  }
  EXPECT_TRUE(found) << lines.size() << " lines";
}

}  // namespace
}  // namespace ffijit::orc
