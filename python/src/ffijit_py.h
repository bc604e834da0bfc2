// Declarations shared by the files of the `ffijit._core` CPython extension: the Python types,
// the argument packer (Python -> TVMFFIAny), the result boxer (TVMFFIAny -> Python) and the
// error bridge. The extension sits on ffijit's C ABI (c_api.h, c_ext.h, bridge.h) like any other
// caller of the packed convention.
#ifndef FFIJIT_PYTHON_FFIJIT_PY_H_
#define FFIJIT_PYTHON_FFIJIT_PY_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <string>

#include "ffijit/c_api.h"
#include "ffijit/c_ext.h"

namespace ffijit::python {

// Every ffijit.Object (and subclass) holds one strong reference to an ABI object.
struct PyFFIObject {
  PyObject_HEAD TVMFFIObject* handle;
};

// ffijit.Function adds its vectorcall entry (swappable: the generated-entry issue replaces it per
// function) and whether calls release the GIL.
struct PyFFIFunction {
  PyFFIObject base;
  vectorcallfunc vectorcall;
  bool release_gil;
};

struct PyFFIDevice {
  PyObject_HEAD DLDevice device;
};

struct PyFFIDataType {
  PyObject_HEAD DLDataType dtype;
};

// The types, created at module init.
extern PyTypeObject* g_object_type;
extern PyTypeObject* g_function_type;
extern PyTypeObject* g_array_type;
extern PyTypeObject* g_map_type;
extern PyTypeObject* g_shape_type;
extern PyTypeObject* g_tensor_type;
extern PyTypeObject* g_module_type;
extern PyTypeObject* g_device_type;
extern PyTypeObject* g_datatype_type;
// ffijit.Error: the base of exceptions for error kinds Python has no type for.
extern PyObject* g_error_base;
// ctypes.c_void_p, looked up lazily (ctypes is imported only when used).
PyObject* CtypesVoidPointerType();

// ---- object wrappers (objects.cc) ----
// A new Python wrapper of `handle` of the most specific wrapper type; steals the reference.
PyObject* WrapObject(TVMFFIObject* handle);
// A new wrapper of `handle` (stolen) of exactly `type`.
PyObject* WrapAs(PyTypeObject* type, TVMFFIObject* handle);
bool IsFFIObject(PyObject* obj);
// Releases an owned Any's object reference, if it holds one.
inline void ReleaseAny(TVMFFIAny* any) {
  if (any->type_index >= kTVMFFIStaticObjectBegin && any->v_obj != nullptr) {
    TVMFFIObjectDecRef(any->v_obj);
  }
  any->type_index = kTVMFFINone;
  any->v_int64 = 0;
}
// A Python str of an Str object's or small string's bytes.
PyObject* StrFromBytes(const char* data, size_t size);
bool InitObjectTypes(PyObject* module);

// ---- Device and DataType (dtypes.cc) ----
bool InitValueTypes(PyObject* module);
PyObject* NewDevice(DLDevice device);
PyObject* NewDataType(DLDataType dtype);

// ---- tensors (tensor.cc) ----
bool InitTensorType(PyObject* module);
// Whether `obj` looks like a tensor producer (numpy, __dlpack__); sets *out to a new owned Tensor
// object on success. Returns 1 converted, 0 not a tensor producer, -1 error set.
int TensorFromPython(PyObject* obj, TVMFFIObject** out);

// ---- errors (errors.cc) ----
// Takes the thread's raised error and sets the matching Python exception. Always returns NULL.
PyObject* RaiseFromFFI();
// Raises the current Python exception as the thread's TVM FFI error (for a callback's -1). The
// exception object is remembered, so the same object comes back to a Python caller.
void RaisePythonErrorAsFFI();
// The Python exception type for a TVM FFI error kind.
PyObject* ExceptionTypeForKind(const char* kind, size_t size);
bool InitErrors(PyObject* module);

// ---- conversions (convert.cc) ----
// Arguments of one call: converted values plus what they borrow or own until the call returns.
class ArgPack {
 public:
  static constexpr int kInline = 8;
  ArgPack() = default;
  ~ArgPack();
  ArgPack(const ArgPack&) = delete;
  ArgPack& operator=(const ArgPack&) = delete;
  // Sizes the pack for n values; false with MemoryError set.
  bool Reserve(Py_ssize_t n);
  TVMFFIAny* values() { return values_; }
  // Converts `obj` into values()[i]; false with a Python exception set naming argument #i.
  bool Convert(PyObject* obj, Py_ssize_t i);
  // Takes ownership of an object reference released after the call; false (the reference
  // released, MemoryError set) when it cannot be recorded.
  bool Own(TVMFFIObject* obj);
  // Room for a borrowed TVMFFIByteArray that lives until the call returns.
  TVMFFIByteArray* ByteArraySlot();

 private:
  TVMFFIAny inline_values_[kInline];
  TVMFFIAny* values_ = inline_values_;
  Py_ssize_t capacity_ = kInline;
  TVMFFIObject* inline_owned_[kInline];
  TVMFFIObject** owned_ = inline_owned_;
  Py_ssize_t num_owned_ = 0, owned_capacity_ = kInline;
  TVMFFIByteArray inline_bytes_[4];
  TVMFFIByteArray* bytes_overflow_ = nullptr;
  int num_bytes_ = 0, bytes_overflow_capacity_ = 0;
};

// What a converted value is, for messages: an argument's position (>= 0) or one of these.
constexpr Py_ssize_t kWhereElement = -1;
constexpr Py_ssize_t kWhereResult = -2;
// Converts a Python value into an owned Any (a callback's result, an Array element): strings
// and bytes become objects, never borrowed views. false with a Python exception set.
bool ToOwnedAny(PyObject* obj, TVMFFIAny* out, Py_ssize_t where);
// Boxes an owned Any as a Python value, consuming it. NULL with an exception set.
PyObject* FromOwnedAny(TVMFFIAny* any);
// Boxes a borrowed Any view (a callback's argument) as a new Python value.
PyObject* FromAnyView(const TVMFFIAny* any);

// ---- functions (function.cc, callbacks.cc) ----
bool InitFunctionType(PyObject* module);
// A new ffijit.Function wrapping `handle` (stolen).
PyObject* WrapFunction(TVMFFIObject* handle);
// A new Function object (owned) calling the Python callable `callable`; NULL with error set.
TVMFFIObject* FunctionFromCallable(PyObject* callable);
bool InitCallbacks(PyObject* module);

// Calls `func` with packed values, the GIL held or released, and boxes the result.
PyObject* CallPacked(TVMFFIObject* func, TVMFFIAny* args, int32_t n, bool release_gil);

// Reads a Python str/bytes argument as UTF-8 bytes (for names, paths, metadata).
bool Utf8Of(PyObject* obj, const char* what, const char** data, Py_ssize_t* size);

// Set while the interpreter finalises: deleters running later must not touch Python.
extern bool g_python_finalizing;

}  // namespace ffijit::python

#endif  // FFIJIT_PYTHON_FFIJIT_PY_H_
