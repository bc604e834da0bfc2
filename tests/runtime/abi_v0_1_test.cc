// The object-level C API that TVM FFI v0.1.13 adds or changes (the custom allocator, the version,
// the init-once handles, DecRef(NULL), a NULL function deleter), checked on the revision the build
// chose; on e98b94e1 the same tests check the seed's behaviour where it differs.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "ffijit/ffijit.h"

namespace ffijit {
namespace {

// The raised error, or kind "None" when nothing was raised.
Error TakeRaised() {
  TVMFFIObjectHandle handle = nullptr;
  TVMFFIErrorMoveFromRaised(&handle);
  if (handle == nullptr) return Error("None", "");
  Error error = Error::FromObject(handle);
  TVMFFIObjectDecRef(handle);
  return error;
}

TEST(AbiV01Test, AbiReportNamesTheRevisionTheRuntimeWasBuiltFor) {
  const FFIJITTvmFfiAbi* abi = FFIJITGetTvmFfiAbi();
  EXPECT_STREQ(abi->name, FFIJIT_TVM_FFI_ABI_NAME);
  EXPECT_STREQ(abi->version, FFIJIT_TVM_FFI_ABI_VERSION_TEXT);
  ASSERT_EQ(abi->num_functions, FFIJIT_TVM_FFI_NUM_C_API_FUNCTIONS);
#define FFIJIT_EXPECT_LISTED(name)                                 \
  EXPECT_TRUE([&] {                                                \
    for (int32_t i = 0; i < abi->num_functions; ++i) {             \
      if (std::strcmp(abi->functions[i], #name) == 0) return true; \
    }                                                              \
    return false;                                                  \
  }()) << #name " is missing from the reported function list";
  FFIJIT_TVM_FFI_C_API_FUNCTIONS(FFIJIT_EXPECT_LISTED)
#undef FFIJIT_EXPECT_LISTED
}

TEST(AbiV01Test, DecRefOfNullFollowsTheRevision) {
#if FFIJIT_TVM_FFI_DECREF_NULL_IS_NOOP
  EXPECT_EQ(TVMFFIObjectDecRef(nullptr), 0);
  EXPECT_EQ(TakeRaised().kind(), "None");
#else
  EXPECT_EQ(TVMFFIObjectDecRef(nullptr), -1);
  const Error error = TakeRaised();
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("TVMFFIObjectDecRef"), std::string::npos) << error.message();
#endif
}

int ReturnSeven(void*, const TVMFFIAny*, int32_t, TVMFFIAny* result) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = 7;
  return 0;
}

TEST(AbiV01Test, FunctionWithoutDeleterCallsAndDiesCleanly) {
  TVMFFIObjectHandle handle = nullptr;
  ASSERT_EQ(TVMFFIFunctionCreate(nullptr, ReturnSeven, nullptr, &handle), 0);
  ASSERT_NE(handle, nullptr);
  TVMFFIAny result{};
  ASSERT_EQ(TVMFFIFunctionCall(handle, nullptr, 0, &result), 0);
  EXPECT_EQ(result.type_index, kTVMFFIInt);
  EXPECT_EQ(result.v_int64, 7);
  EXPECT_EQ(TVMFFIObjectDecRef(handle), 0);  // nothing to release for `self`
}

#if FFIJIT_TVM_FFI_HAS_GET_VERSION
TEST(AbiV01Test, GetVersionReportsTheRevision) {
  TVMFFIVersion version{99, 99, 99};
  TVMFFIGetVersion(&version);
  // The header's version macros, and the revision's version text (cmake/tvm_ffi_revisions.txt).
  EXPECT_EQ(version.major, static_cast<uint32_t>(TVM_FFI_VERSION_MAJOR));
  EXPECT_EQ(version.minor, static_cast<uint32_t>(TVM_FFI_VERSION_MINOR));
  EXPECT_EQ(version.patch, static_cast<uint32_t>(TVM_FFI_VERSION_PATCH));
  EXPECT_EQ(std::to_string(version.major) + "." + std::to_string(version.minor) + "." +
                std::to_string(version.patch),
            FFIJIT_TVM_FFI_ABI_VERSION_TEXT);
  TVMFFIGetVersion(nullptr);  // no answer to write, and no crash
}
#endif

#if FFIJIT_TVM_FFI_HAS_CUSTOM_ALLOCATOR

TVMFFIObjectAllocHeader* AllocHeaderOf(void* body) {
  return reinterpret_cast<TVMFFIObjectAllocHeader*>(static_cast<char*>(body) - 8);
}

TEST(CustomAllocatorTest, DefaultAllocatorPutsAnAllocHeaderBeforeTheBody) {
  TVMFFICustomAllocator* allocator = TVMFFIGetCustomAllocator();
  ASSERT_NE(allocator, nullptr);
  ASSERT_NE(allocator->allocate, nullptr);
  for (size_t alignment : {size_t{1}, size_t{2}, size_t{4}, size_t{8}, size_t{16}}) {
    void* body = allocator->allocate(40, alignment, kTVMFFIObject, allocator->context);
    ASSERT_NE(body, nullptr) << "alignment " << alignment;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(body) % alignof(std::max_align_t), 0u);
    std::memset(body, 0xAB, 40);  // the whole body is usable (ASan checks the bounds)
    TVMFFIObjectAllocHeader* header = AllocHeaderOf(body);
    ASSERT_NE(header->delete_space, nullptr);
    header->delete_space(body);
  }
  // A zero-sized body still gets a header that frees it.
  void* empty = allocator->allocate(0, 8, kTVMFFIObject, allocator->context);
  ASSERT_NE(empty, nullptr);
  AllocHeaderOf(empty)->delete_space(empty);
}

TEST(CustomAllocatorTest, DefaultAllocatorRefusesAlignmentsItCannotHonour) {
  TVMFFICustomAllocator* allocator = TVMFFIGetCustomAllocator();
  for (size_t alignment : {size_t{0}, size_t{3}, size_t{12}, size_t{32}, size_t{4096}}) {
    EXPECT_EQ(allocator->allocate(16, alignment, kTVMFFIObject, allocator->context), nullptr)
        << "alignment " << alignment;
  }
  EXPECT_EQ(allocator->allocate(SIZE_MAX - 4, 8, kTVMFFIObject, allocator->context), nullptr);
}

// A custom allocator that counts what it hands out and gets back; its own layout (the body 16
// bytes into a malloc block), so a free through the wrong delete_space would show.
struct Counts {
  int allocated = 0;
  int freed = 0;
  int32_t last_type_index = -1;
  size_t last_alignment = 0;
};
Counts counts;

void CountingDeleteSpace(void* body) {
  ++counts.freed;
  std::free(static_cast<char*>(body) - 16);
}

void* CountingAllocate(size_t size, size_t alignment, int32_t type_index, void* context) {
  EXPECT_EQ(context, &counts);
  auto* block = static_cast<char*>(std::malloc(16 + size));
  if (block == nullptr) return nullptr;
  ++counts.allocated;
  counts.last_type_index = type_index;
  counts.last_alignment = alignment;
  AllocHeaderOf(block + 16)->delete_space = CountingDeleteSpace;
  return block + 16;
}

TVMFFICustomAllocator counting_allocator = {CountingAllocate, &counts};

// An object as header code makes it: space from the current allocator, freed through the alloc
// header by its own deleter.
struct HeaderCodeObject {
  TVMFFIObject header;
  int64_t payload;
};
void HeaderCodeDeleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) AllocHeaderOf(self)->delete_space(self);
}

TEST(CustomAllocatorTest, InstalledAllocatorServesUntilTheDefaultIsRestored) {
  TVMFFICustomAllocator* builtin = TVMFFIGetCustomAllocator();
  counts = Counts{};
  ASSERT_EQ(TVMFFISetCustomAllocator(&counting_allocator), 0);
  EXPECT_EQ(TVMFFIGetCustomAllocator(), &counting_allocator);

  TVMFFICustomAllocator* current = TVMFFIGetCustomAllocator();
  void* body = current->allocate(sizeof(HeaderCodeObject), alignof(HeaderCodeObject), kTVMFFIObject,
                                 current->context);
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(counts.allocated, 1);
  EXPECT_EQ(counts.last_type_index, kTVMFFIObject);
  EXPECT_EQ(counts.last_alignment, alignof(HeaderCodeObject));
  auto* obj = static_cast<HeaderCodeObject*>(body);
  FFIJITHeaderInit(&obj->header, kTVMFFIObject, HeaderCodeDeleter);
  obj->payload = 42;
  // The runtime's reference counting frees it through the allocator that made it.
  ASSERT_EQ(TVMFFIObjectIncRef(obj), 0);
  ASSERT_EQ(TVMFFIObjectDecRef(obj), 0);
  EXPECT_EQ(counts.freed, 0);
  ASSERT_EQ(TVMFFIObjectDecRef(obj), 0);
  EXPECT_EQ(counts.freed, 1);

  ASSERT_EQ(TVMFFISetCustomAllocator(nullptr), 0);
  EXPECT_EQ(TVMFFIGetCustomAllocator(), builtin);
  // The built-in allocator serves again; the counting one sees nothing more.
  void* again = TVMFFIGetCustomAllocator()->allocate(8, 8, kTVMFFIObject, nullptr);
  ASSERT_NE(again, nullptr);
  AllocHeaderOf(again)->delete_space(again);
  EXPECT_EQ(counts.allocated, 1);
  EXPECT_EQ(counts.freed, 1);
}

TEST(CustomAllocatorTest, AllocatorWithoutAllocateIsRefused) {
  TVMFFICustomAllocator* before = TVMFFIGetCustomAllocator();
  TVMFFICustomAllocator broken = {nullptr, nullptr};
  EXPECT_EQ(TVMFFISetCustomAllocator(&broken), -1);
  const Error error = TakeRaised();
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("allocate"), std::string::npos) << error.message();
  EXPECT_EQ(TVMFFIGetCustomAllocator(), before);
}

#endif  // FFIJIT_TVM_FFI_HAS_CUSTOM_ALLOCATOR

#if FFIJIT_TVM_FFI_HAS_HANDLE_INIT_ONCE

std::atomic<int> init_calls{0};
int handle_target = 0;  // what the init functions hand out

int InitToTarget(void** result) {
  ++init_calls;
  *result = &handle_target;
  return 0;
}

int InitFailsWithSeven(void** result) {
  ++init_calls;
  *result = &handle_target;  // must not be published: the code says it failed
  TVMFFIErrorSetRaisedFromCStr("IndexError", "init could not make the handle");
  return 7;
}

int InitLeavesNull(void**) {
  ++init_calls;
  return 0;
}

TEST(HandleInitOnceTest, InitRunsOnceAndPublishesTheHandle) {
  void* handle = nullptr;
  init_calls = 0;
  ASSERT_EQ(TVMFFIHandleInitOnce(&handle, InitToTarget), 0);
  EXPECT_EQ(handle, &handle_target);
  ASSERT_EQ(TVMFFIHandleInitOnce(&handle, InitToTarget), 0);
  EXPECT_EQ(init_calls, 1);
  // A handle that already holds something is never initialised again.
  int other = 0;
  void* preset = &other;
  ASSERT_EQ(TVMFFIHandleInitOnce(&preset, InitToTarget), 0);
  EXPECT_EQ(preset, &other);
  EXPECT_EQ(init_calls, 1);
}

TEST(HandleInitOnceTest, RacingThreadsRunInitExactlyOnce) {
  void* handle = nullptr;
  init_calls = 0;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      if (TVMFFIHandleInitOnce(&handle, InitToTarget) != 0 ||
          __atomic_load_n(&handle, __ATOMIC_ACQUIRE) != &handle_target) {
        ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(init_calls, 1);
}

TEST(HandleInitOnceTest, InitFailureCodeComesBackUnchanged) {
  void* handle = nullptr;
  init_calls = 0;
  EXPECT_EQ(TVMFFIHandleInitOnce(&handle, InitFailsWithSeven), 7);
  EXPECT_EQ(handle, nullptr);
  const Error error = TakeRaised();
  EXPECT_EQ(error.kind(), "IndexError");
  EXPECT_EQ(error.message(), "init could not make the handle");
  // Nothing was published, so the next call tries again.
  EXPECT_EQ(TVMFFIHandleInitOnce(&handle, InitToTarget), 0);
  EXPECT_EQ(handle, &handle_target);
  EXPECT_EQ(init_calls, 2);
}

TEST(HandleInitOnceTest, InitThatLeavesTheHandleNullIsARuntimeError) {
  void* handle = nullptr;
  EXPECT_EQ(TVMFFIHandleInitOnce(&handle, InitLeavesNull), -1);
  EXPECT_EQ(handle, nullptr);
  const Error error = TakeRaised();
  EXPECT_EQ(error.kind(), "RuntimeError");
  EXPECT_NE(error.message().find("NULL"), std::string::npos) << error.message();
}

TEST(HandleInitOnceTest, NullArgumentsAreValueErrors) {
  void* handle = nullptr;
  EXPECT_EQ(TVMFFIHandleInitOnce(nullptr, InitToTarget), -1);
  Error error = TakeRaised();
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("`handle_addr`"), std::string::npos) << error.message();
  EXPECT_EQ(TVMFFIHandleInitOnce(&handle, nullptr), -1);
  error = TakeRaised();
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("`init`"), std::string::npos) << error.message();
  EXPECT_EQ(handle, nullptr);
}

// Init functions that ask for handles themselves: one for another handle (allowed), one for its
// own (a cycle, refused instead of recursing forever).
void* inner_handle = nullptr;
void* outer_handle = nullptr;
int InitInner(void** result) {
  *result = &handle_target;
  return 0;
}
int InitOuterNeedingInner(void** result) {
  const int status = TVMFFIHandleInitOnce(&inner_handle, InitInner);
  if (status != 0) return status;
  *result = inner_handle;
  return 0;
}
int InitOuterNeedingItself(void** result) {
  const int status = TVMFFIHandleInitOnce(&outer_handle, InitOuterNeedingItself);
  if (status != 0) return status;
  *result = &handle_target;
  return 0;
}

TEST(HandleInitOnceTest, InitMayInitialiseAnotherHandleButNotItsOwn) {
  inner_handle = nullptr;
  outer_handle = nullptr;
  ASSERT_EQ(TVMFFIHandleInitOnce(&outer_handle, InitOuterNeedingInner), 0);
  EXPECT_EQ(inner_handle, &handle_target);
  EXPECT_EQ(outer_handle, &handle_target);

  outer_handle = nullptr;
  EXPECT_EQ(TVMFFIHandleInitOnce(&outer_handle, InitOuterNeedingItself), -1);
  EXPECT_EQ(outer_handle, nullptr);
  const Error error = TakeRaised();
  EXPECT_EQ(error.kind(), "RuntimeError");
  EXPECT_NE(error.message().find("recursive"), std::string::npos) << error.message();
}

std::vector<void*> deinit_seen;
int DeinitRecord(void* handle) {
  deinit_seen.push_back(handle);
  return 0;
}
int DeinitFailsWithFive(void* handle) {
  deinit_seen.push_back(handle);
  return 5;
}

TEST(HandleDeinitOnceTest, DeinitRunsOnceOnTheOldHandle) {
  deinit_seen.clear();
  void* handle = &handle_target;
  EXPECT_EQ(TVMFFIHandleDeinitOnce(&handle, DeinitRecord), 0);
  EXPECT_EQ(handle, nullptr);
  ASSERT_EQ(deinit_seen.size(), 1u);
  EXPECT_EQ(deinit_seen[0], &handle_target);
  // Already NULL: nothing to deinitialise.
  EXPECT_EQ(TVMFFIHandleDeinitOnce(&handle, DeinitRecord), 0);
  EXPECT_EQ(deinit_seen.size(), 1u);
  // deinit's code comes back unchanged; the handle is cleared either way.
  handle = &handle_target;
  EXPECT_EQ(TVMFFIHandleDeinitOnce(&handle, DeinitFailsWithFive), 5);
  EXPECT_EQ(handle, nullptr);
  EXPECT_EQ(deinit_seen.size(), 2u);
}

TEST(HandleDeinitOnceTest, NullArgumentsAreValueErrorsAndKeepTheHandle) {
  deinit_seen.clear();
  void* handle = &handle_target;
  EXPECT_EQ(TVMFFIHandleDeinitOnce(nullptr, DeinitRecord), -1);
  Error error = TakeRaised();
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("`handle_addr`"), std::string::npos) << error.message();
  EXPECT_EQ(TVMFFIHandleDeinitOnce(&handle, nullptr), -1);
  error = TakeRaised();
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("`deinit`"), std::string::npos) << error.message();
  EXPECT_EQ(handle, &handle_target);
  EXPECT_TRUE(deinit_seen.empty());
}

#endif  // FFIJIT_TVM_FFI_HAS_HANDLE_INIT_ONCE

}  // namespace
}  // namespace ffijit
