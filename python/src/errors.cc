// The error bridge. A TVM FFI error raised by a call becomes a Python exception of the type its
// kind names (an ffijit.Error subclass for kinds Python lacks) with the native traceback as a
// note; a Python exception raised inside a callback becomes a TVM FFI error carrying Python's
// traceback, and comes back to a Python caller as the very same exception object.
// Python.h (through ffijit_py.h) comes before every standard header, as CPython requires.
#include "ffijit_py.h"

#include <cstdio>
#include <cstring>
#include <deque>
#include <new>
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

// The exception carried by `error`, or NULL (a new reference; the entry stays).
PyObject* PeekInFlight(TVMFFIObject* error) {
  for (const InFlight& entry : *g_in_flight) {
    if (entry.first == error) return Py_NewRef(entry.second);
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

// The first `limit` entries of Python's formatted traceback `tb` ("  File ..., line N, in f\n
// code\n"...), through traceback.format_tb (tests count the entries it formats).
std::string FormatTraceback(PyObject* tb, Py_ssize_t limit) {
  if (tb == nullptr || tb == Py_None || limit == 0) return "";
  PyObject* module = PyImport_ImportModule("traceback");
  PyObject* lines =
      module == nullptr ? nullptr : PyObject_CallMethod(module, "format_tb", "On", tb, limit);
  Py_XDECREF(module);
  std::string text;
  if (lines != nullptr && PyList_Check(lines)) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(lines); ++i) {
      Py_ssize_t size;
      const char* line = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(lines, i), &size);
      if (line != nullptr) text.append(line, static_cast<size_t>(size));
    }
  }
  Py_XDECREF(lines);
  PyErr_Clear();
  return text;
}

// An exception that crosses Python <-> native frames many times (a callback raising through N
// levels of callback -> native -> callback) carries a traceback that grows by a few entries per
// level. Each crossing formats only the entries added since the exception last crossed, and
// reuses the text formatted then, so N crossings format O(N) entries, not O(N^2). Keyed by the
// exception, checked through a weak reference (a dead or reused address never matches); the
// previous traceback head is recognised by its address and the length of the chain behind it
// (the exception holds that chain, so the address stays its while the chain is unchanged).
struct FormattedTraceback {
  PyObject* alive;    // a weak reference to the exception
  PyObject* head;     // the traceback entry formatted first, never dereferenced when stale
  Py_ssize_t length;  // entries in the chain from `head`
  std::string text;
};
std::vector<FormattedTraceback>* g_formatted = nullptr;
constexpr size_t kMaxFormatted = 16;
constexpr size_t kMaxTracebackText = 16 * 1024;

Py_ssize_t ChainLength(PyObject* tb) {
  Py_ssize_t n = 0;
  for (; tb != nullptr && tb != Py_None;
       tb = reinterpret_cast<PyObject*>(reinterpret_cast<PyTracebackObject*>(tb)->tb_next)) {
    ++n;
  }
  return n;
}

std::string TracebackText(PyObject* exc, PyObject* tb) {
  if (tb == nullptr || tb == Py_None) return "";
  const Py_ssize_t length = ChainLength(tb);
  FormattedTraceback* known = nullptr;
  for (size_t i = 0; i < g_formatted->size();) {
    FormattedTraceback& entry = (*g_formatted)[i];
    PyObject* target = PyWeakref_GetObject(entry.alive);
    if (target == nullptr || target == Py_None) {
      PyErr_Clear();
      Py_DECREF(entry.alive);
      g_formatted->erase(g_formatted->begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    if (target == exc) known = &entry;
    ++i;
  }
  Py_ssize_t fresh = length;  // entries in front of what was formatted before
  if (known != nullptr) {
    PyObject* at = tb;
    for (Py_ssize_t i = 0; at != nullptr && at != Py_None; ++i) {
      if (at == known->head && length - i == known->length) {
        fresh = i;
        break;
      }
      at = reinterpret_cast<PyObject*>(reinterpret_cast<PyTracebackObject*>(at)->tb_next);
    }
  }
  std::string text = FormatTraceback(tb, fresh);
  if (fresh < length && known != nullptr) text += known->text;
  // Native callers get the innermost entries (where it was raised) up to a bound, so that each
  // crossing copies a bounded text: the Python exception keeps its whole traceback.
  bool cut = false;
  if (text.size() > kMaxTracebackText) {
    size_t from = text.find("\n  File ", text.size() - kMaxTracebackText);
    text.erase(0, from == std::string::npos ? text.size() - kMaxTracebackText : from + 1);
    cut = true;
  }
  const char* const kCutMark =
      "  [outer entries omitted; the Python exception has the whole traceback]\n";
  if (known == nullptr) {
    PyObject* ref = PyWeakref_NewRef(exc, nullptr);
    if (ref == nullptr) {  // an exception type without weak references: formatted in full
      PyErr_Clear();
      return cut ? kCutMark + text : text;
    }
    if (g_formatted->size() == kMaxFormatted) {
      Py_DECREF(g_formatted->front().alive);
      g_formatted->erase(g_formatted->begin());
    }
    g_formatted->push_back(FormattedTraceback{ref, nullptr, 0, {}});
    known = &g_formatted->back();
  }
  known->head = tb;
  known->length = length;
  known->text = text;
  return cut ? kCutMark + text : text;
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

namespace {

// A new exception for an error no Python exception is carried by: the type its kind names, its
// message, its native backtrace as a note. NULL with an exception set.
PyObject* ExceptionFromError(TVMFFIObject* error) {
  const auto* cell = reinterpret_cast<const TVMFFIErrorCell*>(error + 1);
  std::string kind = View(cell->kind);
  std::string message = View(cell->message);
  std::string backtrace = View(cell->FFIJIT_ERROR_BACKTRACE);
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
  return exc;
}

}  // namespace

PyObject* RaiseFromFFI() {
  TVMFFIObjectHandle handle = nullptr;
  TVMFFIErrorMoveFromRaised(&handle);
  auto* error = static_cast<TVMFFIObject*>(handle);
  if (error == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "ffijit: a call failed without raising an error");
    return nullptr;
  }
  PyObject* exc = TakeInFlight(error);
  if (exc == nullptr) exc = ExceptionFromError(error);
  TVMFFIObjectDecRef(error);
  if (exc == nullptr) return nullptr;
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc)), exc);
  Py_DECREF(exc);
  return nullptr;
}

namespace {

std::string UnraisableWhat(const char* declaration) {
  return std::string("on calling ffijit callback `") + declaration + "`";
}

}  // namespace

void WriteUnraisable(TVMFFIObject* error, const char* declaration, PyObject* obj) {
  PyObject *saved_type, *saved_value, *saved_tb;
  PyErr_Fetch(&saved_type, &saved_value, &saved_tb);
  PyObject* exc = PeekInFlight(error);
  if (exc == nullptr) exc = ExceptionFromError(error);
  if (exc != nullptr) {
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc)), exc);
    Py_DECREF(exc);
  }
  std::string what = UnraisableWhat(declaration);
#if PY_VERSION_HEX >= 0x030D0000
  PyErr_FormatUnraisable("Exception ignored %s: %R", what.c_str(), obj);
#else
  _PyErr_WriteUnraisableMsg(what.c_str(), obj);
#endif
  PyErr_Restore(saved_type, saved_value, saved_tb);
}

void WriteUnraisableFromRaised(const char* declaration, PyObject* obj) {
  TVMFFIObjectHandle handle = nullptr;
  TVMFFIErrorMoveFromRaised(&handle);
  auto* error = static_cast<TVMFFIObject*>(handle);
  if (error == nullptr) return;
  WriteUnraisable(error, declaration, obj);
  TVMFFIErrorSetRaised(error);  // still the thread's error, for a native caller that checks
  TVMFFIObjectDecRef(error);
}

void WriteUnraisableToStderr(TVMFFIObject* error, const char* declaration,
                             const char* object_text) noexcept {
  // Python's default hook's layout, from what the error object holds (no traceback: the
  // error's Python exception, if any, is out of reach without the GIL).
  const auto* cell = reinterpret_cast<const TVMFFIErrorCell*>(error + 1);
  try {
    std::string text = "Exception ignored " + UnraisableWhat(declaration) + ": " + object_text +
                       "\n" + View(cell->kind) + ": " + View(cell->message) + "\n";
    std::fwrite(text.data(), 1, text.size(), stderr);
  } catch (const std::bad_alloc&) {
    std::fputs("Exception ignored on calling an ffijit callback (out of memory to say more)\n",
               stderr);
  }
  std::fflush(stderr);
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
  std::string traceback = TracebackText(value, tb);
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
  g_formatted = new std::vector<FormattedTraceback>();
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
