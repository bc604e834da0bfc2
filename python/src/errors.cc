// The error bridge. A TVM FFI error raised by a call becomes a Python exception of the type its
// kind names (an ffijit.Error subclass for kinds Python lacks) with the native traceback as a
// note; a Python exception raised inside a callback becomes a TVM FFI error carrying Python's
// traceback, and comes back to a Python caller as the very same exception object.
// Python.h (through ffijit_py.h) comes before every standard header, as CPython requires.
#include "ffijit_py.h"

#include <cstring>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "ffijit/error.h"

namespace ffijit::python {

PyObject* g_error_base = nullptr;

namespace {

// Kinds without a Python type get an ffijit.Error subclass, made once per kind. Bounded: a
// hostile stream of distinct kinds cannot grow it without limit.
constexpr Py_ssize_t kMaxKindTypes = 256;
PyObject* g_kind_types = nullptr;  // dict: kind -> type

// Exceptions raised inside callbacks, by the error object that carries them across native
// frames. Each entry holds a strong reference to both. Guarded by the GIL. An entry leaves when
// its error reaches Python again, or when nothing but this table holds the error any more.
std::deque<std::pair<TVMFFIObject*, PyObject*>>* g_in_flight = nullptr;
constexpr size_t kMaxInFlight = 64;

// Entries leave the table before their references are released: releasing an exception can run
// Python code (a __del__ in its traceback's frames) that raises through another callback and so
// changes the table.
using InFlight = std::pair<TVMFFIObject*, PyObject*>;

void Release(const std::vector<InFlight>& entries) {
  for (const InFlight& entry : entries) {
    TVMFFIObjectDecRef(entry.first);
    Py_DECREF(entry.second);
  }
}

void PruneInFlight() {
  std::vector<InFlight> dropped;
  for (size_t i = 0; i < g_in_flight->size();) {
    if (FFIJITHeaderStrongCount((*g_in_flight)[i].first) == 1) {
      dropped.push_back((*g_in_flight)[i]);
      g_in_flight->erase(g_in_flight->begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  while (g_in_flight->size() > kMaxInFlight) {
    dropped.push_back(g_in_flight->front());
    g_in_flight->pop_front();
  }
  Release(dropped);
}

// The exception carried by `error`, or NULL (a new reference; the entry is removed).
PyObject* TakeInFlight(TVMFFIObject* error) {
  for (size_t i = 0; i < g_in_flight->size(); ++i) {
    if ((*g_in_flight)[i].first == error) {
      InFlight entry = (*g_in_flight)[i];
      g_in_flight->erase(g_in_flight->begin() + static_cast<std::ptrdiff_t>(i));
      PyObject* exc = Py_NewRef(entry.second);
      Release({entry});
      return exc;
    }
  }
  return nullptr;
}

struct KindType {
  const char* kind;
  PyObject** type;
};

std::string View(const TVMFFIByteArray& bytes) {
  return std::string(bytes.data != nullptr ? bytes.data : "", bytes.size);
}

void AddNote(PyObject* exc, const std::string& note) {
  PyObject* text = StrFromBytes(note.data(), note.size());
  if (text == nullptr) {
    PyErr_Clear();
    return;
  }
  PyObject* done = PyObject_CallMethod(exc, "add_note", "O", text);
  Py_DECREF(text);
  if (done == nullptr) PyErr_Clear();
  Py_XDECREF(done);
}

// Python's formatted traceback of `tb` ("  File ..., line N, in f\n    code\n"...).
std::string FormatTraceback(PyObject* tb) {
  if (tb == nullptr || tb == Py_None) return "";
  PyObject* module = PyImport_ImportModule("traceback");
  PyObject* lines = module == nullptr ? nullptr : PyObject_CallMethod(module, "format_tb", "O", tb);
  Py_XDECREF(module);
  std::string text;
  if (lines != nullptr) {
    for (Py_ssize_t i = 0; i < PyList_Size(lines); ++i) {
      Py_ssize_t size;
      const char* line = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(lines, i), &size);
      if (line != nullptr) text.append(line, static_cast<size_t>(size));
    }
    Py_DECREF(lines);
  }
  PyErr_Clear();
  return text;
}

}  // namespace

PyObject* ExceptionTypeForKind(const char* kind, size_t size) {
  static const KindType kBuiltin[] = {
      {"TypeError", &PyExc_TypeError},
      {"ValueError", &PyExc_ValueError},
      {"IndexError", &PyExc_IndexError},
      {"KeyError", &PyExc_KeyError},
      {"AttributeError", &PyExc_AttributeError},
      {"RuntimeError", &PyExc_RuntimeError},
      {"NotImplementedError", &PyExc_NotImplementedError},
      {"MemoryError", &PyExc_MemoryError},
      {"OverflowError", &PyExc_OverflowError},
      {"ZeroDivisionError", &PyExc_ZeroDivisionError},
      {"AssertionError", &PyExc_AssertionError},
      {"OSError", &PyExc_OSError},
      {"KeyboardInterrupt", &PyExc_KeyboardInterrupt},
  };
  for (const KindType& entry : kBuiltin) {
    if (std::strlen(entry.kind) == size && std::memcmp(entry.kind, kind, size) == 0) {
      return *entry.type;
    }
  }
  PyObject* key = StrFromBytes(kind, size);
  if (key == nullptr) {
    PyErr_Clear();
    return g_error_base;
  }
  PyObject* type = PyDict_GetItemWithError(g_kind_types, key);
  if (type == nullptr && !PyErr_Occurred() && PyDict_Size(g_kind_types) < kMaxKindTypes) {
    // A class name Python accepts: the kind with anything but letters, digits and _ replaced.
    std::string name = "ffijit.";
    for (size_t i = 0; i < size && i < 64; ++i) {
      char c = kind[i];
      bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                   (c >= '0' && c <= '9' && i > 0) || c == '_';
      name += plain ? c : '_';
    }
    if (name.size() == 7) name += "UnnamedError";
    PyObject* made = PyErr_NewException(name.c_str(), g_error_base, nullptr);
    if (made != nullptr && PyDict_SetItem(g_kind_types, key, made) == 0) {
      type = made;  // the dict holds it
    }
    Py_XDECREF(made);
  }
  Py_DECREF(key);
  PyErr_Clear();
  return type != nullptr ? type : g_error_base;
}

PyObject* RaiseFromFFI() {
  TVMFFIObjectHandle handle = nullptr;
  TVMFFIErrorMoveFromRaised(&handle);
  auto* error = static_cast<TVMFFIObject*>(handle);
  if (error == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "ffijit: a call failed without raising an error");
    return nullptr;
  }
  if (PyObject* exc = TakeInFlight(error)) {
    TVMFFIObjectDecRef(error);
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc)), exc);
    Py_DECREF(exc);
    return nullptr;
  }
  const auto* cell = reinterpret_cast<const TVMFFIErrorCell*>(error + 1);
  std::string kind = View(cell->kind);
  std::string message = View(cell->message);
  std::string backtrace = View(cell->FFIJIT_ERROR_BACKTRACE);
  TVMFFIObjectDecRef(error);
  PyObject* type = ExceptionTypeForKind(kind.data(), kind.size());
  PyObject* text = StrFromBytes(message.data(), message.size());
  PyObject* exc = text == nullptr ? nullptr : PyObject_CallOneArg(type, text);
  Py_XDECREF(text);
  if (exc == nullptr) return nullptr;
  if (PyObject_TypeCheck(exc, reinterpret_cast<PyTypeObject*>(g_error_base))) {
    PyObject* kind_text = StrFromBytes(kind.data(), kind.size());
    if (kind_text == nullptr || PyObject_SetAttrString(exc, "kind", kind_text) != 0) PyErr_Clear();
    Py_XDECREF(kind_text);
  }
  if (!backtrace.empty()) AddNote(exc, "Native backtrace:\n" + backtrace);
  PyErr_SetObject(type, exc);
  Py_DECREF(exc);
  return nullptr;
}

void RaisePythonErrorAsFFI() {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (value == nullptr) {
    Py_XDECREF(type);
    Py_XDECREF(tb);
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "a Python callback failed without an exception");
    return;
  }
  if (tb != nullptr) PyException_SetTraceback(value, tb);
  // The kind: ffijit.Error's own kind, else the class's name (ValueError, MyError).
  std::string kind;
  if (PyObject* own = PyObject_TypeCheck(value, reinterpret_cast<PyTypeObject*>(g_error_base))
                          ? PyObject_GetAttrString(value, "kind")
                          : nullptr) {
    Py_ssize_t size;
    if (const char* text = PyUnicode_Check(own) ? PyUnicode_AsUTF8AndSize(own, &size) : nullptr) {
      kind.assign(text, static_cast<size_t>(size));
    }
    Py_DECREF(own);
  }
  PyErr_Clear();
  if (kind.empty()) kind = reinterpret_cast<PyTypeObject*>(type)->tp_name;
  if (size_t dot = kind.rfind('.'); dot != std::string::npos) kind = kind.substr(dot + 1);
  std::string message;
  if (PyObject* text = PyObject_Str(value)) {
    Py_ssize_t size;
    if (const char* utf8 = PyUnicode_AsUTF8AndSize(text, &size)) {
      message.assign(utf8, static_cast<size_t>(size));
    }
    Py_DECREF(text);
  }
  PyErr_Clear();
  std::string traceback = FormatTraceback(tb);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  TVMFFIObject* error = nullptr;
  try {
    error = static_cast<TVMFFIObject*>(ffijit::Error(kind, message, traceback).ToObject());
  } catch (...) {
    Py_DECREF(value);
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "out of memory raising a callback's error");
    return;
  }
  PruneInFlight();
  g_in_flight->emplace_back(error, value);  // takes our references to both
  TVMFFIErrorSetRaised(error);              // the raised slot takes its own
}

bool InitErrors(PyObject* module) {
  g_in_flight = new std::deque<std::pair<TVMFFIObject*, PyObject*>>();
  g_kind_types = PyDict_New();
  if (g_kind_types == nullptr) return false;
  g_error_base = PyErr_NewExceptionWithDoc(
      "ffijit.Error",
      "A TVM FFI error whose kind Python has no exception type for; `kind` names it.\n"
      "Each kind gets its own subclass (ffijit.Error is a RuntimeError).",
      PyExc_RuntimeError, nullptr);
  if (g_error_base == nullptr) return false;
  return PyModule_AddObjectRef(module, "Error", g_error_base) == 0;
}

}  // namespace ffijit::python
