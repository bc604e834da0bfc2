// Stencil sources of the copy-and-patch host entries (ffijit/host_entry.h): a dynamic language's
// fastcall entry for one packed function, made in microseconds. Compiled by clang-19 at build time
// with the thunk stencils (stencils.c) and extracted by the same tool.
//
// A C-ABI entry stencil checks the keywords, the argument count and the optional call count,
// records which call holds the host's lock, and calls one chain: one stencil per argument, which
// checks its object's exact type and stores the TVMFFIAny the host's generic conversion makes of
// it into the frame (rarer forms in an out-of-line part); the tensors, borrowed once every other
// argument has passed; a switch stencil that points the thunk chain's argument array at those
// Anys and enters a copy of the function's thunk chain (stencil_chain.h), whose argument stencils
// load them into the native's registers; and a host call stencil that calls the native and boxes
// its result through the host (or the thunk's own call stencil and a return to the entry, which
// boxes the Any it leaves). Where the stencil thunks do not cover the plan, the switch calls the
// function's packed entry instead. A value an argument stencil does not take goes to the host's
// generic path before anything is held (a tensor miss first releases the tensors borrowed before
// it), so the generic path produces the result or the error, as for the LLVM entries, whose
// checks these are; a value the thunk's stencils refuse goes to the interpreter, whose outcome is
// boxed or raised as the packed call's.
//
// Holes (see stencils.c): HOLE_arity, HOLE_offset (the argument's Any in the frame), HOLE_object
// (the argument's object in the host's array), HOLE_index (a tensor's number; at the entry and the
// calls, how many tensors), HOLE_boxed (whether the chain returns the boxed result), CONT_next
// (and CONT_chain, the same hole with the thunks' parameters), CONT_slow (an argument's
// out-of-line part), CONT_generic, CONT_fail, FN_fallback (the interpreter), and DATA_host, the
// entry's model data (host_stencil_data.h) placed after its code, its address loaded PC-relative
// (x86-64) or absolute (AArch64).
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

// The data is reached through a register loaded where it is needed: on x86-64 by a PC-relative
// lea (an address the compiler took itself would be a 32-bit absolute, which the data's is not).
extern const FFIJITHostStencilData DATA_host;
#if defined(__x86_64__)
#define LOAD_DATA(d) __asm__("leaq DATA_host(%%rip), %0" : "=r"(d))
#else
#define LOAD_DATA(d) d = &DATA_host
#endif
#define DATA()                    \
  const FFIJITHostStencilData* d; \
  LOAD_DATA(d)
extern char HOLE_arity[], HOLE_offset[], HOLE_object[], HOLE_index[], HOLE_boxed[];
#define ARITY ((intptr_t)(uint32_t)(uintptr_t)HOLE_arity)

// The frame `f`, in the entry's stack: the Anys, the result, the entry's `self` and objects, the
// host's lock state, the fallback's result, the thunk chain's own frame (stack slots, result
// buffers), then, for an entry with tensor arguments only, the tensors' slots.
#define MAX_ARGS FFIJIT_HOST_STENCIL_MAX_ARGS
#define ANYS f
#define RESULT ((Any*)(f + 2 * MAX_ARGS))
#define SELF (f + 2 * MAX_ARGS + 2)
#define OBJECTS (SELF + 1)
#define LOCK_STATE (SELF + 2)
#define FALLBACK_RESULT (SELF + 3)
#define THUNK_FRAME_OFFSET (2 * MAX_ARGS + 2 + 4)
#define THUNK_FRAME (f + THUNK_FRAME_OFFSET)
#define FRAME_OF(s) ((s)-THUNK_FRAME_OFFSET)
#define SLOTS ((char*)(THUNK_FRAME + FRAME_WORDS))
#define HOST_FRAME_WORDS (THUNK_FRAME_OFFSET + FRAME_WORDS)
#define HOST_FRAME_WORDS_WITH_SLOTS (HOST_FRAME_WORDS + FFIJIT_HOST_STENCIL_SLOT_BYTES / 8)
// What the chain returns: the result, boxed (HOLE_boxed: a host call stencil ends it), or the
// packed call's code (0 or a small negative one) with the result in RESULT; or FELL_BACK when the
// host's fallback took the call (its result in FALLBACK_RESULT), which is neither.
#define FELL_BACK ((intptr_t)INT32_MIN)

// The argument stencils' chain: the host's objects and the frame alone, so that a call into the
// host on a rare path has nothing else to keep. The switch stencil continues into the thunk chain
// (CONT_chain, the same hole as CONT_next) with the thunks' parameters. Its stencils are compiled
// returning `int` (stencils.c) and only pass on, by tail calls, what the last one returns: the
// register holds the full word the host call and fail stencils below return.
#define HPARAMS void *const *a, uint64_t *f
#define HARGS a, f
extern intptr_t CHAIN CONT_next(HPARAMS);
extern intptr_t CHAIN CONT_chain(PARAMS);
extern intptr_t CHAIN CONT_fail(PARAMS);
#define NEXT() __attribute__((musttail)) return CONT_next(HARGS)
// The host's generic path, with the arguments the entry was called with.
#define GENERIC()                                                                             \
  do {                                                                                        \
    *FALLBACK_RESULT =                                                                        \
        (uint64_t)(uintptr_t)d->fallback((void*)(uintptr_t)*SELF, (void* const*)a, ARITY, 0); \
    return FELL_BACK;                                                                         \
  } while (0)

#define OBJECT() (*(void* const*)((const char*)a + (uintptr_t)HOLE_object))
#define TYPE_OF(obj) (*(const void* const*)((const char*)(obj) + d->type_offset))
#define AT(obj, offset) ((const char*)(obj) + (offset))
static inline __attribute__((always_inline)) void store(uint64_t* f, int32_t tag,
                                                        uint64_t payload) {
  Any* any = (Any*)((char*)f + (uintptr_t)HOLE_offset);
  *(uint64_t*)any = (uint32_t)tag;
  any->u = payload;
}

// ---- The entries (the host's fastcall shape, C ABI) ----

#define SLOT(t) (SLOTS + (size_t)(t) * (size_t)d->tensor_slot_size)
static inline __attribute__((always_inline)) void release_tensors(const FFIJITHostStencilData* d,
                                                                  uint64_t* f, uint32_t count) {
  for (uint32_t t = 0; t < count; ++t) d->release_tensor(SLOT(t));
}

static inline __attribute__((always_inline)) void* new_reference(const FFIJITHostStencilData* d,
                                                                 void* obj) {
  if (__builtin_expect(d->plain_refcount, 1)) {
    ++*(intptr_t*)obj;
    return obj;
  }
  return d->new_ref(obj);
}

// A packed call's outcome for the host: an error raised by it, or the result: Int, Float, None and
// Bool boxed here, anything else by the host.
static inline __attribute__((always_inline)) void* box(const FFIJITHostStencilData* d, int rc,
                                                       Any* result) {
  if (__builtin_expect(rc != 0, 0)) return d->raise_error(rc);
  int32_t tag = result->type_index;
  if (tag == kInt) return d->new_int(result->i);
  if (tag == kFloat) return d->new_float(result->d);
  if (tag == kNone) return new_reference(d, d->none);
  if (tag == kBool) return new_reference(d, result->i != 0 ? d->true_value : d->false_value);
  return d->box_result(result);
}

// The chain run with the host's lock holder recorded around it (a call that keeps the lock), the
// tensors (HOLE_index of them) released after it, then the result: the fallback's, or Int, Float,
// None and Bool boxed here, anything else by the host, an error raised by it.
#define RUN(d, self, args, frame_words) \
  {                                     \
    uint64_t frame[frame_words];        \
    return run(d, self, args, frame);   \
  }
static inline __attribute__((always_inline)) void* run(const FFIJITHostStencilData* d, void* self,
                                                       void* const* args, uint64_t* f) {
  *SELF = (uint64_t)(uintptr_t)self;
  *OBJECTS = (uint64_t)(uintptr_t)args;
  const void* previous = 0;
  // The common paths fall through (each taken branch costs the front end a little).
  const int record = !d->release_lock_around_call && d->lock_holder != 0;
  if (__builtin_expect(record, 1)) {
    previous = __atomic_load_n(d->lock_holder, __ATOMIC_RELAXED);
    __atomic_store_n(d->lock_holder, *(const void* const*)AT(self, d->self_name_offset),
                     __ATOMIC_RELAXED);
    __atomic_store_n(d->lock_calls, __atomic_load_n(d->lock_calls, __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELAXED);
  }
  intptr_t returned = CONT_next(args, f);
  if (__builtin_expect(record, 1)) __atomic_store_n(d->lock_holder, previous, __ATOMIC_RELAXED);
  if (__builtin_expect(returned == FELL_BACK, 0)) return (void*)(uintptr_t)*FALLBACK_RESULT;
  if ((uint32_t)(uintptr_t)HOLE_boxed) return (void*)returned;
  int rc = (int)returned;
  if (__builtin_expect(d->release_lock_around_call, 0)) {
    d->acquire_lock((void*)(uintptr_t)*LOCK_STATE);
  }
  uint32_t tensors = (uint32_t)(uintptr_t)HOLE_index;
  if (__builtin_expect(tensors != 0, 0)) release_tensors(d, f, tensors);
  return box(d, rc, RESULT);
}

#define ENTRY_CHECKS()                                       \
  DATA();                                                    \
  if (__builtin_expect(kwnames != 0 || nargs != ARITY, 0)) { \
    return d->fallback(self, args, nargs, kwnames);          \
  }
// The call count, in `self` (d->self_count_offset): the call that brings it to zero goes to
// d->count_reached instead. A plain load and store: a count lost to a concurrent call (a host
// without a global lock) only delays it.
#define COUNT_DOWN()                                               \
  int64_t* count = (int64_t*)((char*)self + d->self_count_offset); \
  int64_t left = *count - 1;                                       \
  *count = left;                                                   \
  if (__builtin_expect(left == 0, 0)) return d->count_reached(self, args, nargs, kwnames);

void* stencil_host_entry(void* self, void* const* args, intptr_t nargs, void* kwnames) {
  ENTRY_CHECKS()
  RUN(d, self, args, HOST_FRAME_WORDS)
}
void* stencil_host_entry_counted(void* self, void* const* args, intptr_t nargs, void* kwnames) {
  ENTRY_CHECKS()
  COUNT_DOWN()
  RUN(d, self, args, HOST_FRAME_WORDS)
}
// Entries of functions with tensor arguments: their frame holds the tensors' slots too.
void* stencil_host_entry_slots(void* self, void* const* args, intptr_t nargs, void* kwnames) {
  ENTRY_CHECKS()
  RUN(d, self, args, HOST_FRAME_WORDS_WITH_SLOTS)
}
void* stencil_host_entry_slots_counted(void* self, void* const* args, intptr_t nargs,
                                       void* kwnames) {
  ENTRY_CHECKS() COUNT_DOWN() RUN(d, self, args, HOST_FRAME_WORDS_WITH_SLOTS)
}
// ---- Arguments: one stencil per form (plan/host_forms.h) ----
// Each checks the common forms in line and leaves the rest to its out-of-line part (CONT_slow,
// placed after the chain, which continues the chain itself) or to the host's generic path
// (CONT_generic): both by a conditional jump, so the common path runs straight through to the
// next stencil, without a taken branch or a call.
extern intptr_t CHAIN CONT_slow(HPARAMS);
extern intptr_t CHAIN CONT_generic(HPARAMS);
#define SLOW() __attribute__((musttail)) return CONT_slow(HARGS)
#define TO_GENERIC() __attribute__((musttail)) return CONT_generic(HARGS)

// The host's generic path (the entry's shared way there).
CHAIN intptr_t stencil_host_generic(HPARAMS) {
  DATA();
  GENERIC();
}

// An exact int of at most one digit, read in place as the model's layout says (SIZED or TAGGED);
// any other int: SLOW.
#define SMALL_INT(obj, out, layout)                                  \
  int64_t out;                                                       \
  {                                                                  \
    int64_t size = *(const int64_t*)AT(obj, d->int_size_offset);     \
    int64_t digit = *(const uint32_t*)AT(obj, d->int_digits_offset); \
    if (layout == FFIJIT_HOST_INT_SIZED_DIGITS) {                    \
      if (__builtin_expect((uint64_t)(size + 1) > 2, 0)) SLOW();     \
      out = size * digit;                                            \
    } else {                                                         \
      if (__builtin_expect((uint64_t)size >= 16, 0)) SLOW();         \
      out = (1 - (size & 3)) * digit;                                \
    }                                                                \
  }
// Any exact int, read by the host (the generic path when it does not fit int64_t, the host's error
// cleared).
#define HOST_INT(obj, out)                                          \
  int64_t out = d->int_value(obj);                                  \
  if (__builtin_expect(out == -1, 0) && d->error_occurred() != 0) { \
    d->clear_error();                                               \
    GENERIC();                                                      \
  }

#define INT_STENCIL(name, layout)                                       \
  CHAIN intptr_t stencil_host_int_##name(HPARAMS) {                     \
    DATA();                                                             \
    void* obj = OBJECT();                                               \
    if (__builtin_expect(TYPE_OF(obj) != d->int_type, 0)) TO_GENERIC(); \
    SMALL_INT(obj, value, layout)                                       \
    store(f, kInt, (uint64_t)value);                                    \
    NEXT();                                                             \
  }
INT_STENCIL(sized, FFIJIT_HOST_INT_SIZED_DIGITS)
INT_STENCIL(tagged, FFIJIT_HOST_INT_TAGGED_DIGITS)
// Every exact int through the host (a model without a layout; the sized and tagged stencils' rest).
CHAIN intptr_t stencil_host_int(HPARAMS) {
  DATA();
  void* obj = OBJECT();
  if (__builtin_expect(TYPE_OF(obj) != d->int_type, 0)) GENERIC();
  HOST_INT(obj, value)
  store(f, kInt, (uint64_t)value);
  NEXT();
}

// An exact float, or an exact int (the thunk converts it as it would the generic path's Int).
#define FLOAT_STENCIL(name, layout)                                       \
  CHAIN intptr_t stencil_host_float_##name(HPARAMS) {                     \
    DATA();                                                               \
    void* obj = OBJECT();                                                 \
    const void* type = TYPE_OF(obj);                                      \
    if (__builtin_expect(type == d->float_type, 1)) {                     \
      store(f, kFloat, *(const uint64_t*)AT(obj, d->float_value_offset)); \
      NEXT();                                                             \
    }                                                                     \
    if (__builtin_expect(type != d->int_type, 0)) TO_GENERIC();           \
    SMALL_INT(obj, value, layout)                                         \
    store(f, kInt, (uint64_t)value);                                      \
    NEXT();                                                               \
  }
FLOAT_STENCIL(sized, FFIJIT_HOST_INT_SIZED_DIGITS)
FLOAT_STENCIL(tagged, FFIJIT_HOST_INT_TAGGED_DIGITS)
CHAIN intptr_t stencil_host_float(HPARAMS) {
  DATA();
  void* obj = OBJECT();
  const void* type = TYPE_OF(obj);
  if (type == d->float_type) {
    store(f, kFloat, *(const uint64_t*)AT(obj, d->float_value_offset));
    NEXT();
  }
  if (type != d->int_type) GENERIC();
  HOST_INT(obj, value)
  store(f, kInt, (uint64_t)value);
  NEXT();
}

CHAIN intptr_t stencil_host_bool(HPARAMS) {
  DATA();
  void* obj = OBJECT();
  int is_true = obj == d->true_value;
  if (__builtin_expect(!is_true && obj != d->false_value, 0)) TO_GENERIC();
  store(f, kBool, (uint64_t)is_true);
  NEXT();
}

// None (NULL) in line; anything else through the host's pointer objects (the rest).
CHAIN intptr_t stencil_host_ptr(HPARAMS) {
  DATA();
  if (__builtin_expect(OBJECT() != d->none, 0)) SLOW();
  store(f, kNone, 0);
  NEXT();
}
CHAIN intptr_t stencil_host_ptr_slow(HPARAMS) {
  DATA();
  if (__builtin_expect(d->pointer_to_any(OBJECT(), (char*)f + (uintptr_t)HOLE_offset) == 0, 0)) {
    GENERIC();
  }
  NEXT();
}

// An exact str as a borrowed C string: its bytes read in place when the object holds them and
// they are short and 8-aligned (scanned for a NUL the native would stop at, a word at a time); the
// rest scans longer ones with memchr or asks the host (d->str_data).
CHAIN intptr_t stencil_host_str(HPARAMS) {
  DATA();
  void* obj = OBJECT();
  if (__builtin_expect(TYPE_OF(obj) != d->str_type, 0)) TO_GENERIC();
  const char* data = AT(obj, d->str_inline_data_offset);
  uint64_t length = *(const uint64_t*)AT(obj, d->str_length_offset);
  if (__builtin_expect(d->str_flags_offset < 0 ||
                           (*(const uint32_t*)AT(obj, d->str_flags_offset) & d->str_inline_mask) !=
                               d->str_inline_mask ||
                           length >= 32 || ((uintptr_t)data & 7) != 0,
                       0)) {
    SLOW();
  }
  // The last word's bytes past the end are set first. Aligned words holding a byte of the string
  // never cross a page.
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
  if (__builtin_expect(found != 0, 0)) TO_GENERIC();
  store(f, kRawStr, (uint64_t)(uintptr_t)data);
  NEXT();
}
CHAIN intptr_t stencil_host_str_slow(HPARAMS) {
  DATA();
  void* obj = OBJECT();
  const char* data;
  if (d->str_flags_offset >= 0 &&
      (*(const uint32_t*)AT(obj, d->str_flags_offset) & d->str_inline_mask) == d->str_inline_mask) {
    data = AT(obj, d->str_inline_data_offset);
    uint64_t length = *(const uint64_t*)AT(obj, d->str_length_offset);
    if (d->memchr(data, 0, length) != 0) GENERIC();
  } else {
    data = d->str_data(obj);
    if (data == 0) GENERIC();
  }
  store(f, kRawStr, (uint64_t)(uintptr_t)data);
  NEXT();
}

CHAIN intptr_t stencil_host_device(HPARAMS) {
  DATA();
  void* obj = OBJECT();
  if (__builtin_expect(TYPE_OF(obj) != d->device_type, 0)) TO_GENERIC();
  store(f, kDevice, *(const uint64_t*)AT(obj, d->device_value_offset));
  NEXT();
}

CHAIN intptr_t stencil_host_dtype(HPARAMS) {
  DATA();
  void* obj = OBJECT();
  if (__builtin_expect(TYPE_OF(obj) != d->dtype_type, 0)) TO_GENERIC();
  store(f, kDataType, *(const uint32_t*)AT(obj, d->dtype_value_offset));
  NEXT();
}

// Tensor number HOLE_index, borrowed into its slot; a miss releases the ones before it.
CHAIN intptr_t stencil_host_tensor(HPARAMS) {
  DATA();
  uint32_t t = (uint32_t)(uintptr_t)HOLE_index;
  void* tensor = d->borrow_tensor(OBJECT(), SLOT(t));
  if (__builtin_expect(tensor == 0, 0)) {
    release_tensors(d, f, t);
    GENERIC();
  }
  store(f, kDLTensorPtr, (uint64_t)(uintptr_t)tensor);
  NEXT();
}

// ---- The switch to the call ----

// Every argument converted: the Anys stand in for the host's objects and the thunk chain copied
// next converts them for the native (the argument array a structure element would stand in for is
// theirs too). The _unlocking variant releases the host's lock first (kFFIJITHostEntryReleaseLock).
#if defined(__x86_64__)
#define ENTER_THUNK_CHAIN()                                                             \
  CLAIM_JUNK                                                                            \
  return CONT_chain(RESULT, s, CLAIMED_X, CLAIMED_GARGS, (const Any*)ANYS, d->function, \
                    CLAIMED_FARGS)
#else
#define ENTER_THUNK_CHAIN() \
  return CONT_chain(d->function, (const Any*)ANYS, RESULT, s, CLAIMED_GARGS, CLAIMED_FARGS)
#endif
CHAIN intptr_t stencil_host_to_chain(HPARAMS) {
  DATA();
  uint64_t* s = THUNK_FRAME;
  s[SAVED_ARGS] = (uint64_t)(uintptr_t)ANYS;
  ENTER_THUNK_CHAIN();
}
CHAIN intptr_t stencil_host_to_chain_unlocking(HPARAMS) {
  DATA();
  *LOCK_STATE = (uint64_t)(uintptr_t)d->release_lock();
  uint64_t* s = THUNK_FRAME;
  s[SAVED_ARGS] = (uint64_t)(uintptr_t)ANYS;
  ENTER_THUNK_CHAIN();
}

// The same where the stencil thunks do not cover the plan: the function's packed entry (whatever
// tier it is on) is called with the Anys.
typedef int (*SafeCall)(void* handle, const Any* args, int32_t num_args, Any* result);
CHAIN intptr_t stencil_host_to_packed(HPARAMS) {
  DATA();
  if (d->release_lock_around_call) *LOCK_STATE = (uint64_t)(uintptr_t)d->release_lock();
  SafeCall call = *(const SafeCall*)AT(d->function, d->function_cell_offset);
  return call(d->function, (const Any*)ANYS, (int32_t)ARITY, RESULT);
}

// ---- The end of the thunk chain in a host entry ----

// The host's lock taken back (when the switch released it) and the tensors (HOLE_index of them)
// released, once the native has returned or the call falls back.
#define AFTER_CALL()                                      \
  DATA();                                                 \
  uint64_t* f = FRAME_OF(s);                              \
  if (__builtin_expect(d->release_lock_around_call, 0)) { \
    d->acquire_lock((void*)(uintptr_t)*LOCK_STATE);       \
  }                                                       \
  uint32_t tensors = (uint32_t)(uintptr_t)HOLE_index;     \
  if (__builtin_expect(tensors != 0, 0)) release_tensors(d, f, tensors);

// A value the thunk stencils do not convert (or a form they leave to the interpreter): the
// interpreter takes the Anys, as it would from the function's thunk, and its outcome is boxed or
// raised as the entry would (the result handed back as a fallback's).
extern int FN_fallback(void* h, const Any* a, int32_t n, Any* r);
CHAIN intptr_t stencil_host_fail(PARAMS) {
  const FFIJITHostStencilData* data;
  LOAD_DATA(data);
  uint64_t* frame = FRAME_OF(s);
  int rc =
      FN_fallback(data->function, (const Any*)frame, (int32_t)ARITY, (Any*)(frame + 2 * MAX_ARGS));
  AFTER_CALL()
  *FALLBACK_RESULT = (uint64_t)(uintptr_t)box(d, rc, RESULT);
  return FELL_BACK;
}

// The thunk's own call stencil's end: the status it hands on, returned to the entry, which boxes
// the Any the call stencil left.
CHAIN intptr_t stencil_host_return(PARAMS) {
  return (intptr_t)(uint32_t)FINISHED_STATUS;
}

// The native called and its result boxed by the host: one stencil per result kind the host boxes
// directly and number of stack slots (the others end in the thunk's own call stencil and
// stencil_host_return).
#define HOST_CALL_INT(type, kind, ns)                   \
  DECLARE(type, kind, ns)                               \
  CHAIN intptr_t stencil_hcall_##kind##_s##ns(PARAMS) { \
    int64_t value = (int64_t)CALL(kind, ns);            \
    AFTER_CALL()                                        \
    return (intptr_t)d->new_int(value);                 \
  }
#define HOST_CALLS(ns)                                                           \
  HOST_CALL_INT(int64_t, i64, ns)                                                \
  HOST_CALL_INT(int32_t, i32, ns)                                                \
  HOST_CALL_INT(int16_t, i16, ns)                                                \
  HOST_CALL_INT(int8_t, i8, ns)                                                  \
  HOST_CALL_INT(uint32_t, u32, ns)                                               \
  HOST_CALL_INT(uint16_t, u16, ns)                                               \
  HOST_CALL_INT(uint8_t, u8, ns)                                                 \
  DECLARE(void, void, ns)                                                        \
  CHAIN intptr_t stencil_hcall_void_s##ns(PARAMS) {                              \
    CALL(void, ns);                                                              \
    AFTER_CALL()                                                                 \
    return (intptr_t)new_reference(d, d->none);                                  \
  }                                                                              \
  /* A bool is read as its byte (nonzero: true), as the interpreter reads it. */ \
  DECLARE(uint8_t, bool, ns)                                                     \
  CHAIN intptr_t stencil_hcall_bool_s##ns(PARAMS) {                              \
    int value = CALL(bool, ns) != 0;                                             \
    AFTER_CALL()                                                                 \
    return (intptr_t)new_reference(d, value ? d->true_value : d->false_value);   \
  }                                                                              \
  DECLARE(double, f64, ns)                                                       \
  CHAIN intptr_t stencil_hcall_f64_s##ns(PARAMS) {                               \
    double value = CALL(f64, ns);                                                \
    AFTER_CALL()                                                                 \
    return (intptr_t)d->new_float(value);                                        \
  }                                                                              \
  DECLARE(float, f32, ns)                                                        \
  CHAIN intptr_t stencil_hcall_f32_s##ns(PARAMS) {                               \
    double value = (double)CALL(f32, ns);                                        \
    AFTER_CALL()                                                                 \
    return (intptr_t)d->new_float(value);                                        \
  }

HOST_CALLS(0)
HOST_CALLS(1)
HOST_CALLS(2)
HOST_CALLS(3)
HOST_CALLS(4)
HOST_CALLS(5)
HOST_CALLS(6)
HOST_CALLS(7)
HOST_CALLS(8)
