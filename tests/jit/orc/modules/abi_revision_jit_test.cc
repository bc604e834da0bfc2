// JIT modules of the other TVM FFI ABI revision, as an object file and as bitcode, are refused
// with an error naming both revisions, and nothing of them runs.
#include <gtest/gtest.h>

#include <string>

#include "catch_error.h"
#include "ffijit/module.h"

namespace {

using ffijit_tests::CatchError;

void ExpectRefused(const std::string& path) {
  ffijit::Error error = CatchError([&] { ffijit::Module::Load(path); });
  EXPECT_EQ(error.kind(), "RuntimeError");
  const std::string& text = error.message();
  EXPECT_NE(text.find("was built for TVM FFI " FFIJIT_TVM_FFI_REMOVED_FUNCTIONS_REVISIONS),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("TVM FFI " FFIJIT_TVM_FFI_ABI_NAME " ABI"), std::string::npos) << text;
  EXPECT_NE(text.find("other_revision"), std::string::npos) << text;
}

TEST(AbiRevisionJitTest, AnObjectOfTheOtherRevisionIsRefused) {
  ExpectRefused(std::string(FFIJIT_JIT_FIXTURES) + "/gcc/other_revision.o");
}

TEST(AbiRevisionJitTest, BitcodeOfTheOtherRevisionIsRefused) {
  ExpectRefused(std::string(FFIJIT_JIT_FIXTURES) + "/ir/other_revision.bc");
}

TEST(AbiRevisionJitTest, AnObjectOfThisRevisionStillLoadsAfterARefusal) {
  ExpectRefused(std::string(FFIJIT_JIT_FIXTURES) + "/gcc/other_revision.o");
  ffijit::Module mod = ffijit::Module::Load(std::string(FFIJIT_JIT_FIXTURES) + "/gcc/adder.o");
  EXPECT_TRUE(mod.GetFunction("add").has_value());
}

}  // namespace
