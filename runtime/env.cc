// The environment API of c_env_api.h: per-thread streams, tensor allocators, frontend signals.
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

thread_local DLPackTensorAllocator tls_allocator = nullptr;
std::atomic<DLPackTensorAllocator> global_allocator{nullptr};

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

int TVMFFIEnvSetTensorAllocator(DLPackTensorAllocator allocator, int write_to_global_context,
                                DLPackTensorAllocator* opt_out_original_allocator) {
  DLPackTensorAllocator original = tls_allocator;
  tls_allocator = allocator;
  if (write_to_global_context != 0) global_allocator.store(allocator, std::memory_order_release);
  if (opt_out_original_allocator != nullptr) *opt_out_original_allocator = original;
  return 0;
}

DLPackTensorAllocator TVMFFIEnvGetTensorAllocator(void) {
  if (tls_allocator != nullptr) return tls_allocator;
  return global_allocator.load(std::memory_order_acquire);
}

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
