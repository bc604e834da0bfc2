// ffijit.Module: a TVM FFI module whose functions are attributes and items, and the module
// functions that load one (load_module) or find the system library (system_lib), all through the
// runtime's `ffi.Module*` global functions.
// Python.h (through ffijit_py.h) comes before every standard header, as CPython requires.
#include "ffijit_py.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_bytes.h"

namespace ffijit::python {

PyTypeObject* g_module_type = nullptr;

namespace {

// A Module, with what load_module knew of it, for repr() and dir(): the file, and the names of
// the functions it exports (its defined `__tvm_ffi_<name>` function symbols). Both stay NULL for
// modules from anywhere else (system_lib, a function's result).
struct PyFFIModule {
  PyFFIObject base;
  PyObject* source;     // the path load_module was given (str)
  PyObject* functions;  // a sorted tuple of str
};

PyFFIModule* ModuleOf(PyObject* self) {
  return reinterpret_cast<PyFFIModule*>(self);
}

// The `<name>`s of the defined global `__tvm_ffi_<name>` functions in an ELF64 file's symbol
// table: the dynamic one of a shared library, the static one of a relocatable object. dir() is a
// listing, not a check: a file that is not such an ELF file, or is malformed, lists what was read
// before the first inconsistency (every offset is checked against the file's size).
std::vector<std::string> ExportedFunctionNames(const char* path) {
  std::vector<std::string> names;
  std::string bytes;
  // A file over 256 MiB is not listed (nor read past that for a listing).
  if (!ReadFileBytes(path, &bytes, nullptr, uint64_t{256} << 20)) return names;
  const uint64_t size = bytes.size();
  Elf64_Ehdr header;
  if (size < sizeof(header) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0 ||
      bytes[EI_CLASS] != ELFCLASS64) {
    return names;
  }
  std::memcpy(&header, bytes.data(), sizeof(header));
  const uint32_t wanted =
      header.e_type == ET_DYN ? SHT_DYNSYM : (header.e_type == ET_REL ? SHT_SYMTAB : SHT_NULL);
  if (wanted == SHT_NULL || header.e_shentsize != sizeof(Elf64_Shdr)) return names;
  auto within = [size](uint64_t offset, uint64_t extent) {
    return offset <= size && extent <= size - offset;
  };
  auto section = [&](uint64_t index, Elf64_Shdr* out) {
    if (index >= header.e_shnum || index > (size / sizeof(Elf64_Shdr)) ||
        !within(header.e_shoff, (index + 1) * sizeof(Elf64_Shdr))) {
      return false;
    }
    std::memcpy(out, bytes.data() + header.e_shoff + index * sizeof(Elf64_Shdr), sizeof(*out));
    return true;
  };
  static constexpr char kPrefix[] = "__tvm_ffi_";
  const size_t prefix_size = sizeof(kPrefix) - 1;
  for (uint64_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr table, strings;
    if (!section(i, &table)) break;
    if (table.sh_type != wanted) continue;
    if (table.sh_entsize != sizeof(Elf64_Sym) || !within(table.sh_offset, table.sh_size) ||
        !section(table.sh_link, &strings) || !within(strings.sh_offset, strings.sh_size)) {
      break;
    }
    const char* text = bytes.data() + strings.sh_offset;
    for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= table.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym symbol;
      std::memcpy(&symbol, bytes.data() + table.sh_offset + at, sizeof(symbol));
      const unsigned binding = ELF64_ST_BIND(symbol.st_info);
      const unsigned type = ELF64_ST_TYPE(symbol.st_info);
      if (symbol.st_shndx == SHN_UNDEF || symbol.st_name >= strings.sh_size ||
          (binding != STB_GLOBAL && binding != STB_WEAK) ||
          (type != STT_FUNC && type != STT_GNU_IFUNC)) {
        continue;
      }
      const char* name = text + symbol.st_name;
      const void* end = std::memchr(name, 0, strings.sh_size - symbol.st_name);
      if (end == nullptr) continue;
      std::string_view view(name, static_cast<size_t>(static_cast<const char*>(end) - name));
      // `__tvm_ffi__<...>` names are the library's own variables, never functions.
      if (view.size() > prefix_size && view.substr(0, prefix_size) == kPrefix &&
          view[prefix_size] != '_') {
        names.emplace_back(view.substr(prefix_size));
      }
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

void ModuleDealloc(PyObject* self) {
  Py_CLEAR(ModuleOf(self)->source);
  Py_CLEAR(ModuleOf(self)->functions);
  g_object_type->tp_dealloc(self);
}

PyObject* ModuleRepr(PyObject* self) {
  PyFFIModule* module = ModuleOf(self);
  if (module->source == nullptr) {
    return PyUnicode_FromFormat("<ffijit.Module at %p>", static_cast<void*>(HandleOf(self)));
  }
  // At most ten names: a repr is one line.
  Py_ssize_t count = module->functions != nullptr ? PyTuple_GET_SIZE(module->functions) : 0;
  PyObject* shown = PyTuple_GetSlice(module->functions, 0, std::min<Py_ssize_t>(count, 10));
  PyObject* separator = PyUnicode_FromString(", ");
  PyObject* joined =
      shown == nullptr || separator == nullptr ? nullptr : PyUnicode_Join(separator, shown);
  Py_XDECREF(shown);
  Py_XDECREF(separator);
  if (joined == nullptr) return nullptr;
  PyObject* repr = PyUnicode_FromFormat(
      "<ffijit.Module %R, %zd function%s: %U%s at %p>", module->source, count,
      count == 1 ? "" : "s", joined, count > 10 ? ", ..." : "", static_cast<void*>(HandleOf(self)));
  Py_DECREF(joined);
  return repr;
}

// dir(): the attributes, and the functions the module's file exports (reachable as attributes).
PyObject* ModuleDir(PyObject* self, PyObject*) {
  PyObject* names =
      PyObject_CallMethod(reinterpret_cast<PyObject*>(&PyBaseObject_Type), "__dir__", "O", self);
  PyObject* functions = ModuleOf(self)->functions;
  if (names == nullptr || functions == nullptr) return names;
  PyObject* listed = PySequence_List(names);
  Py_DECREF(names);
  if (listed == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(functions); ++i) {
    if (PyList_Append(listed, PyTuple_GET_ITEM(functions, i)) != 0) {
      Py_DECREF(listed);
      return nullptr;
    }
  }
  return listed;
}

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
    {"__dir__", ModuleDir, METH_NOARGS, nullptr},
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
    {Py_tp_dealloc, reinterpret_cast<void*>(ModuleDealloc)},
    {Py_tp_repr, reinterpret_cast<void*>(ModuleRepr)},
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
  if (result != nullptr && PyObject_TypeCheck(result, g_module_type)) {
    std::vector<std::string> names;
    if (!searched && text != nullptr) names = ExportedFunctionNames(text);
    PyObject* functions = PyTuple_New(static_cast<Py_ssize_t>(names.size()));
    for (size_t i = 0; functions != nullptr && i < names.size(); ++i) {
      PyObject* name = StrFromBytes(names[i].data(), names[i].size());
      if (name == nullptr) Py_CLEAR(functions);
      if (functions != nullptr) PyTuple_SET_ITEM(functions, static_cast<Py_ssize_t>(i), name);
    }
    if (functions == nullptr) Py_CLEAR(result);
    if (result != nullptr) {
      Py_XSETREF(ModuleOf(result)->source, Py_NewRef(path));
      Py_XSETREF(ModuleOf(result)->functions, functions);
    }
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
     "are the `__tvm_ffi_<name>` symbols it exports. A file that cannot be opened raises\n"
     "the OSError open() would (FileNotFoundError, ...), with the path in `filename`."},
    {"system_lib", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(SystemLib)), METH_FASTCALL,
     "system_lib(prefix='')\n--\n\nThe module of functions linked into the process and "
     "registered\nas its system library."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

bool InitModuleType(PyObject* module) {
  g_module_type = MakeObjectType(module, "ffijit.Module", kModuleSlots, g_object_type, "Module",
                                 sizeof(PyFFIModule));
  return g_module_type != nullptr && PyModule_AddFunctions(module, kModuleModuleMethods) == 0;
}

}  // namespace ffijit::python
