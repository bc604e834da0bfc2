// Stencil sources of the copy-and-patch host entries (ffijit/host_entry.h): a dynamic language's
// fastcall entry for one packed function, made in microseconds. Compiled by clang-19 at build time
// with the thunk stencils (stencils.c) and extracted by the same tool.
//
// An entry is a chain: the C-ABI entry (keywords, argument count, the optional call count) calls
// the first argument stencil with its frame; each argument stencil checks its object's exact type
// and stores the TVMFFIAny the host's generic conversion makes of it, the tensor stencils borrow
// the tensors once every other argument has passed, and the call stencil calls the function's
// current packed entry (through its handle, so the hot tier serves it once there is one) and boxes
// the result. Every miss calls the host's fallback with the entry's own arguments, before anything
// is held (a tensor miss first releases the tensors borrowed before it): the host's generic path
// then produces the result or the error, as for the LLVM entries, whose checks these are.
//
// Holes (see stencils.c): HOLE_arity, HOLE_offset (the argument's Any in the frame), HOLE_object
// (the argument's object in the host's array), HOLE_index (a tensor's number; at the call, how
// many tensors), CONT_next, and DATA_host, the entry's model data (host_stencil_data.h) placed
// after its code, its address loaded PC-relative (x86-64) or absolute (AArch64).
#include <stddef.h>
#include <stdint.h>

#include "host_stencil_data.h"
#include "stencil_chain.h"

enum {
  kNone = 0,
  kInt = 1,
  kBool = 2,
  kFloat = 3,
  kDataType = 5,
  kDevice = 6,
  kDLTensorPtr = 7,
  kRawStr = 8,
};

// The data is reached through a register the entry loads once: on x86-64 by a PC-relative lea
// (an address the compiler took itself would be a 32-bit absolute, which the data's is not).
extern const FFIJITHostStencilData DATA_host;
#if defined(__x86_64__)
#define LOAD_DATA(d) __asm__("leaq DATA_host(%%rip), %0" : "=r"(d))
#else
#define LOAD_DATA(d) d = &DATA_host
#endif
extern char HOLE_arity[], HOLE_offset[], HOLE_object[], HOLE_index[];
#define ARITY ((intptr_t)(uint32_t)(uintptr_t)HOLE_arity)

// The frame, in the entry's stack: the Anys, the result, the thunk chain's frame, then the
// tensors' slots.
#define MAX_ARGS FFIJIT_HOST_STENCIL_MAX_ARGS
#define RESULT ((Any*)(f + 2 * MAX_ARGS))
#define THUNK_FRAME (f + 2 * MAX_ARGS + 2)
#define SLOTS ((char*)(THUNK_FRAME + FRAME_WORDS))
#define HOST_FRAME_WORDS (2 * MAX_ARGS + 2 + FRAME_WORDS + FFIJIT_HOST_STENCIL_SLOT_BYTES / 8)

// The host chain's parameters: the entry's `self` and objects, its frame, and its data.
#define HPARAMS void *self, void *const *args, uint64_t *f, const FFIJITHostStencilData *d
#define HARGS self, args, f, d
extern void* CHAIN CONT_next(HPARAMS);
#define NEXT() __attribute__((musttail)) return CONT_next(HARGS)
// The host's generic path, with the arguments the entry was called with.
#define GENERIC() return d->fallback(self, args, ARITY, 0)

#define OBJECT() (*(void* const*)((const char*)args + (uintptr_t)HOLE_object))
#define TYPE_OF(obj) (*(const void* const*)((const char*)(obj) + d->type_offset))
#define AT(obj, offset) ((const char*)(obj) + (offset))
static inline __attribute__((always_inline)) void store(uint64_t* f, int32_t tag,
                                                        uint64_t payload) {
  Any* any = (Any*)((char*)f + (uintptr_t)HOLE_offset);
  *(uint64_t*)any = (uint32_t)tag;
  any->u = payload;
}

// ---- The entries (the host's fastcall shape, C ABI) ----

void* stencil_host_entry(void* self, void* const* args, intptr_t nargs, void* kwnames) {
  const FFIJITHostStencilData* d;
  LOAD_DATA(d);
  if (__builtin_expect(kwnames != 0 || nargs != ARITY, 0)) {
    return d->fallback(self, args, nargs, kwnames);
  }
  uint64_t frame[HOST_FRAME_WORDS];
  return CONT_next(self, args, frame, d);
}

// The same, counting calls down in `self` (d->self_count_offset): the call that brings the count to
// zero goes to d->count_reached instead. A plain load and store: a count lost to a concurrent call
// (a host without a global lock) only delays it.
void* stencil_host_entry_counted(void* self, void* const* args, intptr_t nargs, void* kwnames) {
  const FFIJITHostStencilData* d;
  LOAD_DATA(d);
  if (__builtin_expect(kwnames != 0 || nargs != ARITY, 0)) {
    return d->fallback(self, args, nargs, kwnames);
  }
  int64_t* count = (int64_t*)((char*)self + d->self_count_offset);
  int64_t left = *count - 1;
  *count = left;
  if (__builtin_expect(left == 0, 0)) return d->count_reached(self, args, nargs, kwnames);
  uint64_t frame[HOST_FRAME_WORDS];
  return CONT_next(self, args, frame, d);
}

// ---- Arguments: one stencil per form (plan/host_forms.h) ----

// An exact int's value: read in place when it has at most one digit and the model says how,
// else by the host (the generic path when it does not fit int64_t, the host's error cleared).
#define INT_VALUE(obj, out)                                                             \
  int64_t out;                                                                          \
  {                                                                                     \
    int64_t size = *(const int64_t*)AT(obj, d->int_size_offset);                        \
    int64_t digit = *(const uint32_t*)AT(obj, d->int_digits_offset);                    \
    if (d->int_layout == FFIJIT_HOST_INT_SIZED_DIGITS && (uint64_t)(size + 1) <= 2) {   \
      out = size * digit;                                                               \
    } else if (d->int_layout == FFIJIT_HOST_INT_TAGGED_DIGITS && (uint64_t)size < 16) { \
      out = (1 - (size & 3)) * digit;                                                   \
    } else {                                                                            \
      out = d->int_value(obj);                                                          \
      if (__builtin_expect(out == -1, 0) && d->error_occurred() != 0) {                 \
        d->clear_error();                                                               \
        GENERIC();                                                                      \
      }                                                                                 \
    }                                                                                   \
  }

CHAIN void* stencil_host_int(HPARAMS) {
  void* obj = OBJECT();
  if (__builtin_expect(TYPE_OF(obj) != d->int_type, 0)) GENERIC();
  INT_VALUE(obj, value)
  store(f, kInt, (uint64_t)value);
  NEXT();
}

// An exact float, or an exact int (the thunk converts it as it would the generic path's Int).
CHAIN void* stencil_host_float(HPARAMS) {
  void* obj = OBJECT();
  const void* type = TYPE_OF(obj);
  if (__builtin_expect(type == d->float_type, 1)) {
    store(f, kFloat, *(const uint64_t*)AT(obj, d->float_value_offset));
    NEXT();
  }
  if (type != d->int_type) GENERIC();
  INT_VALUE(obj, value)
  store(f, kInt, (uint64_t)value);
  NEXT();
}

CHAIN void* stencil_host_bool(HPARAMS) {
  void* obj = OBJECT();
  if (obj != d->true_value && obj != d->false_value) GENERIC();
  store(f, kBool, obj == d->true_value);
  NEXT();
}

// None (NULL), or whatever the host's pointer objects convert to.
CHAIN void* stencil_host_ptr(HPARAMS) {
  void* obj = OBJECT();
  if (obj == d->none) {
    store(f, kNone, 0);
    NEXT();
  }
  if (__builtin_expect(d->pointer_to_any(obj, (char*)f + (uintptr_t)HOLE_offset) == 0, 0)) {
    GENERIC();
  }
  NEXT();
}

// An exact str as a borrowed C string: its bytes read in place when the object holds them (and
// scanned for a NUL the native would stop at), else through d->str_data.
CHAIN void* stencil_host_str(HPARAMS) {
  void* obj = OBJECT();
  if (__builtin_expect(TYPE_OF(obj) != d->str_type, 0)) GENERIC();
  const char* data;
  if (d->str_flags_offset >= 0 &&
      (*(const uint32_t*)AT(obj, d->str_flags_offset) & d->str_inline_mask) == d->str_inline_mask) {
    data = AT(obj, d->str_inline_data_offset);
    uint64_t length = *(const uint64_t*)AT(obj, d->str_length_offset);
    if (length < 32 && ((uintptr_t)data & 7) == 0) {
      // A word at a time; the last word's bytes past the end are set first. Aligned words holding
      // a byte of the string never cross a page.
      const uint64_t* words = (const uint64_t*)data;
      uint64_t n = length >> 3, found = 0;
      for (uint64_t k = 0; k < n; ++k) {
        uint64_t w = words[k];
        found |= (w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull;
      }
      if (length & 7) {
        uint64_t w = words[n] | (~(uint64_t)0 << ((length & 7) * 8));
        found |= (w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull;
      }
      if (__builtin_expect(found != 0, 0)) GENERIC();
    } else if (__builtin_expect(d->memchr(data, 0, length) != 0, 0)) {
      GENERIC();
    }
  } else {
    data = d->str_data(obj);
    if (__builtin_expect(data == 0, 0)) GENERIC();
  }
  store(f, kRawStr, (uint64_t)(uintptr_t)data);
  NEXT();
}

CHAIN void* stencil_host_device(HPARAMS) {
  void* obj = OBJECT();
  if (__builtin_expect(TYPE_OF(obj) != d->device_type, 0)) GENERIC();
  store(f, kDevice, *(const uint64_t*)AT(obj, d->device_value_offset));
  NEXT();
}

CHAIN void* stencil_host_dtype(HPARAMS) {
  void* obj = OBJECT();
  if (__builtin_expect(TYPE_OF(obj) != d->dtype_type, 0)) GENERIC();
  store(f, kDataType, *(const uint32_t*)AT(obj, d->dtype_value_offset));
  NEXT();
}

// Tensor number HOLE_index, borrowed into its slot; a miss releases the ones before it.
#define SLOT(t) (SLOTS + (size_t)(t) * (size_t)d->tensor_slot_size)
static inline __attribute__((always_inline)) void release_tensors(const FFIJITHostStencilData* d,
                                                                  uint64_t* f, uint32_t count) {
  for (uint32_t t = 0; t < count; ++t) d->release_tensor(SLOT(t));
}
CHAIN void* stencil_host_tensor(HPARAMS) {
  uint32_t t = (uint32_t)(uintptr_t)HOLE_index;
  void* tensor = d->borrow_tensor(OBJECT(), SLOT(t));
  if (__builtin_expect(tensor == 0, 0)) {
    release_tensors(d, f, t);
    GENERIC();
  }
  store(f, kDLTensorPtr, (uint64_t)(uintptr_t)tensor);
  NEXT();
}

// ---- The call and its result ----

static inline __attribute__((always_inline)) void* new_reference(const FFIJITHostStencilData* d,
                                                                 void* obj) {
  if (d->plain_refcount) {
    ++*(intptr_t*)obj;
    return obj;
  }
  return d->new_ref(obj);
}

typedef int (*SafeCall)(void* handle, const Any* args, int32_t num_args, Any* result);
// The thunk chain copied after the host stencils (stencils.c's argument and call stencils).
extern int CHAIN CONT_chain(PARAMS);

// The function (an entry's code is its own) called with the Anys by CALL, the host's lock
// released or its holder recorded around it, the tensors (HOLE_index of them) released, then the
// result: Int, Float, None and Bool boxed here, anything else by the host, an error raised by it.
#define HOST_CALL(CALL)                                                                       \
  Any* result = RESULT;                                                                       \
  *(uint64_t*)result = 0;                                                                     \
  result->u = 0;                                                                              \
  int rc;                                                                                     \
  if (d->release_lock_around_call) {                                                          \
    void* state = d->release_lock();                                                          \
    rc = CALL;                                                                                \
    d->acquire_lock(state);                                                                   \
  } else if (d->lock_holder != 0) {                                                           \
    const void* previous = __atomic_load_n(d->lock_holder, __ATOMIC_RELAXED);                 \
    __atomic_store_n(d->lock_holder, *(const void* const*)AT(self, d->self_name_offset),      \
                     __ATOMIC_RELAXED);                                                       \
    __atomic_store_n(d->lock_calls, __atomic_load_n(d->lock_calls, __ATOMIC_RELAXED) + 1,     \
                     __ATOMIC_RELAXED);                                                       \
    rc = CALL;                                                                                \
    __atomic_store_n(d->lock_holder, previous, __ATOMIC_RELAXED);                             \
  } else {                                                                                    \
    rc = CALL;                                                                                \
  }                                                                                           \
  uint32_t tensors = (uint32_t)(uintptr_t)HOLE_index;                                         \
  if (tensors != 0) release_tensors(d, f, tensors);                                           \
  if (__builtin_expect(rc != 0, 0)) return d->raise_error(rc);                                \
  int32_t tag = result->type_index;                                                           \
  if (tag == kInt) return d->new_int(result->i);                                              \
  if (tag == kFloat) return d->new_float(result->d);                                          \
  if (tag == kNone) return new_reference(d, d->none);                                         \
  if (tag == kBool) return new_reference(d, result->i != 0 ? d->true_value : d->false_value); \
  return d->box_result(result);

// Through the function's current packed entry (whatever tier it is on).
CHAIN void* stencil_host_call(HPARAMS) {
  void* handle = d->function;
  SafeCall call = *(const SafeCall*)AT(handle, d->function_cell_offset);
  HOST_CALL(call(handle, (const Any*)f, (int32_t)ARITY, result))
}

// Into the function's thunk chain, copied after this stencil: its argument stencils read the Anys
// straight into the native's registers (no packed entry, no second argument count check). The
// chain's frame (stack slots, result buffers, the argument array a structure element stands in
// for) is the entry's too.
#define CHAIN_CALL()                                                              \
  ({                                                                              \
    uint64_t* s = THUNK_FRAME;                                                    \
    s[SAVED_ARGS] = (uint64_t)(uintptr_t)f;                                       \
    DECLARE_JUNK                                                                  \
    CONT_chain(d->function, (const Any*)f, 0, result, JUNK_GARGS, JUNK_FARGS, s); \
  })
CHAIN void* stencil_host_call_chain(HPARAMS) {
  HOST_CALL(CHAIN_CALL())
}
