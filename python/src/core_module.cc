// The `ffijit._core` extension module: creates the types and collects the module functions of
// the other files. The Python-facing API (register, function, callback, ...) is ffijit/__init__.py.
// Python.h (through ffijit_py.h) comes before every standard header, as CPython requires.
#include "ffijit_py.h"

#include <dlfcn.h>

#include "ffijit/c_ext.h"
#include "ffijit/jit/bridge.h"
#include "ffijit/jit/jit.h"

namespace ffijit::python {

std::atomic<bool> g_python_exited{false};

namespace {

PyObject* g_ctypes_void_p = nullptr;
PyObject* g_ctypes_function_pointer = nullptr;  // ctypes._CFuncPtr

void MarkExited() {
  g_python_exited.store(true, std::memory_order_release);
  WriteHeldToStderr();  // no pending call will report them now
}

PyObject* JitAvailable(PyObject*, PyObject*) {
  return PyBool_FromLong(ffijit::JitAvailable());
}

PyMethodDef kCoreMethods[] = {
    {"jit_available", JitAvailable, METH_NOARGS,
     "jit_available()\n--\n\nTrue when this build compiles JIT thunks (LLVM is present)."},
    {nullptr, nullptr, 0, nullptr}};

// CPython loads an extension and its dependencies RTLD_LOCAL, which hides ffijit's C ABI from
// every library loaded later: a TVM FFI module (.so) that calls TVMFFIErrorSetRaised without
// linking a runtime of its own would die on an undefined symbol. The package makes its libraries
// global, as TVM FFI's own Python package does with libtvm_ffi.
void ExposeLibrary(void* symbol) {
  Dl_info info{};
  if (dladdr(symbol, &info) != 0 && info.dli_fname != nullptr) {
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);  // kept: ffijit stays loaded
  }
}

int CoreExec(PyObject* module) {
  ExposeLibrary(reinterpret_cast<void*>(&TVMFFIObjectDecRef));
  ExposeLibrary(reinterpret_cast<void*>(&FFIJITMakeFunction));
  if (!InitErrors(module) || !InitObjectTypes(module) || !InitModuleType(module) ||
      !InitFunctionType(module) || !InitRegistry(module) || !InitTensorType(module) ||
      !InitValueTypes(module) || !InitCallbacks(module) || !InitEntries(module)) {
    return -1;
  }
  if (PyModule_AddFunctions(module, kCoreMethods) != 0) return -1;
  // The TVM FFI ABI revision, as the runtime reports it: (name, commit, TVM FFI version).
  const FFIJITTvmFfiAbi* abi = FFIJITGetTvmFfiAbi();
  PyObject* revision = Py_BuildValue("(sss)", abi->name, abi->commit, abi->version);
  if (revision == nullptr) return -1;
  int added = PyModule_AddObjectRef(module, "_tvm_ffi_abi", revision);
  Py_DECREF(revision);
  if (added != 0) return -1;
  // FFIJITMakeFunction's flags (ffijit/jit/bridge.h), for the package to combine.
  if (PyModule_AddIntConstant(module, "_STATUS_CONVENTION", kFFIJITStatusConvention) != 0 ||
      PyModule_AddIntConstant(module, "_ALLOW_OVERRIDE", kFFIJITAllowOverride) != 0 ||
      PyModule_AddIntConstant(module, "_INTERPRET_ONLY", kFFIJITInterpretOnly) != 0) {
    return -1;
  }
  // Deleters of callbacks and buffers may run after Python is gone (a static C++ object
  // releasing a Function at exit); from then on they leave Python alone.
  Py_AtExit(MarkExited);
  return 0;
}

PyModuleDef_Slot kCoreSlots[] = {{Py_mod_exec, reinterpret_cast<void*>(CoreExec)}, {0, nullptr}};

PyModuleDef kCoreModule = {PyModuleDef_HEAD_INIT,
                           "ffijit._core",
                           "ffijit's CPython extension (use the `ffijit` package).",
                           0,
                           nullptr,
                           kCoreSlots,
                           nullptr,
                           nullptr,
                           nullptr};

}  // namespace

PyObject* CtypesVoidPointerType() {
  if (g_ctypes_void_p == nullptr) {
    PyObject* ctypes = PyImport_ImportModule("ctypes");
    if (ctypes == nullptr) return nullptr;
    g_ctypes_void_p = PyObject_GetAttrString(ctypes, "c_void_p");
    g_ctypes_function_pointer = PyObject_GetAttrString(ctypes, "_CFuncPtr");
    Py_DECREF(ctypes);
    if (g_ctypes_void_p == nullptr || g_ctypes_function_pointer == nullptr) {
      Py_CLEAR(g_ctypes_void_p);
      Py_CLEAR(g_ctypes_function_pointer);
    }
  }
  return g_ctypes_void_p;
}

int IsCtypesPointer(PyObject* obj) {
  // Only objects of ctypes' own types qualify; ctypes itself needs no import for anything else.
  PyTypeObject* meta = Py_TYPE(reinterpret_cast<PyObject*>(Py_TYPE(obj)));
  if (meta == &PyType_Type) return 0;
  if (CtypesVoidPointerType() == nullptr) return -1;
  return PyObject_TypeCheck(obj, reinterpret_cast<PyTypeObject*>(g_ctypes_void_p)) ||
         PyObject_TypeCheck(obj, reinterpret_cast<PyTypeObject*>(g_ctypes_function_pointer));
}

}  // namespace ffijit::python

PyMODINIT_FUNC PyInit__core() {
  return PyModuleDef_Init(&ffijit::python::kCoreModule);
}
