// TVMFFIAny -> Python values: the boxing of results (owned Anys) and of callback arguments
// (borrowed views); ffijit objects get their wrappers (WrapObject), strs and bytes are copied.
// Python.h (through ffijit_py.h) comes before every standard header, as CPython requires.
#include "ffijit_py.h"

#include <cstring>

namespace ffijit::python {

PyObject* StrFromBytes(const char* data, size_t size) {
  return PyUnicode_DecodeUTF8(data, static_cast<Py_ssize_t>(size), "surrogateescape");
}

PyObject* FromOwnedAny(TVMFFIAny* any) {
  switch (any->type_index) {
    case kTVMFFINone:
      Py_RETURN_NONE;
    case kTVMFFIInt:
      return PyLong_FromLongLong(any->v_int64);
    case kTVMFFIBool:
      return PyBool_FromLong(any->v_int64 != 0);
    case kTVMFFIFloat:
      return PyFloat_FromDouble(any->v_float64);
    case kTVMFFIOpaquePtr:
    case kTVMFFIDLTensorPtr: {
      if (any->v_ptr == nullptr) Py_RETURN_NONE;
      PyObject* void_p = CtypesVoidPointerType();
      if (void_p == nullptr) return nullptr;
      PyObject* address = PyLong_FromVoidPtr(any->v_ptr);
      if (address == nullptr) return nullptr;
      PyObject* result = PyObject_CallOneArg(void_p, address);
      Py_DECREF(address);
      return result;
    }
    case kTVMFFIDataType:
      return NewDataType(any->v_dtype);
    case kTVMFFIDevice:
      return NewDevice(any->v_device);
    case kTVMFFIRawStr:
      if (any->v_c_str == nullptr) Py_RETURN_NONE;
      return StrFromBytes(any->v_c_str, std::strlen(any->v_c_str));
    case kTVMFFIByteArrayPtr: {
      auto* bytes = static_cast<const TVMFFIByteArray*>(any->v_ptr);
      if (bytes == nullptr) Py_RETURN_NONE;
      return PyBytes_FromStringAndSize(bytes->data, static_cast<Py_ssize_t>(bytes->size));
    }
    case kTVMFFISmallStr:
      return StrFromBytes(any->v_bytes, any->small_str_len > 7 ? 7 : any->small_str_len);
    case kTVMFFISmallBytes:
      return PyBytes_FromStringAndSize(any->v_bytes,
                                       any->small_str_len > 7 ? 7 : any->small_str_len);
    default:
      break;
  }
  if (any->type_index < kTVMFFIStaticObjectBegin || any->v_obj == nullptr) {
    PyErr_Format(PyExc_TypeError, "ffijit: a value with unknown type index %d",
                 static_cast<int>(any->type_index));
    any->type_index = kTVMFFINone;
    return nullptr;
  }
  TVMFFIObject* obj = any->v_obj;
  any->type_index = kTVMFFINone;
  any->v_obj = nullptr;
  if (obj->type_index == kTVMFFIStr || obj->type_index == kTVMFFIBytes) {
    auto* cell = reinterpret_cast<const FFIJITBytesCell*>(obj + 1);
    PyObject* result =
        obj->type_index == kTVMFFIStr
            ? StrFromBytes(cell->data, cell->size)
            : PyBytes_FromStringAndSize(cell->data, static_cast<Py_ssize_t>(cell->size));
    TVMFFIObjectDecRef(obj);
    return result;
  }
  return WrapObject(obj);
}

PyObject* FromAnyView(const TVMFFIAny* any) {
  TVMFFIAny copy = *any;
  if (copy.type_index == kTVMFFIObjectRValueRef) {  // a C++ caller moving an object: read it
    auto* const* slot = static_cast<TVMFFIObject* const*>(copy.v_ptr);
    TVMFFIObject* obj = slot != nullptr ? *slot : nullptr;
    if (obj == nullptr) Py_RETURN_NONE;
    copy.type_index = obj->type_index;
    copy.v_obj = obj;
  }
  if (copy.type_index >= kTVMFFIStaticObjectBegin && copy.v_obj != nullptr) {
    TVMFFIObjectIncRef(copy.v_obj);
  }
  return FromOwnedAny(&copy);
}

}  // namespace ffijit::python
