// Declarations shared by the files of the `ffijit._core` CPython extension: the Python types,
// the argument packer (Python -> TVMFFIAny), the result boxer (TVMFFIAny -> Python) and the
// error bridge. The extension sits on ffijit's C ABI (c_api.h, c_ext.h, bridge.h) like any other
// caller of the packed convention.
#ifndef FFIJIT_PYTHON_FFIJIT_PY_H_
#define FFIJIT_PYTHON_FFIJIT_PY_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

#include "ffijit/c_api.h"
#include "ffijit/c_ext.h"
#include "ffijit/jit/host_entry.h"

namespace ffijit::python {

// Every ffijit.Object (and subclass) holds one strong reference to an ABI object.
struct PyFFIObject {
  PyObject_HEAD TVMFFIObject* handle;
};

// What the front end knows of a function made from metadata, per positional argument (bit i for
// argument #i, the first 64): which are `ndarray` parameters, read only during the call, so a
// numpy array may travel as a DLTensor view of its buffer; which are `ptr` parameters, which
// take what ctypes' c_void_p takes (ints, ctypes pointers, arrays, byref, buffers); which are
// integer and floating-point scalar parameters, which take what Python's numeric protocols give
// (__index__, __float__: numpy scalars and 0-d arrays).
struct ArgumentKinds {
  uint64_t tensor_views = 0;
  uint64_t pointers = 0;
  uint64_t integers = 0;
  uint64_t floats = 0;
};

// ffijit.Function adds its vectorcall entry, whether calls release the GIL, its arguments' kinds,
// and the method def of the builtin function object users call. CPython's specialised call path
// serves exact builtin functions only, so a Function reaches Python as a builtin whose __self__ it
// is; the def's ml_meth is the current entry (METH_FASTCALL | METH_KEYWORDS): the counting entry,
// the generic one, or the entry the JIT generated for this function (entry.cc), swapped under the
// GIL. Calling the Function object itself runs the same entry.
struct PyFFIFunction {
  PyFFIObject base;
  vectorcallfunc vectorcall;
  bool release_gil;
  ArgumentKinds kinds;
  PyMethodDef method;
  int64_t calls_until_entry;  // counted down by CountingEntry
  PyObject* name;             // a str holding method.ml_name's text
  PyObject* doc;              // a str holding method.ml_doc's text, or NULL
  const char* lock_name;      // ml_name's text, interned for the life of the process
};

// Which call holds the GIL without releasing it: the lock_name of the function a thread calls
// with the GIL held (NULL: none), and how many such calls began, written by that thread (the
// generic path and generated entries) as relaxed atomic words and read by callbacks from native
// threads that wait for the GIL.
extern const void* g_lock_holder;
extern uint64_t g_lock_calls;
// Records a call made with the GIL held for its duration.
class HoldingLock {
 public:
  explicit HoldingLock(const char* name)
      : previous_(__atomic_load_n(&g_lock_holder, __ATOMIC_RELAXED)) {
    __atomic_store_n(&g_lock_holder, static_cast<const void*>(name), __ATOMIC_RELAXED);
    __atomic_store_n(&g_lock_calls, __atomic_load_n(&g_lock_calls, __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELAXED);
  }
  ~HoldingLock() { __atomic_store_n(&g_lock_holder, previous_, __ATOMIC_RELAXED); }
  HoldingLock(const HoldingLock&) = delete;
  HoldingLock& operator=(const HoldingLock&) = delete;

 private:
  const void* previous_;
};
// `name`'s text kept for the life of the process (one copy per distinct name).
const char* InternName(const char* name);

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
// 1 when `obj` is a ctypes.c_void_p or ctypes function pointer (passed as an opaque pointer),
// 0 when not, -1 with an exception set.
int IsCtypesPointer(PyObject* obj);

// ---- object wrappers (objects.cc, module.cc) ----
inline TVMFFIObject* HandleOf(PyObject* self) {
  return reinterpret_cast<PyFFIObject*>(self)->handle;
}
// A heap type of ffijit.Object's layout (or a larger one beginning with it: `size`),
// subclassable, added to `module` as `attribute`.
PyTypeObject* MakeObjectType(PyObject* module, const char* name, PyType_Slot* slots,
                             PyTypeObject* base, const char* attribute,
                             int size = sizeof(PyFFIObject));
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
bool InitModuleType(PyObject* module);
// False, with the OSError Python's open() would raise (FileNotFoundError, PermissionError,
// IsADirectoryError; `filename` is `path`), when the file `path` (a str) cannot be read.
bool CheckFileReadable(PyObject* path);

// ---- Device and DataType (dtypes.cc) ----
bool InitValueTypes(PyObject* module);
PyObject* NewDevice(DLDevice device);
PyObject* NewDataType(DLDataType dtype);

// ---- tensors (tensor.cc) ----
bool InitTensorType(PyObject* module);
// numpy.ndarray once one was seen (numpy is never imported by ffijit), else NULL.
extern PyTypeObject* g_numpy_array_type;
// Whether obj is exactly a numpy.ndarray (recognised by name the first time).
inline bool IsNumpyArray(PyObject* obj) {
  if (Py_TYPE(obj) == g_numpy_array_type) return true;
  if (g_numpy_array_type != nullptr || std::strcmp(Py_TYPE(obj)->tp_name, "numpy.ndarray") != 0) {
    return false;
  }
  g_numpy_array_type = Py_TYPE(obj);
  Py_INCREF(g_numpy_array_type);
  return true;
}
// The DLDataType of a buffer's struct-module format (native byte order); false if it has none.
bool DataTypeOfFormat(const char* format, Py_ssize_t itemsize, DLDataType* out);
// Whether `obj` looks like a tensor producer (numpy, __dlpack__); sets *out to a new owned Tensor
// object on success. Returns 1 converted, 0 not a tensor producer, -1 error set.
int TensorFromPython(PyObject* obj, TVMFFIObject** out);

// ---- errors (errors.cc) ----
// Takes the thread's raised error and sets the matching Python exception. Always returns NULL.
PyObject* RaiseFromFFI();
// Raises the current Python exception as the thread's TVM FFI error (for a callback's -1). The
// exception object is remembered, so the same object comes back to a Python caller.
void RaisePythonErrorAsFFI();
// Reports the thread's raised error (a plain-convention callback's, which its native caller
// cannot see) to sys.unraisablehook as "Exception ignored on calling ffijit callback `decl`",
// with `obj`; the error stays raised. The original exception when it came from Python.
void WriteUnraisableFromRaised(const char* declaration, PyObject* obj);
// The same for `error` (borrowed), raised nowhere.
void WriteUnraisable(TVMFFIObject* error, const char* declaration, PyObject* obj);
// The same report written to the C stderr in the layout of Python's default hook, with
// `object_text` for the object's repr, for where Python cannot be entered: needs no GIL.
void WriteUnraisableToStderr(TVMFFIObject* error, const char* declaration,
                             const char* object_text) noexcept;
// A plain-convention callback's error, raised in this thread, that this thread cannot report:
// it lacks the GIL while a call holding the GIL runs (and may be waiting for this thread). Kept,
// with a reference to `function` (the Function the callback calls), for sys.unraisablehook once
// the main thread runs Python again, or for stderr; takes no lock but the pending calls' queue's.
// The error stays raised.
void HoldUnraisable(TVMFFIObject* function, const char* declaration,
                    const char* object_text) noexcept;
// Writes the errors still held to stderr (Python has exited).
void WriteHeldToStderr();
// Reports the errors held to sys.unraisablehook, oldest first (with the GIL).
void ReportHeldUnraisableNow();
// The errors held, newest first (a HeldError*, NULL when none): pushed by any thread, taken all
// at once by the report, and read by generated entries (FFIJITHostModel::held_work), hence a
// plain word under __atomic builtins.
extern void* g_held_unraisable;
// What a call that held the GIL does as it returns: report what threads that gave up waiting for
// the GIL held meanwhile.
inline void ReportHeldUnraisable() {
  if (__atomic_load_n(&g_held_unraisable, __ATOMIC_RELAXED) != nullptr) ReportHeldUnraisableNow();
}
// The Python exception type for a TVM FFI error kind.
PyObject* ExceptionTypeForKind(const char* kind, size_t size);
bool InitErrors(PyObject* module);

// ---- conversions (convert.cc, from_any.cc) ----
class ArgPack;
// Converts any Python value into *out (borrowing into `pack`, or owned when pack is NULL); false
// with a Python exception set. `where` names the value in messages (an argument's position).
bool ConvertValue(PyObject* obj, TVMFFIAny* out, ArgPack* pack, Py_ssize_t where);

// An exact int's value when it fits in int64; false otherwise (the caller takes the full path).
// CPython's small ints are read in place, as Cython does: PyLong_AsLongLongAndOverflow costs
// more than the rest of a conversion.
inline bool FastInt64(PyObject* obj, int64_t* out) {
#if PY_VERSION_HEX >= 0x030C0000
  if (!PyUnstable_Long_IsCompact(reinterpret_cast<PyLongObject*>(obj))) return false;
  *out = PyUnstable_Long_CompactValue(reinterpret_cast<PyLongObject*>(obj));
  return true;
#else
  const auto* number = reinterpret_cast<const PyLongObject*>(obj);
  Py_ssize_t size = Py_SIZE(obj);
  switch (size) {
    case 0:
      *out = 0;
      return true;
    case 1:
      *out = static_cast<int64_t>(number->ob_digit[0]);
      return true;
    case -1:
      *out = -static_cast<int64_t>(number->ob_digit[0]);
      return true;
    case 2:
    case -2: {
      int64_t magnitude = static_cast<int64_t>(number->ob_digit[0]) |
                          static_cast<int64_t>(number->ob_digit[1]) << PyLong_SHIFT;
      *out = size > 0 ? magnitude : -magnitude;
      return true;
    }
    default:
      return false;
  }
#endif
}

// The conversions every call makes (exact int, float, None, bool), in place; false when `obj` is
// anything else, which ConvertValue handles (with the same results for these types).
inline bool ConvertScalar(PyObject* obj, TVMFFIAny* out) {
  PyTypeObject* type = Py_TYPE(obj);
  out->zero_padding = 0;
  if (type == &PyLong_Type) {
    out->type_index = kTVMFFIInt;
    return FastInt64(obj, &out->v_int64);
  }
  if (type == &PyFloat_Type) {
    out->type_index = kTVMFFIFloat;
    out->v_float64 = PyFloat_AS_DOUBLE(obj);
    return true;
  }
  if (obj == Py_None) {
    out->type_index = kTVMFFINone;
    out->v_int64 = 0;
    return true;
  }
  if (type == &PyBool_Type) {
    out->type_index = kTVMFFIBool;
    out->v_int64 = obj == Py_True ? 1 : 0;
    return true;
  }
  return false;
}

// A numpy array's buffer exported for a call and the DLTensor describing it.
struct TensorView {
  Py_buffer buffer;
  DLTensor tensor;
  int64_t strides[8];
  int64_t shape[8];          // BorrowCompactNdarray's copy (the array's own may be replaced)
  PyObject* held = nullptr;  // set by BorrowCompactNdarray (no buffer export): a strong reference
};
// Describes a numpy array's buffer as a DLTensor view in *view (released with PyBuffer_Release of
// view->buffer) and *out a DLTensorPtr to it: true; false (nothing held, no error set) when the
// buffer cannot be described so, and the Tensor path decides.
bool BorrowTensorView(PyObject* obj, TensorView* view, TVMFFIAny* out);
// Read in place for generated entries (in_place.cc): a compact ASCII str's bytes (NULL for any
// other str, or one with a NUL inside), where such strs keep them (for the entry to read without a
// call), and an exact ctypes.c_void_p as an opaque pointer (1; 0 leaves it to the generic path).
const char* StrData(void* obj);
void DescribeCompactAsciiStrs(FFIJITHostModel* m);
int PointerToAny(void* obj, TVMFFIAny* out);
// The same description of an exact numpy ndarray read from its fields (in_place.cc), for the
// compact, writable ones with a dtype the buffer protocol's format names; false (nothing held)
// for any other array, which BorrowTensorView then describes. Released by view->held.
bool BorrowCompactNdarray(PyObject* obj, TensorView* view);
// The reader behind it: *t describes an exact numpy ndarray of at most `max_ndim` dimensions that
// is compact (with `exact_strides`, every stride exactly the compact one, so a Tensor keeping
// strides gets those the buffer protocol would give), writable, aligned and of such a dtype, its
// shape pointing at the array's own (valid while the GIL is held and the array unchanged);
// false otherwise. Holds nothing.
bool ReadCompactNdarray(PyObject* obj, DLTensor* t, int max_ndim, bool exact_strides);

// Arguments of one call: converted values plus what they borrow or own until the call returns.
class ArgPack {
 public:
  static constexpr int kInline = 8;
  // `kinds`: the callee's arguments, as far as known (nothing known: every array becomes a
  // Tensor object, no str is refused).
  explicit ArgPack(ArgumentKinds kinds = {}) : kinds_(kinds) {}
  ~ArgPack() {
    if (num_owned_ != 0 || values_ != inline_values_ || bytes_overflow_ != nullptr ||
        num_views_ != 0 || num_buffers_ != 0) {
      ReleaseAll();
    }
  }
  ArgPack(const ArgPack&) = delete;
  ArgPack& operator=(const ArgPack&) = delete;
  // Sizes the pack for n values; false with MemoryError set.
  bool Reserve(Py_ssize_t n) { return n <= capacity_ || Grow(n); }
  TVMFFIAny* values() { return values_; }
  // Converts `obj` into values()[i]; false with a Python exception set naming argument #i.
  bool Convert(PyObject* obj, Py_ssize_t i) {
    if (kinds_.pointers != 0 && IsPointerArgument(i)) return ConvertPointer(obj, &values_[i], i);
    return ConvertScalar(obj, &values_[i]) || ConvertAsciiStr(obj, &values_[i]) ||
           ConvertDeviceOrDataType(obj, &values_[i]) || ConvertValue(obj, &values_[i], this, i);
  }
  // Converts `obj` for the `ptr` parameter #where as ctypes' c_void_p would take it (None, an int
  // address, a ctypes pointer, array, byref() or c_char_p), or an object with a contiguous buffer
  // (BorrowBuffer); false with a TypeError naming the argument for anything else (a str too).
  bool ConvertPointer(PyObject* obj, TVMFFIAny* out, Py_ssize_t where);
  // The pointer to `obj`'s contiguous buffer (read-only ones too), exported until the call
  // returns; false with a TypeError for a buffer that is not contiguous.
  bool BorrowBuffer(PyObject* obj, TVMFFIAny* out, Py_ssize_t where);
  bool IsPointerArgument(Py_ssize_t where) const {
    return where >= 0 && where < 64 && (kinds_.pointers >> where & 1) != 0;
  }
  // 1: argument #where is an integer parameter; 2: a floating-point one; 0: neither.
  int NumberArgument(Py_ssize_t where) const {
    if (where < 0 || where >= 64) return 0;
    if ((kinds_.integers >> where & 1) != 0) return 1;
    return (kinds_.floats >> where & 1) != 0 ? 2 : 0;
  }
  // Takes ownership of an object reference released after the call; false (the reference
  // released, MemoryError set) when it cannot be recorded.
  bool Own(TVMFFIObject* obj);
  // Room for a borrowed TVMFFIByteArray that lives until the call returns.
  TVMFFIByteArray* ByteArraySlot();
  // Tries to pass `obj` (a numpy array) as a DLTensor view of its buffer, held until the call
  // returns: 1 done, 0 not possible here (the caller makes a Tensor), -1 error set.
  int BorrowTensor(PyObject* obj, TVMFFIAny* out, Py_ssize_t where);

 private:
  // An exact str of ASCII characters, read in place (its bytes are its UTF-8); false for any
  // other value, which ConvertValue handles the same way.
  static bool ConvertAsciiStr(PyObject* obj, TVMFFIAny* out) {
    if (Py_TYPE(obj) != &PyUnicode_Type || !PyUnicode_IS_COMPACT_ASCII(obj)) return false;
    Py_ssize_t size = PyUnicode_GET_LENGTH(obj);
    const char* data = static_cast<const char*>(PyUnicode_DATA(obj));
    // A NUL inside: ConvertValue keeps the length (a SmallStr or a Str object).
    if (std::memchr(data, 0, static_cast<size_t>(size)) != nullptr) return false;
    out->zero_padding = 0;
    if (size <= 7) {
      out->type_index = kTVMFFISmallStr;
      out->small_str_len = static_cast<uint32_t>(size);
      out->v_int64 = 0;
      std::memcpy(out->v_bytes, data, static_cast<size_t>(size));
      return true;
    }
    out->type_index = kTVMFFIRawStr;
    out->v_c_str = data;
    return true;
  }

  // ffijit.Device and ffijit.DataType, passed by value; false for anything else.
  static bool ConvertDeviceOrDataType(PyObject* obj, TVMFFIAny* out) {
    PyTypeObject* type = Py_TYPE(obj);
    if (type == g_device_type) {
      out->type_index = kTVMFFIDevice;
      out->zero_padding = 0;
      out->v_int64 = 0;
      out->v_device = reinterpret_cast<PyFFIDevice*>(obj)->device;
      return true;
    }
    if (type == g_datatype_type) {
      out->type_index = kTVMFFIDataType;
      out->zero_padding = 0;
      out->v_int64 = 0;
      out->v_dtype = reinterpret_cast<PyFFIDataType*>(obj)->dtype;
      return true;
    }
    return false;
  }

  bool Grow(Py_ssize_t n);
  void ReleaseAll();

  TVMFFIAny inline_values_[kInline];
  TVMFFIAny* values_ = inline_values_;
  Py_ssize_t capacity_ = kInline;
  TVMFFIObject* inline_owned_[kInline];
  TVMFFIObject** owned_ = inline_owned_;
  Py_ssize_t num_owned_ = 0, owned_capacity_ = kInline;
  TVMFFIByteArray inline_bytes_[4];
  TVMFFIByteArray* bytes_overflow_ = nullptr;
  int num_bytes_ = 0, bytes_overflow_capacity_ = 0;
  ArgumentKinds kinds_;
  int num_views_ = 0;
  TensorView views_[2];
  // Buffers exported for `ptr` parameters, released after the call.
  int num_buffers_ = 0;
  Py_buffer* buffers_ = nullptr;  // room for one per argument, allocated at the first
};

// What a converted value is, for messages: an argument's position (>= 0) or one of these.
constexpr Py_ssize_t kWhereElement = -1;
constexpr Py_ssize_t kWhereResult = -2;
constexpr Py_ssize_t kWhereKeyword = -3;  // a keyword argument no parameter is named after
// Converts a Python value into an owned Any (a callback's result, an Array element): strings
// and bytes become objects, never borrowed views. false with a Python exception set.
bool ToOwnedAny(PyObject* obj, TVMFFIAny* out, Py_ssize_t where);
// Boxes an owned Any as a Python value, consuming it. NULL with an exception set.
PyObject* FromOwnedAny(TVMFFIAny* any);
// Boxes a borrowed Any view (a callback's argument) as a new Python value.
PyObject* FromAnyView(const TVMFFIAny* any);

// ---- functions (function.cc, registry.cc, callbacks.cc) ----
bool InitFunctionType(PyObject* module);
// The registry functions of the module (registry.cc).
bool InitRegistry(PyObject* module);
// A new ffijit.Function wrapping `handle` (stolen).
PyObject* WrapFunction(TVMFFIObject* handle);
// A new Function object (owned) calling the Python callable `callable`; NULL with error set.
// `pointers_as_ints`: pointer arguments arrive as int addresses (a C function pointer's callback,
// as ctypes does), else as ctypes.c_void_p (a packed callable, as TVM FFI does).
TVMFFIObject* FunctionFromCallable(PyObject* callable, bool pointers_as_ints = false);
// The Python callable a Function made by FunctionFromCallable calls (borrowed), else NULL.
PyObject* CallableOf(TVMFFIObject* handle);
bool InitCallbacks(PyObject* module);

// Calls `func` with packed values, the GIL held or released, and boxes the result.
// `lock_name`: the function named when a call holding the GIL makes a native thread's callback
// give up waiting for it.
PyObject* CallPacked(TVMFFIObject* func, TVMFFIAny* args, int32_t n, bool release_gil,
                     const char* lock_name = "a function");
// After a packed call returned rc != 0: the Python exception for it. Always returns NULL.
PyObject* RaiseCallFailure(int rc);
// The ffijit.Function behind a Python callable: the Function object itself or the builtin
// function WrapFunction made for it; NULL for anything else (no error set).
PyFFIFunction* FunctionOf(PyObject* obj);
// The generic entry of every Function: positional and keyword arguments converted by ArgPack.
PyObject* GenericEntry(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);

// ---- generated entries (entry.cc) ----
// One function's generated entry, kept with what the front end knows of it (its traits).
struct EntryState {
  FFIJITHostEntry* entry = nullptr;    // the LLVM entry, owned
  std::string refusal;                 // why it has none; "" while not tried
  FFIJITHostEntry* stencil = nullptr;  // the stencil entry, owned
  std::string stencil_refusal;         // why it has none; "" while not tried
};
// The entry state of a function made by _make_function; NULL for any other.
EntryState* EntryStateOf(TVMFFIObject* handle);
// The first entry of a new wrapper and its countdown, by the JIT policy (FFIJIT_JIT).
void ChooseFirstEntry(PyFFIFunction* function);
// Switches `function` to its generated entry, compiling it once per function; false with the
// reason in *why when it has none.
bool InstallEntry(PyFFIFunction* function, std::string* why);
// The same for its stencil entry (made in microseconds), which counts calls on to the LLVM entry.
bool InstallStencilEntry(PyFFIFunction* function, std::string* why);
// Pins `function` to the generic entry (no entry is made for it later).
void InstallGenericEntry(PyFFIFunction* function);
bool InitEntries(PyObject* module);

// Reads a Python str/bytes argument as UTF-8 bytes (for names, paths, metadata).
bool Utf8Of(PyObject* obj, const char* what, const char** data, Py_ssize_t* size);

// Whether Python may be entered from a native thread or a deleter: false once the interpreter
// is finalising (a thread taking the GIL then would be stopped for good) or gone.
extern std::atomic<bool> g_python_exited;
inline bool PythonIsAvailable() {
#if PY_VERSION_HEX >= 0x030D0000
  return !g_python_exited.load(std::memory_order_acquire) && !Py_IsFinalizing();
#else
  return !g_python_exited.load(std::memory_order_acquire) && !_Py_IsFinalizing();
#endif
}

}  // namespace ffijit::python

#endif  // FFIJIT_PYTHON_FFIJIT_PY_H_
