// Error objects, the thread-local raised error, backtraces, and the ffijit::Error exception.
//
// The cell is the revision's (tvm_ffi_abi_<revision>.h): e98b94e1 has a traceback (most recent call
// last) replaced in place; v0.1.13 a backtrace (most recent call first) replaced or appended to,
// and an owned cause chain and extra context.
#include "ffijit/error.h"

#include <cstring>
#include <memory>
#include <string>

#include "ffijit/object.h"
#include "internal.h"
#include "object_internal.h"

namespace ffijit {
namespace {

// An Error object: the ABI cell points into the strings that follow it.
struct ErrorObject {
  TVMFFIObject header;
  TVMFFIErrorCell cell;
  std::string kind, message, traceback;
};

void ErrorDeleter(void* self, int flags) {
  auto* obj = static_cast<ErrorObject*>(self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    std::destroy_at(&obj->kind);
    std::destroy_at(&obj->message);
    std::destroy_at(&obj->traceback);
#if FFIJIT_TVM_FFI_HAS_ERROR_CAUSE_CHAIN
    if (obj->cell.cause_chain != nullptr) {
      details::DecRef(static_cast<TVMFFIObject*>(obj->cell.cause_chain));
    }
    if (obj->cell.extra_context != nullptr) {
      details::DecRef(static_cast<TVMFFIObject*>(obj->cell.extra_context));
    }
#endif
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(obj);
}

void SyncCell(ErrorObject* obj) {
  obj->cell.kind = {obj->kind.data(), obj->kind.size()};
  obj->cell.message = {obj->message.data(), obj->message.size()};
  obj->cell.FFIJIT_ERROR_BACKTRACE = {obj->traceback.data(), obj->traceback.size()};
}

std::string_view View(const TVMFFIByteArray* bytes) {
  if (bytes == nullptr || bytes->data == nullptr) return {};
  return std::string_view(bytes->data, bytes->size);
}

#if FFIJIT_TVM_FFI_HAS_ERROR_CAUSE_CHAIN
// Header code calls this through the cell to replace the backtrace or to add frames to it.
void UpdateBacktrace(TVMFFIObjectHandle self, const TVMFFIByteArray* backtrace, int32_t mode) {
  auto* obj = static_cast<ErrorObject*>(self);
  if (obj == nullptr || backtrace == nullptr) return;
  try {
    if (mode == kTVMFFIBacktraceUpdateModeAppend) {
      obj->traceback.append(View(backtrace));
    } else {
      obj->traceback.assign(View(backtrace));
    }
  } catch (...) {
    return;  // out of memory: the old backtrace stays
  }
  SyncCell(obj);
}
#else
void UpdateTraceback(TVMFFIObjectHandle self, const TVMFFIByteArray* traceback) {
  auto* obj = static_cast<ErrorObject*>(self);
  if (obj == nullptr || traceback == nullptr) return;
  obj->traceback.assign(View(traceback));
  SyncCell(obj);
}
#endif

std::string FromBytes(const TVMFFIByteArray* bytes) {
  if (bytes == nullptr || bytes->data == nullptr) return {};
  return std::string(bytes->data, bytes->size);
}

TVMFFIObject* NewErrorObject(std::string kind, std::string message, std::string traceback) {
  auto* obj = reinterpret_cast<ErrorObject*>(
      internal::AllocObject(sizeof(ErrorObject), kTVMFFIError, ErrorDeleter));
  new (&obj->kind) std::string(std::move(kind));
  new (&obj->message) std::string(std::move(message));
  new (&obj->traceback) std::string(std::move(traceback));
#if FFIJIT_TVM_FFI_HAS_ERROR_CAUSE_CHAIN
  obj->cell.update_backtrace = UpdateBacktrace;
#else
  obj->cell.update_traceback = UpdateTraceback;
#endif
  SyncCell(obj);
  return &obj->header;
}

// The raised error of this thread; owned (one strong reference) while set.
struct RaisedSlot {
  TVMFFIObject* error = nullptr;
  ~RaisedSlot() {
    if (error) details::DecRef(error);
  }
};
thread_local RaisedSlot raised;

void StoreRaised(TVMFFIObject* owned_error) noexcept {
  TVMFFIObject* previous = raised.error;
  raised.error = owned_error;
  if (previous) details::DecRef(previous);
}

}  // namespace

}  // namespace ffijit

using namespace ffijit;

extern "C" {

void TVMFFIErrorSetRaised(TVMFFIObjectHandle error) {
  auto* obj = static_cast<TVMFFIObject*>(error);
  if (obj == nullptr) {  // clears the slot, as in TVM FFI
    StoreRaised(nullptr);
    return;
  }
  if (!IsInstance(obj->type_index, kTVMFFIError)) {
    TVMFFIErrorSetRaisedFromCStr("TypeError",
                                 "TVMFFIErrorSetRaised: the object is not an ffi.Error");
    return;
  }
  details::IncRef(obj);
  StoreRaised(obj);
}

void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message) {
  try {
    StoreRaised(NewErrorObject(kind ? kind : "RuntimeError", message ? message : "", ""));
  } catch (...) {
    // Out of memory while reporting an error: keep whatever was raised before.
  }
}

void TVMFFIErrorMoveFromRaised(TVMFFIObjectHandle* result) {
  if (result == nullptr) return;
  *result = raised.error;
  raised.error = nullptr;
}

#if FFIJIT_TVM_FFI_HAS_ERROR_CAUSE_CHAIN
int TVMFFIErrorCreate(const TVMFFIByteArray* kind, const TVMFFIByteArray* message,
                      const TVMFFIByteArray* backtrace, TVMFFIObjectHandle* out) {
  return TVMFFIErrorCreateWithCauseAndExtraContext(kind, message, backtrace, nullptr, nullptr, out);
}

int TVMFFIErrorCreateWithCauseAndExtraContext(
    const TVMFFIByteArray* kind, const TVMFFIByteArray* message, const TVMFFIByteArray* backtrace,
    TVMFFIObjectHandle cause_chain, TVMFFIObjectHandle extra_context, TVMFFIObjectHandle* out) {
  // As in TVM FFI, failure to allocate returns nonzero without raising (raising would allocate).
  if (out == nullptr) return -1;
  auto* cause = static_cast<TVMFFIObject*>(cause_chain);
  if (cause != nullptr && !IsInstance(cause->type_index, kTVMFFIError)) {
    TVMFFIErrorSetRaisedFromCStr(
        "TypeError", "TVMFFIErrorCreateWithCauseAndExtraContext: the cause is not an ffi.Error");
    return -1;
  }
  TVMFFIObject* created;
  try {
    created = NewErrorObject(FromBytes(kind), FromBytes(message), FromBytes(backtrace));
  } catch (...) {
    return -1;
  }
  auto* cell = reinterpret_cast<TVMFFIErrorCell*>(created + 1);
  if (cause != nullptr) details::IncRef(cause);
  cell->cause_chain = cause;
  auto* context = static_cast<TVMFFIObject*>(extra_context);
  if (context != nullptr) details::IncRef(context);
  cell->extra_context = context;
  *out = created;
  return 0;
}

void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** parts, int32_t num_parts) {
  try {
    std::string message;
    for (int32_t i = 0; parts != nullptr && i < num_parts; ++i) {
      if (parts[i] != nullptr) message += parts[i];
    }
    StoreRaised(NewErrorObject(kind ? kind : "RuntimeError", std::move(message), ""));
  } catch (...) {
    // Out of memory while reporting an error: keep whatever was raised before.
  }
}

// One frame, the caller's, in Python's style: with a single frame the order (most recent call
// first here) cannot show. Without a file and function there is no frame to report.
const TVMFFIByteArray* TVMFFIBacktrace(const char* filename, int lineno, const char* func,
                                       int /*cross_ffi_boundary*/) {
  // Valid until this thread's next call, like the ABI's other borrowed results.
  thread_local std::string text;
  thread_local TVMFFIByteArray bytes;
  try {
    text.clear();
    if (filename != nullptr && func != nullptr) {
      text = "  File \"" + std::string(filename) + "\", line " + std::to_string(lineno) + ", in " +
             func + "\n";
    }
  } catch (...) {
    text.clear();
  }
  bytes = {text.data(), text.size()};
  return &bytes;
}
#else
TVMFFIObjectHandle TVMFFIErrorCreate(const TVMFFIByteArray* kind, const TVMFFIByteArray* message,
                                     const TVMFFIByteArray* traceback) {
  try {
    return NewErrorObject(FromBytes(kind), FromBytes(message), FromBytes(traceback));
  } catch (...) {
    return nullptr;
  }
}

const TVMFFIByteArray* TVMFFITraceback(const char* filename, int lineno, const char* func,
                                       int cross_ffi_boundary) {
  // Valid until this thread's next call, like the ABI's other borrowed results.
  thread_local std::string text;
  thread_local TVMFFIByteArray bytes;
  try {
    text = "  File \"" + std::string(filename ? filename : "<unknown>") + "\", line " +
           std::to_string(lineno) + ", in " + (func ? func : "<unknown>") +
           (cross_ffi_boundary ? " [ffi boundary]" : "") + "\n";
  } catch (...) {
    text.clear();
  }
  bytes = {text.data(), text.size()};
  return &bytes;
}
#endif

}  // extern "C"
