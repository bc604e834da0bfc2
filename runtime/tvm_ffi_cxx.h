// Layout-compatible C++ declarations of the TVM FFI classes the exported ModuleObj symbols use.
//
// Header-compiled TVM FFI code (user modules, TVM's own C++) treats a module as a C++
// `tvm::ffi::ModuleObj`: a vptr 8 bytes before the object header, a fixed virtual-slot order, an
// imports Array at header+24 and a lookup-cache Map at header+32. These declarations reproduce
// exactly that (and the Itanium-mangled names of the members the ABI exports), written for ffijit;
// only what the module code needs is here. The runtime compiles it with -fvisibility-inlines-hidden
// and defines inline exactly what TVM FFI's header defines inline, so that only the symbols TVM
// FFI's library exports (ModuleObj's vtable and typeinfo, its non-virtual lookups, ImportModule,
// ClearImports, Module::LoadFromFile and Module::VisitContextSymbols) leave the runtime; nothing
// else can interpose on the same names compiled into user modules from TVM FFI's own headers.
#ifndef FFIJIT_RUNTIME_TVM_FFI_CXX_H_
#define FFIJIT_RUNTIME_TVM_FFI_CXX_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "ffijit/c_api.h"
#include "ffijit/c_ext.h"
#include "ffijit/object.h"

#define FFIJIT_HIDDEN __attribute__((visibility("hidden")))
#define FFIJIT_CXX_API __attribute__((visibility("default")))

namespace tvm {
namespace ffi {

// The base of every C++ object: just the C header.
class Object {
 public:
  TVMFFIObject* header() noexcept { return &header_; }
  const TVMFFIObject* header() const noexcept { return &header_; }

 protected:
  TVMFFIObject header_{};
};

// A nullable strong reference: one object pointer (Function, Module, Array, Map, Optional<T> of
// an object type). The destructor is non-trivial, so, like TVM FFI's references, values of these
// types are returned through a hidden pointer and passed by reference.
class ObjectRef {
 public:
  ObjectRef() noexcept = default;
  // Adopts one strong reference.
  static ObjectRef Adopt(TVMFFIObject* owned) noexcept {
    ObjectRef ref;
    ref.ptr_ = owned;
    return ref;
  }
  static ObjectRef Borrow(TVMFFIObject* obj) noexcept {
    if (obj != nullptr) __atomic_fetch_add(&obj->strong_ref_count, 1, __ATOMIC_RELAXED);
    return Adopt(obj);
  }
  ObjectRef(const ObjectRef& other) noexcept : ObjectRef(Borrow(other.ptr_)) {}
  ObjectRef(ObjectRef&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  ObjectRef& operator=(ObjectRef other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }
  ~ObjectRef() {
    if (ptr_ != nullptr) TVMFFIObjectDecRef(ptr_);
  }
  TVMFFIObject* get() const noexcept { return ptr_; }
  TVMFFIObject* release() noexcept { return std::exchange(ptr_, nullptr); }
  bool defined() const noexcept { return ptr_ != nullptr; }

 protected:
  TVMFFIObject* ptr_ = nullptr;
};

class Function : public ObjectRef {
 public:
  Function() noexcept = default;
  explicit Function(ObjectRef ref) noexcept : ObjectRef(std::move(ref)) {}
};

// TypedFunction<R(Args...)> holds one Function; only the name matters here (it is mangled into
// Module::VisitContextSymbols).
template <typename Signature>
class TypedFunction {
 public:
  Function packed;
};

// A String or Bytes: one owned TVMFFIAny cell (SmallStr/SmallBytes inline, or a Str/Bytes
// object); None when it stands for an empty Optional<String>.
class BytesCell {
 public:
  BytesCell() noexcept = default;
  BytesCell(const BytesCell& other) noexcept : cell_(other.cell_) {
    if (cell_.type_index >= kTVMFFIStaticObjectBegin) {
      __atomic_fetch_add(&cell_.v_obj->strong_ref_count, 1, __ATOMIC_RELAXED);
    }
  }
  BytesCell& operator=(BytesCell other) noexcept {
    std::swap(cell_, other.cell_);
    return *this;
  }
  ~BytesCell() {
    if (cell_.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(cell_.v_obj);
  }
  // Adopts an owned Any holding a string or bytes value.
  static BytesCell Adopt(TVMFFIAny owned) noexcept {
    BytesCell result;
    result.cell_ = owned;
    return result;
  }
  bool is_none() const noexcept { return cell_.type_index == kTVMFFINone; }
  const TVMFFIAny& raw() const noexcept { return cell_; }
  // The characters (empty for None).
  std::string_view view() const noexcept {
    if (cell_.type_index == kTVMFFINone) return {};
    if (cell_.type_index < kTVMFFIStaticObjectBegin) {
      return std::string_view(cell_.v_bytes, cell_.small_str_len);
    }
    const auto* bytes = reinterpret_cast<const TVMFFIByteArray*>(cell_.v_obj + 1);
    return std::string_view(bytes->data, bytes->size);
  }

 private:
  TVMFFIAny cell_{};  // type_index 0 = None
};

class String : public BytesCell {
 public:
  String() noexcept = default;
  explicit String(BytesCell cell) noexcept : BytesCell(std::move(cell)) {}
  // An owned copy of `chars` (SmallStr when short).
  static String From(std::string_view chars) {
    TVMFFIByteArray bytes{chars.data(), chars.size()};
    TVMFFIAny owned{};
    if (TVMFFIStringFromByteArray(&bytes, &owned) != 0) throw std::bad_alloc();
    return String(Adopt(owned));
  }
};
class Bytes : public BytesCell {};

// Optional<Function> and Optional<String> have their value type's layout (null / None = empty).
using OptionalFunction = Function;
using OptionalString = String;
// Array<...> and Map<...> are references to Array / Map objects.
using ArrayRef = ObjectRef;
using MapRef = ObjectRef;

class Module;

// The module interface. The slot order and the two fields are the ABI (see the file comment).
class FFIJIT_CXX_API ModuleObj : public Object {
 public:
  // Slot 0.
  virtual const char* kind() const = 0;
  // Slot 1: Module::ModulePropertyMask bits (1 binary-serializable, 2 runnable, 4 exportable).
  virtual int GetPropertyMask() const { return 0; }
  // Slot 2: the module's own function, or null.
  virtual OptionalFunction GetFunction(const String& name) = 0;
  // Slot 3.
  virtual bool ImplementsFunction(const String& name) { return GetFunction(name).defined(); }
  // Slot 4: JSON metadata of a function, or None.
  virtual OptionalString GetFunctionMetadata(const String&) { return OptionalString(); }
  // Slot 5.
  virtual void WriteToFile(const String&, const String&) const {
    throw ffijit::Error("RuntimeError",
                        std::string("Module[") + kind() + "] does not support WriteToFile");
  }
  // Slot 6.
  virtual ArrayRef GetWriteFormats() const {
    TVMFFIObjectHandle empty = nullptr;
    ffijit::CheckCall(FFIJITArrayCreate(nullptr, 0, &empty));
    return ObjectRef::Adopt(static_cast<TVMFFIObject*>(empty));
  }
  // Slot 7.
  virtual Bytes SaveToBytes() const {
    throw ffijit::Error("RuntimeError",
                        std::string("Module[") + kind() + "] does not support SaveToBytes");
  }
  // Slot 8.
  virtual String InspectSource(const String&) const { return String(); }
  // Slot 9: adds `other` to the imports; a RuntimeError if that would make a cycle.
  virtual void ImportModule(const Module& other);
  // Slot 10.
  virtual void ClearImports();

  // Searches this module, then (when query_imports) its imports depth first.
  OptionalFunction GetFunction(const String& name, bool query_imports);
  bool ImplementsFunction(const String& name, bool query_imports);
  OptionalString GetFunctionMetadata(const String& name, bool query_imports);

  // The imports Array (an ffijit Array of Module objects; never null for ffijit's modules).
  FFIJIT_HIDDEN const ArrayRef& imports() const noexcept { return imports_; }
  FFIJIT_HIDDEN MapRef& lookup_cache() noexcept { return import_lookup_cache_; }
  FFIJIT_HIDDEN void set_imports(ArrayRef imports) noexcept { imports_ = std::move(imports); }

  // Handle <-> C++ object: the header follows the vptr.
  FFIJIT_HIDDEN static ModuleObj* FromHandle(TVMFFIObject* handle) noexcept {
    return static_cast<ModuleObj*>(reinterpret_cast<Object*>(handle));
  }
  FFIJIT_HIDDEN TVMFFIObject* handle() noexcept { return header(); }

 protected:
  ArrayRef imports_;

 private:
  MapRef import_lookup_cache_;
};

class Module : public ObjectRef {
 public:
  Module() noexcept = default;
  explicit Module(ObjectRef ref) noexcept : ObjectRef(std::move(ref)) {}
  FFIJIT_HIDDEN ModuleObj* operator->() const noexcept { return ModuleObj::FromHandle(ptr_); }

  // Loads a module file (format by extension; see ffi.ModuleLoadFromFile).
  FFIJIT_CXX_API static Module LoadFromFile(const String& file_name);
  // Calls `callback(name, value)` for every registered context symbol, in registration order.
  FFIJIT_CXX_API static void VisitContextSymbols(
      const TypedFunction<void(String, void*)>& callback);
};

}  // namespace ffi
}  // namespace tvm

#endif  // FFIJIT_RUNTIME_TVM_FFI_CXX_H_
