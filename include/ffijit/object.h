// Objects: header refcounting, ObjectPtr<T>, ObjectRef, WeakRef and the type registry.
//
// Counts live where the selected TVM FFI revision puts them and follow its protocol (the
// FFIJITHeader* functions of its ABI header), so that objects made by any library or language
// interoperate. Inline here because the uncontended inc/dec is on every hot path (target <= 2 ns).
#ifndef FFIJIT_OBJECT_H_
#define FFIJIT_OBJECT_H_

#include <cstdint>
#include <string>
#include <utility>

#include "ffijit/c_api.h"
#include "ffijit/c_ext.h"
#include "ffijit/error.h"

namespace ffijit {

using Object = TVMFFIObject;

namespace details {

// The protocol itself is the revision's (FFIJITHeader* in tvm_ffi_abi_<revision>.h).
inline void IncRef(TVMFFIObject* obj) noexcept {
  FFIJITHeaderIncStrong(obj);
}
inline void DecRef(TVMFFIObject* obj) noexcept {
  FFIJITHeaderDecStrong(obj);
}
inline void WeakIncRef(TVMFFIObject* obj) noexcept {
  FFIJITHeaderIncWeak(obj);
}
inline void WeakDecRef(TVMFFIObject* obj) noexcept {
  FFIJITHeaderDecWeak(obj);
}
// Takes a strong reference if the value is still alive.
inline bool TryPromoteWeak(TVMFFIObject* obj) noexcept {
  return FFIJITHeaderTryPromoteWeak(obj);
}
// The number of strong references (the revision decides where it lives in the header).
inline uint64_t StrongCount(const TVMFFIObject* obj) noexcept {
  return FFIJITHeaderStrongCount(obj);
}
inline uint64_t WeakCount(const TVMFFIObject* obj) noexcept {
  return FFIJITHeaderWeakCount(obj);
}

}  // namespace details

// Intrusive strong pointer to an object whose layout starts with TVMFFIObject.
template <typename T = TVMFFIObject>
class ObjectPtr {
 public:
  ObjectPtr() noexcept = default;
  ObjectPtr(std::nullptr_t) noexcept {}
  ObjectPtr(const ObjectPtr& other) noexcept : ptr_(other.ptr_) {
    if (ptr_) details::IncRef(header());
  }
  ObjectPtr(ObjectPtr&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  ~ObjectPtr() { reset(); }
  ObjectPtr& operator=(ObjectPtr other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }

  // Adopts a reference the caller already owns (e.g. from a C API `out` parameter).
  static ObjectPtr Adopt(T* ptr) noexcept {
    ObjectPtr result;
    result.ptr_ = ptr;
    return result;
  }
  // Takes a new reference to a borrowed pointer.
  static ObjectPtr Borrow(T* ptr) noexcept {
    if (ptr) details::IncRef(reinterpret_cast<TVMFFIObject*>(ptr));
    return Adopt(ptr);
  }

  T* get() const noexcept { return ptr_; }
  T* operator->() const noexcept { return ptr_; }
  T& operator*() const noexcept { return *ptr_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  // Gives up ownership without decrementing.
  T* release() noexcept { return std::exchange(ptr_, nullptr); }
  void reset() noexcept {
    if (ptr_) details::DecRef(header());
    ptr_ = nullptr;
  }
  uint64_t use_count() const noexcept { return ptr_ ? details::StrongCount(header()) : 0; }
  friend bool operator==(const ObjectPtr& a, const ObjectPtr& b) noexcept {
    return a.ptr_ == b.ptr_;
  }
  friend bool operator!=(const ObjectPtr& a, const ObjectPtr& b) noexcept {
    return a.ptr_ != b.ptr_;
  }

 private:
  TVMFFIObject* header() const noexcept { return reinterpret_cast<TVMFFIObject*>(ptr_); }
  T* ptr_ = nullptr;
};

// A nullable strong reference to any object; typed references derive from it.
class ObjectRef {
 public:
  // Typed references redefine these; conversions from Any check IsInstance(kTypeIndex).
  static constexpr int32_t kTypeIndex = kTVMFFIObject;
  static constexpr const char* kTypeKey = "ffi.Object";

  ObjectRef() noexcept = default;
  explicit ObjectRef(ObjectPtr<> ptr) noexcept : ptr_(std::move(ptr)) {}

  TVMFFIObject* get() const noexcept { return ptr_.get(); }
  bool defined() const noexcept { return ptr_.get() != nullptr; }
  int32_t type_index() const noexcept { return ptr_ ? ptr_->type_index : kTVMFFINone; }
  uint64_t use_count() const noexcept { return ptr_.use_count(); }
  // Hands one strong reference to C code (e.g. a result slot).
  TVMFFIObjectHandle release() noexcept { return ptr_.release(); }
  friend bool operator==(const ObjectRef& a, const ObjectRef& b) noexcept {
    return a.ptr_ == b.ptr_;
  }
  friend bool operator!=(const ObjectRef& a, const ObjectRef& b) noexcept {
    return a.ptr_ != b.ptr_;
  }

 protected:
  ObjectPtr<> ptr_;
};

// A weak reference: keeps the memory (not the value) alive; Lock() yields a strong one or null.
class WeakRef {
 public:
  WeakRef() noexcept = default;
  explicit WeakRef(const ObjectRef& ref) noexcept : obj_(ref.get()) {
    if (obj_) details::WeakIncRef(obj_);
  }
  WeakRef(const WeakRef& other) noexcept : obj_(other.obj_) {
    if (obj_) details::WeakIncRef(obj_);
  }
  WeakRef(WeakRef&& other) noexcept : obj_(std::exchange(other.obj_, nullptr)) {}
  WeakRef& operator=(WeakRef other) noexcept {
    std::swap(obj_, other.obj_);
    return *this;
  }
  ~WeakRef() {
    if (obj_) details::WeakDecRef(obj_);
  }
  bool expired() const noexcept { return obj_ == nullptr || details::StrongCount(obj_) == 0; }
  ObjectRef Lock() const noexcept {
    if (obj_ && details::TryPromoteWeak(obj_)) {
      return ObjectRef(ObjectPtr<>::Adopt(obj_));
    }
    return ObjectRef();
  }

 private:
  TVMFFIObject* obj_ = nullptr;
};

// ---- Type registry (thread-safe; static keys "ffi.Object", "ffi.String", ... pre-registered) ----

// Registers `key` under `parent` (or returns the index it already has); dynamic indices from 128.
// A key already registered under a different parent is a ValueError.
FFIJIT_API int32_t RegisterType(const std::string& key, int32_t parent_type_index = kTVMFFIObject);
// The index of a registered key; InternalError ``Cannot find type `K` `` (TVM FFI's text) when
// unknown.
FFIJIT_API int32_t TypeKeyToIndex(const std::string& key);
// The key of an index: "ffi.String" for objects, "int", "float", "None", ... for POD values.
FFIJIT_API std::string TypeIndexToKey(int32_t type_index);
// True when `type_index` is `target` or derives from it through the parent chain.
inline bool IsInstance(int32_t type_index, int32_t target) noexcept {
  return type_index == target || FFIJITObjectIsInstance(type_index, target) == 1;
}

// Raises (throws) the thread's pending C error when a C API call returned nonzero.
inline void CheckCall(int status) {
  if (status != 0) throw Error::MoveFromRaised();
}

}  // namespace ffijit

#endif  // FFIJIT_OBJECT_H_
