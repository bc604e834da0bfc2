// The env API: per-thread streams, the tensor allocator (and, on v0.1.13, allocation through it),
// frontend signal hooks, and bad input.
#include <gtest/gtest.h>

#include <climits>
#include <thread>
#include <vector>

#include "ffijit/c_env_api.h"
#include "ffijit/error.h"
#include "ffijit/tensor.h"

namespace ffijit {
namespace {

TEST(EnvStreamTest, SetReturnsThePreviousStreamPerDevice) {
  int a = 0, b = 0;
  EXPECT_EQ(TVMFFIEnvGetStream(kDLCUDA, 0), nullptr);
  TVMFFIStreamHandle original = &b;
  ASSERT_EQ(TVMFFIEnvSetStream(kDLCUDA, 0, &a, &original), 0);
  EXPECT_EQ(original, nullptr);
  EXPECT_EQ(TVMFFIEnvGetStream(kDLCUDA, 0), &a);
  EXPECT_EQ(TVMFFIEnvGetStream(kDLCUDA, 1), nullptr);
  EXPECT_EQ(TVMFFIEnvGetStream(kDLROCM, 0), nullptr);
  ASSERT_EQ(TVMFFIEnvSetStream(kDLCUDA, 0, &b, &original), 0);
  EXPECT_EQ(original, &a);
  ASSERT_EQ(TVMFFIEnvSetStream(kDLCUDA, 0, nullptr, nullptr), 0);  // no out pointer is fine
  EXPECT_EQ(TVMFFIEnvGetStream(kDLCUDA, 0), nullptr);
}

TEST(EnvStreamTest, StreamsArePerThread) {
  int a = 0;
  ASSERT_EQ(TVMFFIEnvSetStream(kDLCUDA, 3, &a, nullptr), 0);
  TVMFFIStreamHandle seen = &a;
  std::thread([&] { seen = TVMFFIEnvGetStream(kDLCUDA, 3); }).join();
  EXPECT_EQ(seen, nullptr);
  EXPECT_EQ(TVMFFIEnvGetStream(kDLCUDA, 3), &a);
  ASSERT_EQ(TVMFFIEnvSetStream(kDLCUDA, 3, nullptr, nullptr), 0);
}

TEST(EnvStreamTest, LargeIdsNeedNoTableAndNegativeIdsAreErrors) {
  int a = 0;
  ASSERT_EQ(TVMFFIEnvSetStream(INT32_MAX, INT32_MAX, &a, nullptr), 0);
  EXPECT_EQ(TVMFFIEnvGetStream(INT32_MAX, INT32_MAX), &a);
  ASSERT_EQ(TVMFFIEnvSetStream(INT32_MAX, INT32_MAX, nullptr, nullptr), 0);

  TVMFFIStreamHandle original = &a;
  EXPECT_EQ(TVMFFIEnvSetStream(-1, 0, &a, &original), -1);
  Error type_error = Error::MoveFromRaised();
  EXPECT_EQ(type_error.kind(), "ValueError");
  EXPECT_EQ(type_error.message(), "TVMFFIEnvSetStream: negative device type -1");
  EXPECT_EQ(original, &a) << "untouched on failure";
  EXPECT_EQ(TVMFFIEnvSetStream(0, -5, &a, nullptr), -1);
  EXPECT_EQ(Error::MoveFromRaised().message(), "TVMFFIEnvSetStream: negative device id -5");
  EXPECT_EQ(TVMFFIEnvGetStream(-1, 0), nullptr);
  EXPECT_EQ(TVMFFIEnvGetStream(0, -1), nullptr);
}

int AllocatorA(DLTensor*, DLManagedTensorVersioned**, void*,
               void (*)(void*, const char*, const char*)) {
  return 0;
}
int AllocatorB(DLTensor*, DLManagedTensorVersioned**, void*,
               void (*)(void*, const char*, const char*)) {
  return 0;
}

// The allocator API under the revision's names (the behaviour is the same on both).
#if FFIJIT_TVM_FFI_HAS_DLPACK_MANAGED_TENSOR_ALLOCATOR
using Allocator = DLPackManagedTensorAllocator;
int SetAllocator(Allocator allocator, int write_to_global, Allocator* original) {
  return TVMFFIEnvSetDLPackManagedTensorAllocator(allocator, write_to_global, original);
}
Allocator GetAllocator() {
  return TVMFFIEnvGetDLPackManagedTensorAllocator();
}
#else
using Allocator = DLPackTensorAllocator;
int SetAllocator(Allocator allocator, int write_to_global, Allocator* original) {
  return TVMFFIEnvSetTensorAllocator(allocator, write_to_global, original);
}
Allocator GetAllocator() {
  return TVMFFIEnvGetTensorAllocator();
}
#endif

TEST(EnvAllocatorTest, ThreadLocalFirstThenGlobalAndTheOriginalIsThePreviousOne) {
  EXPECT_EQ(GetAllocator(), nullptr);
  Allocator original = AllocatorB;
  ASSERT_EQ(SetAllocator(AllocatorA, 0, &original), 0);
  EXPECT_EQ(original, nullptr) << "the previous allocator, not the new one";
  EXPECT_EQ(GetAllocator(), &AllocatorA);
  Allocator other_thread = AllocatorA;
  std::thread([&] { other_thread = GetAllocator(); }).join();
  EXPECT_EQ(other_thread, nullptr) << "not written to the global context";

  ASSERT_EQ(SetAllocator(AllocatorB, 1, &original), 0);
  EXPECT_EQ(original, &AllocatorA);
  std::thread([&] { other_thread = GetAllocator(); }).join();
  EXPECT_EQ(other_thread, &AllocatorB) << "the global one, for threads without their own";
  ASSERT_EQ(SetAllocator(AllocatorA, 0, nullptr), 0);
  EXPECT_EQ(GetAllocator(), &AllocatorA) << "this thread's own first";
  // The original is this thread's previous allocator, even when the global one differs.
  Allocator thread_original = nullptr;
  std::thread([&] {
    SetAllocator(AllocatorA, 0, &thread_original);
    SetAllocator(nullptr, 0, nullptr);
  }).join();
  EXPECT_EQ(thread_original, nullptr) << "that thread had none of its own";

  ASSERT_EQ(SetAllocator(nullptr, 1, nullptr), 0);
  EXPECT_EQ(GetAllocator(), nullptr);
}

#if FFIJIT_TVM_FFI_HAS_DLPACK_MANAGED_TENSOR_ALLOCATOR
// A CPU allocator in the style a frontend installs: compact float storage, NULL strides (as
// DLPack allows), and a count of the managed tensors it has released.
struct CpuAllocation {
  DLManagedTensorVersioned managed{};
  std::vector<int64_t> shape;
  std::vector<float> data;
};
int released_allocations = 0;
int CpuAllocator(DLTensor* prototype, DLManagedTensorVersioned** out, void* /*error_ctx*/,
                 void (* /*SetError*/)(void*, const char*, const char*)) {
  auto* allocation = new CpuAllocation();
  allocation->shape.assign(prototype->shape, prototype->shape + prototype->ndim);
  size_t count = 1;
  for (int64_t dim : allocation->shape) count *= static_cast<size_t>(dim);
  allocation->data.assign(count, 0.5f);
  DLManagedTensorVersioned& managed = allocation->managed;
  managed.version = DLPackVersion{FFIJIT_DLPACK_MAJOR, FFIJIT_DLPACK_MINOR};
  managed.manager_ctx = allocation;
  managed.deleter = [](DLManagedTensorVersioned* self) {
    ++released_allocations;
    delete static_cast<CpuAllocation*>(self->manager_ctx);
  };
  managed.dl_tensor = *prototype;
  managed.dl_tensor.data = allocation->data.data();
  managed.dl_tensor.shape = allocation->shape.data();
  managed.dl_tensor.strides = nullptr;
  *out = &managed;
  return 0;
}
int FailingAllocator(DLTensor*, DLManagedTensorVersioned**, void* error_ctx,
                     void (*SetError)(void*, const char*, const char*)) {
  SetError(error_ctx, "MemoryError", "device budget of 0 bytes exceeded");
  return -1;
}
int SilentlyFailingAllocator(DLTensor*, DLManagedTensorVersioned**, void*,
                             void (*)(void*, const char*, const char*)) {
  return 3;
}
// Succeeds with a tensor no Tensor can hold (a negative ndim).
int MalformedAllocator(DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
                       void (*SetError)(void*, const char*, const char*)) {
  int status = CpuAllocator(prototype, out, error_ctx, SetError);
  (*out)->dl_tensor.ndim = -1;
  return status;
}

DLTensor Prototype(int64_t* shape, int32_t ndim) {
  DLTensor prototype{};
  prototype.device = DLDevice{kDLCPU, 0};
  prototype.dtype = DLDataType{kDLFloat, 32, 1};
  prototype.ndim = ndim;
  prototype.shape = shape;
  return prototype;
}

TEST(EnvTensorAllocTest, WrapsTheAllocatorsTensorAsATensorThatReleasesIt) {
  ASSERT_EQ(SetAllocator(CpuAllocator, 0, nullptr), 0);
  int64_t shape[] = {2, 3};
  DLTensor prototype = Prototype(shape, 2);
  TVMFFIObjectHandle handle = nullptr;
  released_allocations = 0;
  ASSERT_EQ(TVMFFIEnvTensorAlloc(&prototype, &handle), 0);
  {
    Tensor tensor(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle)));
    EXPECT_EQ(tensor.get()->type_index, kTVMFFITensor);
    EXPECT_EQ(FFIJITHeaderStrongCount(tensor.get()), 1u) << "returned +1";
    EXPECT_EQ(tensor.shape(), std::vector<int64_t>({2, 3}));
    ASSERT_NE(tensor.dl_tensor()->strides, nullptr) << "NULL strides are made explicit";
    EXPECT_EQ(tensor.strides(), std::vector<int64_t>({3, 1}));
    EXPECT_EQ(tensor.dtype(), DataType::Float(32));
    EXPECT_EQ(static_cast<const float*>(tensor.data())[5], 0.5f);
    EXPECT_EQ(released_allocations, 0);
  }
  EXPECT_EQ(released_allocations, 1) << "the allocator's deleter runs once, with the tensor";
  ASSERT_EQ(SetAllocator(nullptr, 0, nullptr), 0);
}

TEST(EnvTensorAllocTest, NoAllocatorIsARuntimeError) {
  ASSERT_EQ(GetAllocator(), nullptr);
  int64_t shape[] = {4};
  DLTensor prototype = Prototype(shape, 1);
  TVMFFIObjectHandle handle = nullptr;
  ASSERT_EQ(TVMFFIEnvTensorAlloc(&prototype, &handle), -1);
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "RuntimeError");
  EXPECT_EQ(error.message().rfind("TVMFFIEnvTensorAlloc: allocator is nullptr, ", 0), 0u)
      << error.message();
  EXPECT_EQ(handle, nullptr);
}

TEST(EnvTensorAllocTest, AllocatorFailuresAreRaisedWithTheirKindAndMessage) {
  int64_t shape[] = {4};
  DLTensor prototype = Prototype(shape, 1);
  TVMFFIObjectHandle handle = nullptr;
  ASSERT_EQ(SetAllocator(FailingAllocator, 0, nullptr), 0);
  ASSERT_EQ(TVMFFIEnvTensorAlloc(&prototype, &handle), -1);
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "MemoryError");
  EXPECT_EQ(error.message(), "device budget of 0 bytes exceeded");

  ASSERT_EQ(SetAllocator(SilentlyFailingAllocator, 0, nullptr), 0);
  ASSERT_EQ(TVMFFIEnvTensorAlloc(&prototype, &handle), -1);
  Error silent = Error::MoveFromRaised();
  EXPECT_EQ(silent.kind(), "RuntimeError");
  EXPECT_NE(silent.message().find("code 3"), std::string::npos) << silent.message();

  released_allocations = 0;
  ASSERT_EQ(SetAllocator(MalformedAllocator, 0, nullptr), 0);
  ASSERT_EQ(TVMFFIEnvTensorAlloc(&prototype, &handle), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("negative ndim"), std::string::npos);
  EXPECT_EQ(released_allocations, 1) << "a result no Tensor can hold is released, not leaked";
  EXPECT_EQ(handle, nullptr);

  ASSERT_EQ(SetAllocator(CpuAllocator, 0, nullptr), 0);
  EXPECT_EQ(TVMFFIEnvTensorAlloc(nullptr, &handle), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  EXPECT_EQ(TVMFFIEnvTensorAlloc(&prototype, nullptr), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  ASSERT_EQ(SetAllocator(nullptr, 0, nullptr), 0);
}
#endif

int pending_signal = 0;
int ensure_calls = 0;
int release_calls = 0;
void* release_state = nullptr;
int CheckSignalsHook() {
  return pending_signal;
}
void* EnsureHook() {
  ++ensure_calls;
  return &ensure_calls;
}
void ReleaseHook(void* state) {
  ++release_calls;
  release_state = state;
}

TEST(EnvSignalsTest, TheFrontendHookDecides) {
  EXPECT_EQ(TVMFFIEnvCheckSignals(), 0) << "no hook: no signal";
  ASSERT_EQ(TVMFFIEnvRegisterCAPI("PyErr_CheckSignals", reinterpret_cast<void*>(CheckSignalsHook)),
            0);
  pending_signal = 0;
  EXPECT_EQ(TVMFFIEnvCheckSignals(), 0);
  pending_signal = 1;
  EXPECT_EQ(TVMFFIEnvCheckSignals(), -1);
  // With the lock hooks, the check runs between Ensure and Release, and Release gets Ensure's
  // state.
  ASSERT_EQ(TVMFFIEnvRegisterCAPI("PyGILState_Ensure", reinterpret_cast<void*>(EnsureHook)), 0);
  ASSERT_EQ(TVMFFIEnvRegisterCAPI("PyGILState_Release", reinterpret_cast<void*>(ReleaseHook)), 0);
  EXPECT_EQ(TVMFFIEnvCheckSignals(), -1);
  EXPECT_EQ(ensure_calls, 1);
  EXPECT_EQ(release_calls, 1);
  EXPECT_EQ(release_state, &ensure_calls);
  pending_signal = 0;
  EXPECT_EQ(TVMFFIEnvCheckSignals(), 0);
  EXPECT_EQ(release_calls, 2);
  // Unregistering (NULL) turns the check off again.
  ASSERT_EQ(TVMFFIEnvRegisterCAPI("PyErr_CheckSignals", nullptr), 0);
  ASSERT_EQ(TVMFFIEnvRegisterCAPI("PyGILState_Ensure", nullptr), 0);
  ASSERT_EQ(TVMFFIEnvRegisterCAPI("PyGILState_Release", nullptr), 0);
  pending_signal = 1;
  EXPECT_EQ(TVMFFIEnvCheckSignals(), 0);
  pending_signal = 0;
}

TEST(EnvSignalsTest, UnknownApiNamesAreValueErrors) {
  EXPECT_EQ(TVMFFIEnvRegisterCAPI("PyErr_Occurred", nullptr), -1);
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("Unknown env API PyErr_Occurred"), std::string::npos)
      << error.message();
  EXPECT_EQ(TVMFFIEnvRegisterCAPI(nullptr, nullptr), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  EXPECT_EQ(TVMFFIEnvModRegisterContextSymbol(nullptr, nullptr), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
}

}  // namespace
}  // namespace ffijit
