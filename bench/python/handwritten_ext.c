/*
 * ffijit_bench_handwritten: the yardstick of bench_calls.py. A CPython extension written the way a
 * careful person binds the benchmark natives by hand: one METH_FASTCALL function per signature,
 * each argument unboxed with the CPython call for exactly its type (errors checked), the native
 * called through a function pointer and the result boxed. The pointers are read from a table filled
 * at module init (volatile, so the compiler cannot turn them back into direct calls): ffijit,
 * ctypes and cffi also call by address, and this keeps the comparison about argument handling.
 *
 * Device and DataType are this module's own minimal types holding a DLDevice / DLDataType (what a
 * hand-written binding would define), read by exact type check. A str is read as CPython's own
 * "s" argument converter reads it: its UTF-8 bytes, refused when a NUL inside would cut them short
 * (ffijit refuses such strs too). A tensor is any C-contiguous
 * 2-D float32 buffer (numpy arrays), read through the buffer protocol into a DLTensor on the stack;
 * sum_f64 takes a C-contiguous 1-D float64 buffer the same way.
 *
 * sum_f64_native_ns(array, n) is not a binding but the benchmark's measure of the native alone: it
 * reads the buffer once and calls the sum native n times back to back from C, returning the mean
 * nanoseconds per native call (what no call path can go below).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "python_natives.h"

/* DLTensor.shape is int64_t*; the buffer's shape is Py_ssize_t*: pass it as is when they match. */
typedef char ssize_t_is_int64[sizeof(Py_ssize_t) == sizeof(int64_t) ? 1 : -1];

static BenchNativeTable g_natives = FFIJIT_BENCH_NATIVE_TABLE;

typedef struct {
  PyObject_HEAD DLDevice device;
} HwDevice;

typedef struct {
  PyObject_HEAD DLDataType dtype;
} HwDataType;

static PyTypeObject* g_device_type;
static PyTypeObject* g_datatype_type;

static int CheckArgCount(const char* name, Py_ssize_t nargs, Py_ssize_t expected) {
  if (nargs == expected) return 0;
  PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", name, expected, nargs);
  return -1;
}

static int UnboxI64(PyObject* obj, int64_t* out) {
  long long value = PyLong_AsLongLong(obj);
  if (value == -1 && PyErr_Occurred()) return -1;
  *out = (int64_t)value;
  return 0;
}

static int UnboxI32(PyObject* obj, int32_t* out) {
  long long value = PyLong_AsLongLong(obj);
  if (value == -1 && PyErr_Occurred()) return -1;
  if (value < INT32_MIN || value > INT32_MAX) {
    PyErr_SetString(PyExc_OverflowError, "integer does not fit in int32");
    return -1;
  }
  *out = (int32_t)value;
  return 0;
}

static int UnboxF64(PyObject* obj, double* out) {
  double value = PyFloat_AsDouble(obj);
  if (value == -1.0 && PyErr_Occurred()) return -1;
  *out = value;
  return 0;
}

/* None is NULL; otherwise an int address. */
static int UnboxPointer(PyObject* obj, void** out) {
  if (obj == Py_None) {
    *out = NULL;
    return 0;
  }
  if (!PyLong_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "expected None or an int address, got %s", Py_TYPE(obj)->tp_name);
    return -1;
  }
  void* value = PyLong_AsVoidPtr(obj);
  if (value == NULL && PyErr_Occurred()) return -1;
  *out = value;
  return 0;
}

static PyObject* CallNoArgs(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  (void)args;
  if (CheckArgCount("no_args", nargs, 0) != 0) return NULL;
  g_natives.no_args();
  Py_RETURN_NONE;
}

static PyObject* CallI64x3(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  int64_t a, b, c;
  if (CheckArgCount("i64_i64_i64", nargs, 3) != 0 || UnboxI64(args[0], &a) != 0 ||
      UnboxI64(args[1], &b) != 0 || UnboxI64(args[2], &c) != 0) {
    return NULL;
  }
  return PyLong_FromLongLong(g_natives.i64x3(a, b, c));
}

static PyObject* CallMixed(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  int64_t a;
  double b, d;
  int32_t c;
  void* p;
  if (CheckArgCount("i64_f64_i32_f32_ptr", nargs, 5) != 0 || UnboxI64(args[0], &a) != 0 ||
      UnboxF64(args[1], &b) != 0 || UnboxI32(args[2], &c) != 0 || UnboxF64(args[3], &d) != 0 ||
      UnboxPointer(args[4], &p) != 0) {
    return NULL;
  }
  return PyFloat_FromDouble(g_natives.mixed(a, b, c, (float)d, p));
}

static PyObject* CallDevDtype(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  int64_t k;
  if (CheckArgCount("dev_dtype_i64", nargs, 3) != 0) return NULL;
  if (!Py_IS_TYPE(args[0], g_device_type)) {
    PyErr_Format(PyExc_TypeError, "argument 1 must be Device, not %s", Py_TYPE(args[0])->tp_name);
    return NULL;
  }
  if (!Py_IS_TYPE(args[1], g_datatype_type)) {
    PyErr_Format(PyExc_TypeError, "argument 2 must be DataType, not %s", Py_TYPE(args[1])->tp_name);
    return NULL;
  }
  if (UnboxI64(args[2], &k) != 0) return NULL;
  return PyLong_FromLongLong(
      g_natives.dev_dtype(((HwDevice*)args[0])->device, ((HwDataType*)args[1])->dtype, k));
}

/* The buffer's format names float32: "f", optionally after a native/little-endian byte-order mark
 * (the machines this runs on are little-endian). */
static int IsFloat32Format(const char* format) {
  if (format == NULL) return 0;
  if (format[0] == '@' || format[0] == '=' || format[0] == '<') ++format;
  return format[0] == 'f' && format[1] == '\0';
}

static PyObject* CallTensor(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  Py_buffer view;
  if (CheckArgCount("tensor", nargs, 1) != 0) return NULL;
  /* PyBUF_ND asks for a C-contiguous buffer with its shape (no strides needed). */
  if (PyObject_GetBuffer(args[0], &view, PyBUF_ND | PyBUF_FORMAT) != 0) return NULL;
  if (view.ndim != 2 || view.itemsize != 4 || !IsFloat32Format(view.format)) {
    PyErr_Format(PyExc_ValueError, "expected a 2-D float32 buffer, got ndim %d format '%s'",
                 view.ndim, view.format != NULL ? view.format : "B");
    PyBuffer_Release(&view);
    return NULL;
  }
  DLTensor tensor;
  tensor.data = view.buf;
  tensor.device.device_type = kDLCPU;
  tensor.device.device_id = 0;
  tensor.ndim = 2;
  tensor.dtype.code = kDLFloat;
  tensor.dtype.bits = 32;
  tensor.dtype.lanes = 1;
  tensor.shape = (int64_t*)view.shape;
  tensor.strides = NULL;
  tensor.byte_offset = 0;
  int64_t result = g_natives.tensor(&tensor);
  PyBuffer_Release(&view);
  return PyLong_FromLongLong(result);
}

/* The buffer's format names float64: "d", optionally after a byte-order mark (as above). */
static int IsFloat64Format(const char* format) {
  if (format == NULL) return 0;
  if (format[0] == '@' || format[0] == '=' || format[0] == '<') ++format;
  return format[0] == 'd' && format[1] == '\0';
}

/* Reads a C-contiguous 1-D float64 buffer into a DLTensor; the caller releases the view. */
static int Float64Vector(PyObject* obj, Py_buffer* view, DLTensor* tensor) {
  if (PyObject_GetBuffer(obj, view, PyBUF_ND | PyBUF_FORMAT) != 0) return -1;
  if (view->ndim != 1 || view->itemsize != 8 || !IsFloat64Format(view->format)) {
    PyErr_Format(PyExc_ValueError, "expected a 1-D float64 buffer, got ndim %d format '%s'",
                 view->ndim, view->format != NULL ? view->format : "B");
    PyBuffer_Release(view);
    return -1;
  }
  tensor->data = view->buf;
  tensor->device.device_type = kDLCPU;
  tensor->device.device_id = 0;
  tensor->ndim = 1;
  tensor->dtype.code = kDLFloat;
  tensor->dtype.bits = 64;
  tensor->dtype.lanes = 1;
  tensor->shape = (int64_t*)view->shape;
  tensor->strides = NULL;
  tensor->byte_offset = 0;
  return 0;
}

static PyObject* CallSumF64(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  Py_buffer view;
  DLTensor tensor;
  if (CheckArgCount("sum_f64", nargs, 1) != 0 || Float64Vector(args[0], &view, &tensor) != 0) {
    return NULL;
  }
  double result = g_natives.sum_f64(&tensor);
  PyBuffer_Release(&view);
  return PyFloat_FromDouble(result);
}

static PyObject* SumF64NativeNs(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  Py_buffer view;
  DLTensor tensor;
  int64_t n;
  if (CheckArgCount("sum_f64_native_ns", nargs, 2) != 0 || UnboxI64(args[1], &n) != 0) return NULL;
  if (n <= 0) {
    PyErr_SetString(PyExc_ValueError, "sum_f64_native_ns: n must be positive");
    return NULL;
  }
  if (Float64Vector(args[0], &view, &tensor) != 0) return NULL;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (int64_t i = 0; i < n; ++i) g_natives.sum_f64(&tensor);
  clock_gettime(CLOCK_MONOTONIC, &stop);
  PyBuffer_Release(&view);
  double elapsed_ns =
      (double)(stop.tv_sec - start.tv_sec) * 1e9 + (double)(stop.tv_nsec - start.tv_nsec);
  return PyFloat_FromDouble(elapsed_ns / (double)n);
}

static PyObject* CallStr(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (CheckArgCount("str", nargs, 1) != 0) return NULL;
  if (!PyUnicode_Check(args[0])) {
    PyErr_Format(PyExc_TypeError, "argument 1 must be str, not %s", Py_TYPE(args[0])->tp_name);
    return NULL;
  }
  /* As CPython's own "s" converter: a str with a NUL inside would reach the native cut short. */
  Py_ssize_t size;
  const char* utf8 = PyUnicode_AsUTF8AndSize(args[0], &size);
  if (utf8 == NULL) return NULL;
  if (strlen(utf8) != (size_t)size) {
    PyErr_SetString(PyExc_ValueError, "embedded null character");
    return NULL;
  }
  return PyLong_FromLongLong(g_natives.str(utf8));
}

/* Device(device_type, device_id) and DataType(code, bits, lanes): DLPack's integers as is. */
static PyObject* DeviceNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  int device_type, device_id;
  static char* keywords[] = {"device_type", "device_id", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "ii", keywords, &device_type, &device_id)) {
    return NULL;
  }
  HwDevice* self = (HwDevice*)type->tp_alloc(type, 0);
  if (self == NULL) return NULL;
  self->device.device_type = (DLDeviceType)device_type;
  self->device.device_id = device_id;
  return (PyObject*)self;
}

static PyObject* DataTypeNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  unsigned char code, bits;
  unsigned short lanes = 1;
  static char* keywords[] = {"code", "bits", "lanes", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "bb|H", keywords, &code, &bits, &lanes)) {
    return NULL;
  }
  HwDataType* self = (HwDataType*)type->tp_alloc(type, 0);
  if (self == NULL) return NULL;
  self->dtype.code = code;
  self->dtype.bits = bits;
  self->dtype.lanes = lanes;
  return (PyObject*)self;
}

static PyType_Slot g_device_slots[] = {{Py_tp_new, (void*)DeviceNew}, {0, NULL}};
static PyType_Spec g_device_spec = {"ffijit_bench_handwritten.Device", sizeof(HwDevice), 0,
                                    Py_TPFLAGS_DEFAULT, g_device_slots};
static PyType_Slot g_datatype_slots[] = {{Py_tp_new, (void*)DataTypeNew}, {0, NULL}};
static PyType_Spec g_datatype_spec = {"ffijit_bench_handwritten.DataType", sizeof(HwDataType), 0,
                                      Py_TPFLAGS_DEFAULT, g_datatype_slots};

/* METH_FASTCALL functions go in the table as PyCFunction; the detour through void(*)(void)
 * tells the compiler the cast is intended. */
#define FASTCALL_ENTRY(name, fn, doc) \
  { name, (PyCFunction)(void (*)(void))(fn), METH_FASTCALL, doc }

static PyMethodDef g_methods[] = {
    FASTCALL_ENTRY("no_args", CallNoArgs, "no_args() -> None"),
    FASTCALL_ENTRY("i64_i64_i64", CallI64x3, "i64_i64_i64(a, b, c) -> int"),
    FASTCALL_ENTRY("i64_f64_i32_f32_ptr", CallMixed,
                   "i64_f64_i32_f32_ptr(a, b, c, d, p: None | int) -> float"),
    FASTCALL_ENTRY("dev_dtype_i64", CallDevDtype, "dev_dtype_i64(Device, DataType, k) -> int"),
    FASTCALL_ENTRY("tensor", CallTensor, "tensor(2-D float32 buffer) -> int"),
    FASTCALL_ENTRY("str", CallStr, "str(s) -> int"),
    FASTCALL_ENTRY("sum_f64", CallSumF64, "sum_f64(1-D float64 buffer) -> float"),
    FASTCALL_ENTRY("sum_f64_native_ns", SumF64NativeNs,
                   "sum_f64_native_ns(1-D float64 buffer, n) -> mean ns of n native calls"),
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef g_module = {
    PyModuleDef_HEAD_INIT,
    "ffijit_bench_handwritten",
    "Hand-written bindings of the benchmark natives (the yardstick of bench_calls.py).",
    -1,
    g_methods,
    NULL,
    NULL,
    NULL,
    NULL};

PyMODINIT_FUNC PyInit_ffijit_bench_handwritten(void) {
  PyObject* module = PyModule_Create(&g_module);
  if (module == NULL) return NULL;
  g_device_type = (PyTypeObject*)PyType_FromSpec(&g_device_spec);
  g_datatype_type = (PyTypeObject*)PyType_FromSpec(&g_datatype_spec);
  if (g_device_type == NULL || g_datatype_type == NULL ||
      PyModule_AddObjectRef(module, "Device", (PyObject*)g_device_type) != 0 ||
      PyModule_AddObjectRef(module, "DataType", (PyObject*)g_datatype_type) != 0) {
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
