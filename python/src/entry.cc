// Generated Python entries: CPython's object model described to the JIT (ffijit/host_entry.h), the
// counting entry that compiles a function's entry once Python has called it often enough, and the
// switch of a Function's builtin to it.
//
// A generated entry converts exact ints, floats, bools, None, ASCII strs, Devices, DataTypes and
// numpy arrays (at ndarray parameters) inline, exactly as ArgPack does, and hands every other call
// to GenericEntry untouched: results and errors are the generic path's.
#include "ffijit_py.h"

#include <cstring>
#include <string>

#include "ffijit/host_entry.h"
#include "ffijit/jit.h"

namespace ffijit::python {
namespace {

FFIJITHostModel g_model;
// Calls from Python before a function's entry is compiled (from FFIJIT_JIT, read at import); 0:
// never, 1: on the first call.
int64_t g_entry_after_calls = 0;

PyObject* NewReference(PyObject* obj) {
  return Py_NewRef(obj);
}

// As ArgPack at an ndarray parameter: numpy arrays whose buffer describes as a DLTensor. Compact
// ones are read from the array itself, the same description without a buffer export.
DLTensor* BorrowTensor(void* obj, void* slot) {
  auto* array = static_cast<PyObject*>(obj);
  auto* view = static_cast<TensorView*>(slot);
  if (!IsNumpyArray(array)) return nullptr;
  if (BorrowCompactNdarray(array, view)) return &view->tensor;
  view->held = nullptr;
  TVMFFIAny any;
  return BorrowTensorView(array, view, &any) ? &view->tensor : nullptr;
}

void ReleaseTensor(void* slot) {
  auto* view = static_cast<TensorView*>(slot);
  if (view->held != nullptr) {
    Py_DECREF(view->held);
  } else {
    PyBuffer_Release(&view->buffer);
  }
}

// A CPython function as the model's function type: the same machine signature (PyObject* as
// void*, long long as int64_t on every LP64 platform).
template <typename Model, typename Function>
Model As(Function* function) {
  return reinterpret_cast<Model>(reinterpret_cast<void*>(function));
}

template <typename Entry>
PyCFunction AsMethod(Entry entry) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(entry));
}

// Counts the calls of a Function not yet on its generated entry; the call that brings the count
// to zero compiles it (or learns that there can be none) and switches to it for later calls.
PyObject* CountingEntry(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                        PyObject* kwnames) {
  auto* function = reinterpret_cast<PyFFIFunction*>(self);
  if (--function->calls_until_entry <= 0) {
    std::string why;
    if (!InstallEntry(function, &why)) function->method.ml_meth = AsMethod(GenericEntry);
  }
  return GenericEntry(self, args, nargs, kwnames);
}

}  // namespace

void ChooseFirstEntry(PyFFIFunction* function) {
  EntryState* state = EntryStateOf(function->base.handle);
  if (g_entry_after_calls == 0 || state == nullptr || !state->refusal.empty()) return;
  if (state->entry != nullptr) {  // compiled for another wrapper of the function
    std::string why;
    InstallEntry(function, &why);
    return;
  }
  // Even `eager` compiles on a call, never here: wrappers are made in the middle of conversions,
  // where the compile's release of the GIL would let other threads in.
  function->calls_until_entry = g_entry_after_calls;
  function->method.ml_meth = AsMethod(CountingEntry);
}

bool InstallEntry(PyFFIFunction* function, std::string* why) {
  EntryState* state = EntryStateOf(function->base.handle);
  if (state == nullptr) {
    *why =
        "no generated entry: the function was not made from metadata by ffijit.function or "
        "ffijit.register";
    return false;
  }
  if (state->entry == nullptr) {
    if (!state->refusal.empty()) {
      *why = state->refusal;
      return false;
    }
    FFIJITHostEntry* entry = nullptr;
    int flags = function->release_gil ? kFFIJITHostEntryReleaseLock : 0;
    int rc;
    // The compile reads no Python object: other threads run meanwhile. `state` stays valid (the
    // table's nodes do not move, and this wrapper's reference keeps the function's entry listed).
    Py_BEGIN_ALLOW_THREADS;
    rc = FFIJITHostEntryCompile(function->base.handle, &g_model, flags, &entry);
    Py_END_ALLOW_THREADS;
    if (rc == 0 && state->entry != nullptr) {  // another thread compiled it meanwhile
      FFIJITHostEntryRelease(entry);
      entry = state->entry;
    }
    if (rc != 0) {
      // The reason, as the raised error's message; nothing stays raised.
      RaiseFromFFI();
      PyObject *type, *value, *traceback;
      PyErr_Fetch(&type, &value, &traceback);
      PyObject* text = value != nullptr ? PyObject_Str(value) : nullptr;
      const char* utf8 = text != nullptr ? PyUnicode_AsUTF8(text) : nullptr;
      state->refusal = utf8 != nullptr ? utf8 : "the generated entry failed to compile";
      Py_XDECREF(text);
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(traceback);
      PyErr_Clear();
      *why = state->refusal;
      return false;
    }
    state->entry = entry;
  }
  function->calls_until_entry = -1;
  function->method.ml_meth = reinterpret_cast<PyCFunction>(FFIJITHostEntryAddress(state->entry));
  return true;
}

bool InitEntries(PyObject*) {
  FFIJITHostModel& m = g_model;
  m.type_offset = static_cast<int32_t>(offsetof(PyObject, ob_type));
  m.float_value_offset = static_cast<int32_t>(offsetof(PyFloatObject, ob_fval));
  m.device_value_offset = static_cast<int32_t>(offsetof(PyFFIDevice, device));
  m.dtype_value_offset = static_cast<int32_t>(offsetof(PyFFIDataType, dtype));
  // Before 3.12 (no immortal objects) and with the GIL, Py_INCREF is exactly ob_refcnt + 1.
#if PY_VERSION_HEX < 0x030C0000
  m.plain_refcount = 1;
#else
  m.plain_refcount = 0;
#endif
  m.tensor_slot_size = static_cast<int32_t>((sizeof(TensorView) + 7) / 8 * 8);
  // An entry is called with the Function (its builtin's __self__): one code per signature.
  m.self_function_offset =
      static_cast<int32_t>(offsetof(PyFFIFunction, base) + offsetof(PyFFIObject, handle));
  DescribeCompactAsciiStrs(&m);
  m.int_type = &PyLong_Type;
  m.float_type = &PyFloat_Type;
  m.str_type = &PyUnicode_Type;
  m.device_type = g_device_type;
  m.dtype_type = g_datatype_type;
  m.none = Py_None;
  m.true_value = Py_True;
  m.false_value = Py_False;
  static_assert(sizeof(long long) == sizeof(int64_t), "PyLong_AsLongLong returns an int64_t");
  m.int_value = As<int64_t (*)(void*)>(PyLong_AsLongLong);
  m.error_occurred = As<void* (*)()>(PyErr_Occurred);
  m.clear_error = PyErr_Clear;
  m.str_data = StrData;
  m.pointer_to_any = PointerToAny;
  m.borrow_tensor = BorrowTensor;
  m.release_tensor = ReleaseTensor;
  m.new_int = As<void* (*)(int64_t)>(PyLong_FromLongLong);
  m.new_float = As<void* (*)(double)>(PyFloat_FromDouble);
  m.new_ref = As<void* (*)(void*)>(NewReference);
  m.box_result = As<void* (*)(TVMFFIAny*)>(FromOwnedAny);
  m.raise_error = As<void* (*)(int)>(RaiseCallFailure);
  m.release_lock = As<void* (*)()>(PyEval_SaveThread);
  m.acquire_lock = As<void (*)(void*)>(PyEval_RestoreThread);
  m.fallback = As<void* (*)(void*, void* const*, intptr_t, void*)>(GenericEntry);
  m.lock_holder = &g_lock_holder;
  m.lock_calls = &g_lock_calls;
  m.self_name_offset = static_cast<int32_t>(offsetof(PyFFIFunction, lock_name));
  const JitOptions options = DefaultJitOptions();
  switch (options.policy) {
    case JitPolicy::kNever:
      g_entry_after_calls = 0;
      break;
    case JitPolicy::kEager:
      g_entry_after_calls = 1;
      break;
    default:
      g_entry_after_calls = options.after_calls > 1 ? options.after_calls : 1;
      break;
  }
  return true;
}

}  // namespace ffijit::python
