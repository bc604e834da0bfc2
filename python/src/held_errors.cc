// Plain-convention callback errors that the failing thread cannot report itself: it lacks the GIL
// and a call holding the GIL is running, which may be waiting for this very thread (a native that
// joins the threads calling back). Taking the GIL there would wait for ever, so the error is held
// here, without any lock, and reported to sys.unraisablehook by the holding call as it returns
// (the generic path, and generated entries through the model's held_work), or else by a pending
// call (Py_AddPendingCall, which the main thread runs when it next checks for them). What neither
// will report (no pending call could be scheduled, or Python exited first) goes to stderr.
// Python.h (through ffijit_py.h) comes before every standard header, as CPython requires.
#include "ffijit_py.h"

#include <atomic>
#include <new>
#include <string>

namespace ffijit::python {

void* g_held_unraisable = nullptr;

namespace {

struct HeldError {
  TVMFFIObject* error;     // one reference
  TVMFFIObject* function;  // one reference: the Function the callback calls (its Python callable
                           // is the report's object)
  std::string declaration;
  std::string object_text;  // the NativeCallback's repr, for stderr
  HeldError* next;
};

// Whether a pending call to report them is scheduled and has not begun: one at a time, so that
// CPython's small queue of pending calls never fills with ours. Its run may come late: CPython
// 3.11 notices a pending call another thread added only at the main thread's next GIL switch or
// signal.
std::atomic<bool> g_report_scheduled{false};

void Free(HeldError* held) {
  TVMFFIObjectDecRef(held->error);
  TVMFFIObjectDecRef(held->function);
  delete held;
}

// Takes every held error, oldest first.
HeldError* TakeAll() {
  auto* newest_first =
      static_cast<HeldError*>(__atomic_exchange_n(&g_held_unraisable, nullptr, __ATOMIC_SEQ_CST));
  HeldError* oldest_first = nullptr;
  while (newest_first != nullptr) {
    HeldError* next = newest_first->next;
    newest_first->next = oldest_first;
    oldest_first = newest_first;
    newest_first = next;
  }
  return oldest_first;
}

void WriteAllToStderr() {
  for (HeldError* held = TakeAll(); held != nullptr;) {
    HeldError* next = held->next;
    WriteUnraisableToStderr(held->error, held->declaration.c_str(), held->object_text.c_str());
    Free(held);
    held = next;
  }
}

// The pending call: runs with the GIL, on the main thread.
int ReportHeldCall(void*) {
  g_report_scheduled.store(false);  // before taking: an error held from now on schedules anew
  ReportHeldUnraisableNow();
  return 0;
}

}  // namespace

void ReportHeldUnraisableNow() {
  for (HeldError* held = TakeAll(); held != nullptr;) {
    HeldError* next = held->next;
    PyObject* callable = CallableOf(held->function);
    PyObject* obj = callable != nullptr ? Py_NewRef(callable) : nullptr;
    if (obj == nullptr) {  // a Function that is no Python callable: the report names it
      TVMFFIObjectIncRef(held->function);
      obj = WrapFunction(held->function);
      if (obj == nullptr) {
        PyErr_Clear();
        obj = Py_NewRef(Py_None);
      }
    }
    WriteUnraisable(held->error, held->declaration.c_str(), obj);
    Py_DECREF(obj);
    Free(held);
    held = next;
  }
}

void HoldUnraisable(TVMFFIObject* function, const char* declaration,
                    const char* object_text) noexcept {
  TVMFFIObjectHandle handle = nullptr;
  TVMFFIErrorMoveFromRaised(&handle);
  auto* error = static_cast<TVMFFIObject*>(handle);
  if (error == nullptr) return;
  TVMFFIErrorSetRaised(error);  // still the thread's error, for a native caller that checks
  HeldError* held = nullptr;
  try {
    held = new HeldError{error, function, declaration, object_text, nullptr};
  } catch (const std::bad_alloc&) {
    WriteUnraisableToStderr(error, declaration, object_text);
    TVMFFIObjectDecRef(error);
    return;
  }
  TVMFFIObjectIncRef(function);
  void* top = __atomic_load_n(&g_held_unraisable, __ATOMIC_SEQ_CST);
  do {
    held->next = static_cast<HeldError*>(top);
  } while (!__atomic_compare_exchange_n(&g_held_unraisable, &top, held, true, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST));
  // Py_AddPendingCall takes no GIL (only its queue's lock, held for a push or a pop).
  if (!g_report_scheduled.exchange(true) && Py_AddPendingCall(ReportHeldCall, nullptr) != 0) {
    g_report_scheduled.store(false);
    WriteAllToStderr();
  }
}

void WriteHeldToStderr() {
  WriteAllToStderr();
}

}  // namespace ffijit::python
