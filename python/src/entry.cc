// Generated Python entries: CPython's object model described to the JIT (ffijit/jit/host_entry.h),
// the counting entry that gives a function its entry once Python has called it (a stencil entry on
// the first call, the LLVM entry once called often enough), and the switch of a Function's builtin
// to either.
//
// A generated entry converts exact ints, floats, bools, None, ASCII strs, Devices, DataTypes and
// numpy arrays (at ndarray parameters) inline, exactly as ArgPack does, and hands every other call
// to GenericEntry untouched: results and errors are the generic path's.
#include "ffijit_py.h"

#include <cstring>
#include <string>

#include "ffijit/jit/host_entry.h"
#include "ffijit/jit/jit.h"

namespace ffijit::python {
namespace {

FFIJITHostModel g_model;
// Calls from Python before a function's entry is compiled (from FFIJIT_JIT, read at import); 0:
// never, 1: on the first call.
int64_t g_entry_after_calls = 0;
// Whether a function's first entry is its stencil entry (made on its first call; the JIT policy
// after:N with the stencil tier), and the calls from Python on it before the LLVM entry is compiled
// (JitOptions::hot_after_calls; never: INT64_MAX).
bool g_stencil_entries = false;
int64_t g_llvm_entry_after_calls = 0;
// Whether an LLVM entry is ever compiled unasked (not under FFIJIT_JIT=stencils, which leaves a
// function without a stencil entry on the generic one).
bool g_llvm_entries = true;

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

// Counts the calls of a Function not yet on a generated entry; the call that brings the count to
// zero makes its stencil entry (the first call, with stencil entries) or compiles its LLVM entry
// (or learns that there can be none) and switches to it for later calls. A function whose stencil
// entry is refused counts on to the LLVM entry.
PyObject* CountingEntry(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                        PyObject* kwnames) {
  auto* function = reinterpret_cast<PyFFIFunction*>(self);
  if (--function->calls_until_entry <= 0) {
    std::string why;
    EntryState* state = EntryStateOf(function->base.handle);
    if (g_stencil_entries && state->stencil_refusal.empty() && state->stencil == nullptr) {
      if (InstallStencilEntry(function, &why)) return GenericEntry(self, args, nargs, kwnames);
      if (!g_llvm_entries) {
        function->method.ml_meth = AsMethod(GenericEntry);
        return GenericEntry(self, args, nargs, kwnames);
      }
      function->calls_until_entry = g_entry_after_calls - 1;
      if (function->calls_until_entry > 0) return GenericEntry(self, args, nargs, kwnames);
    }
    if (!InstallEntry(function, &why)) function->method.ml_meth = AsMethod(GenericEntry);
  }
  return GenericEntry(self, args, nargs, kwnames);
}

// A stencil entry's count ran out: the LLVM entry now (this call takes the generic path). Refused,
// the stencil entry stays (its count, below zero, never reaches zero again).
PyObject* EntryCountReached(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                            PyObject* kwnames) {
  std::string why;
  InstallEntry(reinterpret_cast<PyFFIFunction*>(self), &why);
  return GenericEntry(self, args, nargs, kwnames);
}

// The reason an entry was refused, from the error FFIJITHostEntryCompile raised; nothing stays
// raised.
std::string RefusalFromFFI(const char* otherwise) {
  RaiseFromFFI();
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyObject* text = value != nullptr ? PyObject_Str(value) : nullptr;
  const char* utf8 = text != nullptr ? PyUnicode_AsUTF8(text) : nullptr;
  std::string refusal = utf8 != nullptr ? utf8 : otherwise;
  Py_XDECREF(text);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  PyErr_Clear();
  return refusal;
}

}  // namespace

void ChooseFirstEntry(PyFFIFunction* function) {
  EntryState* state = EntryStateOf(function->base.handle);
  if (g_entry_after_calls == 0 || state == nullptr) return;
  std::string why;
  if (state->entry != nullptr) {  // compiled for another wrapper of the function
    InstallEntry(function, &why);
    return;
  }
  if (g_stencil_entries && state->stencil != nullptr) {  // made for another wrapper
    InstallStencilEntry(function, &why);
    return;
  }
  if (!state->refusal.empty()) return;
  // Even `eager` compiles on a call, never here: wrappers are made in the middle of conversions,
  // where the compile's release of the GIL would let other threads in. A stencil entry is made on
  // the first call too: a wrapper nobody calls costs no code.
  const bool stencil_next = g_stencil_entries && state->stencil_refusal.empty();
  if (!stencil_next && !g_llvm_entries) return;
  function->calls_until_entry = stencil_next ? 1 : g_entry_after_calls;
  function->method.ml_meth = AsMethod(CountingEntry);
}

bool InstallStencilEntry(PyFFIFunction* function, std::string* why) {
  EntryState* state = EntryStateOf(function->base.handle);
  if (state == nullptr) {
    *why =
        "no stencil entry: the function was not made from metadata by ffijit.function or "
        "ffijit.register";
    return false;
  }
  if (state->stencil == nullptr) {
    if (!state->stencil_refusal.empty()) {
      *why = state->stencil_refusal;
      return false;
    }
    const int flags =
        kFFIJITHostEntryStencil | (function->release_gil ? kFFIJITHostEntryReleaseLock : 0);
    if (FFIJITHostEntryCompile(function->base.handle, &g_model, flags, &state->stencil) != 0) {
      state->stencil = nullptr;
      state->stencil_refusal = RefusalFromFFI("the stencil entry could not be made");
      *why = state->stencil_refusal;
      return false;
    }
  }
  function->calls_until_entry = g_llvm_entry_after_calls;
  function->method.ml_meth = reinterpret_cast<PyCFunction>(FFIJITHostEntryAddress(state->stencil));
  return true;
}

void InstallGenericEntry(PyFFIFunction* function) {
  function->calls_until_entry = -1;
  function->method.ml_meth = AsMethod(GenericEntry);
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
      state->refusal = RefusalFromFFI("the generated entry failed to compile");
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
  m.held_work = &g_held_unraisable;
  m.run_held_work = ReportHeldUnraisableNow;
  m.self_count_offset = static_cast<int32_t>(offsetof(PyFFIFunction, calls_until_entry));
  // Small ints read in place, where this CPython's digits are the 30-bit ones the layouts name.
#if PYLONG_BITS_IN_DIGIT == 30
#if PY_VERSION_HEX >= 0x030C0000
  m.int_layout = kFFIJITHostIntTaggedDigits;
  m.int_size_offset = static_cast<int32_t>(offsetof(PyLongObject, long_value.lv_tag));
  m.int_digits_offset = static_cast<int32_t>(offsetof(PyLongObject, long_value.ob_digit));
#else
  m.int_layout = kFFIJITHostIntSizedDigits;
  m.int_size_offset = static_cast<int32_t>(offsetof(PyVarObject, ob_size));
  m.int_digits_offset = static_cast<int32_t>(offsetof(PyLongObject, ob_digit));
#endif
#endif
  m.count_reached = As<void* (*)(void*, void* const*, intptr_t, void*)>(EntryCountReached);
  const JitOptions options = DefaultJitOptions();
  g_llvm_entries = options.policy != JitPolicy::kStencils;
  g_stencil_entries = options.stencils && (options.policy == JitPolicy::kAfterCalls ||
                                           options.policy == JitPolicy::kStencils);
  g_llvm_entry_after_calls =
      g_llvm_entries && options.hot_after_calls > 0 ? options.hot_after_calls : INT64_MAX;
  switch (options.policy) {
    case JitPolicy::kNever:
      g_entry_after_calls = 0;
      break;
    case JitPolicy::kStencils:
      g_entry_after_calls = g_stencil_entries ? 1 : 0;
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
