/*
 * Plain C natives for the Python suites: they know nothing about ffijit; the tests register them
 * by address (ctypes finds them in this library) with IREE metadata.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ffijit/c_api.h"
#include "ffijit/c_ext.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int64_t py_add3(int64_t a, int64_t b, int64_t c) {
  return a + 2 * b + 3 * c;
}
EXPORT int64_t py_sub3(int64_t a, int64_t b, int64_t c) {
  return a - b - c;
}
EXPORT double py_mixed(int64_t a, double b, int32_t c, float d, void* p) {
  return (double)a + b + c + (double)d + (p != NULL ? 1.0 : 0.0);
}
/* The sum wraps (computed unsigned): the random-call suites pass any value of each width. */
EXPORT int32_t py_narrow(int8_t a, uint8_t b, int16_t c, uint32_t d) {
  return (int32_t)((uint32_t)(int32_t)a + b + (uint32_t)(int32_t)c + d);
}
EXPORT int py_not(int flag) {
  return !flag;
}
EXPORT int64_t py_strlen(const char* s) {
  return (int64_t)strlen(s);
}
EXPORT int64_t py_dev_dtype(DLDevice dev, DLDataType dtype) {
  return dev.device_type * 1000000 + dev.device_id * 10000 + dtype.code * 1000 + dtype.bits;
}
/* Sums a float32 tensor of any rank (compact or strided). */
EXPORT double py_sum_f32(DLTensor* t) {
  int64_t count = 1;
  for (int i = 0; i < t->ndim; ++i) count *= t->shape[i];
  double total = 0;
  const float* data = (const float*)((const char*)t->data + t->byte_offset);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat, offset = 0, step = 1;
    for (int i = t->ndim - 1; i >= 0; --i) {
      int64_t index = rest % t->shape[i];
      rest /= t->shape[i];
      offset += index * (t->strides != NULL ? t->strides[i] : step);
      step *= t->shape[i];
    }
    total += data[offset];
  }
  return total;
}
/* Scales a float64 vector in place. */
EXPORT void py_scale_f64(DLTensor* t, double k) {
  double* data = (double*)((char*)t->data + t->byte_offset);
  for (int64_t i = 0; i < t->shape[0]; ++i) data[i] *= k;
}
/* Calls a native callback `int64_t (*)(int64_t)` n times, summing. */
EXPORT int64_t py_apply(int64_t (*f)(int64_t), int64_t n) {
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) total += f(i);
  return total;
}

/* ---- mixes of flat kinds: the generated entries' differential suite (test_entries.py) ---- */

/* Two leaves through out-pointers, for the structure results of test_entries.py. */
EXPORT void py_split(int64_t a, double b, int64_t* x, double* y) {
  *x = (int64_t)((uint64_t)a * 3u);
  *y = b / 2;
}

/* Every integer width and bool, folded (wrapping) so that each argument and its place count. */
EXPORT int64_t py_mix_ints(int8_t a, int16_t b, int32_t c, int64_t d, uint8_t e, uint16_t f,
                           uint32_t g, uint64_t h, bool i) {
  uint64_t folded = 0;
  const uint64_t parts[] = {
      (uint64_t)(int64_t)a, (uint64_t)(int64_t)b, (uint64_t)(int64_t)c, (uint64_t)d, e, f, g, h,
      i ? 1u : 0u};
  for (int k = 0; k < 9; ++k) folded = folded * 1000003u + parts[k];
  return (int64_t)folded;
}
EXPORT double py_mix_floats(float a, double b, int64_t c, bool d, int32_t e) {
  return (double)a + 3.0 * b + 5.0 * (double)c + (d ? 7.0 : 0.0) + 11.0 * (double)e;
}
/* A str (FNV-1a of its bytes), a Device, a DataType, a pointer and a u32. */
EXPORT int64_t py_mix_text(const char* s, DLDevice dev, DLDataType dtype, void* p, uint32_t n) {
  uint64_t hash = 1469598103934665603u;
  for (const unsigned char* c = (const unsigned char*)s; *c != 0; ++c) {
    hash = (hash ^ *c) * 1099511628211u;
  }
  hash ^= (uint64_t)dev.device_type * 1000003u + (uint64_t)dev.device_id;
  hash = hash * 31u + (uint64_t)dtype.code * 65536u + dtype.bits * 256u + dtype.lanes;
  hash = hash * 31u + (uint64_t)(uintptr_t)p;
  return (int64_t)(hash * 31u + n);
}
/* What a tensor of any element type and rank looks like (and its sum when it is float32). */
EXPORT double py_mix_tensor(DLTensor* t, double k, int16_t n, DLDataType dtype) {
  double shape = 0;
  for (int i = 0; i < t->ndim; ++i) shape = shape * 16 + (double)t->shape[i];
  double sum = t->dtype.code == kDLFloat && t->dtype.bits == 32 ? py_sum_f32(t) : 0.0;
  return sum * k + shape * 1000 + t->ndim * 100 + t->dtype.code * 10 + t->dtype.bits + n +
         dtype.bits;
}
/* Everything a DLTensor says, as text: two paths that describe an array alike print alike. */
EXPORT const char* py_describe_tensor(DLTensor* t) {
  static _Thread_local char text[1024];
  int n =
      snprintf(text, sizeof text, "dtype %d/%d/%d device %d/%d ndim %d data %p offset %llu shape",
               t->dtype.code, t->dtype.bits, t->dtype.lanes, (int)t->device.device_type,
               t->device.device_id, t->ndim, t->data, (unsigned long long)t->byte_offset);
  for (int i = 0; i < t->ndim && n < 900; ++i)
    n += snprintf(text + n, sizeof text - n, " %lld", (long long)t->shape[i]);
  if (t->strides == NULL) {
    snprintf(text + n, sizeof text - n, " compact");
  } else {
    n += snprintf(text + n, sizeof text - n, " strides");
    for (int i = 0; i < t->ndim && n < 1000; ++i)
      n += snprintf(text + n, sizeof text - n, " %lld", (long long)t->strides[i]);
  }
  return text;
}
/* A u64 result: above INT64_MAX it is a ValueError. */
EXPORT uint64_t py_mix_u64(uint64_t a, uint8_t b) {
  return a + b;
}
EXPORT bool py_mix_bool(bool a, int64_t b, uint32_t c) {
  /* The parity of b + c, computed unsigned so that no value of b overflows. */
  return a != ((((uint64_t)b + c) & 1u) != 0);
}
EXPORT float py_mix_f32(float a, uint32_t b, int8_t c) {
  return a * 2.0f + (float)b - (float)c;
}
EXPORT int64_t py_mix_nothing(void) {
  return 42;
}
EXPORT void py_mix_void(int64_t a, const char* s) {
  (void)a;
  (void)s;
}
/* The str from character `skip` on (clamped to its length). */
EXPORT const char* py_mix_str(const char* s, int8_t skip) {
  size_t length = strlen(s);
  size_t from = skip < 0 ? 0 : (size_t)skip;
  return s + (from < length ? from : length);
}

EXPORT int64_t py_twice(int64_t x) {
  return 2 * x;
}

/*
 * A gate between two Python threads that only opens while the waiter is inside its native, so
 * the opener can run Python code only if the waiter's call released the GIL (test_entries.py).
 */
static pthread_mutex_t g_gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_gate_opened = PTHREAD_COND_INITIALIZER;
static int64_t g_gate_waiting = 0;
static int64_t g_gate_value = 0;

/* Waits until py_gate_open(value) opens the gate: value, or -1 after 60 s (a deadlock guard). */
EXPORT int64_t py_gate_wait(int64_t value) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 60;
  pthread_mutex_lock(&g_gate_lock);
  g_gate_waiting = value;
  int timed_out = 0;
  while (g_gate_value != value && !timed_out) {
    timed_out = pthread_cond_timedwait(&g_gate_opened, &g_gate_lock, &deadline) == ETIMEDOUT;
  }
  int64_t result = g_gate_value == value ? value : -1;
  g_gate_waiting = 0;
  pthread_mutex_unlock(&g_gate_lock);
  return result;
}
/* Opens the gate for the waiter of `value`: 1, or 0 while nobody waits for that value. */
EXPORT int64_t py_gate_open(int64_t value) {
  pthread_mutex_lock(&g_gate_lock);
  int64_t opened = g_gate_waiting == value;
  if (opened) {
    g_gate_value = value;
    pthread_cond_broadcast(&g_gate_opened);
  }
  pthread_mutex_unlock(&g_gate_lock);
  return opened;
}

/* ---- errors ---- */

/* Status convention: raises a TVM FFI error of `kind` with `message` (test_errors.py). */
EXPORT int py_raise(const char* kind, const char* message) {
  TVMFFIErrorSetRaisedFromCStr(kind, message);
  return -1;
}

/* ---- structures and several results ---- */

/* {"a":[["sdict",["x","f64"],["y","f64"]],["sdict",["x","f64"],["y","f64"]]],"r":["f64"]} */
EXPORT double py_distance2(double x0, double y0, double x1, double y1) {
  return (x1 - x0) * (x1 - x0) + (y1 - y0) * (y1 - y0);
}
/* {"a":[["slist","i64","i64"],["stuple","i64",null,"i64"]],"r":["i64"]} */
EXPORT int64_t py_weigh4(int64_t a, int64_t b, int64_t c, int64_t d) {
  return a * 1000 + b * 100 + c * 10 + d;
}
/* Several results: {"a":[["slist","f64","f64"],"i32"],"r":["f64","f64"]}, a quarter turn each. */
EXPORT void py_rotate(double x, double y, int32_t quarter_turns, double* out_x, double* out_y) {
  for (int32_t i = 0; i < (quarter_turns % 4 + 4) % 4; ++i) {
    double t = x;
    x = -y;
    y = t;
  }
  *out_x = x;
  *out_y = y;
}
/* A py_homogeneous_list of ints, received as the Array object: the sum of its Int elements. */
EXPORT int64_t py_list_sum(TVMFFIObject* array) {
  const FFIJITArrayCell* cell = (const FFIJITArrayCell*)(array + 1);
  int64_t total = 0;
  for (int64_t i = 0; i < cell->size; ++i) {
    if (cell->data[i].type_index == kTVMFFIInt) total += cell->data[i].v_int64;
  }
  return total * 100 + cell->size;
}
/* Any Map object: its size. */
EXPORT int64_t py_map_size(TVMFFIObject* map) {
  int64_t size = -1;
  if (FFIJITMapSize(map, &size) != 0) return -1;
  return size;
}

/* ---- strings, bytes, objects ---- */

EXPORT const char* py_echo(const char* s) {
  return s;
}
EXPORT int64_t py_bytes_sum(TVMFFIByteArray bytes) {
  int64_t total = 0;
  for (size_t i = 0; i < bytes.size; ++i) total += (unsigned char)bytes.data[i];
  return total * 1000 + (int64_t)bytes.size;
}
/* Hands back the object it was given (a new reference), typed by the signature's result. */
EXPORT TVMFFIObject* py_same_object(TVMFFIObject* obj) {
  TVMFFIObjectIncRef(obj);
  return obj;
}
EXPORT int64_t py_object_type_index(TVMFFIObject* obj) {
  return obj->type_index;
}

/* ---- callbacks from native threads ---- */

struct ThreadCall {
  TVMFFIObject* func;
  int64_t x;
  int rc;
  int64_t result;
  TVMFFIObjectHandle error;
};

static void* CallOnThread(void* arg) {
  struct ThreadCall* call = (struct ThreadCall*)arg;
  TVMFFIAny in, out;
  in.type_index = kTVMFFIInt;
  in.zero_padding = 0;
  in.v_int64 = call->x;
  out.type_index = kTVMFFINone;
  out.zero_padding = 0;
  out.v_int64 = 0;
  call->error = NULL;
  call->rc = TVMFFIFunctionCall(call->func, &in, 1, &out);
  if (call->rc != 0) {
    TVMFFIErrorMoveFromRaised(&call->error);
  } else if (out.type_index == kTVMFFIInt) {
    call->result = out.v_int64;
  } else {
    if (out.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(out.v_obj);
    call->rc = 1;
  }
  return NULL;
}

/*
 * Status convention, {"a":["object","i64","i64"],"r":["i64"]}: starts `threads` native threads
 * (at most 16), thread i calling func(x + i) at the same time; *out is the sum of the results. A
 * thread's error is re-raised in the calling thread.
 */
EXPORT int py_call_on_threads(TVMFFIObject* func, int64_t threads, int64_t x, int64_t* out) {
  struct ThreadCall calls[16];
  pthread_t ids[16];
  if (threads < 1 || threads > 16) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "py_call_on_threads: 1 to 16 threads");
    return -1;
  }
  for (int64_t i = 0; i < threads; ++i) {
    calls[i].func = func;
    calls[i].x = x + i;
    calls[i].result = 0;
    if (pthread_create(&ids[i], NULL, CallOnThread, &calls[i]) != 0) {
      threads = i;
      break;
    }
  }
  int64_t total = 0;
  int failed = -1;
  for (int64_t i = 0; i < threads; ++i) {
    pthread_join(ids[i], NULL);
    total += calls[i].result;
    if (calls[i].rc != 0 && failed < 0) failed = (int)i;
  }
  for (int64_t i = 0; i < threads; ++i) {
    if (calls[i].error == NULL) continue;
    if ((int64_t)failed == i) TVMFFIErrorSetRaised(calls[i].error);
    TVMFFIObjectDecRef(calls[i].error);
  }
  if (failed >= 0) {
    if (calls[failed].error == NULL) {
      TVMFFIErrorSetRaisedFromCStr("RuntimeError", "a thread's callback returned a non-int");
    }
    return -1;
  }
  *out = total;
  return 0;
}

/* Calls the global function `name` with x: the C side of a Python-registered global. */
EXPORT int64_t py_call_global(const char* name, int64_t x) {
  TVMFFIByteArray key = {name, strlen(name)};
  TVMFFIObjectHandle func = NULL;
  if (TVMFFIFunctionGetGlobal(&key, &func) != 0 || func == NULL) return -1;
  TVMFFIAny in, out;
  in.type_index = kTVMFFIInt;
  in.zero_padding = 0;
  in.v_int64 = x;
  out.type_index = kTVMFFINone;
  out.zero_padding = 0;
  out.v_int64 = 0;
  int rc = TVMFFIFunctionCall(func, &in, 1, &out);
  TVMFFIObjectDecRef(func);
  if (rc != 0) {
    TVMFFIObjectHandle error = NULL;
    TVMFFIErrorMoveFromRaised(&error);
    if (error != NULL) TVMFFIObjectDecRef(error);
    return -2;
  }
  return out.type_index == kTVMFFIInt ? out.v_int64 : -3;
}

/* ---- exceptions through nested callbacks (test_callback_errors.py) ---- */

/* Plain convention: returns f(x); a failing callback's zero result passes through. */
EXPORT int64_t py_nest_plain(int64_t (*f)(int64_t), int64_t x) {
  return f(x);
}
/* Status convention, {"a":["ptr","i64"],"r":["i64"]}: f is a status-convention callback
 * `int f(int64_t x, int64_t* out)`; its -1 (the error still raised) is returned untouched. */
EXPORT int py_nest_status(int (*f)(int64_t, int64_t*), int64_t x, int64_t* out) {
  int64_t result = 0;
  int rc = f(x, &result);
  if (rc != 0) return rc;
  *out = result;
  return 0;
}
/* Status convention, {"a":["object","i64"],"r":["i64"]}: calls the packed Function func(x); its
 * failure (the error still raised) is returned untouched. */
EXPORT int py_nest_packed(TVMFFIObject* func, int64_t x, int64_t* out) {
  TVMFFIAny in, result;
  in.type_index = kTVMFFIInt;
  in.zero_padding = 0;
  in.v_int64 = x;
  result.type_index = kTVMFFINone;
  result.zero_padding = 0;
  result.v_int64 = 0;
  int rc = TVMFFIFunctionCall(func, &in, 1, &result);
  if (rc != 0) return rc;
  if (result.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(result.v_obj);
  *out = result.type_index == kTVMFFIInt ? result.v_int64 : -1;
  return 0;
}

/* ---- pointer parameters (test_semantics.py) ---- */

/* The address it was given, so a test sees what a `ptr` argument became. */
EXPORT int64_t py_address(void* p) {
  return (int64_t)(intptr_t)p;
}
/* Writes n bytes of `value` at p: the native writes through a `ptr` argument. */
EXPORT void py_fill(void* p, int64_t n, int64_t value) {
  memset(p, (int)value, (size_t)n);
}
/* Status convention, no arguments: returns -1 when an error is raised in this thread (left by a
 * plain-convention callback), which its caller then receives; 0 when none is. */
EXPORT int py_take_raised(void) {
  TVMFFIObjectHandle error = NULL;
  TVMFFIErrorMoveFromRaised(&error);
  if (error == NULL) return 0;
  TVMFFIErrorSetRaised(error);
  TVMFFIObjectDecRef(error);
  return -1;
}

/* ---- a native that calls back from a thread of its own and joins it (test_threads.py) ---- */

struct PointerCall {
  int (*f)(int64_t, int64_t*);
  int64_t x, result;
  int rc;
  TVMFFIObjectHandle error;
};

static void* CallPointerOnThread(void* arg) {
  struct PointerCall* call = (struct PointerCall*)arg;
  call->error = NULL;
  call->rc = call->f(call->x, &call->result);
  if (call->rc != 0) TVMFFIErrorMoveFromRaised(&call->error);
  return NULL;
}

/* Status convention, {"a":["ptr","i64"],"r":["i64"]}: calls the status-convention callback f(x)
 * on a new thread and waits for it; the thread's error is raised in the calling thread. */
EXPORT int py_call_pointer_on_thread(int (*f)(int64_t, int64_t*), int64_t x, int64_t* out) {
  struct PointerCall call = {f, x, 0, 0, NULL};
  pthread_t id;
  if (pthread_create(&id, NULL, CallPointerOnThread, &call) != 0) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "py_call_pointer_on_thread: no thread");
    return -1;
  }
  pthread_join(id, NULL);
  if (call.rc != 0) {
    if (call.error != NULL) {
      TVMFFIErrorSetRaised(call.error);
      TVMFFIObjectDecRef(call.error);
    } else {
      TVMFFIErrorSetRaisedFromCStr("RuntimeError", "the thread's callback failed without an error");
    }
    return -1;
  }
  *out = call.result;
  return 0;
}

/* ---- several callbacks from a thread of its own, which the native joins (test_threads.py) ---- */

struct EachCall {
  void* const* callbacks;
  int64_t n, status, x, sum, failures;
  TVMFFIObjectHandle first_error;
};

static void* CallEachOnThread(void* arg) {
  struct EachCall* call = (struct EachCall*)arg;
  for (int64_t i = 0; i < call->n; ++i) {
    int64_t result = 0;
    if (call->status) {
      int (*f)(int64_t, int64_t*) = (int (*)(int64_t, int64_t*))call->callbacks[i];
      if (f(call->x, &result) != 0) result = 0;
    } else {
      int64_t (*f)(int64_t) = (int64_t(*)(int64_t))call->callbacks[i];
      result = f(call->x);
    }
    call->sum += result;
    TVMFFIObjectHandle error = NULL;
    TVMFFIErrorMoveFromRaised(&error);
    if (error == NULL) continue;
    ++call->failures;
    if (call->first_error == NULL) {
      call->first_error = error;
    } else {
      TVMFFIObjectDecRef(error);
    }
  }
  return NULL;
}

/*
 * {"a":["ptr","i64","i64","i64"],"r":["i64","i64"]}: on a new thread, which it waits for, calls
 * each of the `n` callbacks with x: plain (int64_t f(int64_t)) or, when `status`, status-convention
 * ones (int f(int64_t, int64_t*)). *sum adds their results (0 for a failed status call);
 * *failures counts the calls that left an error raised in the thread. The first such error is
 * left raised in the calling thread, for py_take_raised.
 */
EXPORT void py_callbacks_on_thread(void* const* callbacks, int64_t n, int64_t status, int64_t x,
                                   int64_t* sum, int64_t* failures) {
  struct EachCall call = {callbacks, n, status, x, 0, 0, NULL};
  pthread_t id;
  *sum = *failures = -1;
  if (pthread_create(&id, NULL, CallEachOnThread, &call) != 0) return;
  pthread_join(id, NULL);
  *sum = call.sum;
  *failures = call.failures;
  if (call.first_error != NULL) {
    TVMFFIErrorSetRaised(call.first_error);
    TVMFFIObjectDecRef(call.first_error);
  }
}
