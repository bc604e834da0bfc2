// ffijit.Module: a TVM FFI module whose functions are attributes and items, and the module
// functions that load one (load_module) or find the system library (system_lib), all through the
// runtime's `ffi.Module*` global functions.
// Python.h (through ffijit_py.h) comes before every standard header, as CPython requires.
#include "ffijit_py.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ffijit::python {

PyTypeObject* g_module_type = nullptr;

namespace {

// Calls the global function `name` with packed arguments; a new Python value or NULL.
PyObject* CallGlobal(const char* name, TVMFFIAny* args, int32_t n) {
  TVMFFIByteArray key{name, std::strlen(name)};
  TVMFFIObjectHandle func = nullptr;
  if (TVMFFIFunctionGetGlobal(&key, &func) != 0) return RaiseFromFFI();
  if (func == nullptr) {
    PyErr_Format(PyExc_RuntimeError, "ffijit: the global function %s is missing", name);
    return nullptr;
  }
  PyObject* result = CallPacked(static_cast<TVMFFIObject*>(func), args, n, false);
  TVMFFIObjectDecRef(func);
  return result;
}

TVMFFIAny ObjectArg(PyObject* self) {
  TVMFFIAny any;
  any.type_index = HandleOf(self)->type_index;
  any.zero_padding = 0;
  any.v_obj = HandleOf(self);
  return any;
}

// Calls `global`(module, name, flag): the shape of the runtime's per-function module queries.
PyObject* QueryByName(const char* global, PyObject* self, PyObject* name, bool flag) {
  TVMFFIAny args[3];
  args[0] = ObjectArg(self);
  ArgPack pack;
  if (!pack.Convert(name, 0)) return nullptr;
  args[1] = pack.values()[0];
  args[2].type_index = kTVMFFIBool;
  args[2].zero_padding = 0;
  args[2].v_int64 = flag ? 1 : 0;
  return CallGlobal(global, args, 3);
}

// The module's function `name`, or None when it has none.
PyObject* ModuleFunction(PyObject* self, PyObject* name, bool query_imports) {
  return QueryByName("ffi.ModuleGetFunction", self, name, query_imports);
}

PyObject* ModuleGetAttr(PyObject* self, PyObject* name) {
  PyObject* found = PyObject_GenericGetAttr(self, name);
  if (found != nullptr || !PyErr_ExceptionMatches(PyExc_AttributeError)) return found;
  // Dunder names are Python's protocol lookups (copy, pickle, numpy), never functions.
  const char* text = PyUnicode_AsUTF8(name);
  if (text == nullptr || std::strncmp(text, "__", 2) == 0) return nullptr;
  PyErr_Clear();
  found = ModuleFunction(self, name, true);
  if (found == Py_None) {
    Py_DECREF(found);
    PyErr_Format(PyExc_AttributeError, "the module has no function %R", name);
    return nullptr;
  }
  return found;
}

PyObject* ModuleSubscript(PyObject* self, PyObject* name) {
  PyObject* found = ModuleFunction(self, name, true);
  if (found == Py_None) {
    Py_DECREF(found);
    PyErr_Format(PyExc_KeyError, "the module has no function %R", name);
    return nullptr;
  }
  return found;
}

PyObject* ModuleGetFunction(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 1 || nargs > 2) {
    PyErr_SetString(PyExc_TypeError, "get_function(name, query_imports=True)");
    return nullptr;
  }
  int query_imports = nargs == 2 ? PyObject_IsTrue(args[1]) : 1;
  if (query_imports < 0) return nullptr;
  return ModuleFunction(self, args[0], query_imports != 0);
}

PyObject* ModuleImport(PyObject* self, PyObject* other) {
  if (!PyObject_TypeCheck(other, g_module_type)) {
    PyErr_Format(PyExc_TypeError, "import_module expects an ffijit.Module, not %s",
                 Py_TYPE(other)->tp_name);
    return nullptr;
  }
  TVMFFIAny args[2] = {ObjectArg(self), ObjectArg(other)};
  return CallGlobal("ffi.ModuleImportModule", args, 2);
}

PyObject* ModuleKind(PyObject* self, void*) {
  TVMFFIAny args[1] = {ObjectArg(self)};
  return CallGlobal("ffi.ModuleGetKind", args, 1);
}

PyObject* ModuleImplements(PyObject* self, PyObject* name) {
  return QueryByName("ffi.ModuleImplementsFunction", self, name, true);
}

// Only JIT modules unload on request. A shared-library module closes its library (dlclose) by
// itself once the module and every function taken from it are gone, which Python decides, not
// a call: asking for more is a NotImplementedError saying so (documented in the guide, 14.10).
PyObject* ModuleUnload(PyObject* self, PyObject*) {
  TVMFFIAny args[1] = {ObjectArg(self)};
  TVMFFIByteArray key{"ffijit.JitModuleUnload", std::strlen("ffijit.JitModuleUnload")};
  TVMFFIObjectHandle func = nullptr;
  if (TVMFFIFunctionGetGlobal(&key, &func) != 0) return RaiseFromFFI();
  PyObject* done = nullptr;
  if (func != nullptr) {  // a build without LLVM has no JIT modules
    done = CallPacked(static_cast<TVMFFIObject*>(func), args, 1, false);
    TVMFFIObjectDecRef(func);
    // The global's one TypeError for a Module argument: the module is not a JIT module.
    if (done != nullptr || !PyErr_ExceptionMatches(PyExc_TypeError)) return done;
    PyErr_Clear();
  }
  PyErr_SetString(PyExc_NotImplementedError,
                  "unload(): only JIT modules (loaded from .o, .bc or .ll files) unload on "
                  "request; a shared-library module closes its library when the module and "
                  "every function taken from it are gone (del them)");
  return nullptr;
}

PyMethodDef kModuleMethods[] = {
    {"get_function", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(ModuleGetFunction)),
     METH_FASTCALL,
     "get_function(name, query_imports=True)\n--\n\nThe module's function `name`, or None."},
    {"import_module", ModuleImport, METH_O,
     "import_module(other)\n--\n\nMakes `other`'s functions reachable from this module "
     "(imports)."},
    {"implements_function", ModuleImplements, METH_O,
     "implements_function(name)\n--\n\nTrue when the module itself defines `name`."},
    {"unload", ModuleUnload, METH_NOARGS,
     "unload()\n--\n\nFrees a JIT module's code now (see the guide: refused while anything\n"
     "else references the module). A shared-library module cannot be unloaded on request\n"
     "(NotImplementedError): its library closes when it and its functions are gone."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef kModuleGetSet[] = {{"kind", ModuleKind, nullptr, "The module's kind.", nullptr},
                               {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot kModuleSlots[] = {
    {Py_tp_doc,
     const_cast<char*>("A TVM FFI module: its functions are attributes (mod.add) and items\n"
                       "(mod['add']).")},
    {Py_tp_getattro, reinterpret_cast<void*>(ModuleGetAttr)},
    {Py_mp_subscript, reinterpret_cast<void*>(ModuleSubscript)},
    {Py_tp_methods, kModuleMethods},
    {Py_tp_getset, kModuleGetSet},
    {0, nullptr}};

}  // namespace

bool CheckFileReadable(PyObject* path) {
  PyObject* encoded = nullptr;
  if (PyUnicode_FSConverter(path, &encoded) == 0) return false;
  int error = 0;
  int fd = open(PyBytes_AS_STRING(encoded), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = errno;
  } else {
    struct stat info {};
    if (fstat(fd, &info) != 0) {
      error = errno;
    } else if (S_ISDIR(info.st_mode)) {
      error = EISDIR;
    }
    close(fd);
  }
  Py_DECREF(encoded);
  if (error == 0) return true;
  errno = error;
  PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path);
  return false;
}

namespace {

// load_module(path) and system_lib(): through the runtime's module globals.
PyObject* LoadModule(PyObject*, PyObject* path) {
  if (PyObject_TypeCheck(path, &PyUnicode_Type) == 0) {
    path = PyOS_FSPath(path);
    if (path == nullptr) return nullptr;
  } else {
    Py_INCREF(path);
  }
  // A file that cannot be opened is the OSError Python's open() raises (FileNotFoundError,
  // PermissionError, IsADirectoryError), carrying the path in `filename`. A bare `name.so`
  // is exempt: dlopen searches the library path for it, not the working directory.
  const char* text = PyUnicode_Check(path) ? PyUnicode_AsUTF8(path) : nullptr;
  bool searched = text != nullptr && std::strchr(text, '/') == nullptr && std::strstr(text, ".so");
  if (text == nullptr && PyErr_Occurred()) PyErr_Clear();
  if (PyUnicode_Check(path) && !searched && !CheckFileReadable(path)) {
    Py_DECREF(path);
    return nullptr;
  }
  ArgPack pack;
  PyObject* result = nullptr;
  if (pack.Convert(path, 0)) {
    // The loader is chosen by the file's extension.
    result = CallGlobal("ffi.ModuleLoadFromFile", pack.values(), 1);
  }
  Py_DECREF(path);
  return result;
}

PyObject* SystemLib(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  ArgPack pack;
  if (nargs > 1) {
    PyErr_SetString(PyExc_TypeError, "system_lib(prefix='')");
    return nullptr;
  }
  if (!pack.Reserve(1) || (nargs == 1 && !pack.Convert(args[0], 0))) return nullptr;
  return CallGlobal("ffi.SystemLib", pack.values(), static_cast<int32_t>(nargs));
}

PyMethodDef kModuleModuleMethods[] = {
    {"load_module", LoadModule, METH_O,
     "load_module(path)\n--\n\nLoads a module: a shared library (.so) through dlopen; an object\n"
     "file (.o), LLVM bitcode (.bc) or LLVM IR text (.ll) through ffijit's JIT. Its functions\n"
     "are the `__tvm_ffi_<name>` symbols it exports."},
    {"system_lib", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(SystemLib)), METH_FASTCALL,
     "system_lib(prefix='')\n--\n\nThe module of functions linked into the process and "
     "registered\nas its system library."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

bool InitModuleType(PyObject* module) {
  g_module_type = MakeObjectType(module, "ffijit.Module", kModuleSlots, g_object_type, "Module");
  return g_module_type != nullptr && PyModule_AddFunctions(module, kModuleModuleMethods) == 0;
}

}  // namespace ffijit::python
