// Item 8 of the TVM FFI compatibility work: an `object<type_key>` parameter of a function ffijit
// registers (interpreted, and JIT-compiled where the JIT is available) accepts objects of a type a
// loaded module allocated at its static init, and of that type's subtypes, and rejects the
// module's other types with the usual TypeError. The objects come from the module's own functions.
#include <gtest/gtest.h>

#include <string>

#include "catch_error.h"
#include "ffijit/jit/register.h"
#include "ffijit/module.h"

namespace ffijit {
namespace {

using ffijit_tests::CatchError;

int64_t TypeOf(TVMFFIObject* obj) {
  return obj->type_index;
}

class ObjectParamTest : public ::testing::TestWithParam<bool> {};

TEST_P(ObjectParamTest, AcceptsTheModulesTypeAndSubtypesOnly) {
  Module module = Module::Load(std::string(FFIJIT_TEST_MODULE_DIR) + "/reflected_module.so");
  Any rect = (*module.GetFunction("make_rect"))(int64_t{2}, int64_t{3});
  Any square = (*module.GetFunction("make_square"))(int64_t{5});
  Any shape = (*module.GetFunction("make_shape"))(int64_t{3});
  Any other = (*module.GetFunction("make_other"))();
  ASSERT_EQ(rect.type_name(), "rm.Rect");
  ASSERT_EQ(square.type_name(), "rm.Square");

  RegisterOptions options;
  options.interpret_only = GetParam();
  Function takes_rect =
      MakeFunction("takes_rect", reinterpret_cast<void*>(&TypeOf),
                   R"({"a":[["object","rm.Rect"]],"r":["i64"]})", MetadataFormat::kJson, options);
  EXPECT_EQ(takes_rect(rect).cast<int64_t>(), rect.type_index());
  EXPECT_EQ(takes_rect(square).cast<int64_t>(), square.type_index());
  for (const Any& wrong : {shape, other}) {
    Error error = CatchError([&] { takes_rect(wrong); });
    EXPECT_EQ(error.kind(), "TypeError");
    EXPECT_EQ(error.message(),
              "Mismatched type on argument #0 when calling: `takes_rect(object<rm.Rect>) -> i64`. "
              "Expected `object<rm.Rect>` but got `" +
                  wrong.type_name() + "`");
  }
  // The base type's parameter takes all three.
  Function takes_shape =
      MakeFunction("takes_shape", reinterpret_cast<void*>(&TypeOf),
                   R"({"a":[["object","rm.Shape"]],"r":["i64"]})", MetadataFormat::kJson, options);
  for (const Any& ok : {shape, rect, square}) {
    EXPECT_EQ(takes_shape(ok).cast<int64_t>(), ok.type_index());
  }
  EXPECT_EQ(CatchError([&] { takes_shape(other); }).kind(), "TypeError");
}

INSTANTIATE_TEST_SUITE_P(Tiers, ObjectParamTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Interp" : "Jit"; });

}  // namespace
}  // namespace ffijit
