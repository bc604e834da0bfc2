// The host-entry C API's refusals, in every build: NULL arguments, unknown flags, functions not
// made from metadata, and a build without LLVM.
#include <gtest/gtest.h>

#include <string>

#include "ffijit/error.h"
#include "ffijit/jit/bridge.h"
#include "ffijit/jit/host_entry.h"
#include "ffijit/jit/jit.h"

namespace ffijit::testing {
namespace {

extern "C" int64_t host_api_identity(int64_t x) {
  return x;
}

int Packed(void*, const TVMFFIAny*, int32_t, TVMFFIAny*) {
  return 0;
}

// A model with every field set (to addresses nothing calls: these tests never compile an entry).
FFIJITHostModel CompleteModel() {
  static char stand_in;
  FFIJITHostModel m{};
  m.type_offset = 8;
  m.tensor_slot_size = 8;
  m.self_function_offset = -1;
  m.str_flags_offset = -1;
  m.int_type = m.float_type = m.str_type = m.device_type = m.dtype_type = &stand_in;
  m.none = m.true_value = m.false_value = &stand_in;
  m.int_value = [](void*) -> int64_t { return 0; };
  m.error_occurred = []() -> void* { return nullptr; };
  m.clear_error = [] {};
  m.str_data = [](void*) -> const char* { return nullptr; };
  m.pointer_to_any = [](void*, TVMFFIAny*) { return 0; };
  m.borrow_tensor = [](void*, void*) -> DLTensor* { return nullptr; };
  m.release_tensor = [](void*) {};
  m.new_int = [](int64_t) -> void* { return nullptr; };
  m.new_float = [](double) -> void* { return nullptr; };
  m.new_ref = [](void* o) { return o; };
  m.box_result = [](TVMFFIAny*) -> void* { return nullptr; };
  m.raise_error = [](int) -> void* { return nullptr; };
  m.release_lock = []() -> void* { return nullptr; };
  m.acquire_lock = [](void*) {};
  m.fallback = [](void*, void* const*, intptr_t, void*) -> void* { return nullptr; };
  return m;
}

Error Refusal(TVMFFIObjectHandle func, const FFIJITHostModel* model, int flags) {
  FFIJITHostEntry* entry = nullptr;
  EXPECT_NE(FFIJITHostEntryCompile(func, model, flags, &entry), 0);
  EXPECT_EQ(entry, nullptr);
  return Error::MoveFromRaised();
}

TEST(HostEntryApi, RefusesBadArguments) {
  FFIJITHostModel model{};
  TVMFFIObjectHandle f = nullptr;
  ASSERT_EQ(
      FFIJITMakeFunction(reinterpret_cast<void*>(&host_api_identity),
                         R"({"a":["i64"],"r":["i64"],"v":1})", kFFIJITFormatJson, 0, "id", &f),
      0);
  Error null_func = Refusal(nullptr, &model, 0);
  EXPECT_EQ(null_func.kind(), "ValueError");
  EXPECT_NE(null_func.message().find("func"), std::string::npos) << null_func.message();
  EXPECT_EQ(Refusal(f, nullptr, 0).kind(), "ValueError");
  FFIJITHostEntry* entry = nullptr;
  EXPECT_NE(FFIJITHostEntryCompile(f, &model, 0, nullptr), 0);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  Error flags = Refusal(f, &model, 64);
  EXPECT_EQ(flags.kind(), "ValueError");
  EXPECT_NE(flags.message().find("unknown flags 64"), std::string::npos) << flags.message();
  EXPECT_EQ(entry, nullptr);

  TVMFFIObjectHandle packed = nullptr;
  ASSERT_EQ(TVMFFIFunctionCreate(nullptr, &Packed, nullptr, &packed), 0);
  Error not_bound = Refusal(packed, &model, 0);
  EXPECT_EQ(not_bound.kind(), "RuntimeError");
  EXPECT_NE(not_bound.message().find("not made from metadata"), std::string::npos)
      << not_bound.message();
  // An incomplete model, or an offset outside an object, is refused before anything compiles.
  FFIJITHostModel complete = CompleteModel();
  Error incomplete = Refusal(f, &model, 0);
  EXPECT_EQ(incomplete.kind(), "ValueError");
  EXPECT_NE(incomplete.message().find("int_type is NULL"), std::string::npos)
      << incomplete.message();
  FFIJITHostModel no_fallback = complete;
  no_fallback.fallback = nullptr;
  Error missing = Refusal(f, &no_fallback, 0);
  EXPECT_NE(missing.message().find("fallback is NULL"), std::string::npos) << missing.message();
  FFIJITHostModel bad_offset = complete;
  bad_offset.float_value_offset = -8;
  Error outside = Refusal(f, &bad_offset, 0);
  EXPECT_EQ(outside.kind(), "ValueError");
  EXPECT_NE(outside.message().find("float_value_offset -8 is outside"), std::string::npos)
      << outside.message();
  // -1 is "not given" only where the header says so.
  FFIJITHostModel bad_self = complete;
  bad_self.self_function_offset = -2;
  EXPECT_NE(Refusal(f, &bad_self, 0).message().find("self_function_offset -2 is outside"),
            std::string::npos);
  bad_self.self_function_offset = 4089;
  EXPECT_NE(Refusal(f, &bad_self, 0).message().find("self_function_offset 4089"),
            std::string::npos);
  FFIJITHostModel minus_one = complete;
  minus_one.dtype_value_offset = -1;
  EXPECT_NE(Refusal(f, &minus_one, 0).message().find("dtype_value_offset -1 is outside"),
            std::string::npos);
  FFIJITHostModel bad_str = complete;
  bad_str.str_flags_offset = 16;
  bad_str.str_length_offset = 24;
  bad_str.str_inline_data_offset = 5000;
  bad_str.str_inline_mask = 1;
  EXPECT_NE(Refusal(f, &bad_str, 0).message().find("str_inline_data_offset 5000"),
            std::string::npos);
  bad_str.str_inline_data_offset = 32;
  bad_str.str_inline_mask = 0;
  EXPECT_NE(Refusal(f, &bad_str, 0).message().find("str_inline_mask is 0"), std::string::npos);
  FFIJITHostModel bad_slot = complete;
  bad_slot.tensor_slot_size = 12;
  EXPECT_NE(Refusal(f, &bad_slot, 0).message().find("tensor_slot_size 12"), std::string::npos);
  if (!JitAvailable()) {
    Error no_jit = Refusal(f, &complete, 0);
    EXPECT_EQ(no_jit.kind(), "RuntimeError");
    EXPECT_NE(no_jit.message().find("without LLVM"), std::string::npos) << no_jit.message();
  }
  // Accessors and release accept NULL.
  EXPECT_EQ(FFIJITHostEntryAddress(nullptr), nullptr);
  EXPECT_EQ(FFIJITHostEntryCompileNanos(nullptr), 0);
  FFIJITHostEntryRelease(nullptr);
  TVMFFIObjectDecRef(packed);
  TVMFFIObjectDecRef(f);
}

}  // namespace
}  // namespace ffijit::testing
