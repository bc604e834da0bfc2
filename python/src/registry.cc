// The global function registry from Python (get_global_func, list_global_funcs,
// remove_global_func, registering a callable), Functions from Python callables, and `_dlsym`, the
// native addresses `register`/`function` take from a library path and a symbol.
// Python.h (through ffijit_py.h) comes before every standard header, as CPython requires.
#include "ffijit_py.h"

#include <dlfcn.h>

#include <cerrno>
#include <cstring>

#include "ffijit/c_ext.h"

namespace ffijit::python {
namespace {

PyObject* GetGlobalFunc(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 1 || nargs > 2) {
    PyErr_SetString(PyExc_TypeError, "get_global_func(name, allow_missing=False)");
    return nullptr;
  }
  const char* name;
  Py_ssize_t size;
  if (!Utf8Of(args[0], "name", &name, &size)) return nullptr;
  int allow_missing = nargs == 2 ? PyObject_IsTrue(args[1]) : 0;
  if (allow_missing < 0) return nullptr;
  TVMFFIByteArray key{name, static_cast<size_t>(size)};
  TVMFFIObjectHandle out = nullptr;
  if (TVMFFIFunctionGetGlobal(&key, &out) != 0) return RaiseFromFFI();
  if (out == nullptr) {
    if (allow_missing) Py_RETURN_NONE;
    PyErr_Format(PyExc_KeyError, "no global function named %R", args[0]);
    return nullptr;
  }
  return WrapFunction(static_cast<TVMFFIObject*>(out));
}

PyObject* ListGlobalFuncs(PyObject*, PyObject*) {
  TVMFFIObjectHandle names = nullptr;
  if (FFIJITFunctionListGlobals(&names) != 0) return RaiseFromFFI();
  auto* array = static_cast<TVMFFIObject*>(names);
  auto* cell = reinterpret_cast<const FFIJITArrayCell*>(array + 1);
  PyObject* list = PyList_New(cell->size);
  for (int64_t i = 0; list != nullptr && i < cell->size; ++i) {
    PyObject* item = FromAnyView(&cell->data[i]);
    if (item == nullptr)
      Py_CLEAR(list);
    else
      PyList_SET_ITEM(list, i, item);
  }
  TVMFFIObjectDecRef(array);
  if (list != nullptr && PyList_Sort(list) != 0) Py_CLEAR(list);
  return list;
}

PyObject* RemoveGlobalFunc(PyObject*, PyObject* arg) {
  const char* name;
  Py_ssize_t size;
  if (!Utf8Of(arg, "name", &name, &size)) return nullptr;
  TVMFFIByteArray key{name, static_cast<size_t>(size)};
  if (FFIJITFunctionRemoveGlobal(&key) != 0) return RaiseFromFFI();
  Py_RETURN_NONE;
}

// _register_callable(name, callable, override): a Python callable as a global function.
PyObject* RegisterCallable(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "_register_callable takes 3 arguments");
    return nullptr;
  }
  const char* name;
  Py_ssize_t size;
  if (!Utf8Of(args[0], "name", &name, &size)) return nullptr;
  int override = PyObject_IsTrue(args[2]);
  if (override < 0) return nullptr;
  TVMFFIObject* func;
  if (PyFFIFunction* known = FunctionOf(args[1])) {
    func = known->base.handle;
    TVMFFIObjectIncRef(func);
  } else {
    if (!PyCallable_Check(args[1])) {
      PyErr_Format(PyExc_TypeError, "register_func: %R is not callable", args[1]);
      return nullptr;
    }
    if ((func = FunctionFromCallable(args[1])) == nullptr) return nullptr;
  }
  TVMFFIByteArray key{name, static_cast<size_t>(size)};
  if (TVMFFIFunctionSetGlobal(&key, func, override) != 0) {
    TVMFFIObjectDecRef(func);
    return RaiseFromFFI();
  }
  return WrapFunction(func);
}

// _function_from_callable(callable)
PyObject* FunctionFromPython(PyObject*, PyObject* callable) {
  if (Py_TYPE(callable) == &PyCFunction_Type && FunctionOf(callable) != nullptr) {
    return Py_NewRef(callable);  // already what Python calls
  }
  if (PyFFIFunction* known = FunctionOf(callable)) {
    TVMFFIObjectIncRef(known->base.handle);
    return WrapFunction(known->base.handle);
  }
  if (!PyCallable_Check(callable)) {
    PyErr_Format(PyExc_TypeError, "ffijit.function: %R is not callable", callable);
    return nullptr;
  }
  TVMFFIObject* func = FunctionFromCallable(callable);
  return func == nullptr ? nullptr : WrapFunction(func);
}

// _dlsym(library_path, symbol) -> address. Libraries stay loaded: the functions made from them
// may live as long as the process.
PyObject* DlSym(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "_dlsym(library_path, symbol)");
    return nullptr;
  }
  const char* path;
  const char* symbol;
  Py_ssize_t size;
  if (!Utf8Of(args[0], "library path", &path, &size)) return nullptr;
  if (!Utf8Of(args[1], "symbol", &symbol, &size)) return nullptr;
  // A path (not a name dlopen searches for) that cannot be opened: the OSError open() raises.
  if (std::strchr(path, '/') != nullptr && !CheckFileReadable(args[0])) return nullptr;
  void* library;
  Py_BEGIN_ALLOW_THREADS;  // a library's initialisers may run Python callbacks on other threads
  library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  Py_END_ALLOW_THREADS;
  if (library == nullptr) {
    const char* reason = dlerror();
    if (reason == nullptr) reason = "unknown reason";
    // glibc ends the reason with strerror() of the failed open: a name found nowhere on the
    // search path is ENOENT (FileNotFoundError); any other failure (not an ELF file, a missing
    // dependency or symbol) ELIBBAD, a plain OSError. Both carry the library in `filename`.
    const char* missing = std::strerror(ENOENT);
    size_t reason_size = std::strlen(reason), missing_size = std::strlen(missing);
    bool not_found = reason_size >= missing_size &&
                     std::strcmp(reason + reason_size - missing_size, missing) == 0;
    PyObject* error =
        PyObject_CallFunction(PyExc_OSError, "isO", not_found ? ENOENT : ELIBBAD, reason, args[0]);
    if (error != nullptr) {
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error)), error);
      Py_DECREF(error);
    }
    return nullptr;
  }
  dlerror();
  void* address = dlsym(library, symbol);
  if (address == nullptr) {
    PyErr_Format(PyExc_AttributeError, "the library %R has no symbol %R", args[0], args[1]);
    return nullptr;
  }
  return PyLong_FromVoidPtr(address);
}

PyMethodDef kRegistryMethods[] = {
    {"get_global_func", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(GetGlobalFunc)),
     METH_FASTCALL,
     "get_global_func(name, allow_missing=False)\n--\n\nThe global function registered under "
     "`name`\n(by Python, C, C++ or a loaded module). KeyError when there is none, or None with\n"
     "allow_missing=True."},
    {"list_global_funcs", ListGlobalFuncs, METH_NOARGS,
     "list_global_funcs()\n--\n\nThe names of every global function, sorted."},
    {"remove_global_func", RemoveGlobalFunc, METH_O,
     "remove_global_func(name)\n--\n\nRemoves a global function's name; the function lives on "
     "while\nreferenced."},
    {"_register_callable", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(RegisterCallable)),
     METH_FASTCALL, "_register_callable(name, callable, override)"},
    {"_function_from_callable", FunctionFromPython, METH_O, "_function_from_callable(callable)"},
    {"_dlsym", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(DlSym)), METH_FASTCALL,
     "_dlsym(library_path, symbol) -> address"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

bool InitRegistry(PyObject* module) {
  return PyModule_AddFunctions(module, kRegistryMethods) == 0;
}

}  // namespace ffijit::python
