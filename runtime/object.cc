// Object allocation, the refcount C API, opaque objects and (v0.1.13) the init-once handles.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "ffijit/object.h"
#include "internal.h"
#include "object_internal.h"

namespace ffijit::internal {

TVMFFIObject* AllocObject(size_t size, int32_t type_index, void (*deleter)(void*, int)) {
  return AllocObjectZeroing(size, size, type_index, deleter);
}

}  // namespace ffijit::internal

namespace {

using namespace ffijit;

#if FFIJIT_TVM_FFI_HAS_HANDLE_INIT_ONCE
// Serialises the slow path of TVMFFIHandleInitOnce. Recursive, so that an init function may
// initialise another handle it depends on.
std::recursive_mutex& InitOnceMutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

// The handles this thread is initialising: an init function that asks for its own handle again
// would otherwise recurse forever (or deadlock with a plain mutex).
thread_local std::vector<void**> handles_being_initialised;
#endif

}  // namespace

extern "C" {

int TVMFFIObjectIncRef(TVMFFIObjectHandle obj) {
  if (obj == nullptr) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "TVMFFIObjectIncRef: `obj` must not be NULL");
    return -1;
  }
  details::IncRef(static_cast<TVMFFIObject*>(obj));
  return 0;
}

int TVMFFIObjectDecRef(TVMFFIObjectHandle obj) {
  if (obj == nullptr) {
#if FFIJIT_TVM_FFI_DECREF_NULL_IS_NOOP
    // v0.1.13 releases a NULL handle as nothing, like `delete nullptr`.
    return 0;
#else
    TVMFFIErrorSetRaisedFromCStr("ValueError", "TVMFFIObjectDecRef: `obj` must not be NULL");
    return -1;
#endif
  }
  details::DecRef(static_cast<TVMFFIObject*>(obj));
  return 0;
}

int TVMFFIObjectCreateOpaque(void* handle, int32_t type_index, void (*deleter)(void* handle),
                             TVMFFIObjectHandle* out) {
  if (type_index != kTVMFFIOpaquePyObject) {
    // The message TVM FFI gives; the caller keeps ownership of `handle`.
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "Only kTVMFFIOpaquePyObject is supported for now");
    return -1;
  }
  return FFIJITObjectCreateOpaqueOfType(handle, type_index, deleter, out);
}

#if FFIJIT_TVM_FFI_HAS_HANDLE_INIT_ONCE
int TVMFFIHandleInitOnce(void** handle_addr, int (*init)(void** result)) {
  if (handle_addr == nullptr || init == nullptr) {
    TVMFFIErrorSetRaisedFromCStr("ValueError",
                                 handle_addr == nullptr
                                     ? "TVMFFIHandleInitOnce: `handle_addr` must not be NULL"
                                     : "TVMFFIHandleInitOnce: `init` must not be NULL");
    return -1;
  }
  // Acquire pairs with the release store below: a caller that sees the handle sees everything
  // init wrote before publishing it.
  if (__atomic_load_n(handle_addr, __ATOMIC_ACQUIRE) != nullptr) return 0;
  std::scoped_lock lock(InitOnceMutex());
  // Another thread may have published the handle while this one waited for the lock.
  if (__atomic_load_n(handle_addr, __ATOMIC_ACQUIRE) != nullptr) return 0;
  auto& in_progress = handles_being_initialised;
  if (std::find(in_progress.begin(), in_progress.end(), handle_addr) != in_progress.end()) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError",
                                 "TVMFFIHandleInitOnce: `init` asked for the handle it is "
                                 "initialising (a recursive initialisation)");
    return -1;
  }
  in_progress.push_back(handle_addr);
  void* result = nullptr;
  const int status = init(&result);
  in_progress.pop_back();
  // init raised its own error: its code goes back unchanged, and nothing is published.
  if (status != 0) return status;
  if (result == nullptr) {
    TVMFFIErrorSetRaisedFromCStr(
        "RuntimeError", "TVMFFIHandleInitOnce: `init` returned 0 but left the handle NULL");
    return -1;
  }
  __atomic_store_n(handle_addr, result, __ATOMIC_RELEASE);
  return 0;
}

int TVMFFIHandleDeinitOnce(void** handle_addr, int (*deinit)(void* handle)) {
  // Checked before the exchange: a refused call must leave the handle where it was.
  if (handle_addr == nullptr || deinit == nullptr) {
    TVMFFIErrorSetRaisedFromCStr("ValueError",
                                 handle_addr == nullptr
                                     ? "TVMFFIHandleDeinitOnce: `handle_addr` must not be NULL"
                                     : "TVMFFIHandleDeinitOnce: `deinit` must not be NULL");
    return -1;
  }
  // Exactly one caller takes a given handle out, however many race here.
  void* old_handle = __atomic_exchange_n(handle_addr, nullptr, __ATOMIC_ACQ_REL);
  return old_handle != nullptr ? deinit(old_handle) : 0;
}
#endif  // FFIJIT_TVM_FFI_HAS_HANDLE_INIT_ONCE

}  // extern "C"
