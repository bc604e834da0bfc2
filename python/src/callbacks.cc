// Python callables as TVM FFI Functions (callable from C, C++, modules and JIT code), and as
// plain native function pointers with a signature (ffijit.NativeCallback, on the jit library's
// NativeCallback) for C APIs that take one.
//
// A callback takes the GIL on entry, so any thread may call it. A Python exception raised inside
// leaves as a TVM FFI error (errors.cc) and returns to a Python caller as the same object.
// Python.h (through ffijit_py.h) comes before every standard header, as CPython requires.
#include "ffijit_py.h"

#include <new>
#include <string>

#include "ffijit/jit.h"
#include "ffijit/metadata.h"

namespace ffijit::python {

namespace {

int CallbackSafeCall(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (!PythonIsAvailable()) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError",
                                 "a Python callback was called while Python is shutting down");
    return -1;
  }
  PyGILState_STATE state = PyGILState_Ensure();
  auto* callable = static_cast<PyObject*>(self);
  int rc = -1;
  PyObject* inline_stack[8];
  PyObject** stack = inline_stack;
  if (num_args < 0) {
    PyErr_Format(PyExc_ValueError, "a callback received a negative argument count %d", num_args);
  } else if (num_args > 8 && (stack = static_cast<PyObject**>(PyMem_Malloc(
                                  static_cast<size_t>(num_args) * sizeof(PyObject*)))) == nullptr) {
    stack = inline_stack;
    PyErr_NoMemory();
  } else {
    int32_t converted = 0;
    for (; converted < num_args; ++converted) {
      if ((stack[converted] = FromAnyView(&args[converted])) == nullptr) break;
    }
    if (converted == num_args) {
      PyObject* value =
          PyObject_Vectorcall(callable, stack, static_cast<size_t>(num_args), nullptr);
      if (value != nullptr) {
        if (ToOwnedAny(value, result, kWhereResult)) rc = 0;
        Py_DECREF(value);
      }
    }
    for (int32_t i = 0; i < converted; ++i) Py_DECREF(stack[i]);
  }
  if (stack != inline_stack) PyMem_Free(stack);
  if (rc != 0) RaisePythonErrorAsFFI();
  PyGILState_Release(state);
  return rc;
}

void CallbackDeleter(void* self) {
  if (!PythonIsAvailable()) return;  // Python's objects are gone already
  PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(self));
  PyGILState_Release(state);
}

// ---- NativeCallback ----

struct PyNativeCallback {
  PyObject_HEAD ffijit::NativeCallback* callback;
  PyObject* function;     // the ffijit.Function it calls
  PyObject* description;  // for repr(): what it calls and its C signature, a str
};

// "<callable's qualified name><canonical signature>", e.g. "compare(ptr, ptr) -> i32".
PyObject* DescribeCallback(PyObject* func, const ffijit::Signature& signature) {
  PyObject* name = PyObject_GetAttrString(func, "__qualname__");
  if (name == nullptr || !PyUnicode_Check(name)) {
    PyErr_Clear();
    Py_XDECREF(name);
    name = PyObject_Repr(func);
    if (name == nullptr) return nullptr;
  }
  std::string text = ffijit::CanonicalString(signature);
  PyObject* described = PyUnicode_FromFormat("%U%s", name, text.c_str());
  Py_DECREF(name);
  return described;
}

PyTypeObject* g_native_callback_type = nullptr;

PyObject* NativeCallbackNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* kKeywords[] = {"func", "sig", "format", "status_convention", nullptr};
  PyObject* func = nullptr;
  const char* sig = nullptr;
  Py_ssize_t sig_size = 0;
  const char* format = "auto";
  int status = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Os#|sp:NativeCallback",
                                   const_cast<char**>(kKeywords), &func, &sig, &sig_size, &format,
                                   &status)) {
    return nullptr;
  }
  auto parsed_format = ffijit::MetadataFormatFromName(format);
  if (!parsed_format) {
    PyErr_Format(PyExc_ValueError,
                 "unknown metadata format '%s': expected auto, json, raw, sip or declaration",
                 format);
    return nullptr;
  }
  PyObject* function = nullptr;
  if (FunctionOf(func) != nullptr) {
    function = Py_NewRef(func);
  } else if (PyCallable_Check(func)) {
    TVMFFIObject* made = FunctionFromCallable(func);
    if (made == nullptr) return nullptr;
    function = WrapFunction(made);
    if (function == nullptr) return nullptr;
  } else {
    PyErr_Format(PyExc_TypeError, "NativeCallback: %R is not callable", func);
    return nullptr;
  }
  ffijit::NativeCallback* callback = nullptr;
  PyObject* description = nullptr;
  try {
    ffijit::Signature signature =
        ffijit::ParseMetadata(std::string_view(sig, static_cast<size_t>(sig_size)), *parsed_format);
    if (status) signature.convention = ffijit::CallConvention::kStatus;
    description = DescribeCallback(func, signature);
    if (description == nullptr) {
      Py_DECREF(function);
      return nullptr;
    }
    TVMFFIObject* handle = FunctionOf(function)->base.handle;
    TVMFFIObjectIncRef(handle);
    callback = new ffijit::NativeCallback(ffijit::Function::Adopt(handle), signature);
  } catch (const ffijit::Error& e) {
    Py_XDECREF(description);
    Py_DECREF(function);
    e.SetRaised();
    return RaiseFromFFI();
  } catch (const std::bad_alloc&) {
    Py_XDECREF(description);
    Py_DECREF(function);
    return PyErr_NoMemory();
  } catch (const std::exception& e) {
    Py_XDECREF(description);
    Py_DECREF(function);
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
  PyObject* self = type->tp_alloc(type, 0);
  if (self == nullptr) {
    delete callback;
    Py_DECREF(description);
    Py_DECREF(function);
    return nullptr;
  }
  reinterpret_cast<PyNativeCallback*>(self)->callback = callback;
  reinterpret_cast<PyNativeCallback*>(self)->function = function;
  reinterpret_cast<PyNativeCallback*>(self)->description = description;
  return self;
}

PyObject* NativeCallbackRepr(PyObject* self) {
  auto* me = reinterpret_cast<PyNativeCallback*>(self);
  return PyUnicode_FromFormat("<ffijit.NativeCallback %U at %p>", me->description,
                              me->callback->pointer());
}

void NativeCallbackDealloc(PyObject* self) {
  auto* me = reinterpret_cast<PyNativeCallback*>(self);
  PyTypeObject* type = Py_TYPE(self);
  delete me->callback;
  Py_XDECREF(me->function);
  Py_XDECREF(me->description);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* NativeCallbackAddress(PyObject* self, void*) {
  return PyLong_FromVoidPtr(reinterpret_cast<PyNativeCallback*>(self)->callback->pointer());
}

PyObject* NativeCallbackFunction(PyObject* self, void*) {
  return Py_NewRef(reinterpret_cast<PyNativeCallback*>(self)->function);
}

PyObject* NativeCallbackInt(PyObject* self) {
  return NativeCallbackAddress(self, nullptr);
}

PyGetSetDef kNativeCallbackGetSet[] = {
    {"address", NativeCallbackAddress, nullptr,
     "The native function pointer, an int (valid while this object lives).", nullptr},
    {"function", NativeCallbackFunction, nullptr, "The ffijit.Function it calls.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot kNativeCallbackSlots[] = {
    {Py_tp_doc,
     const_cast<char*>(
         "NativeCallback(func, sig, format='auto', status_convention=False)\n--\n\n"
         "A plain C function pointer with the signature `sig` (IREE metadata) that calls\n"
         "`func` (a Python callable or ffijit.Function). Hand `address` to C code that takes a\n"
         "function pointer; keep this object alive as long as the pointer may be called.")},
    {Py_tp_new, reinterpret_cast<void*>(NativeCallbackNew)},
    {Py_tp_dealloc, reinterpret_cast<void*>(NativeCallbackDealloc)},
    {Py_tp_repr, reinterpret_cast<void*>(NativeCallbackRepr)},
    {Py_tp_getset, kNativeCallbackGetSet},
    {Py_nb_int, reinterpret_cast<void*>(NativeCallbackInt)},
    {Py_nb_index, reinterpret_cast<void*>(NativeCallbackInt)},
    {0, nullptr}};

}  // namespace

TVMFFIObject* FunctionFromCallable(PyObject* callable) {
  TVMFFIObjectHandle out = nullptr;
  Py_INCREF(callable);
  // On failure the runtime has already released `callable` through CallbackDeleter.
  if (TVMFFIFunctionCreate(callable, CallbackSafeCall, CallbackDeleter, &out) != 0) {
    RaiseFromFFI();
    return nullptr;
  }
  return static_cast<TVMFFIObject*>(out);
}

bool InitCallbacks(PyObject* module) {
  PyType_Spec spec{"ffijit.NativeCallback", sizeof(PyNativeCallback), 0, Py_TPFLAGS_DEFAULT,
                   kNativeCallbackSlots};
  g_native_callback_type =
      reinterpret_cast<PyTypeObject*>(PyType_FromModuleAndSpec(module, &spec, nullptr));
  return g_native_callback_type != nullptr &&
         PyModule_AddObjectRef(module, "NativeCallback",
                               reinterpret_cast<PyObject*>(g_native_callback_type)) == 0;
}

}  // namespace ffijit::python
