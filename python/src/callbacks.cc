// Python callables as TVM FFI Functions (callable from C, C++, modules and JIT code), and as
// plain native function pointers with a signature (ffijit.NativeCallback, on the jit library's
// NativeCallback) for C APIs that take one.
//
// A callback takes the GIL on entry, so any thread may call it. A Python exception raised inside
// leaves as a TVM FFI error (errors.cc) and returns to a Python caller as the same object.
// Python.h (through ffijit_py.h) comes before every standard header, as CPython requires.
#include "ffijit_py.h"

#include <float.h>
#include <time.h>

#include <cmath>
#include <cstdlib>
#include <new>
#include <string>
#include <unordered_map>

#include "ffijit/jit/jit.h"
#include "ffijit/reflect/metadata.h"

namespace ffijit::python {

namespace {

// The Python callable behind each Function made by FunctionFromCallable, by its handle, for the
// cycle collector (the callable is a reference the handle owns, invisible to Python otherwise).
// Guarded by the GIL; an entry leaves when its Function is deleted.
std::unordered_map<TVMFFIObject*, PyObject*>* g_callables = nullptr;

// A callback Function's `self`: its callable, its handle to unlist when it goes, and how it hands
// over pointers (CallbackArgument).
struct PythonCallback {
  PyObject* callable;
  TVMFFIObject* handle;
  bool pointers_as_ints;
};

// How long a callback on a thread without the GIL waits while one call holds it
// (FFIJIT_CALLBACK_GIL_WAIT_MS, read at import).
int64_t g_gil_wait_ms = 1000;

// Before a thread that lacks the GIL waits for it: when a native call holds the GIL (registered
// with release_gil=False) and that very call is still running after g_gil_wait_ms, the thread
// would most likely wait forever (the native waits for this thread: the usual pattern of a native
// that starts threads calling back and joins them). false then, with a RuntimeError raised that
// names the function and the fix. Any other holder of the GIL (Python code, a call that ends)
// hands it over in the ordinary way.
bool MayWaitForTheGil() {
  const void* holder = __atomic_load_n(&g_lock_holder, __ATOMIC_RELAXED);
  if (holder == nullptr) return true;
  const uint64_t calls = __atomic_load_n(&g_lock_calls, __ATOMIC_RELAXED);
  for (int64_t waited = 0; waited < g_gil_wait_ms; ++waited) {
    timespec one_ms{0, 1000000};
    nanosleep(&one_ms, nullptr);
    if (__atomic_load_n(&g_lock_holder, __ATOMIC_RELAXED) != holder ||
        __atomic_load_n(&g_lock_calls, __ATOMIC_RELAXED) != calls) {
      return true;
    }
  }
  std::string message =
      "a Python callback called from a thread without the GIL cannot run: the GIL is held by a "
      "call of `" +
      std::string(static_cast<const char*>(holder)) +
      "`, which does not release it (release_gil=False) and has not returned in " +
      std::to_string(g_gil_wait_ms) +
      " ms; a native that calls Python back from threads of its own, and waits for them, must be "
      "registered with release_gil=True";
  TVMFFIErrorSetRaisedFromCStr("RuntimeError", message.c_str());
  return false;
}

// Whether the calling thread holds the GIL: the thread state running Python is this thread's.
// PyGILState_Check says the same but answers true for every thread once a subinterpreter exists.
bool ThisThreadHoldsTheGil() {
#if PY_VERSION_HEX >= 0x030D0000
  PyThreadState* running = PyThreadState_GetUnchecked();
#else
  PyThreadState* running = _PyThreadState_UncheckedGet();
#endif
  return running != nullptr && running == PyGILState_GetThisThreadState();
}

// A callback's argument as its Python value: 14.5's results, except that for a C function pointer
// (ffijit.callback, `pointers_as_ints`) a pointer (OpaquePtr, DLTensorPtr) arrives as an int
// address (None for NULL), as ctypes hands a callback its c_void_p arguments; making a
// ctypes.c_void_p per pointer cost more than the rest of the call. A callable reached by packed
// calls keeps TVM FFI's ctypes.c_void_p, so a pointer it passes on or returns stays a pointer.
PyObject* CallbackArgument(const TVMFFIAny* any, bool pointers_as_ints) {
  switch (any->type_index) {
    case kTVMFFIInt:
      return PyLong_FromLongLong(any->v_int64);
    case kTVMFFIFloat:
      return PyFloat_FromDouble(any->v_float64);
    case kTVMFFIOpaquePtr:
    case kTVMFFIDLTensorPtr:
      if (!pointers_as_ints) return FromAnyView(any);
      if (any->v_ptr == nullptr) Py_RETURN_NONE;
      return PyLong_FromVoidPtr(any->v_ptr);
    default:
      return FromAnyView(any);
  }
}

int CallbackSafeCall(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (!PythonIsAvailable()) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError",
                                 "a Python callback was called while Python is shutting down");
    return -1;
  }
  // A thread that holds the GIL (a native called from Python calling back) takes it no more:
  // PyGILState_Ensure and Release would only count up and down.
  const bool held = ThisThreadHoldsTheGil();
  if (!held && !MayWaitForTheGil()) return -1;
  PyGILState_STATE state = held ? PyGILState_LOCKED : PyGILState_Ensure();
  const auto* callback = static_cast<PythonCallback*>(self);
  PyObject* callable = callback->callable;
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
      if ((stack[converted] = CallbackArgument(&args[converted], callback->pointers_as_ints)) ==
          nullptr)
        break;
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
  if (!held) PyGILState_Release(state);
  return rc;
}

void CallbackDeleter(void* self) {
  auto* callback = static_cast<PythonCallback*>(self);
  if (!PythonIsAvailable()) {  // Python's objects are gone already
    delete callback;
    return;
  }
  PyGILState_STATE state = PyGILState_Ensure();
  if (callback->handle != nullptr) g_callables->erase(callback->handle);
  PyObject* callable = callback->callable;
  delete callback;
  Py_DECREF(callable);
  PyGILState_Release(state);
}

// ---- NativeCallback ----

struct PyNativeCallback {
  PyObject_HEAD ffijit::NativeCallback* callback;
  PyObject* function;     // the ffijit.Function it calls
  PyObject* description;  // what it calls and its C signature, a str
  PyObject* repr;         // repr() while not cleared, a str
  // Read without the GIL (ReportUnraisable): the handle of `function` (the callback holds it),
  // and repr's UTF-8 text.
  TVMFFIObject* handle;
  const char* repr_text;
};

// The plain convention's errors, which the native caller cannot see, go to sys.unraisablehook,
// from the failing thread when it holds the GIL or may wait for it. A thread without the GIL
// never waits for it while a call that holds it runs (the call may be waiting for this thread:
// the callback gave up on the GIL for that reason, MayWaitForTheGil): the error is held for a
// report once that call returns. Once Python is shutting down, it goes to stderr.
void ReportUnraisable(void* data, const char* declaration) {
  auto* self = static_cast<PyNativeCallback*>(data);
  if (!PythonIsAvailable()) {
    TVMFFIObjectHandle error = nullptr;
    TVMFFIErrorMoveFromRaised(&error);
    if (error == nullptr) return;
    WriteUnraisableToStderr(static_cast<TVMFFIObject*>(error), declaration, self->repr_text);
    TVMFFIErrorSetRaised(error);  // still the thread's error, for a native caller that checks
    TVMFFIObjectDecRef(error);
    return;
  }
  if (!ThisThreadHoldsTheGil() && __atomic_load_n(&g_lock_holder, __ATOMIC_RELAXED) != nullptr) {
    HoldUnraisable(self->handle, declaration, self->repr_text);
    return;
  }
  PyGILState_STATE state = PyGILState_Ensure();
  PyFFIFunction* function = self->function != nullptr ? FunctionOf(self->function) : nullptr;
  PyObject* callable = function != nullptr ? CallableOf(function->base.handle) : nullptr;
  WriteUnraisableFromRaised(declaration, callable != nullptr ? callable : self->function);
  PyGILState_Release(state);
}

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
    TVMFFIObject* made = FunctionFromCallable(func, /*pointers_as_ints=*/true);
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
  PyObject* repr =
      PyUnicode_FromFormat("<ffijit.NativeCallback %U at %p>", description, callback->pointer());
  const char* repr_text = repr != nullptr ? PyUnicode_AsUTF8(repr) : nullptr;
  PyObject* self = repr_text != nullptr ? type->tp_alloc(type, 0) : nullptr;
  if (self == nullptr) {
    delete callback;
    Py_XDECREF(repr);
    Py_DECREF(description);
    Py_DECREF(function);
    return nullptr;
  }
  auto* me = reinterpret_cast<PyNativeCallback*>(self);
  me->callback = callback;
  me->function = function;
  me->description = description;
  me->repr = repr;
  me->handle = FunctionOf(function)->base.handle;
  me->repr_text = repr_text;
  if (!status) callback->SetUnreportedErrorHandler(ReportUnraisable, self);
  return self;
}

PyObject* NativeCallbackRepr(PyObject* self) {
  auto* me = reinterpret_cast<PyNativeCallback*>(self);
  if (me->callback == nullptr) {
    return PyUnicode_FromFormat("<ffijit.NativeCallback %U (cleared)>", me->description);
  }
  return Py_NewRef(me->repr);
}

// The callable is owned through the Function's handle, which the native callback's state holds
// too: visited here when this object is all that holds the Function (its builtin and wrapper
// held once each, the handle by them and the state), so the collector sees every reference.
int NativeCallbackTraverse(PyObject* self, visitproc visit, void* arg) {
  auto* me = reinterpret_cast<PyNativeCallback*>(self);
  Py_VISIT(Py_TYPE(self));
  if (me->function == nullptr) return 0;
  PyFFIFunction* function = FunctionOf(me->function);
  if (function != nullptr && me->callback != nullptr && Py_REFCNT(me->function) == 1 &&
      (me->function == reinterpret_cast<PyObject*>(function) ||
       Py_REFCNT(reinterpret_cast<PyObject*>(function)) == 1) &&
      FFIJITHeaderStrongCount(function->base.handle) == 2) {
    Py_VISIT(CallableOf(function->base.handle));
  }
  Py_VISIT(me->function);
  return 0;
}

int NativeCallbackClear(PyObject* self) {
  auto* me = reinterpret_cast<PyNativeCallback*>(self);
  ffijit::NativeCallback* callback = me->callback;
  me->callback = nullptr;
  delete callback;
  Py_CLEAR(me->function);
  return 0;
}

void NativeCallbackDealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  NativeCallbackClear(self);
  Py_XDECREF(reinterpret_cast<PyNativeCallback*>(self)->description);
  Py_XDECREF(reinterpret_cast<PyNativeCallback*>(self)->repr);
  type->tp_free(self);
  Py_DECREF(type);
}

bool Cleared(PyObject* self) {
  if (reinterpret_cast<PyNativeCallback*>(self)->callback != nullptr) return false;
  PyErr_SetString(PyExc_ValueError, "the NativeCallback was cleared by the garbage collector");
  return true;
}

PyObject* NativeCallbackAddress(PyObject* self, void*) {
  if (Cleared(self)) return nullptr;
  return PyLong_FromVoidPtr(reinterpret_cast<PyNativeCallback*>(self)->callback->pointer());
}

PyObject* NativeCallbackFunction(PyObject* self, void*) {
  if (Cleared(self)) return nullptr;
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
    {Py_tp_traverse, reinterpret_cast<void*>(NativeCallbackTraverse)},
    {Py_tp_clear, reinterpret_cast<void*>(NativeCallbackClear)},
    {Py_tp_repr, reinterpret_cast<void*>(NativeCallbackRepr)},
    {Py_tp_getset, kNativeCallbackGetSet},
    {Py_nb_int, reinterpret_cast<void*>(NativeCallbackInt)},
    {Py_nb_index, reinterpret_cast<void*>(NativeCallbackInt)},
    {0, nullptr}};

// ---- load and store: what a callback's pointer arguments point at ----

// DLPack's code of bool (kDLBool, 6, which the dlpack.h this builds against may predate).
constexpr uint8_t kBoolCode = 6;

// The scalar type `spec` (an ffijit.DataType, or a name DataType takes) names, for load/store:
// int and uint of 8-64 bits, float32/float64, bool; false with a ValueError/TypeError otherwise.
bool ScalarTypeOf(PyObject* spec, const char* caller, DLDataType* out) {
  if (Py_TYPE(spec) == g_datatype_type) {
    *out = reinterpret_cast<PyFFIDataType*>(spec)->dtype;
  } else if (PyUnicode_Check(spec)) {
    // The last name parsed, kept (by the GIL): a literal in a loop is the same object each time.
    static PyObject* last_name = nullptr;
    static DLDataType last_dtype{};
    if (spec == last_name) {
      *out = last_dtype;
    } else {
      PyObject* made = PyObject_CallOneArg(reinterpret_cast<PyObject*>(g_datatype_type), spec);
      if (made == nullptr) return false;
      *out = reinterpret_cast<PyFFIDataType*>(made)->dtype;
      Py_DECREF(made);
      Py_XSETREF(last_name, Py_NewRef(spec));
      last_dtype = *out;
    }
  } else {
    PyErr_Format(PyExc_TypeError, "%s: dtype must be an ffijit.DataType or its name, not %.100s",
                 caller, Py_TYPE(spec)->tp_name);
    return false;
  }
  const DLDataType t = *out;
  const bool integer = (t.code == kDLInt || t.code == kDLUInt) &&
                       (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64);
  const bool floating = t.code == kDLFloat && (t.bits == 32 || t.bits == 64);
  const bool boolean = t.code == kBoolCode && t.bits == 8;
  if (t.lanes == 1 && (integer || floating || boolean)) return true;
  PyObject* text = PyObject_Str(spec);
  PyErr_Format(PyExc_ValueError,
               "%s: dtype %S is not a scalar it reads or writes (int8-int64, uint8-uint64, "
               "float32, float64, bool)",
               caller, text != nullptr ? text : spec);
  Py_XDECREF(text);
  return false;
}

// The address an int argument holds; false with an error for NULL or a non-int.
bool AddressOf(PyObject* address, const char* caller, char** out) {
  if (!PyLong_Check(address)) {
    PyErr_Format(PyExc_TypeError, "%s: address must be an int, not %.100s", caller,
                 Py_TYPE(address)->tp_name);
    return false;
  }
  void* pointer = PyLong_AsVoidPtr(address);
  if (pointer == nullptr) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s: the address is NULL", caller);
    return false;
  }
  *out = static_cast<char*>(pointer);
  return true;
}

// The byte offset of element `index` of type t; false with an OverflowError when it does not fit
// a pointer offset (or a TypeError when index is not an int).
bool OffsetOf(PyObject* index_obj, DLDataType t, const char* caller, Py_ssize_t* out) {
  Py_ssize_t index = PyLong_AsSsize_t(index_obj);
  if (index == -1 && PyErr_Occurred()) return false;
  const Py_ssize_t size = t.bits / 8;
  if (index > PY_SSIZE_T_MAX / size || index < PY_SSIZE_T_MIN / size) {
    PyErr_Format(PyExc_OverflowError, "%s: index %zd is too far for a %d-byte element", caller,
                 index, static_cast<int>(size));
    return false;
  }
  *out = index * size;
  return true;
}

// load(address, dtype, index=0): the scalar at address + index * size, read in place (what
// ctypes' c_int.from_address(p).value reads, without making a ctypes object).
PyObject* Load(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 2 || nargs > 3) {
    PyErr_Format(PyExc_TypeError, "load() takes 2 or 3 arguments (%zd given)", nargs);
    return nullptr;
  }
  char* base = nullptr;
  DLDataType t{};
  if (!AddressOf(args[0], "load()", &base) || !ScalarTypeOf(args[1], "load()", &t)) {
    return nullptr;
  }
  Py_ssize_t offset = 0;
  if (nargs == 3 && !OffsetOf(args[2], t, "load()", &offset)) return nullptr;
  const char* at = base + offset;
  switch (t.code) {
    case kBoolCode:
      return PyBool_FromLong(*reinterpret_cast<const uint8_t*>(at) != 0);
    case kDLFloat:
      if (t.bits == 32) return PyFloat_FromDouble(*reinterpret_cast<const float*>(at));
      return PyFloat_FromDouble(*reinterpret_cast<const double*>(at));
    case kDLInt:
      switch (t.bits) {
        case 8:
          return PyLong_FromLong(*reinterpret_cast<const int8_t*>(at));
        case 16:
          return PyLong_FromLong(*reinterpret_cast<const int16_t*>(at));
        case 32:
          return PyLong_FromLong(*reinterpret_cast<const int32_t*>(at));
        default:
          return PyLong_FromLongLong(*reinterpret_cast<const int64_t*>(at));
      }
    default:
      switch (t.bits) {
        case 8:
          return PyLong_FromUnsignedLong(*reinterpret_cast<const uint8_t*>(at));
        case 16:
          return PyLong_FromUnsignedLong(*reinterpret_cast<const uint16_t*>(at));
        case 32:
          return PyLong_FromUnsignedLong(*reinterpret_cast<const uint32_t*>(at));
        default:
          return PyLong_FromUnsignedLongLong(*reinterpret_cast<const uint64_t*>(at));
      }
  }
}

// Writes `bits` low bits of `value` (a C integer in range) at `at`.
void StoreInteger(char* at, int bits, uint64_t value) {
  switch (bits) {
    case 8:
      *reinterpret_cast<uint8_t*>(at) = static_cast<uint8_t>(value);
      break;
    case 16:
      *reinterpret_cast<uint16_t*>(at) = static_cast<uint16_t>(value);
      break;
    case 32:
      *reinterpret_cast<uint32_t*>(at) = static_cast<uint32_t>(value);
      break;
    default:
      *reinterpret_cast<uint64_t*>(at) = value;
  }
}

// store(address, dtype, value, index=0): writes value at address + index * size; a value out of
// the type's range is an OverflowError (nothing written), as for a call's arguments.
PyObject* Store(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 3 || nargs > 4) {
    PyErr_Format(PyExc_TypeError, "store() takes 3 or 4 arguments (%zd given)", nargs);
    return nullptr;
  }
  char* base = nullptr;
  DLDataType t{};
  if (!AddressOf(args[0], "store()", &base) || !ScalarTypeOf(args[1], "store()", &t)) {
    return nullptr;
  }
  Py_ssize_t offset = 0;
  if (nargs == 4 && !OffsetOf(args[3], t, "store()", &offset)) return nullptr;
  char* at = base + offset;
  PyObject* value = args[2];
  if (t.code == kDLFloat) {
    double d = PyFloat_AsDouble(value);
    if (d == -1.0 && PyErr_Occurred()) return nullptr;
    if (t.bits == 32 && std::isfinite(d) && std::fabs(d) > FLT_MAX) {
      PyErr_Format(PyExc_OverflowError, "store(): %R does not fit float32", value);
      return nullptr;
    }
    if (t.bits == 32) {
      *reinterpret_cast<float*>(at) = static_cast<float>(d);
    } else {
      *reinterpret_cast<double*>(at) = d;
    }
    Py_RETURN_NONE;
  }
  if (t.code == kBoolCode) {
    int truth = PyObject_IsTrue(value);
    if (truth < 0) return nullptr;
    *reinterpret_cast<uint8_t*>(at) = static_cast<uint8_t>(truth);
    Py_RETURN_NONE;
  }
  PyObject* number = PyNumber_Index(value);
  if (number == nullptr) return nullptr;
  uint64_t word = 0;
  bool fits = false;
  if (t.code == kDLInt) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(number, &overflow);
    const long long limit = t.bits == 64 ? INT64_MAX : (1LL << (t.bits - 1)) - 1;
    fits = overflow == 0 && !(v == -1 && PyErr_Occurred()) && v >= -limit - 1 && v <= limit;
    word = static_cast<uint64_t>(v);
  } else {
    unsigned long long v = PyLong_AsUnsignedLongLong(number);
    const bool failed = v == static_cast<unsigned long long>(-1) && PyErr_Occurred();
    fits = !failed && (t.bits == 64 || v < (1ULL << t.bits));
    word = v;
  }
  if (!fits) {
    PyErr_Clear();
    PyErr_Format(PyExc_OverflowError, "store(): %R does not fit %s%d", number,
                 t.code == kDLInt ? "int" : "uint", static_cast<int>(t.bits));
    Py_DECREF(number);
    return nullptr;
  }
  Py_DECREF(number);
  StoreInteger(at, t.bits, word);
  Py_RETURN_NONE;
}

PyMethodDef kMemoryMethods[] = {
    {"load", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Load)), METH_FASTCALL,
     "load(address, dtype, index=0)\n--\n\n"
     "The scalar of type `dtype` (an ffijit.DataType or its name: int8-int64, uint8-uint64,\n"
     "float32, float64, bool) at `address` + index * its size, read in place. For a callback's\n"
     "pointer arguments; the address must point at readable memory."},
    {"store", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Store)), METH_FASTCALL,
     "store(address, dtype, value, index=0)\n--\n\n"
     "Writes `value` as a `dtype` scalar at `address` + index * its size (an OverflowError,\n"
     "with nothing written, when it does not fit)."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

TVMFFIObject* FunctionFromCallable(PyObject* callable, bool pointers_as_ints) {
  auto* self = new (std::nothrow) PythonCallback{callable, nullptr, pointers_as_ints};
  if (self == nullptr) {
    PyErr_NoMemory();
    return nullptr;
  }
  TVMFFIObjectHandle out = nullptr;
  Py_INCREF(callable);
  // On failure the runtime has already released `self` through CallbackDeleter.
  if (TVMFFIFunctionCreate(self, CallbackSafeCall, CallbackDeleter, &out) != 0) {
    RaiseFromFFI();
    return nullptr;
  }
  auto* handle = static_cast<TVMFFIObject*>(out);
  try {
    g_callables->emplace(handle, callable);
    self->handle = handle;
  } catch (const std::bad_alloc&) {
    TVMFFIObjectDecRef(handle);
    PyErr_NoMemory();
    return nullptr;
  }
  return handle;
}

PyObject* CallableOf(TVMFFIObject* handle) {
  auto found = g_callables->find(handle);
  return found != g_callables->end() ? found->second : nullptr;
}

bool InitCallbacks(PyObject* module) {
  g_callables = new std::unordered_map<TVMFFIObject*, PyObject*>();
  if (const char* wait = std::getenv("FFIJIT_CALLBACK_GIL_WAIT_MS"); wait != nullptr) {
    char* end = nullptr;
    long long ms = std::strtoll(wait, &end, 10);
    if (end == wait || *end != '\0' || ms < 0) {
      PyErr_Format(PyExc_ValueError,
                   "FFIJIT_CALLBACK_GIL_WAIT_MS must be a number of milliseconds, not '%s'", wait);
      return false;
    }
    g_gil_wait_ms = ms;
  }
  PyType_Spec spec{"ffijit.NativeCallback", sizeof(PyNativeCallback), 0,
                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, kNativeCallbackSlots};
  g_native_callback_type =
      reinterpret_cast<PyTypeObject*>(PyType_FromModuleAndSpec(module, &spec, nullptr));
  return g_native_callback_type != nullptr && PyModule_AddFunctions(module, kMemoryMethods) == 0 &&
         PyModule_AddObjectRef(module, "NativeCallback",
                               reinterpret_cast<PyObject*>(g_native_callback_type)) == 0;
}

}  // namespace ffijit::python
