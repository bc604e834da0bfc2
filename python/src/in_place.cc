// Objects of CPython, ctypes and numpy read in place, the one home of the layouts ffijit relies
// on beyond their C APIs: compact ASCII strs (CPython's headers), a ctypes.c_void_p's buffer
// pointer (checked once against the buffer protocol), and compact numpy arrays described from
// the array's own fields (numpy's C ABI, read through its headers) instead of an export through
// the buffer protocol, which makes and frees numpy's buffer information (a format string among
// it) on every call. Generated entries use them, and so do the Tensors made of compact arrays
// (tensor.cc); an object a reader does not accept is left to the buffer protocol or the generic
// path, so a reader only ever says yes where that path would have produced the same value.
#include <cstring>

#include "ffijit_py.h"

#if defined(FFIJIT_NUMPY_HEADERS)
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/ndarraytypes.h>
#endif

namespace ffijit::python {

// The strs ArgPack reads in place: ASCII, no NUL inside.
const char* StrData(void* obj) {
  auto* str = static_cast<PyObject*>(obj);
  if (!PyUnicode_IS_COMPACT_ASCII(str)) return nullptr;
  const char* data = static_cast<const char*>(PyUnicode_DATA(str));
  return std::memchr(data, 0, static_cast<size_t>(PyUnicode_GET_LENGTH(str))) == nullptr ? data
                                                                                         : nullptr;
}

// The strs StrData reads in place, for the entry to read without calling it: compact ASCII ones
// hold their length and bytes in the object. The state word's bits come from the headers' own
// bitfield, set in a blank object and read back as a word.
void DescribeCompactAsciiStrs(FFIJITHostModel* m) {
  PyASCIIObject blank;
  std::memset(&blank, 0, sizeof blank);
  blank.state.compact = 1;
  blank.state.ascii = 1;
#if PY_VERSION_HEX < 0x030C0000
  blank.state.ready = 1;
#endif
  static_assert(sizeof(blank.state) == sizeof(uint32_t), "the state bits form one 32-bit word");
  uint32_t word;
  std::memcpy(&word, &blank.state, sizeof word);
  m->str_flags_offset = static_cast<int32_t>(offsetof(PyASCIIObject, state));
  m->str_inline_mask = word;
  m->str_length_offset = static_cast<int32_t>(offsetof(PyASCIIObject, length));
  // A compact ASCII str's bytes follow its header (PyUnicode_DATA).
  m->str_inline_data_offset = static_cast<int32_t>(sizeof(PyASCIIObject));
  static_assert(sizeof(Py_ssize_t) == sizeof(int64_t), "the length is read as an int64_t");
}

// An exact ctypes.c_void_p, read in place: ctypes keeps an instance's buffer pointer (b_ptr)
// right after the object header, a layout unchanged since ctypes joined CPython. The first read
// is checked against the buffer protocol (how the generic path reads it); should they ever
// disagree, pointers take the generic path.
int PointerToAny(void* obj, TVMFFIAny* out) {
  static int layout_checked = 0;  // 0 unknown, 1 agrees, -1 disagrees
  auto* pointer = static_cast<PyObject*>(obj);
  PyTypeObject* type = Py_TYPE(pointer);
  // Instances of ctypes' types have ctypes' metaclasses; anything else never imports ctypes here.
  if (layout_checked < 0 || Py_TYPE(reinterpret_cast<PyObject*>(type)) == &PyType_Type) return 0;
  PyObject* void_pointer_type = CtypesVoidPointerType();
  if (void_pointer_type == nullptr) {
    PyErr_Clear();
    return 0;
  }
  if (type != reinterpret_cast<PyTypeObject*>(void_pointer_type)) return 0;
  char* buffer = *reinterpret_cast<char**>(pointer + 1);
  if (layout_checked == 0) {  // before the first read through it
    Py_buffer view;
    if (PyObject_GetBuffer(pointer, &view, PyBUF_SIMPLE) != 0) {
      PyErr_Clear();
      return 0;
    }
    const bool agrees = view.len == static_cast<Py_ssize_t>(sizeof(void*)) && view.buf == buffer;
    PyBuffer_Release(&view);
    layout_checked = agrees ? 1 : -1;
    if (!agrees) return 0;
  }
  void* value = nullptr;
  std::memcpy(&value, buffer, sizeof(void*));
  out->type_index = value == nullptr ? kTVMFFINone : kTVMFFIOpaquePtr;
  out->zero_padding = 0;
  out->v_ptr = value;
  return 1;
}

#if defined(FFIJIT_NUMPY_HEADERS)
namespace {

// Whether the running numpy has the C ABI the headers describe: its own answer, the first entry of
// its C-API table. -1 not asked yet, 0 no (or no answer: the buffer protocol for every array).
int g_numpy_abi_matches = -1;

bool NumpyAbiMatches() {
  if (g_numpy_abi_matches >= 0) return g_numpy_abi_matches == 1;
  g_numpy_abi_matches = 0;
  // Asked once an ndarray has been seen, so numpy is imported already.
  PyObject* core = PyImport_ImportModule("numpy.core._multiarray_umath");
  PyObject* capsule = core != nullptr ? PyObject_GetAttrString(core, "_ARRAY_API") : nullptr;
  void* table = capsule != nullptr && PyCapsule_CheckExact(capsule)
                    ? PyCapsule_GetPointer(capsule, nullptr)
                    : nullptr;
  if (table != nullptr) {
    auto abi_version = reinterpret_cast<unsigned int (*)()>(static_cast<void**>(table)[0]);
    g_numpy_abi_matches = abi_version() == NPY_ABI_VERSION ? 1 : 0;
  }
  Py_XDECREF(capsule);
  Py_XDECREF(core);
  PyErr_Clear();
  return g_numpy_abi_matches == 1;
}

// The DLDataType of a numpy dtype, exactly where the buffer protocol's format would give one
// (DataTypeOfFormat): native byte order, and sizes the struct module has a letter for.
bool DataTypeOfDescr(const PyArray_Descr* descr, DLDataType* out) {
  if ((descr->byteorder != '=' && descr->byteorder != '|') || descr->subarray != nullptr ||
      descr->names != nullptr) {
    return false;
  }
  const int size = descr->elsize;
  uint8_t code;
  switch (descr->kind) {
    case 'b':
      if (size != 1) return false;
      code = FFIJIT_DL_BOOL_CODE;
      break;
    case 'i':
    case 'u':
      if (size != 1 && size != 2 && size != 4 && size != 8) return false;
      code = descr->kind == 'i' ? kDLInt : kDLUInt;
      break;
    case 'f':
      if (size != 2 && size != 4 && size != 8) return false;
      code = kDLFloat;
      break;
    case 'c':
      if (size != 8 && size != 16) return false;
      code = kDLComplex;
      break;
    default:
      return false;
  }
  *out = DLDataType{code, static_cast<uint8_t>(size * 8), 1};
  return true;
}

}  // namespace

bool ReadCompactNdarray(PyObject* obj, DLTensor* t, int max_ndim, bool exact_strides) {
  if (!NumpyAbiMatches()) return false;
  auto* array = reinterpret_cast<PyArrayObject_fields*>(obj);
  // Writable, aligned and C-contiguous, and no flag beyond numpy's public ones (an internal one,
  // such as warn-on-write, makes the buffer export do more than describe).
  constexpr int kRequired = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_WRITEABLE;
  constexpr int kAllowed = kRequired | NPY_ARRAY_F_CONTIGUOUS | NPY_ARRAY_OWNDATA;
  if ((array->flags & kRequired) != kRequired || (array->flags & ~kAllowed) != 0 ||
      array->nd > max_ndim) {
    return false;
  }
  if (!DataTypeOfDescr(array->descr, &t->dtype)) return false;
  // Compact as BorrowTensorView sees it (every stride a whole number of elements, the compact one
  // wherever the extent exceeds 1), or, for a Tensor that keeps its strides, exactly the compact
  // strides; else the buffer protocol describes it.
  const npy_intp itemsize = array->descr->elsize;
  npy_intp compact_stride = itemsize;
  for (int i = array->nd - 1; i >= 0; --i) {
    const npy_intp stride = array->strides[i];
    if (stride != compact_stride &&
        (exact_strides || stride % itemsize != 0 || array->dimensions[i] > 1)) {
      return false;
    }
    compact_stride *= array->dimensions[i];
  }
  static_assert(sizeof(npy_intp) == sizeof(int64_t), "the shape is read as int64_t");
  t->data = array->data;
  t->device = DLDevice{kDLCPU, 0};
  t->ndim = array->nd;
  t->shape = reinterpret_cast<int64_t*>(array->dimensions);
  t->strides = nullptr;
  t->byte_offset = 0;
  return true;
}

bool BorrowCompactNdarray(PyObject* obj, TensorView* view) {
  DLTensor& t = view->tensor;
  if (!ReadCompactNdarray(obj, &t, 8, false)) return false;
  // A copy of the shape: assigning to the array's shape from another thread while the native
  // runs without the GIL replaces (and frees) the array's own.
  for (int i = 0; i < t.ndim; ++i) view->shape[i] = t.shape[i];
  t.shape = view->shape;
  // The array stays alive (and cannot be resized: numpy refuses while others refer to it) until
  // the entry releases it (entry.cc's ReleaseTensor), as a buffer export would keep it.
  Py_INCREF(obj);
  view->held = obj;
  return true;
}

#else  // built without numpy's headers: every array goes through the buffer protocol

bool ReadCompactNdarray(PyObject*, DLTensor*, int, bool) {
  return false;
}

bool BorrowCompactNdarray(PyObject*, TensorView*) {
  return false;
}

#endif

}  // namespace ffijit::python
