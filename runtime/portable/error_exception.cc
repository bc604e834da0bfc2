// ffijit::Error's conversions to and from Error objects, over the C ABI alone (TVMFFIErrorCreate,
// TVMFFIErrorSetRaised, TVMFFIErrorMoveFromRaised and the revision's error cell), so that the same
// code serves ffijit's runtime and the add-on over TVM FFI's library.
#include <string>
#include <utility>

#include "ffijit/error.h"
#include "ffijit/object.h"

namespace ffijit {
namespace {

std::string FromBytes(const TVMFFIByteArray& bytes) {
  if (bytes.data == nullptr) return {};
  return std::string(bytes.data, bytes.size);
}

// A new Error object (one strong reference), or NULL when the runtime could not allocate one.
TVMFFIObjectHandle CreateErrorObject(const std::string& kind, const std::string& message,
                                     const std::string& traceback) {
  TVMFFIByteArray kind_bytes{kind.data(), kind.size()};
  TVMFFIByteArray message_bytes{message.data(), message.size()};
  TVMFFIByteArray traceback_bytes{traceback.data(), traceback.size()};
#if FFIJIT_TVM_FFI_HAS_ERROR_CAUSE_CHAIN
  TVMFFIObjectHandle out = nullptr;
  if (TVMFFIErrorCreate(&kind_bytes, &message_bytes, &traceback_bytes, &out) != 0) return nullptr;
  return out;
#else
  return TVMFFIErrorCreate(&kind_bytes, &message_bytes, &traceback_bytes);
#endif
}

}  // namespace

Error::Error(std::string kind, std::string message, std::string traceback)
    : kind_(std::move(kind)), message_(std::move(message)), traceback_(std::move(traceback)) {
  what_ = kind_ + ": " + message_;
}

TVMFFIObjectHandle Error::ToObject() const {
  TVMFFIObjectHandle object = CreateErrorObject(kind_, message_, traceback_);
  if (object == nullptr) throw std::bad_alloc();
  return object;
}

void Error::SetRaised() const {
  // Out of memory while reporting an error: whatever was raised before stays.
  TVMFFIObjectHandle object = CreateErrorObject(kind_, message_, traceback_);
  if (object == nullptr) return;
  TVMFFIErrorSetRaised(object);  // the slot takes its own reference
  TVMFFIObjectDecRef(object);
}

Error Error::MoveFromRaised() {
  TVMFFIObjectHandle handle = nullptr;
  TVMFFIErrorMoveFromRaised(&handle);
  if (handle == nullptr) {
    return Error("RuntimeError", "a call failed without raising an error");
  }
  ObjectPtr<> owner = ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle));
  return FromObject(handle);
}

Error Error::FromObject(TVMFFIObjectHandle error) {
  auto* obj = static_cast<TVMFFIObject*>(error);
  if (obj == nullptr) return Error("RuntimeError", "Error::FromObject: NULL handle");
  if (!IsInstance(obj->type_index, kTVMFFIError)) {
    return Error("TypeError", "Error::FromObject: object of type `" +
                                  TypeIndexToKey(obj->type_index) + "` is not an ffi.Error");
  }
  const auto* cell = reinterpret_cast<const TVMFFIErrorCell*>(obj + 1);
  return Error(FromBytes(cell->kind), FromBytes(cell->message),
               FromBytes(cell->FFIJIT_ERROR_BACKTRACE));
}

}  // namespace ffijit
