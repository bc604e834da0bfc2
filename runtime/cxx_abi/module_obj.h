// Layout-compatible C++ declarations of the TVM FFI module classes (ModuleObj, Module) whose
// symbols the runtime exports; the value classes they use (ObjectRef, String, Error, ...) are the
// ones in shims.h, and module_obj.cc defines the exported members.
//
// Header-compiled TVM FFI code (user modules, TVM's own C++) treats a module as a C++
// `tvm::ffi::ModuleObj`: a vptr 8 bytes before the object header, a fixed virtual-slot order, an
// imports Array at header+24 and a lookup-cache Map at header+32. These declarations reproduce
// exactly that (and the Itanium-mangled names of the members the ABI exports), written for ffijit;
// only what the module code needs is here. The runtime compiles every file that includes this one
// with -fvisibility-inlines-hidden and defines inline exactly what TVM FFI's header defines
// inline, so that only the symbols TVM FFI's library exports (ModuleObj's vtable and typeinfo, its
// non-virtual lookups, ImportModule, ClearImports, Module::LoadFromFile and
// Module::VisitContextSymbols) leave the runtime; nothing else can interpose on the same names
// compiled into user modules from TVM FFI's own headers. Those members, like TVM FFI's, fail by
// throwing tvm::ffi::Error.
#ifndef FFIJIT_RUNTIME_CXX_ABI_MODULE_OBJ_H_
#define FFIJIT_RUNTIME_CXX_ABI_MODULE_OBJ_H_

#include <string>
#include <utility>

#include "ffijit/c_api.h"
#include "ffijit/c_ext.h"
#include "ffijit/object.h"
#include "shims.h"

#define FFIJIT_HIDDEN __attribute__((visibility("hidden")))
#define FFIJIT_CXX_API __attribute__((visibility("default")))

namespace tvm {
namespace ffi {

// The base of every C++ object: just the C header. (Not explicitly hidden: the exported ModuleObj
// derives from it.)
class Object {
 public:
  TVMFFIObject* header() noexcept { return &header_; }
  const TVMFFIObject* header() const noexcept { return &header_; }

 protected:
  TVMFFIObject header_{};
};

class FFIJIT_TVM_SHIM Function : public ObjectRef {
 public:
  Function() noexcept = default;
  explicit Function(ObjectRef ref) noexcept : ObjectRef(std::move(ref)) {}
};

// TypedFunction<R(Args...)> holds one Function; only the name matters here (it is mangled into
// Module::VisitContextSymbols).
template <typename Signature>
class FFIJIT_TVM_SHIM TypedFunction {
 public:
  Function packed;
};

// Optional<Function>: the revision's Optional of an object type (shims.h).
using OptionalFunction = OptionalObject;
using OptionalString = Optional<String>;
// Array<...> and Map<...> are references to Array / Map objects.
using ArrayRef = ObjectRef;
using MapRef = ObjectRef;

class Module;

// The module interface. The slot order and the two fields are the ABI (see the file comment):
// v0.1.13 inserts GetFunctionDoc at slot 4, moving every later slot up by one.
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
#if FFIJIT_TVM_FFI_MODULE_HAS_FUNCTION_DOC
  // Slot 4 (v0.1.13 only): the docstring of a function, or None.
  virtual OptionalString GetFunctionDoc(const String&) {
    return OptionalString();
  }
#endif
  // Slot 4 (e98b94e1) / 5 (v0.1.13): JSON metadata of a function, or None.
  virtual OptionalString GetFunctionMetadata(const String&) {
    return OptionalString();
  }
  // Slot 5 / 6; the later comments give the e98b94e1 slot.
  virtual void WriteToFile(const String&, const String&) const {
    ffijit::internal::ThrowAsTvmError(
        ffijit::RuntimeError(std::string("Module[") + kind() + "] does not support WriteToFile"));
  }
  // Slot 6.
  virtual ArrayRef GetWriteFormats() const {
    TVMFFIObjectHandle empty = nullptr;
    ffijit::CheckCall(FFIJITArrayCreate(nullptr, 0, &empty));
    return ObjectRef::Adopt(static_cast<TVMFFIObject*>(empty));
  }
  // Slot 7.
  virtual Bytes SaveToBytes() const {
    ffijit::internal::ThrowAsTvmError(
        ffijit::RuntimeError(std::string("Module[") + kind() + "] does not support SaveToBytes"));
  }
  // Slot 8.
  virtual String InspectSource(const String&) const {
    return String();
  }
  // Slot 9: adds `other` to the imports; a RuntimeError if that would make a cycle.
  virtual void ImportModule(const Module& other);
  // Slot 10.
  virtual void ClearImports();

  // Searches this module, then (when query_imports) its imports depth first.
  OptionalFunction GetFunction(const String& name, bool query_imports);
  bool ImplementsFunction(const String& name, bool query_imports);
  OptionalString GetFunctionMetadata(const String& name, bool query_imports);
#if FFIJIT_TVM_FFI_MODULE_HAS_FUNCTION_DOC
  OptionalString GetFunctionDoc(const String& name, bool query_imports);
#endif

  // The imports Array (an ffijit Array of Module objects; never null for ffijit's modules).
  FFIJIT_HIDDEN const ArrayRef& imports() const noexcept {
    return imports_;
  }
  FFIJIT_HIDDEN MapRef& lookup_cache() noexcept {
    return import_lookup_cache_;
  }
  FFIJIT_HIDDEN void set_imports(ArrayRef imports) noexcept {
    imports_ = std::move(imports);
  }

  // Handle <-> C++ object: the header follows the vptr.
  FFIJIT_HIDDEN static ModuleObj* FromHandle(TVMFFIObject* handle) noexcept {
    return static_cast<ModuleObj*>(reinterpret_cast<Object*>(handle));
  }
  FFIJIT_HIDDEN TVMFFIObject* handle() noexcept {
    return header();
  }

 protected:
  ArrayRef imports_;

 private:
  MapRef import_lookup_cache_;
};

class Module : public ObjectRef {
 public:
  Module() noexcept = default;
  explicit Module(ObjectRef ref) noexcept : ObjectRef(std::move(ref)) {}
  FFIJIT_HIDDEN ModuleObj* operator->() const noexcept { return ModuleObj::FromHandle(data_); }

  // Loads a module file (format by extension; see ffi.ModuleLoadFromFile).
  FFIJIT_CXX_API static Module LoadFromFile(const String& file_name);
  // Calls `callback(name, value)` for every registered context symbol, in registration order.
  FFIJIT_CXX_API static void VisitContextSymbols(
      const TypedFunction<void(String, void*)>& callback);
};

}  // namespace ffi
}  // namespace tvm

#endif  // FFIJIT_RUNTIME_CXX_ABI_MODULE_OBJ_H_
