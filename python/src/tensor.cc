// ffijit.Tensor and tensors from Python: numpy arrays (through the buffer protocol, no copy),
// any DLPack producer (`__dlpack__`, versioned or legacy capsules), and the DLPack export that
// lets numpy.from_dlpack and friends take an ffijit.Tensor without a copy.
// Python.h (through ffijit_py.h) comes before every standard header, as CPython requires.
#include "ffijit_py.h"

#include <cstring>
#include <new>

namespace ffijit::python {

PyTypeObject* g_tensor_type = nullptr;
PyTypeObject* g_numpy_array_type = nullptr;

namespace {

inline const DLTensor* TensorOf(PyObject* self) {
  return reinterpret_cast<const DLTensor*>(reinterpret_cast<PyFFIObject*>(self)->handle + 1);
}

// ---- import through the buffer protocol ----

// What a read-only array gets, through the buffer protocol here or, as a DLPack capsule flagged
// read-only, from the runtime's TVMFFITensorFromDLPackVersioned (whose message says the same).
constexpr const char* kReadOnlyArrayMessage =
    "the array is read-only and ffijit tensors are writable (a native may write them): pass a "
    "writable copy";

// A DLManagedTensor that owns a Py_buffer: the exporter stays alive (and its memory pinned)
// until the tensor's last reference goes.
struct BufferTensor {
  DLManagedTensor managed;
  Py_buffer view;
  int64_t dims[2 * PyBUF_MAX_NDIM];
};

void ReleaseBufferTensor(DLManagedTensor* managed) {
  auto* owner = static_cast<BufferTensor*>(managed->manager_ctx);
  if (PythonIsAvailable()) {
    PyGILState_STATE state = PyGILState_Ensure();
    PyBuffer_Release(&owner->view);
    PyGILState_Release(state);
  }
  delete owner;
}

// A DLManagedTensor that owns one reference to a compact numpy array read in place (no buffer
// export): the array stays alive, and numpy refuses to resize it, until the tensor's last
// reference goes. Every callee that may keep its arguments (a module function, an `object`
// parameter, a Python callback) gets such a Tensor for each compact array, usually released when
// the call returns, so released structs are kept for reuse (guarded by the GIL, which the deleter
// takes anyway to release the array) instead of costing a malloc and a free per call.
struct ArrayTensor {
  DLManagedTensor managed;
  ArrayTensor* next_free;
};
ArrayTensor* g_free_array_tensors = nullptr;
int g_num_free_array_tensors = 0;
constexpr int kMaxFreeArrayTensors = 16;

void ReleaseArrayTensor(DLManagedTensor* managed) {
  auto* owner = reinterpret_cast<ArrayTensor*>(managed);
  if (!PythonIsAvailable()) {  // the interpreter is gone, and the array with it
    delete owner;
    return;
  }
  PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(managed->manager_ctx));
  if (g_num_free_array_tensors < kMaxFreeArrayTensors) {
    owner->next_free = g_free_array_tensors;
    g_free_array_tensors = owner;
    ++g_num_free_array_tensors;
    owner = nullptr;
  }
  PyGILState_Release(state);
  delete owner;
}

// 1: *out is a Tensor over a compact numpy array read in place; 0: not such an array (the buffer
// protocol describes it); -1 error set. The shape is the array's, copied by the runtime.
int TensorFromCompactNdarray(PyObject* obj, TVMFFIObject** out) {
  DLTensor t;
  if (!ReadCompactNdarray(obj, &t, PyBUF_MAX_NDIM, true)) return 0;
  ArrayTensor* owner = g_free_array_tensors;
  if (owner != nullptr) {
    g_free_array_tensors = owner->next_free;
    --g_num_free_array_tensors;
  } else {
    owner = new (std::nothrow) ArrayTensor;
    if (owner == nullptr) {
      PyErr_NoMemory();
      return -1;
    }
  }
  owner->managed.dl_tensor = t;
  owner->managed.manager_ctx = obj;
  owner->managed.deleter = ReleaseArrayTensor;
  TVMFFIObjectHandle tensor = nullptr;
  if (FFIJITTensorCheck(&owner->managed.dl_tensor, "TVMFFITensorFromDLPack") != 0 ||
      TVMFFITensorFromDLPack(&owner->managed, 0, 0, &tensor) != 0) {
    delete owner;
    RaiseFromFFI();
    return -1;
  }
  Py_INCREF(obj);
  *out = static_cast<TVMFFIObject*>(tensor);
  return 1;
}

}  // namespace

bool DataTypeOfFormat(const char* format, Py_ssize_t itemsize, DLDataType* out) {
  if (format == nullptr) format = "B";
  if (*format == '@' || *format == '=' || *format == '<') ++format;
  uint8_t code;
  switch (format[0]) {
    case '?':
      code = FFIJIT_DL_BOOL_CODE;
      break;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n':
      code = kDLInt;
      break;
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
    case 'N':
      code = kDLUInt;
      break;
    case 'e':
    case 'f':
    case 'd':
      code = kDLFloat;
      break;
    case 'Z':
      if (format[1] != 'f' && format[1] != 'd') return false;
      code = kDLComplex;
      ++format;
      break;
    default:
      return false;
  }
  if (format[1] != '\0' || itemsize <= 0 || itemsize > 32) return false;
  *out = DLDataType{code, static_cast<uint8_t>(itemsize * 8), 1};
  return true;
}

namespace {

// 1: *out is a Tensor over obj's buffer; 0: obj has no usable buffer (error cleared); -1 error.
int TensorFromBuffer(PyObject* obj, TVMFFIObject** out) {
  auto* owner = new (std::nothrow) BufferTensor();
  if (owner == nullptr) {
    PyErr_NoMemory();
    return -1;
  }
  // Writable buffers only: a Tensor carries no read-only mark, so a native could write to a
  // read-only array. A read-only one is refused here as the runtime refuses a read-only DLPack
  // capsule (the same error whatever numpy's version and whichever way it would export).
  if (PyObject_GetBuffer(obj, &owner->view, PyBUF_RECORDS) != 0) {
    PyErr_Clear();
    const bool read_only = PyObject_GetBuffer(obj, &owner->view, PyBUF_RECORDS_RO) == 0;
    if (read_only) PyBuffer_Release(&owner->view);
    PyErr_Clear();
    delete owner;
    if (!read_only) return 0;
    PyErr_SetString(PyExc_ValueError, kReadOnlyArrayMessage);
    return -1;
  }
  Py_buffer& view = owner->view;
  DLTensor& t = owner->managed.dl_tensor;
  if (!DataTypeOfFormat(view.format, view.itemsize, &t.dtype)) {
    PyErr_Format(PyExc_TypeError, "a buffer of format %s has no DLPack data type",
                 view.format != nullptr ? view.format : "B");
    PyBuffer_Release(&view);
    delete owner;
    return -1;
  }
  t.data = view.buf;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = view.ndim;
  t.byte_offset = 0;
  t.shape = owner->dims;
  t.strides = owner->dims + PyBUF_MAX_NDIM;
  for (int i = 0; i < view.ndim; ++i) {
    owner->dims[i] = view.shape[i];
    Py_ssize_t stride = view.strides != nullptr ? view.strides[i] : 0;
    if (view.strides != nullptr && stride % view.itemsize != 0) {
      PyErr_SetString(PyExc_ValueError,
                      "the array's strides are not whole elements: DLPack cannot describe it");
      PyBuffer_Release(&view);
      delete owner;
      return -1;
    }
    owner->dims[PyBUF_MAX_NDIM + i] = stride / view.itemsize;
  }
  if (view.strides == nullptr) t.strides = nullptr;  // C-contiguous
  owner->managed.manager_ctx = owner;
  owner->managed.deleter = ReleaseBufferTensor;
  TVMFFIObjectHandle tensor = nullptr;
  if (FFIJITTensorCheck(&owner->managed.dl_tensor, "TVMFFITensorFromDLPack") != 0 ||
      TVMFFITensorFromDLPack(&owner->managed, 0, 0, &tensor) != 0) {
    PyBuffer_Release(&view);
    delete owner;
    RaiseFromFFI();
    return -1;
  }
  *out = static_cast<TVMFFIObject*>(tensor);
  return 1;
}

// ---- import through __dlpack__ ----

int TensorFromCapsule(PyObject* capsule, TVMFFIObject** out) {
  TVMFFIObjectHandle tensor = nullptr;
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    auto* managed =
        static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, "dltensor_versioned"));
    // Checked here too: over TVM FFI's own library (the add-on build) nothing else checks it.
    if (FFIJITTensorCheckVersioned(managed, "TVMFFITensorFromDLPackVersioned") != 0 ||
        TVMFFITensorFromDLPackVersioned(managed, 0, 0, &tensor) != 0) {
      RaiseFromFFI();
      return -1;
    }
    PyCapsule_SetName(capsule, "used_dltensor_versioned");
  } else if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (FFIJITTensorCheck(&managed->dl_tensor, "TVMFFITensorFromDLPack") != 0 ||
        TVMFFITensorFromDLPack(managed, 0, 0, &tensor) != 0) {
      RaiseFromFFI();
      return -1;
    }
    PyCapsule_SetName(capsule, "used_dltensor");
  } else {
    PyErr_SetString(PyExc_TypeError,
                    "__dlpack__ returned no unused 'dltensor' or 'dltensor_versioned' capsule");
    return -1;
  }
  *out = static_cast<TVMFFIObject*>(tensor);
  return 1;
}

int TensorFromDlpackMethod(PyObject* obj, PyObject* method, TVMFFIObject** out) {
  // Ask for a versioned capsule first; producers older than DLPack 1.0 reject the keyword.
  PyObject* kwargs =
      Py_BuildValue("{s:(ii)}", "max_version", FFIJIT_DLPACK_MAJOR, FFIJIT_DLPACK_MINOR);
  if (kwargs == nullptr) return -1;
  PyObject* empty = PyTuple_New(0);
  PyObject* capsule = empty == nullptr ? nullptr : PyObject_Call(method, empty, kwargs);
  Py_XDECREF(empty);
  Py_DECREF(kwargs);
  if (capsule == nullptr && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    capsule = PyObject_CallNoArgs(method);
  }
  (void)obj;
  if (capsule == nullptr) return -1;
  int rc = TensorFromCapsule(capsule, out);
  Py_DECREF(capsule);
  return rc;
}

// ---- export ----

void LegacyCapsuleDestructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor")) {  // never consumed
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (managed->deleter != nullptr) managed->deleter(managed);
  }
}

void VersionedCapsuleDestructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    auto* managed =
        static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, "dltensor_versioned"));
    if (managed->deleter != nullptr) managed->deleter(managed);
  }
}

PyObject* TensorDlpack(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* kKeywords[] = {"stream", "max_version", "dl_device", "copy", nullptr};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", const_cast<char**>(kKeywords),
                                   &stream, &max_version, &dl_device, &copy)) {
    return nullptr;
  }
  if (copy != Py_None && !PyBool_Check(copy)) {
    PyErr_Format(PyExc_TypeError, "ffijit.Tensor.__dlpack__: copy must be a bool or None, not `%s`",
                 Py_TYPE(copy)->tp_name);
    return nullptr;
  }
  if (copy == Py_True) {
    PyErr_SetString(PyExc_BufferError, "ffijit.Tensor.__dlpack__ cannot copy");
    return nullptr;
  }
  TVMFFIObject* handle = reinterpret_cast<PyFFIObject*>(self)->handle;
  if (dl_device != Py_None) {  // a consumer asking for another device: no copy across devices
    const DLDevice device = TensorOf(self)->device;
    // A (device_type, device_id) pair of ints; anything else is the caller's TypeError.
    if (!PyTuple_Check(dl_device) || PyTuple_GET_SIZE(dl_device) != 2 ||
        !PyLong_Check(PyTuple_GET_ITEM(dl_device, 0)) ||
        !PyLong_Check(PyTuple_GET_ITEM(dl_device, 1))) {
      PyErr_Format(PyExc_TypeError,
                   "ffijit.Tensor.__dlpack__: dl_device must be a (device_type, device_id) tuple "
                   "of ints, not `%s`",
                   Py_TYPE(dl_device)->tp_name);
      return nullptr;
    }
    const long type = PyLong_AsLong(PyTuple_GET_ITEM(dl_device, 0));
    if (type == -1 && PyErr_Occurred()) return nullptr;
    const long id = PyLong_AsLong(PyTuple_GET_ITEM(dl_device, 1));
    if (id == -1 && PyErr_Occurred()) return nullptr;
    if (type != device.device_type || id != device.device_id) {
      PyErr_Format(PyExc_BufferError,
                   "ffijit.Tensor.__dlpack__: the tensor is on device (%d, %d), not (%d, %d), "
                   "and is never copied",
                   static_cast<int>(device.device_type), static_cast<int>(device.device_id),
                   static_cast<int>(type), static_cast<int>(id));
      return nullptr;
    }
  }
  (void)stream;  // CPU tensors need no stream synchronisation
  long major = 0;
  if (max_version != Py_None) {
    if (!PyTuple_Check(max_version) || PyTuple_GET_SIZE(max_version) < 1) {
      PyErr_SetString(PyExc_TypeError, "max_version must be a (major, minor) tuple");
      return nullptr;
    }
    major = PyLong_AsLong(PyTuple_GET_ITEM(max_version, 0));
    if (major == -1 && PyErr_Occurred()) return nullptr;
  }
  if (major >= 1) {
    DLManagedTensorVersioned* managed = nullptr;
    if (TVMFFITensorToDLPackVersioned(handle, &managed) != 0) return RaiseFromFFI();
    PyObject* capsule = PyCapsule_New(managed, "dltensor_versioned", VersionedCapsuleDestructor);
    if (capsule == nullptr) managed->deleter(managed);
    return capsule;
  }
  DLManagedTensor* managed = nullptr;
  if (TVMFFITensorToDLPack(handle, &managed) != 0) return RaiseFromFFI();
  PyObject* capsule = PyCapsule_New(managed, "dltensor", LegacyCapsuleDestructor);
  if (capsule == nullptr) managed->deleter(managed);
  return capsule;
}

PyObject* TensorDlpackDevice(PyObject* self, PyObject*) {
  const DLTensor* t = TensorOf(self);
  return Py_BuildValue("(ii)", static_cast<int>(t->device.device_type),
                       static_cast<int>(t->device.device_id));
}

PyObject* IntTuple(const int64_t* values, int n) {
  PyObject* tuple = PyTuple_New(n);
  for (int i = 0; tuple != nullptr && i < n; ++i) {
    PyObject* v = PyLong_FromLongLong(values[i]);
    if (v == nullptr) {
      Py_CLEAR(tuple);
    } else {
      PyTuple_SET_ITEM(tuple, i, v);
    }
  }
  return tuple;
}

PyObject* TensorShape(PyObject* self, void*) {
  const DLTensor* t = TensorOf(self);
  return IntTuple(t->shape, t->ndim);
}

PyObject* TensorStrides(PyObject* self, void*) {
  const DLTensor* t = TensorOf(self);
  if (t->strides != nullptr) return IntTuple(t->strides, t->ndim);
  int64_t strides[64];
  if (t->ndim > 64) Py_RETURN_NONE;
  int64_t step = 1;
  for (int i = t->ndim - 1; i >= 0; --i) {
    strides[i] = step;
    step *= t->shape[i];
  }
  return IntTuple(strides, t->ndim);
}

PyObject* TensorNdim(PyObject* self, void*) {
  return PyLong_FromLong(TensorOf(self)->ndim);
}
PyObject* TensorDtype(PyObject* self, void*) {
  return NewDataType(TensorOf(self)->dtype);
}
PyObject* TensorDevice(PyObject* self, void*) {
  return NewDevice(TensorOf(self)->device);
}
PyObject* TensorDataPtr(PyObject* self, void*) {
  const DLTensor* t = TensorOf(self);
  return PyLong_FromVoidPtr(static_cast<char*>(t->data) + t->byte_offset);
}

PyObject* TensorRepr(PyObject* self) {
  PyObject* shape = TensorShape(self, nullptr);
  PyObject* dtype = shape == nullptr ? nullptr : TensorDtype(self, nullptr);
  PyObject* device = dtype == nullptr ? nullptr : TensorDevice(self, nullptr);
  PyObject* repr = device == nullptr
                       ? nullptr
                       : PyUnicode_FromFormat("ffijit.Tensor(shape=%R, dtype=%S, device=%S)", shape,
                                              dtype, device);
  Py_XDECREF(shape);
  Py_XDECREF(dtype);
  Py_XDECREF(device);
  return repr;
}

PyMethodDef kTensorMethods[] = {
    {"__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(TensorDlpack)),
     METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "A DLPack capsule of this tensor (versioned when max_version >= (1, 0)), no copy."},
    {"__dlpack_device__", TensorDlpackDevice, METH_NOARGS, "(device_type, device_id)"},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef kTensorGetSet[] = {
    {"shape", TensorShape, nullptr, "The shape, a tuple of ints.", nullptr},
    {"strides", TensorStrides, nullptr, "Strides in elements (computed when compact).", nullptr},
    {"ndim", TensorNdim, nullptr, "The rank.", nullptr},
    {"dtype", TensorDtype, nullptr, "The element type, an ffijit.DataType.", nullptr},
    {"device", TensorDevice, nullptr, "The device, an ffijit.Device.", nullptr},
    {"data_ptr", TensorDataPtr, nullptr, "The address of the first element.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot kTensorSlots[] = {
    {Py_tp_doc,
     const_cast<char*>("A TVM FFI Tensor (a DLTensor with a reference count). numpy.from_dlpack\n"
                       "and other DLPack consumers take it without a copy.")},
    {Py_tp_methods, kTensorMethods},
    {Py_tp_getset, kTensorGetSet},
    {Py_tp_repr, reinterpret_cast<void*>(TensorRepr)},
    {0, nullptr}};

PyObject* FromDlpack(PyObject*, PyObject* obj) {
  if (PyObject_TypeCheck(obj, g_tensor_type)) return Py_NewRef(obj);
  TVMFFIObject* tensor = nullptr;
  int rc = TensorFromPython(obj, &tensor);
  if (rc < 0) return nullptr;
  if (rc == 0) {
    PyErr_Format(PyExc_TypeError,
                 "from_dlpack: a `%s` offers neither __dlpack__ nor the buffer protocol",
                 Py_TYPE(obj)->tp_name);
    return nullptr;
  }
  return WrapAs(g_tensor_type, tensor);
}

PyMethodDef kTensorModuleMethods[] = {
    {"from_dlpack", FromDlpack, METH_O,
     "from_dlpack(obj)\n--\n\nAn ffijit.Tensor sharing obj's memory: obj offers __dlpack__ (a\n"
     "versioned capsule when it can) or, for numpy arrays, the buffer protocol."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

int TensorFromPython(PyObject* obj, TVMFFIObject** out) {
  // numpy arrays (the exact type, recognised by name so numpy need not be imported): a compact one
  // read from its own fields, as generated entries read it; any other through the buffer
  // protocol, which is cheaper than a capsule (no method call, no capsule object). Both give the
  // same tensor (shape, strides, dtype, refusals) for an array either would take.
  if (IsNumpyArray(obj)) {
    int rc = TensorFromCompactNdarray(obj, out);
    if (rc == 0) rc = TensorFromBuffer(obj, out);
    if (rc != 0) return rc;
  }
  PyObject* method = PyObject_GetAttrString(obj, "__dlpack__");
  if (method == nullptr) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
    PyErr_Clear();
    return 0;
  }
  int rc = TensorFromDlpackMethod(obj, method, out);
  Py_DECREF(method);
  return rc;
}

bool InitTensorType(PyObject* module) {
  PyType_Spec spec{"ffijit.Tensor", sizeof(PyFFIObject), 0, Py_TPFLAGS_DEFAULT, kTensorSlots};
  PyObject* bases = PyTuple_Pack(1, reinterpret_cast<PyObject*>(g_object_type));
  if (bases == nullptr) return false;
  g_tensor_type = reinterpret_cast<PyTypeObject*>(PyType_FromModuleAndSpec(module, &spec, bases));
  Py_DECREF(bases);
  if (g_tensor_type == nullptr ||
      PyModule_AddObjectRef(module, "Tensor", reinterpret_cast<PyObject*>(g_tensor_type)) < 0) {
    return false;
  }
  return PyModule_AddFunctions(module, kTensorModuleMethods) == 0;
}

}  // namespace ffijit::python
