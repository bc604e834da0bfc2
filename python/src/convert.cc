// Python values -> TVMFFIAny: the argument packer of every call from Python (borrowing what the
// call only reads), and owned values for containers and callback results (the way back, the
// boxing of results and callback arguments, is from_any.cc's).
//
// The fast path tests exact types in the order calls use them (int, float, None, bool, str,
// ffijit objects); everything else (subclasses, bytes, containers, tensors, callables, ctypes
// pointers, numpy scalars) takes the slow path. Both paths agree: a value converts the same way
// whichever path sees it.
// Python.h (through ffijit_py.h) comes before every standard header, as CPython requires.
#include "ffijit_py.h"

#include <cstring>
#include <new>

namespace ffijit::python {
namespace {

// "argument #3" for where >= 0, else what kind of value it is; formatted only on error.
const char* WhereText(Py_ssize_t where, char (&text)[48]) {
  if (where >= 0) {
    PyOS_snprintf(text, sizeof(text), "argument #%zd", where);
    return text;
  }
  if (where == kWhereKeyword) return "keyword argument";
  return where == kWhereResult ? "callback result" : "container element";
}

inline void SetPod(TVMFFIAny* out, int32_t type_index) {
  out->type_index = type_index;
  out->zero_padding = 0;
  out->v_int64 = 0;
}

// Keeps an object made for the call: a borrowed argument owns it through the pack, an owned
// value through `out` itself.
[[nodiscard]] inline bool StoreObject(TVMFFIObject* made, TVMFFIAny* out, ArgPack* pack) {
  SetPod(out, made->type_index);
  out->v_obj = made;
  return pack == nullptr || pack->Own(made);
}

bool IntOverflow(PyObject* obj, Py_ssize_t where) {
  char text[48];
  PyErr_Format(PyExc_ValueError,
               "%s: the Python int %R does not fit in 64 bits (TVM FFI passes integers as int64)",
               WhereText(where, text), obj);
  return false;
}

bool FromInt(PyObject* obj, TVMFFIAny* out, Py_ssize_t where) {
  int overflow = 0;
  long long value = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (overflow != 0) return IntOverflow(obj, where);
  if (value == -1 && PyErr_Occurred()) return false;
  SetPod(out, kTVMFFIInt);
  out->v_int64 = value;
  return true;
}

bool FromStr(PyObject* obj, TVMFFIAny* out, ArgPack* pack, Py_ssize_t where) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(obj, &size);
  if (data == nullptr) {
    char text[48];
    PyErr_Format(PyExc_ValueError, "%s: the str cannot be encoded as UTF-8",
                 WhereText(where, text));
    return false;
  }
  // A NUL inside travels with the length (a SmallStr or a Str object), never as a RawStr that
  // would end there: a `str` parameter (a C string) then refuses it in the executor, with the
  // message every caller gets.
  bool has_nul = std::memchr(data, 0, static_cast<size_t>(size)) != nullptr;
  if (size <= 7) {
    SetPod(out, kTVMFFISmallStr);
    out->small_str_len = static_cast<uint32_t>(size);
    std::memcpy(out->v_bytes, data, static_cast<size_t>(size));
    return true;
  }
  // A borrowed C string serves when the text has no NUL inside (the str outlives the call);
  // otherwise, and for owned values, a Str object.
  if (pack != nullptr && !has_nul) {
    SetPod(out, kTVMFFIRawStr);
    out->v_c_str = data;
    return true;
  }
  TVMFFIByteArray bytes{data, static_cast<size_t>(size)};
  TVMFFIAny made;
  if (TVMFFIStringFromByteArray(&bytes, &made) != 0) {
    RaiseFromFFI();
    return false;
  }
  *out = made;
  return pack == nullptr || made.type_index < kTVMFFIStaticObjectBegin || pack->Own(made.v_obj);
}

bool FromBytesLike(const char* data, Py_ssize_t size, TVMFFIAny* out, ArgPack* pack) {
  if (size <= 7) {
    SetPod(out, kTVMFFISmallBytes);
    out->small_str_len = static_cast<uint32_t>(size);
    std::memcpy(out->v_bytes, data, static_cast<size_t>(size));
    return true;
  }
  if (pack != nullptr) {
    TVMFFIByteArray* slot = pack->ByteArraySlot();
    if (slot == nullptr) return false;
    *slot = TVMFFIByteArray{data, static_cast<size_t>(size)};
    SetPod(out, kTVMFFIByteArrayPtr);
    out->v_ptr = slot;
    return true;
  }
  TVMFFIByteArray bytes{data, static_cast<size_t>(size)};
  if (TVMFFIBytesFromByteArray(&bytes, out) != 0) {
    RaiseFromFFI();
    return false;
  }
  return true;
}

// Converts `n` Python values into owned Anys in `items`; on failure releases what it made.
bool ConvertOwnedItems(PyObject* const* objs, Py_ssize_t n, TVMFFIAny* items, Py_ssize_t where) {
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!ConvertValue(objs[i], &items[i], nullptr, where)) {
      for (Py_ssize_t j = 0; j < i; ++j) ReleaseAny(&items[j]);
      return false;
    }
  }
  return true;
}

bool FromSequence(PyObject* obj, TVMFFIAny* out, ArgPack* pack, Py_ssize_t where) {
  // A tuple snapshot: converting an element may run Python code (__index__, __dlpack__) that
  // changes a list under us.
  PyObject* items_tuple = PyList_Check(obj) ? PyList_AsTuple(obj) : Py_NewRef(obj);
  if (items_tuple == nullptr) return false;
  Py_ssize_t n = PyTuple_GET_SIZE(items_tuple);
  TVMFFIAny* items = n > 0 ? new (std::nothrow) TVMFFIAny[static_cast<size_t>(n)] : nullptr;
  if (n > 0 && items == nullptr) {
    Py_DECREF(items_tuple);
    PyErr_NoMemory();
    return false;
  }
  bool ok = false;
  if (Py_EnterRecursiveCall(" while converting a list or tuple to an Array") == 0) {
    ok = ConvertOwnedItems(&PyTuple_GET_ITEM(items_tuple, 0), n, items, where);
    Py_LeaveRecursiveCall();
  }
  Py_DECREF(items_tuple);
  TVMFFIObjectHandle array = nullptr;
  if (ok) {
    int rc = FFIJITArrayCreate(items, n, &array);
    for (Py_ssize_t i = 0; i < n; ++i) ReleaseAny(&items[i]);
    if (rc != 0) {
      RaiseFromFFI();
      ok = false;
    }
  }
  delete[] items;
  if (!ok) return false;
  return StoreObject(static_cast<TVMFFIObject*>(array), out, pack);
}

bool FromDict(PyObject* obj, TVMFFIAny* out, ArgPack* pack, Py_ssize_t where) {
  // A snapshot of the items, for the same reason as FromSequence's.
  PyObject* pairs = PyDict_Items(obj);
  if (pairs == nullptr) return false;
  Py_ssize_t n = PyList_GET_SIZE(pairs);
  TVMFFIAny* keys = n > 0 ? new (std::nothrow) TVMFFIAny[static_cast<size_t>(2 * n)] : nullptr;
  if (n > 0 && keys == nullptr) {
    Py_DECREF(pairs);
    PyErr_NoMemory();
    return false;
  }
  TVMFFIAny* values = keys + n;
  Py_ssize_t i = 0;
  bool ok = Py_EnterRecursiveCall(" while converting a dict to a Map") == 0;
  if (ok) {
    for (; i < n; ++i) {
      PyObject* pair = PyList_GET_ITEM(pairs, i);
      if (!ConvertValue(PyTuple_GET_ITEM(pair, 0), &keys[i], nullptr, where)) {
        ok = false;
        break;
      }
      if (!ConvertValue(PyTuple_GET_ITEM(pair, 1), &values[i], nullptr, where)) {
        ReleaseAny(&keys[i]);
        ok = false;
        break;
      }
    }
    Py_LeaveRecursiveCall();
  }
  Py_DECREF(pairs);
  TVMFFIObjectHandle map = nullptr;
  if (ok && FFIJITMapCreate(keys, values, i, &map) != 0) {
    RaiseFromFFI();
    ok = false;
  }
  for (Py_ssize_t j = 0; j < i; ++j) {
    ReleaseAny(&keys[j]);
    ReleaseAny(&values[j]);
  }
  delete[] keys;
  if (!ok) return false;
  return StoreObject(static_cast<TVMFFIObject*>(map), out, pack);
}

// A ctypes.c_void_p or function pointer: the pointer it stores (NULL passes as None). Read
// through the buffer protocol, which exposes ctypes' storage without an attribute lookup.
bool FromCtypesPointer(PyObject* obj, TVMFFIAny* out, Py_ssize_t where) {
  Py_buffer view;
  if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) != 0) return false;
  void* ptr = nullptr;
  bool ok = view.len == static_cast<Py_ssize_t>(sizeof(void*));
  if (ok) std::memcpy(&ptr, view.buf, sizeof(void*));
  PyBuffer_Release(&view);
  if (!ok) {
    char text[48];
    PyErr_Format(PyExc_ValueError, "%s: unreadable ctypes pointer", WhereText(where, text));
    return false;
  }
  SetPod(out, ptr == nullptr ? kTVMFFINone : kTVMFFIOpaquePtr);
  out->v_ptr = ptr;
  return true;
}

// At a scalar parameter, what Python's numeric protocols make of `obj` (as ctypes takes it):
// __index__ at an integer parameter, __float__ (or __index__) at a floating-point one, before
// the tensor path would make a numpy scalar array or a 0-d tensor a Tensor. 1 converted, 0 not
// a number there (the usual conversion decides), -1 error set.
int FromNumber(PyObject* obj, TVMFFIAny* out, int number_kind, Py_ssize_t where) {
  PyNumberMethods* number = Py_TYPE(obj)->tp_as_number;
  if (number == nullptr) return 0;
  if (number_kind == 1) {
    if (number->nb_index == nullptr) return 0;
    PyObject* index = PyNumber_Index(obj);
    if (index == nullptr) {
      // An array of several elements or of floats has __index__ but no index: not a number.
      if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
      PyErr_Clear();
      return 0;
    }
    bool ok = FromInt(index, out, where);
    Py_DECREF(index);
    return ok ? 1 : -1;
  }
  if (number->nb_float == nullptr && number->nb_index == nullptr) return 0;
  double value = PyFloat_AsDouble(obj);
  if (value == -1.0 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
    PyErr_Clear();
    return 0;
  }
  SetPod(out, kTVMFFIFloat);
  out->v_float64 = value;
  return 1;
}

bool ConvertSlow(PyObject* obj, TVMFFIAny* out, ArgPack* pack, Py_ssize_t where) {
  if (PyLong_Check(obj)) return FromInt(obj, out, where);  // int subclasses (IntEnum)
  if (PyFloat_Check(obj)) {
    SetPod(out, kTVMFFIFloat);
    out->v_float64 = PyFloat_AS_DOUBLE(obj);
    return true;
  }
  if (int number_kind = pack != nullptr ? pack->NumberArgument(where) : 0; number_kind != 0) {
    int converted = FromNumber(obj, out, number_kind, where);
    if (converted != 0) return converted > 0;
  }
  if (PyUnicode_Check(obj)) return FromStr(obj, out, pack, where);
  if (PyBytes_Check(obj)) {
    return FromBytesLike(PyBytes_AS_STRING(obj), PyBytes_GET_SIZE(obj), out, pack);
  }
  if (PyByteArray_Check(obj)) {
    // Copied, never borrowed: a bytearray can be resized (by Python code converting a later
    // argument, or by another thread while the GIL is released) under a borrowed pointer.
    return FromBytesLike(PyByteArray_AS_STRING(obj), PyByteArray_GET_SIZE(obj), out, nullptr) &&
           (pack == nullptr || out->type_index < kTVMFFIStaticObjectBegin || pack->Own(out->v_obj));
  }
  if (PyList_Check(obj) || PyTuple_Check(obj)) return FromSequence(obj, out, pack, where);
  if (PyDict_Check(obj)) return FromDict(obj, out, pack, where);
  int is_pointer = IsCtypesPointer(obj);
  if (is_pointer < 0) return false;
  if (is_pointer > 0) return FromCtypesPointer(obj, out, where);
  if (pack != nullptr) {
    int borrowed = pack->BorrowTensor(obj, out, where);
    if (borrowed != 0) return borrowed > 0;
  }
  TVMFFIObject* tensor = nullptr;
  int is_tensor = TensorFromPython(obj, &tensor);
  if (is_tensor < 0) return false;
  if (is_tensor > 0) {
    return StoreObject(tensor, out, pack);
  }
  // numpy scalars and other numbers that are not int/float subclasses.
  if (PyIndex_Check(obj)) {
    PyObject* index = PyNumber_Index(obj);
    if (index == nullptr) return false;
    bool ok = FromInt(index, out, where);
    Py_DECREF(index);
    return ok;
  }
  if (Py_TYPE(obj)->tp_as_number != nullptr && Py_TYPE(obj)->tp_as_number->nb_float != nullptr) {
    double value = PyFloat_AsDouble(obj);
    if (value == -1.0 && PyErr_Occurred()) return false;
    SetPod(out, kTVMFFIFloat);
    out->v_float64 = value;
    return true;
  }
  if (PyCallable_Check(obj)) {
    TVMFFIObject* func = FunctionFromCallable(obj);
    if (func == nullptr) return false;
    return StoreObject(func, out, pack);
  }
  char text[48];
  PyErr_Format(PyExc_TypeError, "%s: cannot pass a Python `%s` to a packed call",
               WhereText(where, text), Py_TYPE(obj)->tp_name);
  return false;
}

}  // namespace

bool ConvertValue(PyObject* obj, TVMFFIAny* out, ArgPack* pack, Py_ssize_t where) {
  if (pack != nullptr && pack->IsPointerArgument(where))
    return pack->ConvertPointer(obj, out, where);
  PyTypeObject* type = Py_TYPE(obj);
  // Exact types first, in the order calls use them; subclasses go to ConvertSlow.
  if (type == &PyLong_Type) return FromInt(obj, out, where);
  if (type == &PyFloat_Type || obj == Py_None || type == &PyBool_Type) {
    return ConvertScalar(obj, out);
  }
  if (type == &PyUnicode_Type) return FromStr(obj, out, pack, where);
  if (type == g_device_type) {
    SetPod(out, kTVMFFIDevice);
    out->v_device = reinterpret_cast<PyFFIDevice*>(obj)->device;
    return true;
  }
  if (type == g_datatype_type) {
    SetPod(out, kTVMFFIDataType);
    out->v_dtype = reinterpret_cast<PyFFIDataType*>(obj)->dtype;
    return true;
  }
  if (type == g_numpy_array_type) {
    if (pack != nullptr) {
      int borrowed = pack->BorrowTensor(obj, out, where);
      if (borrowed != 0) return borrowed > 0;
    }
    // Straight to the Tensor, where ConvertSlow would end up for an array: except at a number
    // parameter (where __index__/__float__ come first) nothing before the tensor rule takes one.
    if (pack == nullptr || pack->NumberArgument(where) == 0) {
      TVMFFIObject* tensor = nullptr;
      int is_tensor = TensorFromPython(obj, &tensor);
      if (is_tensor < 0) return false;
      if (is_tensor > 0) return StoreObject(tensor, out, pack);
    }
  }
  if (type == &PyCFunction_Type) {  // a Function as Python calls it
    if (PyFFIFunction* function = FunctionOf(obj)) obj = reinterpret_cast<PyObject*>(function);
    type = Py_TYPE(obj);
  }
  if (type == g_function_type || type == g_tensor_type || type == g_array_type ||
      type == g_map_type || PyType_IsSubtype(type, g_object_type)) {
    TVMFFIObject* handle = reinterpret_cast<PyFFIObject*>(obj)->handle;
    SetPod(out, handle->type_index);
    out->v_obj = handle;
    if (pack == nullptr) TVMFFIObjectIncRef(handle);
    return true;
  }
  return ConvertSlow(obj, out, pack, where);
}

bool ArgPack::ConvertPointer(PyObject* obj, TVMFFIAny* out, Py_ssize_t where) {
  char text[48];
  if (obj == Py_None) {
    SetPod(out, kTVMFFINone);
    return true;
  }
  if (PyLong_Check(obj) && !PyBool_Check(obj)) {  // an address, as ctypes takes it
    void* address = PyLong_AsVoidPtr(obj);
    if (address == nullptr && PyErr_Occurred()) {
      PyErr_Format(PyExc_ValueError, "%s: the address %R does not fit a pointer",
                   WhereText(where, text), obj);
      return false;
    }
    SetPod(out, address == nullptr ? kTVMFFINone : kTVMFFIOpaquePtr);
    out->v_ptr = address;
    return true;
  }
  if (PyUnicode_Check(obj)) {
    // Which bytes a str would be is the native's to say (UTF-8, wchar_t, ...): the caller encodes.
    PyErr_Format(PyExc_TypeError,
                 "%s: a `ptr` parameter takes no `str`: encode it (s.encode() gives bytes, which "
                 "pass as a pointer to their bytes)",
                 WhereText(where, text));
    return false;
  }
  int is_pointer = IsCtypesPointer(obj);
  if (is_pointer < 0) return false;
  if (is_pointer > 0) return FromCtypesPointer(obj, out, where);
  PyTypeObject* meta = Py_TYPE(reinterpret_cast<PyObject*>(Py_TYPE(obj)));
  const bool ctypes_object =
      meta != &PyType_Type || std::strcmp(Py_TYPE(obj)->tp_name, "CArgObject") == 0;
  if (ctypes_object) {
    // ctypes.cast(obj, c_void_p) takes exactly what c_void_p's from_param does (pointers,
    // arrays, byref(), c_char_p) and gives its address; the argument keeps the memory alive.
    PyObject* ctypes = PyImport_ImportModule("ctypes");
    PyObject* cast = ctypes != nullptr ? PyObject_GetAttrString(ctypes, "cast") : nullptr;
    Py_XDECREF(ctypes);
    PyObject* pointer =
        cast != nullptr ? PyObject_CallFunctionObjArgs(cast, obj, CtypesVoidPointerType(), nullptr)
                        : nullptr;
    Py_XDECREF(cast);
    if (pointer != nullptr) {
      bool ok = FromCtypesPointer(pointer, out, where);
      Py_DECREF(pointer);
      return ok;
    }
    PyErr_Clear();  // ctypes' ArgumentError: said below, naming the argument
  } else if (PyObject_CheckBuffer(obj)) {
    return BorrowBuffer(obj, out, where);
  }
  PyErr_Format(PyExc_TypeError,
               "%s: a `ptr` parameter takes None, an int address, a ctypes pointer, array, byref() "
               "or c_char_p, or an object with a contiguous buffer (bytes, bytearray, memoryview, "
               "array.array, a numpy array), not `%s`",
               WhereText(where, text), Py_TYPE(obj)->tp_name);
  return false;
}

bool ArgPack::BorrowBuffer(PyObject* obj, TVMFFIAny* out, Py_ssize_t where) {
  if (buffers_ == nullptr) {
    buffers_ =
        static_cast<Py_buffer*>(PyMem_Malloc(static_cast<size_t>(capacity_) * sizeof(Py_buffer)));
    if (buffers_ == nullptr) {
      PyErr_NoMemory();
      return false;
    }
  }
  // Read-only buffers (bytes) too, as c_void_p takes bytes: metadata cannot say `const`, so the
  // native must not write through them. Exported until the call returns, so that nothing
  // resizes or frees the memory meanwhile.
  Py_buffer* view = &buffers_[num_buffers_];
  if (PyObject_GetBuffer(obj, view, PyBUF_ANY_CONTIGUOUS) == 0) {
    ++num_buffers_;
    SetPod(out, view->buf == nullptr ? kTVMFFINone : kTVMFFIOpaquePtr);
    out->v_ptr = view->buf;
    return true;
  }
  // A buffer that exists but is not contiguous is refused by its exporter with an error of its
  // own (BufferError, numpy's ValueError); said here instead, naming the argument. Any other
  // failure is the exporter's to report.
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  Py_buffer probe;
  if (PyObject_GetBuffer(obj, &probe, PyBUF_FULL_RO) != 0) {
    PyErr_Clear();
    PyErr_Restore(type, value, traceback);
    return false;
  }
  const bool contiguous = probe.suboffsets == nullptr && PyBuffer_IsContiguous(&probe, 'A');
  PyBuffer_Release(&probe);
  if (contiguous) {
    PyErr_Restore(type, value, traceback);
    return false;
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  char text[48];
  PyErr_Format(PyExc_TypeError,
               "%s: a `ptr` parameter takes a contiguous buffer; the `%s` is not contiguous (its "
               "elements are not one block of memory a pointer could reach): pass a contiguous "
               "copy",
               WhereText(where, text), Py_TYPE(obj)->tp_name);
  return false;
}

int ArgPack::BorrowTensor(PyObject* obj, TVMFFIAny* out, Py_ssize_t where) {
  if (where < 0 || where >= 64 || (kinds_.tensor_views >> where & 1) == 0 || num_views_ == 2 ||
      !IsNumpyArray(obj)) {
    return 0;
  }
  if (!BorrowTensorView(obj, &views_[num_views_], out)) return 0;
  ++num_views_;
  return 1;
}

bool BorrowTensorView(PyObject* obj, TensorView* borrowed, TVMFFIAny* out) {
  TensorView& view = *borrowed;
  // Writable buffers only, as for Tensors made from buffers (tensor.cc).
  if (PyObject_GetBuffer(obj, &view.buffer, PyBUF_RECORDS) != 0) {
    PyErr_Clear();
    return false;
  }
  Py_buffer& buffer = view.buffer;
  DLTensor& t = view.tensor;
  static_assert(sizeof(Py_ssize_t) == sizeof(int64_t), "shapes are read in place");
  bool describable = DataTypeOfFormat(buffer.format, buffer.itemsize, &t.dtype) && buffer.ndim <= 8;
  t.strides = nullptr;  // compact, unless a stride says otherwise
  // Element strides are divided out only when a stride is not the compact one (or belongs to a
  // dimension of extent <= 1, where any stride is allowed): a division costs more than the rest
  // of a compact array's description, and compact arrays are the common case.
  Py_ssize_t compact_stride = buffer.itemsize;
  for (int i = buffer.ndim - 1; describable && i >= 0; --i) {
    if (buffer.strides[i] != compact_stride) {
      if (buffer.strides[i] % buffer.itemsize != 0) describable = false;
      if (buffer.shape[i] > 1) t.strides = view.strides;
    }
    compact_stride *= buffer.shape[i];
  }
  if (describable && t.strides != nullptr) {
    for (int i = 0; i < buffer.ndim; ++i) view.strides[i] = buffer.strides[i] / buffer.itemsize;
  }
  if (!describable) {  // the Tensor path reports what is wrong
    PyBuffer_Release(&buffer);
    return false;
  }
  t.data = buffer.buf;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = buffer.ndim;
  t.shape = reinterpret_cast<int64_t*>(buffer.shape);
  t.byte_offset = 0;
  out->type_index = kTVMFFIDLTensorPtr;
  out->zero_padding = 0;
  out->v_ptr = &t;
  return true;
}

void ArgPack::ReleaseAll() {
  for (int i = 0; i < num_views_; ++i) PyBuffer_Release(&views_[i].buffer);
  for (int i = 0; i < num_buffers_; ++i) PyBuffer_Release(&buffers_[i]);
  PyMem_Free(buffers_);
  for (Py_ssize_t i = 0; i < num_owned_; ++i) TVMFFIObjectDecRef(owned_[i]);
  if (values_ != inline_values_) PyMem_Free(values_);
  if (owned_ != inline_owned_) PyMem_Free(owned_);
  PyMem_Free(bytes_overflow_);
}

bool ArgPack::Grow(Py_ssize_t n) {
  auto* grown = static_cast<TVMFFIAny*>(PyMem_Malloc(static_cast<size_t>(n) * sizeof(TVMFFIAny)));
  if (grown == nullptr) {
    PyErr_NoMemory();
    return false;
  }
  values_ = grown;
  capacity_ = n;
  return true;
}

bool ArgPack::Own(TVMFFIObject* obj) {
  if (num_owned_ == owned_capacity_) {
    Py_ssize_t grown_capacity = owned_capacity_ * 2;
    auto* grown = static_cast<TVMFFIObject**>(
        PyMem_Malloc(static_cast<size_t>(grown_capacity) * sizeof(TVMFFIObject*)));
    if (grown == nullptr) {  // before the call: nothing reads `obj` yet
      TVMFFIObjectDecRef(obj);
      PyErr_NoMemory();
      return false;
    }
    std::memcpy(grown, owned_, static_cast<size_t>(num_owned_) * sizeof(TVMFFIObject*));
    if (owned_ != inline_owned_) PyMem_Free(owned_);
    owned_ = grown;
    owned_capacity_ = grown_capacity;
  }
  owned_[num_owned_++] = obj;
  return true;
}

TVMFFIByteArray* ArgPack::ByteArraySlot() {
  if (num_bytes_ < 4) return &inline_bytes_[num_bytes_++];
  int overflow_index = num_bytes_ - 4;
  if (overflow_index == bytes_overflow_capacity_) {
    // The slots must not move once handed out: size the overflow once, for every argument.
    if (bytes_overflow_ != nullptr) {
      PyErr_SetString(PyExc_MemoryError, "ffijit: too many bytes arguments");
      return nullptr;
    }
    bytes_overflow_capacity_ = static_cast<int>(capacity_);
    bytes_overflow_ = static_cast<TVMFFIByteArray*>(
        PyMem_Malloc(static_cast<size_t>(bytes_overflow_capacity_) * sizeof(TVMFFIByteArray)));
    if (bytes_overflow_ == nullptr) {
      PyErr_NoMemory();
      return nullptr;
    }
  }
  ++num_bytes_;
  return &bytes_overflow_[overflow_index];
}

bool ToOwnedAny(PyObject* obj, TVMFFIAny* out, Py_ssize_t where) {
  return ConvertValue(obj, out, nullptr, where);
}

bool Utf8Of(PyObject* obj, const char* what, const char** data, Py_ssize_t* size) {
  if (PyUnicode_Check(obj)) {
    *data = PyUnicode_AsUTF8AndSize(obj, size);
    return *data != nullptr;
  }
  if (PyBytes_Check(obj)) {
    *data = PyBytes_AS_STRING(obj);
    *size = PyBytes_GET_SIZE(obj);
    return true;
  }
  PyErr_Format(PyExc_TypeError, "%s must be a str, not %s", what, Py_TYPE(obj)->tp_name);
  return false;
}

}  // namespace ffijit::python
