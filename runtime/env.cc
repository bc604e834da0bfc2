// The environment API of c_env_api.h: per-thread streams, tensor allocators (and allocation
// through them), frontend signals.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "ffijit/c_env_api.h"
#include "internal.h"

namespace ffijit {
namespace {

// A map rather than a table indexed by id: any non-negative id is accepted without allocating
// space for all the ids below it.
thread_local std::unordered_map<uint64_t, TVMFFIStreamHandle> tls_streams;

uint64_t StreamKey(int32_t device_type, int32_t device_id) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(device_type)) << 32) |
         static_cast<uint32_t>(device_id);
}

// The allocator type under the revision's name; both have the same signature.
#if FFIJIT_TVM_FFI_HAS_DLPACK_MANAGED_TENSOR_ALLOCATOR
using TensorAllocator = DLPackManagedTensorAllocator;
#else
using TensorAllocator = DLPackTensorAllocator;
#endif

thread_local TensorAllocator tls_allocator = nullptr;
std::atomic<TensorAllocator> global_allocator{nullptr};

TensorAllocator SetAllocator(TensorAllocator allocator, int write_to_global_context) {
  TensorAllocator original = tls_allocator;
  tls_allocator = allocator;
  if (write_to_global_context != 0) global_allocator.store(allocator, std::memory_order_release);
  return original;
}

TensorAllocator CurrentAllocator() {
  if (tls_allocator != nullptr) return tls_allocator;
  return global_allocator.load(std::memory_order_acquire);
}

#if FFIJIT_TVM_FFI_HAS_DLPACK_MANAGED_TENSOR_ALLOCATOR
// Whether the allocator running on this thread reported its failure through SetError: one that
// returns nonzero without doing so still fails with an error of ffijit's.
thread_local bool allocator_raised = false;

void RaiseAllocatorError(void* /*error_ctx*/, const char* kind, const char* message) {
  allocator_raised = true;
  TVMFFIErrorSetRaisedFromCStr(kind != nullptr ? kind : "RuntimeError",
                               message != nullptr ? message : "");
}
#endif

// The frontend hooks. Each is one atomic pointer, so registration and use need no lock.
struct FrontendHooks {
  std::atomic<int (*)()> check_signals{nullptr};
  std::atomic<void* (*)()> gil_ensure{nullptr};
  std::atomic<void (*)(void*)> gil_release{nullptr};
};

FrontendHooks& Hooks() {
  static FrontendHooks* hooks = new FrontendHooks();  // never destroyed: used at any exit stage
  return *hooks;
}

}  // namespace
}  // namespace ffijit

using namespace ffijit;

extern "C" {

int TVMFFIEnvSetStream(int32_t device_type, int32_t device_id, TVMFFIStreamHandle stream,
                       TVMFFIStreamHandle* opt_out_original_stream) {
  return internal::GuardCBoundary([&] {
    if (device_type < 0 || device_id < 0) {
      throw Error("ValueError", "TVMFFIEnvSetStream: negative device " +
                                    std::string(device_type < 0 ? "type " : "id ") +
                                    std::to_string(device_type < 0 ? device_type : device_id));
    }
    const uint64_t key = StreamKey(device_type, device_id);
    auto it = tls_streams.find(key);
    TVMFFIStreamHandle original = it == tls_streams.end() ? nullptr : it->second;
    if (stream == nullptr) {
      if (it != tls_streams.end()) tls_streams.erase(it);
    } else {
      tls_streams[key] = stream;
    }
    if (opt_out_original_stream != nullptr) *opt_out_original_stream = original;
  });
}

TVMFFIStreamHandle TVMFFIEnvGetStream(int32_t device_type, int32_t device_id) {
  if (device_type < 0 || device_id < 0) return nullptr;
  auto it = tls_streams.find(StreamKey(device_type, device_id));
  return it == tls_streams.end() ? nullptr : it->second;
}

#if FFIJIT_TVM_FFI_HAS_DLPACK_MANAGED_TENSOR_ALLOCATOR
int TVMFFIEnvSetDLPackManagedTensorAllocator(
    DLPackManagedTensorAllocator allocator, int write_to_global_context,
    DLPackManagedTensorAllocator* opt_out_original_allocator) {
  DLPackManagedTensorAllocator original = SetAllocator(allocator, write_to_global_context);
  if (opt_out_original_allocator != nullptr) *opt_out_original_allocator = original;
  return 0;
}

DLPackManagedTensorAllocator TVMFFIEnvGetDLPackManagedTensorAllocator(void) {
  return CurrentAllocator();
}

int TVMFFIEnvTensorAlloc(DLTensor* prototype, TVMFFIObjectHandle* out) {
  DLManagedTensorVersioned* managed = nullptr;
  bool raised_by_allocator = false;
  int status = internal::GuardCBoundary([&] {
    internal::RequireNonNull(prototype, "TVMFFIEnvTensorAlloc", "prototype");
    internal::RequireNonNull(out, "TVMFFIEnvTensorAlloc", "out");
    DLPackManagedTensorAllocator allocator = CurrentAllocator();
    if (allocator == nullptr) {
      throw Error("RuntimeError",
                  "TVMFFIEnvTensorAlloc: allocator is nullptr, likely because "
                  "TVMFFIEnvSetDLPackManagedTensorAllocator has not been called.");
    }
    allocator_raised = false;
    const int code = allocator(prototype, &managed, nullptr, &RaiseAllocatorError);
    if (code != 0) {
      managed = nullptr;  // a failed allocator owns nothing it may have written
      // Its error is already the raised one: leave it in place, untouched.
      raised_by_allocator = allocator_raised;
      if (raised_by_allocator) return;
      throw Error("RuntimeError", "TVMFFIEnvTensorAlloc: the allocator failed with code " +
                                      std::to_string(code) + " without reporting an error");
    }
    if (managed == nullptr) {
      throw Error("RuntimeError",
                  "TVMFFIEnvTensorAlloc: the allocator succeeded but returned no tensor");
    }
  });
  if (status != 0 || raised_by_allocator) return -1;
  // The Tensor takes the managed tensor; if it cannot (a malformed result), nobody else will.
  status = TVMFFITensorFromDLPackVersioned(managed, 0, 0, out);
  if (status != 0 && managed->deleter != nullptr) managed->deleter(managed);
  return status;
}
#else
int TVMFFIEnvSetTensorAllocator(DLPackTensorAllocator allocator, int write_to_global_context,
                                DLPackTensorAllocator* opt_out_original_allocator) {
  DLPackTensorAllocator original = SetAllocator(allocator, write_to_global_context);
  if (opt_out_original_allocator != nullptr) *opt_out_original_allocator = original;
  return 0;
}

DLPackTensorAllocator TVMFFIEnvGetTensorAllocator(void) {
  return CurrentAllocator();
}
#endif

int TVMFFIEnvCheckSignals(void) {
  FrontendHooks& hooks = Hooks();
  int (*check)() = hooks.check_signals.load(std::memory_order_acquire);
  if (check == nullptr) return 0;
  void* (*ensure)() = hooks.gil_ensure.load(std::memory_order_acquire);
  void (*release)(void*) = hooks.gil_release.load(std::memory_order_acquire);
  // The hook may need the frontend's lock (Python's GIL); take it only when both halves exist.
  const bool with_lock = ensure != nullptr && release != nullptr;
  void* state = with_lock ? ensure() : nullptr;
  const int pending = check();
  if (with_lock) release(state);
  return pending != 0 ? -1 : 0;
}

int TVMFFIEnvRegisterCAPI(const char* name, void* symbol) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(name, "TVMFFIEnvRegisterCAPI", "name");
    const std::string key(name);
    FrontendHooks& hooks = Hooks();
    if (key == "PyErr_CheckSignals") {
      hooks.check_signals.store(reinterpret_cast<int (*)()>(symbol), std::memory_order_release);
    } else if (key == "PyGILState_Ensure") {
      hooks.gil_ensure.store(reinterpret_cast<void* (*)()>(symbol), std::memory_order_release);
    } else if (key == "PyGILState_Release") {
      hooks.gil_release.store(reinterpret_cast<void (*)(void*)>(symbol), std::memory_order_release);
    } else {
      throw Error("ValueError", "Unknown env API " + Excerpt(key) +
                                    " (known: PyErr_CheckSignals, PyGILState_Ensure, "
                                    "PyGILState_Release)");
    }
  });
}

}  // extern "C"
