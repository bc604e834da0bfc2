// Modules built for a TVM FFI ABI revision of another C function set are refused, named, before
// their code runs; the revision check itself on symbol lists, including its bad input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "catch_error.h"
#include "ffijit/c_ext.h"
#include "ffijit/module.h"

namespace {

using ffijit_tests::CatchError;

std::string ModulePath(const std::string& name) {
  return std::string(FFIJIT_TEST_MODULE_DIR) + "/" + name + ".so";
}

TVMFFIByteArray Bytes(const char* text) {
  return TVMFFIByteArray{text, std::char_traits<char>::length(text)};
}

// The message names the module, the revisions on both sides and the symbol that told.
void ExpectNamesBothRevisions(const ffijit::Error& error, const std::string& module) {
  EXPECT_EQ(error.kind(), "RuntimeError");
  const std::string& text = error.message();
  EXPECT_NE(text.find(module), std::string::npos) << text;
  EXPECT_NE(text.find("TVM FFI " FFIJIT_TVM_FFI_REMOVED_FUNCTIONS_REVISIONS), std::string::npos)
      << text;
  EXPECT_NE(text.find("TVM FFI " FFIJIT_TVM_FFI_ABI_NAME " ABI"), std::string::npos) << text;
  EXPECT_NE(text.find("-DFFIJIT_TVM_FFI_ABI=" FFIJIT_TVM_FFI_REMOVED_FUNCTIONS_REVISIONS),
            std::string::npos)
      << text;
}

TEST(AbiRevisionTest, ASharedLibraryOfTheOtherRevisionIsRefusedBeforeItRuns) {
  const std::string path = ModulePath("other_revision_module");
  ffijit::Error error = CatchError([&] { ffijit::Module::Load(path); });
  ExpectNamesBothRevisions(error, path);
  // It names every function it needs that only the other revisions export.
#define FFIJIT_EXPECT_NAMED(name) \
  EXPECT_NE(error.message().find(#name), std::string::npos) << error.message();
  FFIJIT_TVM_FFI_REMOVED_FUNCTIONS(FFIJIT_EXPECT_NAMED)
#undef FFIJIT_EXPECT_NAMED
  // The process goes on: a module of this revision still loads and runs.
  ffijit::Module good = ffijit::Module::Load(ModulePath("basic_module"));
  EXPECT_TRUE(good.GetFunction("add_one").has_value());
}

TEST(AbiRevisionTest, SymbolListsOfThisRevisionPass) {
  const TVMFFIByteArray names[] = {Bytes("TVMFFIFunctionCall"), Bytes("TVMFFIObjectDecRef"),
                                   Bytes("malloc"), TVMFFIByteArray{nullptr, 0}};
  EXPECT_EQ(FFIJITCheckModuleAbiSymbols("mine.so", names, 4), 0);
  EXPECT_EQ(FFIJITCheckModuleAbiSymbols("empty.so", nullptr, 0), 0);
}

// A symbol list with one function only the other revision exports is refused, naming just it.
void ExpectTells(const char* name) {
  const TVMFFIByteArray names[] = {Bytes("TVMFFIFunctionCall"), Bytes(name)};
  ASSERT_EQ(FFIJITCheckModuleAbiSymbols("theirs.o", names, 2), -1) << name;
  ffijit::Error error = ffijit::Error::MoveFromRaised();
  ExpectNamesBothRevisions(error, "theirs.o");
  EXPECT_NE(error.message().find(name), std::string::npos) << error.message();
  EXPECT_EQ(error.message().find("TVMFFIFunctionCall"), std::string::npos) << error.message();
}

TEST(AbiRevisionTest, EveryFunctionOnlyTheOtherRevisionExportsTells) {
#define FFIJIT_EXPECT_TELLS(name) ExpectTells(#name);
  FFIJIT_TVM_FFI_REMOVED_FUNCTIONS(FFIJIT_EXPECT_TELLS)
#undef FFIJIT_EXPECT_TELLS
}

TEST(AbiRevisionTest, BadArgumentsAreClearErrors) {
  ASSERT_EQ(FFIJITCheckModuleAbiSymbols("m", nullptr, -1), -1);
  EXPECT_NE(ffijit::Error::MoveFromRaised().message().find("negative count -1"), std::string::npos);
  ASSERT_EQ(FFIJITCheckModuleAbiSymbols("m", nullptr, 2), -1);
  EXPECT_NE(ffijit::Error::MoveFromRaised().message().find("`names` must not be NULL"),
            std::string::npos);
  ASSERT_EQ(FFIJITCheckModuleAbiFile(nullptr), -1);
  EXPECT_NE(ffijit::Error::MoveFromRaised().message().find("`path` must not be NULL"),
            std::string::npos);
  // Not ELF or not there: the check passes and the loader reports the file.
  EXPECT_EQ(FFIJITCheckModuleAbiFile("/nonexistent/module.so"), 0);
  EXPECT_EQ(FFIJITCheckModuleAbiFile(FFIJIT_SOURCE_DIR "/README.md"), 0);
}

}  // namespace
