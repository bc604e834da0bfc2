// ffijit.Object and the container wrappers, Array (a sequence) and Map (a mapping), and the
// choice of wrapper for an object. Each holds one strong reference to its ABI object.
// Python.h (through ffijit_py.h) comes before every standard header, as CPython requires.
#include "ffijit_py.h"

#include <cstring>

namespace ffijit::python {

PyTypeObject* g_object_type = nullptr;
PyTypeObject* g_array_type = nullptr;
PyTypeObject* g_map_type = nullptr;

namespace {

void ObjectDealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  if (PyType_IS_GC(type)) PyObject_GC_UnTrack(self);
  TVMFFIObject* handle = HandleOf(self);
  if (handle != nullptr) TVMFFIObjectDecRef(handle);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* ObjectNew(PyTypeObject* type, PyObject*, PyObject*) {
  PyErr_Format(PyExc_TypeError,
               "%s objects come from calls and conversions; they cannot be made directly",
               type->tp_name);
  return nullptr;
}

PyObject* TypeKeyOf(TVMFFIObject* handle) {
  TVMFFIAny key;
  key.type_index = kTVMFFINone;
  if (FFIJITTypeIndexToKey(handle->type_index, &key) != 0) return RaiseFromFFI();
  return FromOwnedAny(&key);
}

PyObject* ObjectTypeKey(PyObject* self, void*) {
  return TypeKeyOf(HandleOf(self));
}

PyObject* ObjectTypeIndex(PyObject* self, void*) {
  return PyLong_FromLong(HandleOf(self)->type_index);
}

PyObject* ObjectHandle(PyObject* self, void*) {
  return PyLong_FromVoidPtr(HandleOf(self));
}

PyObject* ObjectRepr(PyObject* self) {
  PyObject* key = TypeKeyOf(HandleOf(self));
  if (key == nullptr) return nullptr;
  PyObject* repr = PyUnicode_FromFormat("<%s %S at %p>", Py_TYPE(self)->tp_name, key,
                                        static_cast<void*>(HandleOf(self)));
  Py_DECREF(key);
  return repr;
}

PyObject* ObjectRichCompare(PyObject* self, PyObject* other, int op) {
  if ((op != Py_EQ && op != Py_NE) || !IsFFIObject(other)) Py_RETURN_NOTIMPLEMENTED;
  bool same = HandleOf(self) == HandleOf(other);
  return PyBool_FromLong(op == Py_EQ ? same : !same);
}

Py_hash_t ObjectHash(PyObject* self) {
  return _Py_HashPointer(HandleOf(self));
}

PyObject* ObjectSameAs(PyObject* self, PyObject* other) {
  if (PyFFIFunction* function = FunctionOf(other)) {  // a Function as Python calls it
    return PyBool_FromLong(HandleOf(self) == function->base.handle);
  }
  return PyBool_FromLong(IsFFIObject(other) && HandleOf(self) == HandleOf(other));
}

PyMethodDef kObjectMethods[] = {{"same_as", ObjectSameAs, METH_O,
                                 "same_as(other)\n--\n\nTrue when both wrap the very same object."},
                                {nullptr, nullptr, 0, nullptr}};

PyGetSetDef kObjectGetSet[] = {
    {"type_key", ObjectTypeKey, nullptr, "The object's registered type key.", nullptr},
    {"type_index", ObjectTypeIndex, nullptr, "The object's type index.", nullptr},
    {"handle", ObjectHandle, nullptr, "The object's address (a TVMFFIObjectHandle).", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot kObjectSlots[] = {
    {Py_tp_doc, const_cast<char*>("An object of the TVM FFI object system (a reference to it).")},
    {Py_tp_dealloc, reinterpret_cast<void*>(ObjectDealloc)},
    {Py_tp_new, reinterpret_cast<void*>(ObjectNew)},
    {Py_tp_repr, reinterpret_cast<void*>(ObjectRepr)},
    {Py_tp_richcompare, reinterpret_cast<void*>(ObjectRichCompare)},
    {Py_tp_hash, reinterpret_cast<void*>(ObjectHash)},
    {Py_tp_methods, kObjectMethods},
    {Py_tp_getset, kObjectGetSet},
    {0, nullptr}};

// ---- Array ----

inline const FFIJITArrayCell* ArrayCell(PyObject* self) {
  return reinterpret_cast<const FFIJITArrayCell*>(HandleOf(self) + 1);
}

Py_ssize_t ArrayLength(PyObject* self) {
  return static_cast<Py_ssize_t>(ArrayCell(self)->size);
}

PyObject* ArrayItem(PyObject* self, Py_ssize_t i) {
  const FFIJITArrayCell* cell = ArrayCell(self);
  if (i < 0 || i >= cell->size) {
    PyErr_Format(PyExc_IndexError, "Array index %zd out of range for size %lld", i,
                 static_cast<long long>(cell->size));
    return nullptr;
  }
  return FromAnyView(&cell->data[i]);
}

PyObject* ArrayAsList(PyObject* self) {
  Py_ssize_t n = ArrayLength(self);
  PyObject* list = PyList_New(n);
  for (Py_ssize_t i = 0; list != nullptr && i < n; ++i) {
    PyObject* item = ArrayItem(self, i);
    if (item == nullptr) {
      Py_CLEAR(list);
    } else {
      PyList_SET_ITEM(list, i, item);
    }
  }
  return list;
}

// A container's repr and == go through its Python counterpart (a list for an Array, a dict for
// a Map): `as_python` makes it from the container.
using AsPython = PyObject* (*)(PyObject*);

PyObject* ReprThrough(PyObject* self, AsPython as_python, const char* format) {
  PyObject* value = as_python(self);
  if (value == nullptr) return nullptr;
  PyObject* repr = PyUnicode_FromFormat(format, value);
  Py_DECREF(value);
  return repr;
}

// `theirs` is the other side already as a Python value (a new reference), or NULL on error.
PyObject* CompareThrough(PyObject* self, PyObject* theirs, int op, AsPython as_python) {
  if (theirs == nullptr) return nullptr;
  PyObject* mine = as_python(self);
  PyObject* result = mine == nullptr ? nullptr : PyObject_RichCompare(mine, theirs, op);
  Py_XDECREF(mine);
  Py_DECREF(theirs);
  return result;
}

PyObject* ArrayRepr(PyObject* self) {
  return ReprThrough(self, ArrayAsList, "ffijit.Array(%R)");
}

PyObject* ArrayRichCompare(PyObject* self, PyObject* other, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  if (PyObject_TypeCheck(other, g_array_type)) {
    return CompareThrough(self, ArrayAsList(other), op, ArrayAsList);
  }
  if (PyList_Check(other) || PyTuple_Check(other)) {
    return CompareThrough(self, PySequence_List(other), op, ArrayAsList);
  }
  return ObjectRichCompare(self, other, op);
}

// ---- Cyclic GC ----
// A container owns what it holds while one reference holds it. A wrapper whose container only it
// holds visits, through the container, the Python callables of the callback Functions the
// container alone holds, and the same again inside the containers it alone holds (an Array or
// Map in an Array or Map; on revisions that have them a List or Dict). So an object keeping a
// container of its own bound methods is in a cycle the collector finds. Anything held a second
// time (a global name, a native, another wrapper) may be reached from outside Python and is not
// visited: the callables it leads to stay alive. Nothing else an object holds is a Python object
// ffijit made: the converter boxes no Python value but a callable (as a Function), and an
// ffi.OpaquePyObject made elsewhere holds whatever its maker put there, which only the maker's
// deleter may interpret. No tp_clear: the cycle's other members are cleared instead, as for
// Function.

// Containers deeper than this inside a wrapped one are not walked (a cycle through one stays
// until broken by hand): a native can build any depth, and the walk recurses.
constexpr int kMaxTraverseDepth = 64;
// A Map of more entries is not walked: the runtime's C API reaches a large map's i-th entry in
// O(i) steps, so a walk costs O(n^2); this keeps a collection's cost within ~512 steps an entry.
constexpr int64_t kMaxTraverseMapEntries = 1024;

int VisitContents(TVMFFIObject* container, visitproc visit, void* arg, int depth);

// A traversal may not raise: an error the runtime reported is dropped.
void DropRaisedError() {
  TVMFFIObjectHandle error = nullptr;
  TVMFFIErrorMoveFromRaised(&error);
  if (error != nullptr) TVMFFIObjectDecRef(error);
}

// `item` held by a container that only one holder holds.
int VisitItem(const TVMFFIAny& item, visitproc visit, void* arg, int depth) {
  if (item.type_index < kTVMFFIStaticObjectBegin || item.v_obj == nullptr ||
      FFIJITHeaderStrongCount(item.v_obj) != 1) {
    return 0;
  }
  if (item.type_index == kTVMFFIFunction) {
    Py_VISIT(CallableOf(item.v_obj));
    return 0;
  }
  return VisitContents(item.v_obj, visit, arg, depth + 1);
}

// The items of `container` (any object; only containers have items to visit).
int VisitContents(TVMFFIObject* container, visitproc visit, void* arg, int depth) {
  if (depth > kMaxTraverseDepth) return 0;
  switch (container->type_index) {
    case kTVMFFIArray:
#if FFIJIT_TVM_FFI_HAS_LIST_DICT
    case kTVMFFIList:  // the Array's cell (c_ext.h)
#endif
    {
      const auto* cell = reinterpret_cast<const FFIJITArrayCell*>(container + 1);
      for (int64_t i = 0; cell->data != nullptr && i < cell->size; ++i) {
        if (int rc = VisitItem(cell->data[i], visit, arg, depth); rc != 0) return rc;
      }
      return 0;
    }
    case kTVMFFIMap:
#if FFIJIT_TVM_FFI_HAS_LIST_DICT
    case kTVMFFIDict:
#endif
    {
      int64_t size = 0;
      // Neither call fails on a map and an index in range; should one, the map stays unwalked.
      if (FFIJITMapSize(container, &size) != 0) {
        DropRaisedError();
        return 0;
      }
      if (size > kMaxTraverseMapEntries) return 0;
      for (int64_t i = 0; i < size; ++i) {
        const TVMFFIAny* key = nullptr;
        const TVMFFIAny* value = nullptr;
        if (FFIJITMapItemAt(container, i, &key, &value) != 0) {
          DropRaisedError();
          return 0;
        }
        if (int rc = VisitItem(*key, visit, arg, depth); rc != 0) return rc;
        if (int rc = VisitItem(*value, visit, arg, depth); rc != 0) return rc;
      }
      return 0;
    }
    default:
      return 0;
  }
}

// tp_traverse of Array and Map.
int ContainerTraverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  TVMFFIObject* handle = HandleOf(self);
  if (handle == nullptr || FFIJITHeaderStrongCount(handle) != 1) return 0;
  return VisitContents(handle, visit, arg, 0);
}

PyType_Slot kArraySlots[] = {
    {Py_tp_doc, const_cast<char*>("An immutable TVM FFI Array: a sequence of values.")},
    {Py_tp_traverse, reinterpret_cast<void*>(ContainerTraverse)},
    {Py_sq_length, reinterpret_cast<void*>(ArrayLength)},
    {Py_sq_item, reinterpret_cast<void*>(ArrayItem)},
    {Py_tp_repr, reinterpret_cast<void*>(ArrayRepr)},
    {Py_tp_richcompare, reinterpret_cast<void*>(ArrayRichCompare)},
    // Equal by contents, like a list, so unhashable like one.
    {Py_tp_hash, reinterpret_cast<void*>(PyObject_HashNotImplemented)},
    {0, nullptr}};

// ---- Map ----

Py_ssize_t MapLength(PyObject* self) {
  int64_t size = 0;
  if (FFIJITMapSize(HandleOf(self), &size) != 0) {
    RaiseFromFFI();
    return -1;
  }
  return static_cast<Py_ssize_t>(size);
}

// 1 found (*out a new reference), 0 missing, -1 error.
int MapLookup(PyObject* self, PyObject* key, PyObject** out) {
  TVMFFIAny packed;
  if (!ToOwnedAny(key, &packed, kWhereElement)) return -1;
  const TVMFFIAny* value = nullptr;
  int rc = FFIJITMapGet(HandleOf(self), &packed, &value);
  ReleaseAny(&packed);
  if (rc != 0) {
    RaiseFromFFI();
    return -1;
  }
  if (value == nullptr) return 0;
  *out = FromAnyView(value);
  return *out == nullptr ? -1 : 1;
}

PyObject* MapSubscript(PyObject* self, PyObject* key) {
  PyObject* value = nullptr;
  int found = MapLookup(self, key, &value);
  if (found == 0) PyErr_SetObject(PyExc_KeyError, key);
  return found > 0 ? value : nullptr;
}

int MapContains(PyObject* self, PyObject* key) {
  PyObject* value = nullptr;
  int found = MapLookup(self, key, &value);
  Py_XDECREF(value);
  return found;
}

// A list of keys (part 0), values (1) or (key, value) tuples (2), in the map's order.
PyObject* MapItemsOf(PyObject* self, int part) {
  Py_ssize_t n = MapLength(self);
  if (n < 0) return nullptr;
  PyObject* list = PyList_New(n);
  for (Py_ssize_t i = 0; list != nullptr && i < n; ++i) {
    const TVMFFIAny* key = nullptr;
    const TVMFFIAny* value = nullptr;
    if (FFIJITMapItemAt(HandleOf(self), i, &key, &value) != 0) {
      Py_DECREF(list);
      return RaiseFromFFI();
    }
    PyObject* item = nullptr;
    if (part == 0) {
      item = FromAnyView(key);
    } else if (part == 1) {
      item = FromAnyView(value);
    } else {
      PyObject* k = FromAnyView(key);
      PyObject* v = k == nullptr ? nullptr : FromAnyView(value);
      item = v == nullptr ? nullptr : PyTuple_Pack(2, k, v);
      Py_XDECREF(k);
      Py_XDECREF(v);
    }
    if (item == nullptr) {
      Py_CLEAR(list);
    } else {
      PyList_SET_ITEM(list, i, item);
    }
  }
  return list;
}

PyObject* MapKeys(PyObject* self, PyObject*) {
  return MapItemsOf(self, 0);
}
PyObject* MapValues(PyObject* self, PyObject*) {
  return MapItemsOf(self, 1);
}
PyObject* MapItems(PyObject* self, PyObject*) {
  return MapItemsOf(self, 2);
}

PyObject* MapIter(PyObject* self) {
  PyObject* keys = MapItemsOf(self, 0);
  if (keys == nullptr) return nullptr;
  PyObject* iter = PyObject_GetIter(keys);
  Py_DECREF(keys);
  return iter;
}

PyObject* MapGet(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 1 || nargs > 2) {
    PyErr_SetString(PyExc_TypeError, "get(key, default=None)");
    return nullptr;
  }
  PyObject* value = nullptr;
  int found = MapLookup(self, args[0], &value);
  if (found < 0) return nullptr;
  if (found > 0) return value;
  return Py_NewRef(nargs == 2 ? args[1] : Py_None);
}

PyObject* MapAsDict(PyObject* self) {
  PyObject* items = MapItemsOf(self, 2);
  if (items == nullptr) return nullptr;
  PyObject* dict = PyDict_New();
  for (Py_ssize_t i = 0; dict != nullptr && i < PyList_GET_SIZE(items); ++i) {
    PyObject* pair = PyList_GET_ITEM(items, i);
    if (PyDict_SetItem(dict, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1)) != 0) {
      Py_CLEAR(dict);
    }
  }
  Py_DECREF(items);
  return dict;
}

PyObject* MapRepr(PyObject* self) {
  return ReprThrough(self, MapAsDict, "ffijit.Map(%R)");
}

PyObject* MapRichCompare(PyObject* self, PyObject* other, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  if (PyObject_TypeCheck(other, g_map_type)) {
    return CompareThrough(self, MapAsDict(other), op, MapAsDict);
  }
  if (PyDict_Check(other)) return CompareThrough(self, Py_NewRef(other), op, MapAsDict);
  return ObjectRichCompare(self, other, op);
}

PyMethodDef kMapMethods[] = {
    {"keys", MapKeys, METH_NOARGS, "The keys, in the map's order."},
    {"values", MapValues, METH_NOARGS, "The values, in the map's order."},
    {"items", MapItems, METH_NOARGS, "(key, value) pairs, in the map's order."},
    {"get", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(MapGet)), METH_FASTCALL,
     "get(key, default=None)"},
    {nullptr, nullptr, 0, nullptr}};

PyType_Slot kMapSlots[] = {
    {Py_tp_doc, const_cast<char*>("An immutable TVM FFI Map: a mapping of values.")},
    {Py_tp_traverse, reinterpret_cast<void*>(ContainerTraverse)},
    {Py_mp_length, reinterpret_cast<void*>(MapLength)},
    {Py_mp_subscript, reinterpret_cast<void*>(MapSubscript)},
    {Py_sq_contains, reinterpret_cast<void*>(MapContains)},
    {Py_tp_iter, reinterpret_cast<void*>(MapIter)},
    {Py_tp_repr, reinterpret_cast<void*>(MapRepr)},
    {Py_tp_richcompare, reinterpret_cast<void*>(MapRichCompare)},
    // Equal by contents, like a dict, so unhashable like one.
    {Py_tp_hash, reinterpret_cast<void*>(PyObject_HashNotImplemented)},
    {Py_tp_methods, kMapMethods},
    {0, nullptr}};

}  // namespace

PyTypeObject* MakeObjectType(PyObject* module, const char* name, PyType_Slot* slots,
                             PyTypeObject* base, const char* attribute, int size) {
  // Types that say how to traverse what they hold take part in cyclic GC.
  unsigned int flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  for (const PyType_Slot* slot = slots; slot->slot != 0; ++slot) {
    if (slot->slot == Py_tp_traverse) flags |= Py_TPFLAGS_HAVE_GC;
  }
  PyType_Spec spec{name, size, 0, flags, slots};
  PyObject* bases = base == nullptr ? nullptr : PyTuple_Pack(1, base);
  auto* type = reinterpret_cast<PyTypeObject*>(PyType_FromModuleAndSpec(module, &spec, bases));
  Py_XDECREF(bases);
  if (type == nullptr) return nullptr;
  if (PyModule_AddObjectRef(module, attribute, reinterpret_cast<PyObject*>(type)) < 0) {
    return nullptr;
  }
  return type;
}

bool IsFFIObject(PyObject* obj) {
  return PyObject_TypeCheck(obj, g_object_type);
}

PyObject* WrapAs(PyTypeObject* type, TVMFFIObject* handle) {
  PyObject* self = type->tp_alloc(type, 0);
  if (self == nullptr) {
    TVMFFIObjectDecRef(handle);
    return nullptr;
  }
  reinterpret_cast<PyFFIObject*>(self)->handle = handle;
  return self;
}

PyObject* WrapObject(TVMFFIObject* handle) {
  switch (handle->type_index) {
    case kTVMFFIFunction:
      return WrapFunction(handle);
    case kTVMFFIArray:
      return WrapAs(g_array_type, handle);
    case kTVMFFIMap:
      return WrapAs(g_map_type, handle);
    case kTVMFFITensor:
      return WrapAs(g_tensor_type, handle);
    case kTVMFFIModule:
      return WrapAs(g_module_type, handle);
    case kTVMFFIShape: {
      auto* cell = reinterpret_cast<const TVMFFIShapeCell*>(handle + 1);
      PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(cell->size));
      for (size_t i = 0; tuple != nullptr && i < cell->size; ++i) {
        PyObject* dim = PyLong_FromLongLong(cell->data[i]);
        if (dim == nullptr) {
          Py_CLEAR(tuple);
        } else {
          PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), dim);
        }
      }
      TVMFFIObjectDecRef(handle);
      return tuple;
    }
    case kTVMFFIError: {
      // An error passed as a value (not raised): the matching exception object, unraised.
      // The exception RaiseFromFFI would raise for it, taken back unraised.
      TVMFFIErrorSetRaised(handle);
      TVMFFIObjectDecRef(handle);
      RaiseFromFFI();
      PyObject *type, *value, *traceback;
      PyErr_Fetch(&type, &value, &traceback);
      PyErr_NormalizeException(&type, &value, &traceback);
      Py_XDECREF(type);
      Py_XDECREF(traceback);
      if (value == nullptr) {
        PyErr_SetString(PyExc_RuntimeError, "ffijit: an Error value could not be converted");
      }
      return value;
    }
    default:
      // Subtypes of the containers and modules (a dynamic type deriving from them) keep their
      // base's wrapper.
      if (handle->type_index >= kTVMFFIDynObjectBegin) {
        if (FFIJITObjectIsInstance(handle->type_index, kTVMFFIModule)) {
          return WrapAs(g_module_type, handle);
        }
        if (FFIJITObjectIsInstance(handle->type_index, kTVMFFIFunction)) {
          return WrapFunction(handle);
        }
      }
      return WrapAs(g_object_type, handle);
  }
}

bool InitObjectTypes(PyObject* module) {
  if ((g_object_type = MakeObjectType(module, "ffijit.Object", kObjectSlots, nullptr, "Object")) ==
          nullptr ||
      (g_array_type = MakeObjectType(module, "ffijit.Array", kArraySlots, g_object_type,
                                     "Array")) == nullptr ||
      (g_map_type = MakeObjectType(module, "ffijit.Map", kMapSlots, g_object_type, "Map")) ==
          nullptr) {
    return false;
  }
  return true;
}

}  // namespace ffijit::python
