// ffijit.Device and ffijit.DataType: DLDevice and DLDataType as small immutable Python values,
// made from names ("cuda:1", "float32") or numbers, passed by value in calls.
// Python.h (through ffijit_py.h) comes before every standard header, as CPython requires.
#include "ffijit_py.h"

#include <cstring>
#include <string>
#include <string_view>

#include "ffijit/dtype.h"
#include "ffijit/error.h"

namespace ffijit::python {

PyTypeObject* g_device_type = nullptr;
PyTypeObject* g_datatype_type = nullptr;

namespace {

// A new Python str of an owned string Any (consumed).
PyObject* StringResult(TVMFFIAny* any) {
  return FromOwnedAny(any);
}

PyObject* DeviceNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* kKeywords[] = {"type", "index", nullptr};
  PyObject* kind = nullptr;
  PyObject* index_obj = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:Device", const_cast<char**>(kKeywords), &kind,
                                   &index_obj)) {
    return nullptr;
  }
  int index = -1;  // not given
  if (index_obj != nullptr && index_obj != Py_None) {
    long value = PyLong_AsLong(index_obj);
    if (value == -1 && PyErr_Occurred()) return nullptr;
    if (value < 0 || value > 0x7fffffff) {
      PyErr_Format(PyExc_ValueError, "Device: the index %ld is out of range", value);
      return nullptr;
    }
    index = static_cast<int>(value);
  }
  DLDevice device{kDLCPU, 0};
  if (PyUnicode_Check(kind)) {
    Py_ssize_t size;
    const char* text = PyUnicode_AsUTF8AndSize(kind, &size);
    if (text == nullptr) return nullptr;
    TVMFFIByteArray bytes{text, static_cast<size_t>(size)};
    if (FFIJITDeviceFromString(&bytes, &device) != 0) return RaiseFromFFI();
    if (index >= 0) {
      if (std::memchr(text, ':', static_cast<size_t>(size)) != nullptr) {
        PyErr_Format(PyExc_ValueError, "Device(%R, %d): the index is given twice", kind, index);
        return nullptr;
      }
      device.device_id = index;
    }
  } else if (PyLong_Check(kind)) {
    long value = PyLong_AsLong(kind);
    if (value == -1 && PyErr_Occurred()) return nullptr;
    if (value < 1 || value > 0x7fffffff) {
      PyErr_Format(PyExc_ValueError, "Device: %ld is not a DLPack device type", value);
      return nullptr;
    }
    device.device_type = static_cast<DLDeviceType>(value);
    device.device_id = index < 0 ? 0 : index;
  } else {
    PyErr_Format(PyExc_TypeError, "Device: the type must be a str or an int, not %s",
                 Py_TYPE(kind)->tp_name);
    return nullptr;
  }
  (void)type;
  return NewDevice(device);
}

inline DLDevice DeviceOf(PyObject* self) {
  return reinterpret_cast<PyFFIDevice*>(self)->device;
}

PyObject* DeviceStr(PyObject* self) {
  DLDevice device = DeviceOf(self);
  TVMFFIAny text;
  text.type_index = kTVMFFINone;
  if (FFIJITDeviceToString(&device, &text) != 0) return RaiseFromFFI();
  return StringResult(&text);
}

PyObject* DeviceRepr(PyObject* self) {
  PyObject* text = DeviceStr(self);
  if (text == nullptr) return nullptr;
  PyObject* repr = PyUnicode_FromFormat("ffijit.Device(%R)", text);
  Py_DECREF(text);
  return repr;
}

PyObject* DeviceRichCompare(PyObject* self, PyObject* other, int op) {
  if ((op != Py_EQ && op != Py_NE) || Py_TYPE(other) != g_device_type) Py_RETURN_NOTIMPLEMENTED;
  DLDevice a = DeviceOf(self), b = DeviceOf(other);
  bool same = a.device_type == b.device_type && a.device_id == b.device_id;
  return PyBool_FromLong(op == Py_EQ ? same : !same);
}

Py_hash_t DeviceHash(PyObject* self) {
  DLDevice d = DeviceOf(self);
  Py_hash_t hash = static_cast<Py_hash_t>(d.device_type) * 1000003 + d.device_id;
  return hash == -1 ? -2 : hash;
}

PyObject* DeviceType(PyObject* self, void*) {
  return PyLong_FromLong(DeviceOf(self).device_type);
}
PyObject* DeviceIndex(PyObject* self, void*) {
  return PyLong_FromLong(DeviceOf(self).device_id);
}

// (device_type, device_id), as __dlpack_device__ returns it.
PyObject* DeviceDlpack(PyObject* self, PyObject*) {
  return Py_BuildValue("(ii)", static_cast<int>(DeviceOf(self).device_type),
                       static_cast<int>(DeviceOf(self).device_id));
}

PyGetSetDef kDeviceGetSet[] = {{"device_type", DeviceType, nullptr,
                                "The DLPack device type (kDLCPU = 1, kDLCUDA = 2, ...).", nullptr},
                               {"index", DeviceIndex, nullptr, "The device's index.", nullptr},
                               {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMethodDef kDeviceMethods[] = {
    {"to_tuple", DeviceDlpack, METH_NOARGS, "(device_type, index), as __dlpack_device__ gives it."},
    {nullptr, nullptr, 0, nullptr}};

PyType_Slot kDeviceSlots[] = {
    {Py_tp_doc, const_cast<char*>("Device(type, index=0)\n--\n\nA DLDevice: Device('cuda', 1), "
                                  "Device('cuda:1'), Device(2, 1).")},
    {Py_tp_new, reinterpret_cast<void*>(DeviceNew)},
    {Py_tp_str, reinterpret_cast<void*>(DeviceStr)},
    {Py_tp_repr, reinterpret_cast<void*>(DeviceRepr)},
    {Py_tp_richcompare, reinterpret_cast<void*>(DeviceRichCompare)},
    {Py_tp_hash, reinterpret_cast<void*>(DeviceHash)},
    {Py_tp_getset, kDeviceGetSet},
    {Py_tp_methods, kDeviceMethods},
    {0, nullptr}};

// ---- DataType ----

bool ParseDataType(PyObject* text_obj, DLDataType* out) {
  Py_ssize_t size;
  const char* text = PyUnicode_AsUTF8AndSize(text_obj, &size);
  if (text == nullptr) return false;
  // ffijit's grammar in both builds (over TVM FFI's own library its C function parses less).
  try {
    *out = ffijit::ParseDataType(std::string_view(text, static_cast<size_t>(size)));
  } catch (const ffijit::Error& error) {
    error.SetRaised();
    RaiseFromFFI();
    return false;
  }
  return true;
}

PyObject* DataTypeNew(PyTypeObject*, PyObject* args, PyObject* kwargs) {
  static const char* kKeywords[] = {"dtype", nullptr};
  PyObject* spec = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:DataType", const_cast<char**>(kKeywords),
                                   &spec)) {
    return nullptr;
  }
  if (Py_TYPE(spec) == g_datatype_type) return Py_NewRef(spec);
  PyObject* text = PyUnicode_Check(spec) ? Py_NewRef(spec) : PyObject_Str(spec);  // numpy dtypes
  if (text == nullptr) return nullptr;
  DLDataType dtype;
  bool ok = ParseDataType(text, &dtype);
  Py_DECREF(text);
  return ok ? NewDataType(dtype) : nullptr;
}

inline DLDataType DataTypeOf(PyObject* self) {
  return reinterpret_cast<PyFFIDataType*>(self)->dtype;
}

PyObject* DataTypeStr(PyObject* self) {
  const std::string text = ffijit::DataTypeToString(DataTypeOf(self));
  return PyUnicode_FromStringAndSize(text.data(), static_cast<Py_ssize_t>(text.size()));
}

PyObject* DataTypeRepr(PyObject* self) {
  PyObject* text = DataTypeStr(self);
  if (text == nullptr) return nullptr;
  PyObject* repr = PyUnicode_FromFormat("ffijit.DataType(%R)", text);
  Py_DECREF(text);
  return repr;
}

PyObject* DataTypeRichCompare(PyObject* self, PyObject* other, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  DLDataType theirs;
  if (Py_TYPE(other) == g_datatype_type) {
    theirs = DataTypeOf(other);
  } else if (PyUnicode_Check(other)) {  // dtype == "float32"
    if (!ParseDataType(other, &theirs)) {
      PyErr_Clear();
      return PyBool_FromLong(op == Py_NE);
    }
  } else {
    Py_RETURN_NOTIMPLEMENTED;
  }
  DLDataType mine = DataTypeOf(self);
  bool same = mine.code == theirs.code && mine.bits == theirs.bits && mine.lanes == theirs.lanes;
  return PyBool_FromLong(op == Py_EQ ? same : !same);
}

// The hash of its name: a DataType equals its name ("float32"), so both must hash alike.
Py_hash_t DataTypeHash(PyObject* self) {
  PyObject* name = DataTypeStr(self);
  if (name == nullptr) return -1;
  Py_hash_t hash = PyObject_Hash(name);
  Py_DECREF(name);
  return hash;
}

PyObject* DataTypeCode(PyObject* self, void*) {
  return PyLong_FromLong(DataTypeOf(self).code);
}
PyObject* DataTypeBits(PyObject* self, void*) {
  return PyLong_FromLong(DataTypeOf(self).bits);
}
PyObject* DataTypeLanes(PyObject* self, void*) {
  return PyLong_FromLong(DataTypeOf(self).lanes);
}
PyObject* DataTypeItemSize(PyObject* self, void*) {
  DLDataType d = DataTypeOf(self);
  return PyLong_FromLong((static_cast<long>(d.bits) * d.lanes + 7) / 8);
}

PyGetSetDef kDataTypeGetSet[] = {
    {"type_code", DataTypeCode, nullptr, "The DLPack type code (kDLInt = 0, kDLUInt, kDLFloat...).",
     nullptr},
    {"bits", DataTypeBits, nullptr, "Bits per lane.", nullptr},
    {"lanes", DataTypeLanes, nullptr, "Vector lanes.", nullptr},
    {"itemsize", DataTypeItemSize, nullptr, "Bytes per element.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot kDataTypeSlots[] = {
    {Py_tp_doc, const_cast<char*>("DataType(dtype)\n--\n\nA DLDataType: DataType('float32'), "
                                  "DataType('int8x4'), DataType(numpy.float16).")},
    {Py_tp_new, reinterpret_cast<void*>(DataTypeNew)},
    {Py_tp_str, reinterpret_cast<void*>(DataTypeStr)},
    {Py_tp_repr, reinterpret_cast<void*>(DataTypeRepr)},
    {Py_tp_richcompare, reinterpret_cast<void*>(DataTypeRichCompare)},
    {Py_tp_hash, reinterpret_cast<void*>(DataTypeHash)},
    {Py_tp_getset, kDataTypeGetSet},
    {0, nullptr}};

PyTypeObject* MakeValueType(PyObject* module, const char* name, const char* attribute,
                            int basicsize, PyType_Slot* slots) {
  PyType_Spec spec{name, basicsize, 0, Py_TPFLAGS_DEFAULT, slots};
  auto* type = reinterpret_cast<PyTypeObject*>(PyType_FromModuleAndSpec(module, &spec, nullptr));
  if (type == nullptr ||
      PyModule_AddObjectRef(module, attribute, reinterpret_cast<PyObject*>(type)) < 0) {
    return nullptr;
  }
  return type;
}

}  // namespace

PyObject* NewDevice(DLDevice device) {
  PyObject* self = g_device_type->tp_alloc(g_device_type, 0);
  if (self != nullptr) reinterpret_cast<PyFFIDevice*>(self)->device = device;
  return self;
}

PyObject* NewDataType(DLDataType dtype) {
  PyObject* self = g_datatype_type->tp_alloc(g_datatype_type, 0);
  if (self != nullptr) reinterpret_cast<PyFFIDataType*>(self)->dtype = dtype;
  return self;
}

bool InitValueTypes(PyObject* module) {
  g_device_type =
      MakeValueType(module, "ffijit.Device", "Device", sizeof(PyFFIDevice), kDeviceSlots);
  g_datatype_type =
      MakeValueType(module, "ffijit.DataType", "DataType", sizeof(PyFFIDataType), kDataTypeSlots);
  return g_device_type != nullptr && g_datatype_type != nullptr;
}

}  // namespace ffijit::python
