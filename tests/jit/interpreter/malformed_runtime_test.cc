// The runtime's own C API under the value-validity contract (malformed_value_test.cc has the
// executors' side): value copies, reflection setters, global registration, type allocation and
// names quoted in its errors. Built only with ffijit's runtime: the add-on build's C API is TVM
// FFI's library, which trusts its callers.
#include <gtest/gtest.h>

#include <string>

#include "any_fixtures.h"
#include "catch_error.h"
#include "ffijit/c_env_api.h"
#include "ffijit/error.h"
#include "ffijit/string.h"

namespace ffijit::testing {
namespace {

using ffijit_tests::SmallStr;
using ffijit_tests::Tagged;

int32_t AllocType(const std::string& key, int32_t depth, int32_t parent) {
  TVMFFIByteArray bytes{key.data(), key.size()};
  return TVMFFITypeGetOrAllocIndex(&bytes, -1, depth, 0, 1, parent);
}

TEST(MalformedRuntime, AnyViewToOwnedAnyRejectsMalformedValues) {
  TVMFFIAny out{};
  TVMFFIAny null_str = Tagged(kTVMFFIStr, nullptr);
  EXPECT_EQ(TVMFFIAnyViewToOwnedAny(&null_str, &out), -1);
  Error e = Error::MoveFromRaised();
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(),
            "malformed value: a value tagged `str` (type index 65) with a NULL object");
  TVMFFIAny long_small = SmallStr("ab", 99);
  EXPECT_EQ(TVMFFIAnyViewToOwnedAny(&long_small, &out), -1);
  EXPECT_EQ(Error::MoveFromRaised().message(),
            "malformed value: an inline `str` (type index 11) of length 99 (at most 7 fit)");
}

TEST(MalformedTypes, TypeAllocationRejectsNegativeParentAndDepth) {
  // -2 is v0.1.13's query-only parent (an unknown key answers -2, nothing registered); -3 is
  // negative at both revisions.
  EXPECT_EQ(AllocType("hostile.negative_parent", 1, -3), -1);
  Error e = Error::MoveFromRaised();
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_NE(e.message().find("negative parent index"), std::string::npos) << e.message();
  EXPECT_EQ(AllocType("hostile.negative_depth", -1, kTVMFFIObject), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
}

// Reflection setters and global registration read incoming values under the same contract.
TEST(MalformedRuntime, FieldSettersAndMethodInfoCheckValues) {
  int32_t module_index = -1;
  TVMFFIByteArray module_key{"ffi.Module", 10};
  ASSERT_EQ(TVMFFITypeKeyToIndex(&module_key, &module_index), 0);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(module_index);
  const TVMFFIFieldInfo* imports = nullptr;
  for (int32_t i = 0; i < info->num_fields; ++i) {
    if (std::string(info->fields[i].name.data, info->fields[i].name.size) == "imports_") {
      imports = &info->fields[i];
    }
  }
  ASSERT_NE(imports, nullptr);
  // A plain setter function (v0.1.13 stores it as void*, a Function handle only under a flag).
  const auto set_imports = reinterpret_cast<TVMFFIFieldSetter>(imports->setter);
  TVMFFIObject* slot = nullptr;  // the field, as it sits in a module object
  TVMFFIAny null_array = Tagged(kTVMFFIArray, nullptr);
  EXPECT_EQ(set_imports(&slot, &null_array), -1);
  Error e = Error::MoveFromRaised();
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(),
            "ffi.Module.imports_: malformed value: a value tagged `ffi.Array` (type index 71) with "
            "a NULL object");
  String text("not an array, though tagged as one");
  TVMFFIAny mismatched = Tagged(kTVMFFIArray, text.any().v_obj);
  EXPECT_EQ(set_imports(&slot, &mismatched), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  EXPECT_EQ(slot, nullptr);

  TVMFFIMethodInfo method{};
  method.name = TVMFFIByteArray{"hostile.method", 14};
  method.method = Tagged(kTVMFFIFunction, nullptr);
  EXPECT_EQ(TVMFFIFunctionSetGlobalFromMethodInfo(&method, 0), -1);
  e = Error::MoveFromRaised();
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(),
            "TVMFFIFunctionSetGlobalFromMethodInfo: malformed value: a value tagged "
            "`ffi.Function` (type index 68) with a NULL object");
}

TEST(MalformedTypes, OpaqueObjectsOfDerivedLayoutsAndTheRuntimesOwnEntry) {
  TVMFFIObjectHandle out = nullptr;
  // A dynamic type deriving from a built-in layout is not opaque either.
  const int32_t function_child =
      AllocType("hostile.function_child", TVMFFIGetTypeInfo(kTVMFFIFunction)->type_depth + 1,
                kTVMFFIFunction);
  ASSERT_GE(function_child, 0);
  EXPECT_EQ(FFIJITObjectCreateOpaqueOfType(nullptr, function_child, nullptr, &out), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  // TVM FFI's own entry point takes only ffi.OpaquePyObject.
  EXPECT_EQ(TVMFFIObjectCreateOpaque(nullptr, kTVMFFIStr, nullptr, &out), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "RuntimeError");
  ASSERT_EQ(TVMFFIObjectCreateOpaque(nullptr, kTVMFFIOpaquePyObject, nullptr, &out), 0);
  TVMFFIObjectDecRef(out);
}

// Names and keys a caller passes are quoted as bounded excerpts in the runtime's errors.
TEST(MalformedRuntime, ErrorsQuoteBoundedNames) {
  const std::string huge(1 << 20, 'k');
  const TVMFFIByteArray name{huge.data(), huge.size()};
  int32_t index = 0;
  EXPECT_EQ(TVMFFITypeKeyToIndex(&name, &index), -1);
  ffijit_tests::ExpectRaisedExcerpt("TVMFFITypeKeyToIndex");
  EXPECT_EQ(TVMFFIEnvRegisterCAPI(huge.c_str(), nullptr), -1);
  ffijit_tests::ExpectRaisedExcerpt("TVMFFIEnvRegisterCAPI");
}

}  // namespace
}  // namespace ffijit::testing
