// ffijit.Function: a packed Function called from Python through vectorcall, and the module
// function that makes one from a native (`_make_function`); finding and registering Functions by
// name is registry.cc's.
//
// A call converts the positional arguments into a stack array of TVMFFIAny (ArgPack), calls the
// Function's safe_call directly, and boxes the result: no argument tuple, no dict, no lookup.
// Keyword arguments go through FFIJITCallWithKeywords, which binds them by the metadata's names.
// Python calls a Function through a builtin function object whose def's entry may be swapped for
// the one the JIT generates for it (entry.cc); this file's GenericEntry is where every call starts
// and where a generated entry sends whatever it does not convert itself.
// Python.h (through ffijit_py.h) comes before every standard header, as CPython requires.
#include "ffijit_py.h"

#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <structmember.h>

#include "ffijit/jit/bridge.h"
#include "ffijit/jit/host_entry.h"
#include "ffijit/jit/jit.h"
#include "ffijit/reflect/metadata.h"

namespace ffijit::python {

PyTypeObject* g_function_type = nullptr;

namespace {

// What the front end knows of the Functions it made from natives, kept however they are found
// again (get_global_func, a module's result). Guarded by the GIL. Each entry holds a strong
// reference, so an address is never reused while listed; entries whose function nobody else
// holds any more are swept when the table has doubled since the last sweep (so a sweep costs
// amortised O(1) per registration, and dead entries never outnumber live ones for long).
struct FunctionTraits {
  bool release_gil = false;
  ArgumentKinds kinds;
  // The top-level arguments' keyword names ("" for an argument without one), so a keyword value
  // is converted by the kind of the parameter it names.
  std::vector<std::string> names;
  std::string function_name;  // the builtin's __name__
  // The builtin's docstring: a text signature (`name(a, b, /)`, for inspect.signature and help)
  // when the names allow one, then the declaration (`name(a: i64, b: i64) -> i64`).
  std::string doc;
  EntryState entry;
};
std::unordered_map<TVMFFIObject*, FunctionTraits>* g_function_traits = nullptr;
size_t g_traits_sweep_at = 64;

void RecordTraits(TVMFFIObject* handle, FunctionTraits traits) {
  if (g_function_traits->size() >= g_traits_sweep_at) {
    for (auto it = g_function_traits->begin(); it != g_function_traits->end();) {
      // The table's reference, and each generated entry's.
      const uint64_t own = 1 + (it->second.entry.entry != nullptr ? 1 : 0) +
                           (it->second.entry.stencil != nullptr ? 1 : 0);
      if (it->first != handle && FFIJITHeaderStrongCount(it->first) == own) {
        FFIJITHostEntryRelease(it->second.entry.entry);
        FFIJITHostEntryRelease(it->second.entry.stencil);
        TVMFFIObjectDecRef(it->first);
        it = g_function_traits->erase(it);
      } else {
        ++it;
      }
    }
    g_traits_sweep_at = std::max<size_t>(64, 2 * g_function_traits->size());
  }
  auto [it, inserted] = g_function_traits->try_emplace(handle);
  if (inserted) TVMFFIObjectIncRef(handle);
  traits.entry = std::move(it->second.entry);  // a compiled entry stays with its function
  it->second = std::move(traits);
}

// Whether `name` can be a Python parameter's name: an identifier that is not a keyword.
bool IsParameterName(const std::string& name) {
  static const char* const kKeywords[] = {
      "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
      "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
      "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
      "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  for (const char* keyword : kKeywords) {
    if (name == keyword) return false;
  }
  return true;
}

// The builtin's docstring. CPython reads a text signature from a docstring that starts with the
// name after its last dot and "(" and ends it with ")\n--\n\n". Keyword arguments (the
// metadata's `named` ones) are positional-or-keyword parameters; the others positional-only,
// named `argN`; every parameter before the last positional-only one is positional-only too, as
// Python requires (a keyword still binds to such a name, as it does in the call). Text
// signatures carry no annotations: the declaration after them states the types.
std::string MakeDoc(const std::string& function_name, const FFIJITFunctionInfo& info,
                    const std::vector<std::string>& names) {
  const std::string shown = function_name.empty() ? "function" : function_name;
  // The plan's declaration under the name the builtin shows.
  const std::string declaration =
      shown + std::string(info.declaration).substr(std::char_traits<char>::length(info.name));
  const size_t dot = shown.rfind('.');
  const std::string short_name = dot == std::string::npos ? shown : shown.substr(dot + 1);
  std::vector<std::string> params;
  size_t positional_only = 0;  // parameters before the "/"
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    // argN is the generated name of an argument without one: taken by no keyword.
    const bool generated = name.size() > 3 && name.compare(0, 3, "arg") == 0 &&
                           name.find_first_not_of("0123456789", 3) == std::string::npos;
    if (IsParameterName(name) && !generated) {
      params.push_back(name);
    } else {
      params.push_back("arg" + std::to_string(i));
      positional_only = i + 1;
    }
  }
  std::string doc;
  if (IsParameterName(short_name)) {
    doc = short_name + "(";
    for (size_t i = 0; i < params.size(); ++i) {
      if (i > 0) doc += ", ";
      doc += params[i];
      if (i + 1 == positional_only) doc += ", /";
    }
    doc += ")\n--\n\n";
  }
  doc += declaration;
  if (info.status_convention) doc += " [status]";
  doc += "\n\nA native function made by ffijit (ffijit.Function.of(f) is its ffijit.Function).";
  return doc;
}

// The kinds of a function's first 64 top-level arguments, their keywords and the docstring, as
// the bridge reads them from the function's CallPlan. `handle` was just made by the bridge; if it
// somehow cannot be described, nothing is assumed.
void DescribeArguments(TVMFFIObject* handle, FunctionTraits* traits) {
  FFIJITFunctionInfo info;
  std::vector<FFIJITArgumentInfo> args;
  bool described = FFIJITDescribeArguments(handle, &info, nullptr, 0) == 0;
  if (described) {
    args.resize(static_cast<size_t>(info.num_args));
    described = FFIJITDescribeArguments(handle, &info, args.data(), info.num_args) == 0;
  }
  if (!described) {
    TVMFFIObjectHandle error = nullptr;
    TVMFFIErrorMoveFromRaised(&error);
    if (error != nullptr) TVMFFIObjectDecRef(error);
    return;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    traits->names.emplace_back(args[i].keyword);
    if (i >= 64) continue;
    const uint64_t bit = uint64_t{1} << i;
    switch (args[i].kind) {
      case kFFIJITArgumentTensor:
        traits->kinds.tensor_views |= bit;
        break;
      case kFFIJITArgumentPointer:
        traits->kinds.pointers |= bit;
        break;
      case kFFIJITArgumentInteger:
        traits->kinds.integers |= bit;
        break;
      case kFFIJITArgumentFloat:
        traits->kinds.floats |= bit;
        break;
      default:
        break;
    }
  }
  traits->doc = MakeDoc(traits->function_name, info, traits->names);
}

inline TVMFFISafeCallType LoadSafeCall(TVMFFIObject* func) {
  auto* cell = reinterpret_cast<TVMFFIFunctionCell*>(func + 1);
  // The JIT swaps safe_call after publishing the thunk's code.
  return __atomic_load_n(&cell->safe_call, __ATOMIC_ACQUIRE);
}

// The position of the parameter a keyword names, or kWhereKeyword when none is known (the binder
// then reports the name).
Py_ssize_t KeywordPosition(TVMFFIObject* handle, const char* name) {
  auto found = g_function_traits->find(handle);
  if (found == g_function_traits->end()) return kWhereKeyword;
  const std::vector<std::string>& names = found->second.names;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!names[i].empty() && names[i] == name) return static_cast<Py_ssize_t>(i);
  }
  return kWhereKeyword;
}

// The keyword path, out of the positional path's way: each keyword value is converted by the
// kind of the parameter it names, then FFIJITCallWithKeywords binds the names.
[[gnu::noinline]] PyObject* CallWithKeywords(PyFFIFunction* function, ArgPack& pack,
                                             PyObject* const* args, Py_ssize_t num_args,
                                             PyObject* kwnames) {
  Py_ssize_t num_kwargs = PyTuple_GET_SIZE(kwnames);
  const char* inline_names[ArgPack::kInline];
  const char** names = inline_names;
  if (num_kwargs > ArgPack::kInline) {
    names = static_cast<const char**>(
        PyMem_Malloc(static_cast<size_t>(num_kwargs) * sizeof(const char*)));
    if (names == nullptr) return PyErr_NoMemory();
  }
  const bool names_known = g_function_traits->count(function->base.handle) != 0;
  for (Py_ssize_t k = 0; k < num_kwargs; ++k) {
    names[k] = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
    Py_ssize_t position =
        names[k] == nullptr ? kWhereKeyword : KeywordPosition(function->base.handle, names[k]);
    if (names[k] != nullptr && names_known && position == kWhereKeyword) {
      // As Python says it of its own functions.
      PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%s'",
                   function->method.ml_name, names[k]);
    }
    if (PyErr_Occurred() ||
        !ConvertValue(args[num_args + k], &pack.values()[num_args + k], &pack, position)) {
      if (names != inline_names) PyMem_Free(names);
      return nullptr;
    }
  }
  TVMFFIAny result;
  result.type_index = kTVMFFINone;
  result.zero_padding = 0;
  result.v_int64 = 0;
  int rc;
  if (function->release_gil) {
    Py_BEGIN_ALLOW_THREADS;
    rc = FFIJITCallWithKeywords(function->base.handle, pack.values(),
                                static_cast<int32_t>(num_args), names, pack.values() + num_args,
                                static_cast<int32_t>(num_kwargs), &result);
    Py_END_ALLOW_THREADS;
  } else {
    HoldingLock holding(function->lock_name);
    rc = FFIJITCallWithKeywords(function->base.handle, pack.values(),
                                static_cast<int32_t>(num_args), names, pack.values() + num_args,
                                static_cast<int32_t>(num_kwargs), &result);
  }
  if (names != inline_names) PyMem_Free(names);
  PyObject* boxed = rc != 0 ? RaiseFromFFI() : FromOwnedAny(&result);
  if (!function->release_gil) ReportHeldUnraisable();
  return boxed;
}

// Calling the Function object itself runs the entry its builtin runs.
PyObject* FunctionVectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                             PyObject* kwnames) {
  auto entry = reinterpret_cast<PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t, PyObject*)>(
      reinterpret_cast<void*>(reinterpret_cast<PyFFIFunction*>(self)->method.ml_meth));
  return entry(self, args, PyVectorcall_NARGS(nargsf), kwnames);
}

// A Function made from a Python callable owns the callable through its handle: visited while
// this wrapper is all that holds the handle, so a cycle through the callable (an object keeping
// a Function of its own bound method) is found and freed. No tp_clear: the handle stays valid as
// long as the wrapper; the cycle's other members (an instance's __dict__, a closure's cell) are
// cleared instead.
int FunctionTraverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  TVMFFIObject* handle = reinterpret_cast<PyFFIFunction*>(self)->base.handle;
  if (handle != nullptr && FFIJITHeaderStrongCount(handle) == 1) Py_VISIT(CallableOf(handle));
  return 0;
}

void FunctionDealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  auto* function = reinterpret_cast<PyFFIFunction*>(self);
  PyObject_GC_UnTrack(self);
  Py_XDECREF(function->name);
  Py_XDECREF(function->doc);
  if (function->base.handle != nullptr) TVMFFIObjectDecRef(function->base.handle);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* FunctionCompileEntry(PyObject* self, PyObject*) {
  std::string why;
  if (!InstallEntry(reinterpret_cast<PyFFIFunction*>(self), &why)) {
    PyErr_SetString(PyExc_RuntimeError, why.c_str());
    return nullptr;
  }
  Py_RETURN_NONE;
}

// The generated entry calls from Python run now, or nullptr (the generic entry, or the counting
// one before it).
const FFIJITHostEntry* CurrentEntry(PyObject* self, const char** kind) {
  EntryState* state = EntryStateOf(HandleOf(self));
  if (state == nullptr) return nullptr;
  const void* running =
      reinterpret_cast<const void*>(reinterpret_cast<PyFFIFunction*>(self)->method.ml_meth);
  if (state->entry != nullptr && running == FFIJITHostEntryAddress(state->entry)) {
    *kind = "llvm";
    return state->entry;
  }
  if (state->stencil != nullptr && running == FFIJITHostEntryAddress(state->stencil)) {
    *kind = "stencil";
    return state->stencil;
  }
  return nullptr;
}

PyObject* FunctionHasEntry(PyObject* self, void*) {
  const char* kind = nullptr;
  return PyBool_FromLong(CurrentEntry(self, &kind) != nullptr);
}

PyObject* FunctionEntryKind(PyObject* self, void*) {
  const char* kind = "generic";
  CurrentEntry(self, &kind);
  return PyUnicode_FromString(kind);
}

PyObject* FunctionEntryCompileMicros(PyObject* self, void*) {
  const char* kind = nullptr;
  const FFIJITHostEntry* entry = CurrentEntry(self, &kind);
  if (entry == nullptr) Py_RETURN_NONE;
  return PyFloat_FromDouble(static_cast<double>(FFIJITHostEntryCompileNanos(entry)) / 1e3);
}

PyObject* FunctionUseEntry(PyObject* self, PyObject* kind) {
  auto* function = reinterpret_cast<PyFFIFunction*>(self);
  const char* name = PyUnicode_Check(kind) ? PyUnicode_AsUTF8(kind) : nullptr;
  if (name == nullptr) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "use_entry() takes 'generic', 'stencil' or 'llvm', not %.200s",
                 Py_TYPE(kind)->tp_name);
    return nullptr;
  }
  std::string why;
  if (std::strcmp(name, "generic") == 0) {
    InstallGenericEntry(function);
  } else if (std::strcmp(name, "stencil") == 0) {
    if (!InstallStencilEntry(function, &why)) {
      PyErr_SetString(PyExc_RuntimeError, why.c_str());
      return nullptr;
    }
  } else if (std::strcmp(name, "llvm") == 0) {
    return FunctionCompileEntry(self, nullptr);
  } else {
    PyErr_Format(PyExc_ValueError, "use_entry() takes 'generic', 'stencil' or 'llvm', not %R",
                 kind);
    return nullptr;
  }
  Py_RETURN_NONE;
}

}  // namespace

PyObject* GenericEntry(PyObject* self, PyObject* const* args, Py_ssize_t num_args,
                       PyObject* kwnames) {
  auto* function = reinterpret_cast<PyFFIFunction*>(self);
  Py_ssize_t num_kwargs = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  ArgPack pack(function->kinds);
  if (!pack.Reserve(num_args + num_kwargs)) return nullptr;
  for (Py_ssize_t i = 0; i < num_args; ++i) {
    if (!pack.Convert(args[i], i)) return nullptr;
  }
  if (num_kwargs != 0) return CallWithKeywords(function, pack, args, num_args, kwnames);
  return CallPacked(function->base.handle, pack.values(), static_cast<int32_t>(num_args),
                    function->release_gil, function->lock_name);
}

namespace {

PyObject* FunctionCompileNow(PyObject* self, PyObject*) {
  if (FFIJITCompileNow(reinterpret_cast<PyFFIObject*>(self)->handle) != 0) return RaiseFromFFI();
  Py_RETURN_NONE;
}

PyObject* FunctionIsJitCompiled(PyObject* self, void*) {
  int compiled = 0;
  if (FFIJITIsJitCompiled(reinterpret_cast<PyFFIObject*>(self)->handle, &compiled) != 0) {
    return RaiseFromFFI();
  }
  return PyBool_FromLong(compiled);
}

PyObject* FunctionTier(PyObject* self, void*) {
  int tier = 0;
  if (FFIJITFunctionTier(reinterpret_cast<PyFFIObject*>(self)->handle, &tier) != 0) {
    return RaiseFromFFI();
  }
  // The names' one home is jit.h's TierName; FFIJITFunctionTier answers only tiers it names.
  return PyUnicode_FromString(ffijit::TierName(static_cast<FFIJITTier>(tier)));
}

PyObject* FunctionDescribe(PyObject* self, PyObject*) {
  TVMFFIAny out;
  out.type_index = kTVMFFINone;
  if (FFIJITDescribeFunction(reinterpret_cast<PyFFIObject*>(self)->handle, &out) != 0) {
    return RaiseFromFFI();
  }
  return FromOwnedAny(&out);
}

PyObject* FunctionReleasesGil(PyObject* self, void*) {
  return PyBool_FromLong(reinterpret_cast<PyFFIFunction*>(self)->release_gil);
}

PyObject* FunctionOfPython(PyObject*, PyObject* obj) {
  PyFFIFunction* function = FunctionOf(obj);
  if (function == nullptr) Py_RETURN_NONE;
  return Py_NewRef(reinterpret_cast<PyObject*>(function));
}

PyMethodDef kFunctionMethods[] = {
    {"compile_now", FunctionCompileNow, METH_NOARGS,
     "compile_now()\n--\n\nCompiles this function's JIT thunk now and switches calls to it.\n"
     "RuntimeError says why when the function stays interpreted (made with interpret_only, not\n"
     "made by ffijit, a build without LLVM)."},
    {"compile_entry", FunctionCompileEntry, METH_NOARGS,
     "compile_entry()\n--\n\nCompiles this function's LLVM Python entry now (else it comes by the\n"
     "JIT policy, once its stencil entry has counted FFIJIT_JIT_HOT's calls from Python) and\n"
     "switches calls to it. RuntimeError says why when there can be none (an argument the entry\n"
     "does not convert inline, a function not made from metadata by ffijit, a build without\n"
     "LLVM)."},
    {"use_entry", FunctionUseEntry, METH_O,
     "use_entry(kind)\n--\n\nSwitches calls from Python to one entry now: 'generic' (the generic\n"
     "conversion, kept from then on), 'stencil' (the stencil entry, made in microseconds; it\n"
     "counts calls on to the LLVM entry as the JIT policy says) or 'llvm' (as compile_entry()).\n"
     "RuntimeError says why a function can have no such entry."},
    {"of", FunctionOfPython, METH_O | METH_STATIC,
     "of(obj)\n--\n\nThe ffijit.Function behind `obj` (a function ffijit made, or a Function\n"
     "itself), else None: how to recognise an ffijit function."},
    {"describe", FunctionDescribe, METH_NOARGS,
     "describe()\n--\n\nThe readable call plan of a function made from metadata: what each\n"
     "argument accepts and where it goes."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef kFunctionGetSet[] = {
    {"is_jit_compiled", FunctionIsJitCompiled, nullptr,
     "True while calls run compiled code: any tier but 'interpreted'.", nullptr},
    {"tier", FunctionTier, nullptr,
     "The name of the tier calls run on now, as ffijit::TierName gives it ('interpreted',\n"
     "'stencil', ...; the guide's section 7.2). TypeError for a function not made by ffijit.",
     nullptr},
    {"releases_gil", FunctionReleasesGil, nullptr,
     "True when calls release the GIL around the native.", nullptr},
    {"has_entry", FunctionHasEntry, nullptr,
     "True while calls from Python run a generated entry (stencil or LLVM).", nullptr},
    {"entry", FunctionEntryKind, nullptr,
     "The entry calls from Python run now: 'generic', 'stencil' or 'llvm'.", nullptr},
    {"entry_compile_us", FunctionEntryCompileMicros, nullptr,
     "How long the generated entry calls run now took to make (µs), or None.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot kFunctionSlots[] = {
    {Py_tp_doc,
     const_cast<char*>("A packed function (TVM FFI Function). Call it with positional arguments,\n"
                       "and with keywords where its metadata names the arguments.")},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_dealloc, reinterpret_cast<void*>(FunctionDealloc)},
    {Py_tp_traverse, reinterpret_cast<void*>(FunctionTraverse)},
    {Py_tp_methods, kFunctionMethods},
    {Py_tp_getset, kFunctionGetSet},
    {0, nullptr}};

PyMemberDef kFunctionMembers[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(PyFFIFunction, vectorcall), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

// ---- module functions ----

int FormatCode(PyObject* format) {
  const char* text = PyUnicode_AsUTF8(format);
  if (text == nullptr) return -1;
  // The names have one home, reflect's MetadataFormatFromName; its enum is the C API's code.
  static_assert(static_cast<int>(ffijit::MetadataFormat::kDeclaration) ==
                    kFFIJITFormatDeclaration &&
                static_cast<int>(ffijit::MetadataFormat::kSip) == kFFIJITFormatSip);
  if (std::optional<ffijit::MetadataFormat> found = ffijit::MetadataFormatFromName(text)) {
    return static_cast<int>(*found);
  }
  PyErr_Format(PyExc_ValueError,
               "unknown metadata format %R: expected auto, json, raw, sip or declaration", format);
  return -1;
}

// _make_function(address, metadata, format, flags, name, global_name, release_gil)
PyObject* MakeFunction(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 7) {
    PyErr_SetString(PyExc_TypeError, "_make_function takes 7 arguments");
    return nullptr;
  }
  void* address = PyLong_AsVoidPtr(args[0]);
  if (address == nullptr && PyErr_Occurred()) return nullptr;
  const char* metadata;
  Py_ssize_t metadata_size;
  if (!Utf8Of(args[1], "sig", &metadata, &metadata_size)) return nullptr;
  if (static_cast<Py_ssize_t>(std::char_traits<char>::length(metadata)) != metadata_size) {
    PyErr_SetString(PyExc_ValueError, "sig contains a NUL character");
    return nullptr;
  }
  int format = FormatCode(args[2]);
  if (format < 0) return nullptr;
  long flags = PyLong_AsLong(args[3]);
  if (flags == -1 && PyErr_Occurred()) return nullptr;
  const char* name = nullptr;
  if (args[4] != Py_None && (name = PyUnicode_AsUTF8(args[4])) == nullptr) return nullptr;
  const char* global_name = nullptr;
  if (args[5] != Py_None && (global_name = PyUnicode_AsUTF8(args[5])) == nullptr) return nullptr;
  int release_gil = PyObject_IsTrue(args[6]);
  if (release_gil < 0) return nullptr;
  TVMFFIObjectHandle out = nullptr;
  int rc =
      global_name != nullptr
          ? FFIJITRegister(address, metadata, format, static_cast<int>(flags), global_name, &out)
          : FFIJITMakeFunction(address, metadata, format, static_cast<int>(flags), name, &out);
  if (rc != 0) return RaiseFromFFI();
  auto* handle = static_cast<TVMFFIObject*>(out);
  FunctionTraits traits;
  traits.release_gil = release_gil != 0;
  traits.function_name = global_name != nullptr ? global_name : name != nullptr ? name : "";
  DescribeArguments(handle, &traits);
  RecordTraits(handle, std::move(traits));
  return WrapFunction(handle);
}

}  // namespace

const void* g_lock_holder = nullptr;
uint64_t g_lock_calls = 0;

const char* InternName(const char* name) {
  static auto* names = new std::unordered_set<std::string>();  // never freed: read without the GIL
  return names->insert(name).first->c_str();
}

namespace {

// The usual results boxed here without a call, the others by FromOwnedAny (consumed).
inline PyObject* BoxResult(TVMFFIAny* result) {
  switch (result->type_index) {
    case kTVMFFIInt:
      return PyLong_FromLongLong(result->v_int64);
    case kTVMFFIFloat:
      return PyFloat_FromDouble(result->v_float64);
    case kTVMFFINone:
      Py_RETURN_NONE;
    default:
      return FromOwnedAny(result);
  }
}

}  // namespace

PyObject* CallPacked(TVMFFIObject* func, TVMFFIAny* args, int32_t n, bool release_gil,
                     const char* lock_name) {
  TVMFFIAny result;
  result.type_index = kTVMFFINone;
  result.zero_padding = 0;
  result.v_int64 = 0;
  TVMFFISafeCallType safe_call = LoadSafeCall(func);
  int rc;
  if (release_gil) {
    Py_BEGIN_ALLOW_THREADS;
    rc = safe_call(func, args, n, &result);
    Py_END_ALLOW_THREADS;
  } else {
    {
      HoldingLock holding(lock_name);
      rc = safe_call(func, args, n, &result);
    }
    PyObject* boxed = rc != 0 ? RaiseCallFailure(rc) : BoxResult(&result);
    ReportHeldUnraisable();
    return boxed;
  }
  return rc != 0 ? RaiseCallFailure(rc) : BoxResult(&result);
}

PyObject* RaiseCallFailure(int rc) {
  // -2: the environment's error (a Python signal seen by TVMFFIEnvCheckSignals) is already set;
  // anything left in the TVM FFI error slot is stale and must not surface in a later failure.
  if (rc == -2 && PyErr_Occurred()) {
    TVMFFIObjectHandle stale = nullptr;
    TVMFFIErrorMoveFromRaised(&stale);
    if (stale != nullptr) TVMFFIObjectDecRef(stale);
    return nullptr;
  }
  return RaiseFromFFI();
}

EntryState* EntryStateOf(TVMFFIObject* handle) {
  auto found = g_function_traits->find(handle);
  return found != g_function_traits->end() ? &found->second.entry : nullptr;
}

PyFFIFunction* FunctionOf(PyObject* obj) {
  if (Py_TYPE(obj) == &PyCFunction_Type) {
    PyObject* self = PyCFunction_GET_SELF(obj);
    // The Function's own def: its other methods (describe, ...) are builtins bound to it too.
    if (self == nullptr || !PyObject_TypeCheck(self, g_function_type) ||
        reinterpret_cast<PyCFunctionObject*>(obj)->m_ml !=
            &reinterpret_cast<PyFFIFunction*>(self)->method) {
      return nullptr;
    }
    return reinterpret_cast<PyFFIFunction*>(self);
  }
  return PyObject_TypeCheck(obj, g_function_type) ? reinterpret_cast<PyFFIFunction*>(obj) : nullptr;
}

PyObject* WrapFunction(TVMFFIObject* handle) {
  auto* self = reinterpret_cast<PyFFIFunction*>(WrapAs(g_function_type, handle));
  if (self == nullptr) return nullptr;
  self->vectorcall = FunctionVectorcall;
  auto found = g_function_traits->find(handle);
  const bool known = found != g_function_traits->end();
  self->release_gil = known && found->second.release_gil;
  self->kinds = known ? found->second.kinds : ArgumentKinds{};
  self->name = nullptr;
  self->doc = nullptr;
  self->calls_until_entry = -1;
  self->method =
      PyMethodDef{"function", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(GenericEntry)),
                  METH_FASTCALL | METH_KEYWORDS, nullptr};
  if (known && !found->second.function_name.empty()) {
    self->name = PyUnicode_FromString(found->second.function_name.c_str());
    if (self->name == nullptr || (self->method.ml_name = PyUnicode_AsUTF8(self->name)) == nullptr) {
      Py_DECREF(self);
      return nullptr;
    }
  }
  if (known && !found->second.doc.empty()) {
    self->doc = PyUnicode_FromStringAndSize(found->second.doc.data(),
                                            static_cast<Py_ssize_t>(found->second.doc.size()));
    if (self->doc == nullptr || (self->method.ml_doc = PyUnicode_AsUTF8(self->doc)) == nullptr) {
      Py_DECREF(self);
      return nullptr;
    }
  }
  self->lock_name = InternName(self->method.ml_name);
  ChooseFirstEntry(self);
  PyObject* callable = PyCFunction_NewEx(&self->method, reinterpret_cast<PyObject*>(self), nullptr);
  Py_DECREF(self);  // the builtin holds it
  return callable;
}

PyMethodDef kFunctionModuleMethods[] = {
    {"_make_function", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(MakeFunction)),
     METH_FASTCALL, "_make_function(address, sig, format, flags, name, global_name, release_gil)"},
    {nullptr, nullptr, 0, nullptr}};

bool InitFunctionType(PyObject* module) {
  g_function_traits = new std::unordered_map<TVMFFIObject*, FunctionTraits>();
  PyType_Slot slots[sizeof(kFunctionSlots) / sizeof(kFunctionSlots[0]) + 1];
  size_t n = 0;
  for (; kFunctionSlots[n].slot != 0; ++n) slots[n] = kFunctionSlots[n];
  slots[n++] = {Py_tp_members, kFunctionMembers};
  slots[n] = {0, nullptr};
  PyType_Spec spec{"ffijit.Function", sizeof(PyFFIFunction), 0,
                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC, slots};
  PyObject* bases = PyTuple_Pack(1, reinterpret_cast<PyObject*>(g_object_type));
  if (bases == nullptr) return false;
  g_function_type = reinterpret_cast<PyTypeObject*>(PyType_FromModuleAndSpec(module, &spec, bases));
  Py_DECREF(bases);
  if (g_function_type == nullptr) return false;
  if (PyModule_AddObjectRef(module, "Function", reinterpret_cast<PyObject*>(g_function_type)) < 0) {
    return false;
  }
  return PyModule_AddFunctions(module, kFunctionModuleMethods) == 0;
}

}  // namespace ffijit::python
