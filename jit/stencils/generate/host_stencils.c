// Stencil sources of the copy-and-patch host entries (ffijit/jit/host_entry.h): a dynamic
// language's fastcall entry for one packed function, made in microseconds. Compiled by clang-19 at
// build time with the thunk stencils (stencils.c) and extracted by the same tool.
//
// An entry is one chain, entered by the entry stencil and left through the epilogue, which
// returns the host's object (or NULL with its error set) to the entry's caller. The entry checks
// the keywords, the argument count and the optional call count, records which call holds the
// host's lock and starts the chain: one stencil per argument, which checks its object's exact
// type and stores the TVMFFIAny the host's generic conversion makes of it into the frame (rarer
// forms in an out-of-line part); the tensors, borrowed once every other argument has passed; a
// switch stencil that points the thunk chain's argument array at those Anys and enters a copy of
// the function's thunk chain (stencil_chain.h), whose argument stencils load them into the
// native's registers; and a host call stencil that calls the native and boxes its result through
// the host (or the thunk's own call stencil and a return stencil that boxes the Any it leaves).
// Where the stencil thunks do not cover the plan, the switch calls the function's packed entry
// instead. A value an argument stencil does not take goes to the host's generic path before
// anything is held (a tensor miss first releases the tensors borrowed before it), so the generic
// path produces the result or the error, as for the LLVM entries, whose checks these are; a value
// the thunk's stencils refuse goes to the interpreter, whose outcome is boxed or raised as the
// packed call's. Every way out ends in the epilogue with the result in the chain's first
// parameter (its first register under preserve_none, whichever parameters the stencil has).
//
// On x86-64 the entry and the epilogue are assembly, as the thunks' are (stencils.c): the entry
// saves the registers the C ABI keeps and jumps into the chain, and the epilogue restores them and
// returns, so the chain is not a nested call. On AArch64 they are C: the entry calls the chain and
// the epilogue returns to it.
//
// Holes (see stencils.c): HOLE_arity, HOLE_offset (the argument's Any in the frame), HOLE_object
// (the argument's object in the host's array), HOLE_index (a tensor's number; where the call ends,
// how many tensors), HOLE_count_offset and HOLE_name_offset (the call count and the name in the
// entry's `self`), CONT_next (and CONT_chain, the same hole with the thunks' parameters), CONT_slow
// (an argument's out-of-line part), CONT_generic, CONT_fail, CONT_exit (and CONT_exit_call: the
// epilogue), FN_fallback (the interpreter), FN_host_fallback and FN_count_reached (the model's
// fallback and count_reached), and DATA_host, the entry's model data (host_stencil_data.h) placed
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
_Static_assert(offsetof(FFIJITHostStencilData, lock_holder) == FFIJIT_HOST_DATA_LOCK_HOLDER &&
                   offsetof(FFIJITHostStencilData, lock_calls) == FFIJIT_HOST_DATA_LOCK_CALLS &&
                   offsetof(FFIJITHostStencilData, held_work) == FFIJIT_HOST_DATA_HELD_WORK &&
                   offsetof(FFIJITHostStencilData, run_held_work) ==
                       FFIJIT_HOST_DATA_RUN_HELD_WORK &&
                   offsetof(FFIJITHostStencilData, int_type) == 64 &&
                   offsetof(FFIJITHostStencilData, int_layout) == 128,
               "the fields the assembly reads, and the cache lines");
extern char HOLE_arity[], HOLE_offset[], HOLE_object[], HOLE_index[], HOLE_count_offset[],
    HOLE_name_offset[];
#define ARITY ((intptr_t)(uint32_t)(uintptr_t)HOLE_arity)
// The host's fastcall shape.
typedef void* HostCall(void* self, void* const* args, intptr_t nargs, void* kwnames);
extern HostCall FN_host_fallback, FN_count_reached;

// The frame `f`, in the entry's stack: the Anys, the result, the entry's `self`, the host's lock
// state, the thunk chain's own frame (stack slots, result buffers), then, for an entry with tensor
// arguments only, the tensors' slots.
#define MAX_ARGS FFIJIT_HOST_STENCIL_MAX_ARGS
#define ANYS f
#define RESULT ((Any*)(f + 2 * MAX_ARGS))
#define SELF_WORD (2 * MAX_ARGS + 2)
#define SELF (f + SELF_WORD)
#define LOCK_STATE (SELF + 1)
#define THUNK_FRAME_OFFSET (SELF_WORD + 2)
#define THUNK_FRAME (f + THUNK_FRAME_OFFSET)
#define FRAME_OF(s) ((s)-THUNK_FRAME_OFFSET)
#define SLOTS ((char*)(THUNK_FRAME + FRAME_WORDS))
#define HOST_FRAME_WORDS (THUNK_FRAME_OFFSET + FRAME_WORDS)
#define HOST_FRAME_WORDS_WITH_SLOTS (HOST_FRAME_WORDS + FFIJIT_HOST_STENCIL_SLOT_BYTES / 8)

// The argument stencils' chain: the host's objects and the frame alone, so that a call into the
// host on a rare path has nothing else to keep. The switch stencil continues into the thunk chain
// (CONT_chain, the same hole as CONT_next) with the thunks' parameters. Its stencils are compiled
// returning `int` (stencils.c); here only the epilogue returns, the host's object.
#define HPARAMS void *const *a, uint64_t *f
#define HARGS a, f
extern intptr_t CHAIN CONT_next(HPARAMS);
extern intptr_t CHAIN CONT_chain(PARAMS);
extern intptr_t CHAIN CONT_fail(PARAMS);
extern intptr_t CHAIN CONT_exit(HPARAMS);
extern intptr_t CHAIN CONT_exit_call(PARAMS);
#define NEXT() __attribute__((musttail)) return CONT_next(HARGS)
// The way out, with the host's object in the first parameter: from a stencil with the argument
// stencils' parameters (EXIT, to CONT_exit or CONT_next) or the thunks' (EXIT_CALL). The thunks'
// other parameter registers are dead (the entry saved every register the C ABI keeps): on x86-64 an
// empty asm claims whatever they hold, `s` passed on unchanged.
#define EXIT(cont, result) __attribute__((musttail)) return cont((void* const*)(result), f)
#if defined(__x86_64__)
#define EXIT_CALL(cont, result)                                                                   \
  {                                                                                               \
    void* out = (void*)(result);                                                                  \
    CLAIM_JUNK                                                                                    \
    register uint64_t ja __asm__("r11"), jh __asm__("rax");                                       \
    __asm__("" : "=r"(ja), "=r"(jh));                                                             \
    __attribute__((musttail)) return cont((Any*)out, s, CLAIMED_X, CLAIMED_GARGS, (const Any*)ja, \
                                          (void*)jh, CLAIMED_FARGS);                              \
  }
#else
#define EXIT_CALL(cont, result)                                                                \
  {                                                                                            \
    void* out = (void*)(result);                                                               \
    __attribute__((musttail)) return cont(out, (const Any*)(uintptr_t)JUNK_G,                  \
                                          (Any*)(uintptr_t)JUNK_G, s, JUNK_GARGS, JUNK_FARGS); \
  }
#endif
// The host's generic path, with the arguments the entry was called with.
#define GENERIC() EXIT(CONT_exit, FN_host_fallback((void*)(uintptr_t)*SELF, a, ARITY, 0))

#define OBJECT() (*(void* const*)((const char*)a + (uintptr_t)HOLE_object))
// Where the model's objects keep their type and values: on x86-64 holes, each an instruction's
// displacement; on AArch64 the data's fields (a hole there costs four instructions to build).
#if defined(__x86_64__)
extern char HOLE_type_offset[], HOLE_int_size_offset[], HOLE_int_digits_offset[],
    HOLE_float_value_offset[], HOLE_device_value_offset[], HOLE_dtype_value_offset[];
#define OFFSET(field) ((intptr_t)HOLE_##field)
#else
#define OFFSET(field) ((intptr_t)d->field)
#endif
#define TYPE_OF(obj) (*(const void* const*)((const char*)(obj) + OFFSET(type_offset)))
#define AT(obj, offset) ((const char*)(obj) + (offset))
static inline __attribute__((always_inline)) void store(uint64_t* f, int32_t tag,
                                                        uint64_t payload) {
  Any* any = (Any*)((char*)f + (uintptr_t)HOLE_offset);
  *(uint64_t*)any = (uint32_t)tag;
  any->u = payload;
}

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

// ---- The entries (the host's fastcall shape, C ABI) and the epilogue ----
// A call with keywords or another number of arguments goes to the host's fallback as it came; the
// call count, in `self` at HOLE_count_offset, is counted down first by the counted entries, and
// the call that brings it to zero goes to FN_count_reached instead (a plain decrement: a count lost
// to a concurrent call, in a host without a global lock, only delays it). The lock holder (when
// the data names one) is the name in `self` at HOLE_name_offset while the call runs, and the call
// is counted; the epilogue puts the previous holder back.
#if defined(__x86_64__)
// The frame's bytes: the words, then the previous lock holder (PREVIOUS_HOLDER, just below the five
// registers pushed after rbp, SAVED_REGISTERS), the stack pointer at the first stencil 8 below a
// multiple of 16 as at any function's start (the return address, rbp and five registers pushed).
#define SAVED_REGISTERS "-40(%rbp)"
#define PREVIOUS_HOLDER "-48(%rbp)"
#define HOST_FRAME_BYTES(words) ((words)*8 + 8)
_Static_assert(HOST_FRAME_BYTES(HOST_FRAME_WORDS) % 16 == 0 &&
                   HOST_FRAME_BYTES(HOST_FRAME_WORDS_WITH_SLOTS) % 16 == 0,
               "the entry's frame");
// In: rdi self, rsi args, rdx nargs, rcx kwnames.
#define HOST_ENTRY_CHECKS \
  "  test %rcx, %rcx\n  jne FN_host_fallback\n  cmp $HOLE_arity, %rdx\n  jne FN_host_fallback\n"
#define HOST_COUNT_DOWN "  decq HOLE_count_offset(%rdi)\n  je FN_count_reached\n"
// rbp holds the frame's top for the epilogue: the chain's stencils keep it (preserve_none does),
// and may change every other register the C ABI keeps.
#define HOST_ENTER(words) \
  "  push %rbp\n  mov %rsp, %rbp\n  push %rbx\n  push %r12\n  push %r13\n  push %r14\n"  \
  "  push %r15\n  sub $" STR(HOST_FRAME_BYTES(words)) ", %rsp\n"                         \
  "  mov %rsp, %r13\n  mov %rsi, %r12\n  mov %rdi, 8*" STR(SELF_WORD) "(%rsp)\n"         \
  "  mov DATA_host+" STR(FFIJIT_HOST_DATA_LOCK_HOLDER) "(%rip), %rcx\n"                  \
  "  test %rcx, %rcx\n  je CONT_next\n"                                                  \
  "  mov (%rcx), %rax\n  mov %rax, " PREVIOUS_HOLDER "\n"                                \
  "  mov HOLE_name_offset(%rdi), %rax\n  mov %rax, (%rcx)\n"                             \
  "  mov DATA_host+" STR(FFIJIT_HOST_DATA_LOCK_CALLS) "(%rip), %rcx\n"                   \
  "  incq (%rcx)\n  jmp CONT_next\n"
ASM_STENCIL(host_entry, HOST_ENTRY_CHECKS HOST_ENTER(HOST_FRAME_WORDS))
ASM_STENCIL(host_entry_counted, HOST_ENTRY_CHECKS HOST_COUNT_DOWN HOST_ENTER(HOST_FRAME_WORDS))
// Entries of functions with tensor arguments: their frame holds the tensors' slots too.
ASM_STENCIL(host_entry_slots, HOST_ENTRY_CHECKS HOST_ENTER(HOST_FRAME_WORDS_WITH_SLOTS))
ASM_STENCIL(host_entry_slots_counted,
            HOST_ENTRY_CHECKS HOST_COUNT_DOWN HOST_ENTER(HOST_FRAME_WORDS_WITH_SLOTS))
// In: r12 the host's object. The held work's call, out of line, aligns the stack for it (the
// stack pointer comes back from rbp anyway).
ASM_STENCIL(host_epilogue,
            "  mov %r12, %rax\n  mov DATA_host+" STR(FFIJIT_HOST_DATA_LOCK_HOLDER) "(%rip), %rcx\n"
            "  test %rcx, %rcx\n  je 1f\n"
            "  mov " PREVIOUS_HOLDER ", %rdx\n  mov %rdx, (%rcx)\n"
            "  mov DATA_host+" STR(FFIJIT_HOST_DATA_HELD_WORK) "(%rip), %rcx\n"
            "  test %rcx, %rcx\n  je 1f\n  cmpq $0, (%rcx)\n  jne 2f\n"
            "1:\n  lea " SAVED_REGISTERS ", %rsp\n  pop %r15\n  pop %r14\n  pop %r13\n  pop %r12\n"
            "  pop %rbx\n  pop %rbp\n  ret\n"
            "2:\n  and $-16, %rsp\n"
            "  call *DATA_host+" STR(FFIJIT_HOST_DATA_RUN_HELD_WORK) "(%rip)\n"
            "  mov %r12, %rax\n  jmp 1b\n")
#else
static inline __attribute__((always_inline)) void* run(void* self, void* const* args, uint64_t* f) {
  DATA();
  *SELF = (uint64_t)(uintptr_t)self;
  const void** holder = d->lock_holder;
  const void* previous = 0;
  if (__builtin_expect(holder != 0, 1)) {
    previous = __atomic_load_n(holder, __ATOMIC_RELAXED);
    __atomic_store_n(holder, *(const void* const*)AT(self, (intptr_t)HOLE_name_offset),
                     __ATOMIC_RELAXED);
    __atomic_store_n(d->lock_calls, __atomic_load_n(d->lock_calls, __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELAXED);
  }
  void* result = (void*)CONT_next(args, f);
  if (__builtin_expect(holder != 0, 1)) {
    __atomic_store_n(holder, previous, __ATOMIC_RELAXED);
    void* const* work = d->held_work;
    if (work != 0 && __builtin_expect(__atomic_load_n(work, __ATOMIC_RELAXED) != 0, 0)) {
      d->run_held_work();
    }
  }
  return result;
}
#define RUN(frame_words)           \
  {                                \
    uint64_t frame[frame_words];   \
    return run(self, args, frame); \
  }
#define ENTRY_CHECKS()                                       \
  if (__builtin_expect(kwnames != 0 || nargs != ARITY, 0)) { \
    return FN_host_fallback(self, args, nargs, kwnames);     \
  }
#define COUNT_DOWN()                                                      \
  int64_t* count = (int64_t*)((char*)self + (intptr_t)HOLE_count_offset); \
  int64_t left = *count - 1;                                              \
  *count = left;                                                          \
  if (__builtin_expect(left == 0, 0)) return FN_count_reached(self, args, nargs, kwnames);

void* stencil_host_entry(void* self, void* const* args, intptr_t nargs, void* kwnames) {
  ENTRY_CHECKS();
  RUN(HOST_FRAME_WORDS);
}
void* stencil_host_entry_counted(void* self, void* const* args, intptr_t nargs, void* kwnames) {
  ENTRY_CHECKS();
  COUNT_DOWN();
  RUN(HOST_FRAME_WORDS);
}
void* stencil_host_entry_slots(void* self, void* const* args, intptr_t nargs, void* kwnames) {
  ENTRY_CHECKS();
  RUN(HOST_FRAME_WORDS_WITH_SLOTS);
}
void* stencil_host_entry_slots_counted(void* self, void* const* args, intptr_t nargs,
                                       void* kwnames) {
  ENTRY_CHECKS();
  COUNT_DOWN();
  RUN(HOST_FRAME_WORDS_WITH_SLOTS);
}
// The host's object, returned to the entry.
CHAIN intptr_t stencil_host_epilogue(HPARAMS) {
  return (intptr_t)a;
}
#endif

// ---- Arguments: one stencil per form (plan/host_forms.h) ----
// Each checks the common forms in line and leaves the rest to its out-of-line part (CONT_slow,
// placed after the chain, which continues the chain itself) or to the host's generic path
// (CONT_generic): both by a conditional jump, so the common path runs straight through to the
// next stencil, without a taken branch or a call.
extern intptr_t CHAIN CONT_slow(HPARAMS);
extern intptr_t CHAIN CONT_generic(HPARAMS);
// Both jumps are placed last (EXITS ends every stencil that takes them), which the compiler lays
// out last and turns into conditional jumps, so the stencil ends with its jump to the next one,
// which the tier drops.
#define SLOW() goto slow
#define TO_GENERIC() goto generic
#define EXITS                                           \
  generic:                                              \
  __attribute__((unused));                              \
  __attribute__((musttail)) return CONT_generic(HARGS); \
  slow:                                                 \
  __attribute__((unused));                              \
  __attribute__((musttail)) return CONT_slow(HARGS);

// The host's generic path (the entry's shared way there).
CHAIN intptr_t stencil_host_generic(HPARAMS) {
  GENERIC();
}

// An exact int of at most one digit, read in place as the model's layout says (SIZED or TAGGED)
// into *out; false for any other int.
static inline __attribute__((always_inline)) int small_int(const FFIJITHostStencilData* d,
                                                           const void* obj, int layout,
                                                           int64_t* out) {
  int64_t size = *(const int64_t*)AT(obj, OFFSET(int_size_offset));
  int64_t digit = *(const uint32_t*)AT(obj, OFFSET(int_digits_offset));
  if (layout == FFIJIT_HOST_INT_SIZED_DIGITS) {
    if (__builtin_expect((uint64_t)(size + 1) > 2, 0)) return 0;
    *out = size * digit;
  } else {
    if (__builtin_expect((uint64_t)size >= 16, 0)) return 0;
    *out = (1 - (size & 3)) * digit;
  }
  return 1;
}
// Any exact int, read by the host (the generic path when it does not fit int64_t, the host's error
// cleared).
#define HOST_INT(obj, out)                                          \
  int64_t out = d->int_value(obj);                                  \
  if (__builtin_expect(out == -1, 0) && d->error_occurred() != 0) { \
    d->clear_error();                                               \
    GENERIC();                                                      \
  }

#define INT_STENCIL(name, layout)                                        \
  CHAIN intptr_t stencil_host_int_##name(HPARAMS) {                      \
    DATA();                                                              \
    void* obj = OBJECT();                                                \
    int64_t value;                                                       \
    if (__builtin_expect(TYPE_OF(obj) != d->int_type, 0)) TO_GENERIC();  \
    if (__builtin_expect(!small_int(d, obj, layout, &value), 0)) SLOW(); \
    store(f, kInt, (uint64_t)value);                                     \
    NEXT();                                                              \
    EXITS                                                                \
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

// An exact float in line; its out-of-line part takes an exact int (the thunk converts it as it
// would the generic path's Int), read in place when small.
#define FLOAT_STENCIL(name, layout)                                          \
  CHAIN intptr_t stencil_host_float_##name(HPARAMS) {                        \
    DATA();                                                                  \
    void* obj = OBJECT();                                                    \
    if (__builtin_expect(TYPE_OF(obj) != d->float_type, 0)) SLOW();          \
    store(f, kFloat, *(const uint64_t*)AT(obj, OFFSET(float_value_offset))); \
    NEXT();                                                                  \
    EXITS                                                                    \
  }                                                                          \
  CHAIN intptr_t stencil_host_float_int_##name(HPARAMS) {                    \
    DATA();                                                                  \
    void* obj = OBJECT();                                                    \
    if (TYPE_OF(obj) != d->int_type) GENERIC();                              \
    int64_t value;                                                           \
    if (!small_int(d, obj, layout, &value)) {                                \
      HOST_INT(obj, big)                                                     \
      value = big;                                                           \
    }                                                                        \
    store(f, kInt, (uint64_t)value);                                         \
    NEXT();                                                                  \
  }
FLOAT_STENCIL(sized, FFIJIT_HOST_INT_SIZED_DIGITS)
FLOAT_STENCIL(tagged, FFIJIT_HOST_INT_TAGGED_DIGITS)
// An exact float or int, the int read by the host (a model without a layout).
CHAIN intptr_t stencil_host_float(HPARAMS) {
  DATA();
  void* obj = OBJECT();
  const void* type = TYPE_OF(obj);
  if (type == d->float_type) {
    store(f, kFloat, *(const uint64_t*)AT(obj, OFFSET(float_value_offset)));
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
  EXITS
}

// None (NULL) in line; anything else through the host's pointer objects (the rest).
CHAIN intptr_t stencil_host_ptr(HPARAMS) {
  DATA();
  if (__builtin_expect(OBJECT() != d->none, 0)) SLOW();
  store(f, kNone, 0);
  NEXT();
  EXITS
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
  EXITS
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
  store(f, kDevice, *(const uint64_t*)AT(obj, OFFSET(device_value_offset)));
  NEXT();
  EXITS
}

CHAIN intptr_t stencil_host_dtype(HPARAMS) {
  DATA();
  void* obj = OBJECT();
  if (__builtin_expect(TYPE_OF(obj) != d->dtype_type, 0)) TO_GENERIC();
  store(f, kDataType, *(const uint32_t*)AT(obj, OFFSET(dtype_value_offset)));
  NEXT();
  EXITS
}

// Tensor number HOLE_index, borrowed into its slot; a miss goes to the out-of-line part, which
// releases the ones before it.
CHAIN intptr_t stencil_host_tensor(HPARAMS) {
  DATA();
  void* tensor = d->borrow_tensor(OBJECT(), SLOT((uint32_t)(uintptr_t)HOLE_index));
  if (__builtin_expect(tensor == 0, 0)) SLOW();
  store(f, kDLTensorPtr, (uint64_t)(uintptr_t)tensor);
  NEXT();
  EXITS
}
CHAIN intptr_t stencil_host_tensor_miss(HPARAMS) {
  DATA();
  release_tensors(d, f, (uint32_t)(uintptr_t)HOLE_index);
  GENERIC();
}

// ---- The switch to the call ----

// Every argument converted: the Anys stand in for the host's objects and the thunk chain copied
// next converts them for the native (no structure parameters: a host entry has none, so the chain
// never needs the argument array kept at SAVED_ARGS). The _unlocking variant releases the host's
// lock first (kFFIJITHostEntryReleaseLock).
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
  ENTER_THUNK_CHAIN();
}
CHAIN intptr_t stencil_host_to_chain_unlocking(HPARAMS) {
  DATA();
  *LOCK_STATE = (uint64_t)(uintptr_t)d->release_lock();
  uint64_t* s = THUNK_FRAME;
  ENTER_THUNK_CHAIN();
}

// The host's lock taken back (when the switch released it) and the tensors (HOLE_index of them)
// released, once the native has returned or the call falls back.
static inline __attribute__((always_inline)) void after_call(const FFIJITHostStencilData* d,
                                                             uint64_t* f) {
  if (__builtin_expect(d->release_lock_around_call, 0)) {
    d->acquire_lock((void*)(uintptr_t)*LOCK_STATE);
  }
  uint32_t tensors = (uint32_t)(uintptr_t)HOLE_index;
  if (__builtin_expect(tensors != 0, 0)) release_tensors(d, f, tensors);
}
#define AFTER_CALL()         \
  DATA();                    \
  uint64_t* f = FRAME_OF(s); \
  after_call(d, f);

// The same where the stencil thunks do not cover the plan: the function's packed entry (whatever
// tier it is on) is called with the Anys, and its outcome boxed or raised; on to the epilogue.
typedef int (*SafeCall)(void* handle, const Any* args, int32_t num_args, Any* result);
CHAIN intptr_t stencil_host_to_packed(HPARAMS) {
  DATA();
  if (d->release_lock_around_call) *LOCK_STATE = (uint64_t)(uintptr_t)d->release_lock();
  SafeCall call = *(const SafeCall*)AT(d->function, d->function_cell_offset);
  int rc = call(d->function, (const Any*)ANYS, (int32_t)ARITY, RESULT);
  after_call(d, f);
  EXIT(CONT_next, box(d, rc, RESULT));
}

// ---- The end of the thunk chain in a host entry ----

// A value the thunk stencils do not convert (or a form they leave to the interpreter): the
// interpreter takes the Anys, as it would from the function's thunk, and its outcome is boxed or
// raised as the entry would.
extern int FN_fallback(void* h, const Any* a, int32_t n, Any* r);
CHAIN intptr_t stencil_host_fail(PARAMS) {
  const FFIJITHostStencilData* data;
  LOAD_DATA(data);
  uint64_t* frame = FRAME_OF(s);
  int rc =
      FN_fallback(data->function, (const Any*)frame, (int32_t)ARITY, (Any*)(frame + 2 * MAX_ARGS));
  AFTER_CALL()
  EXIT_CALL(CONT_exit_call, box(d, rc, RESULT));
}

// The thunk's own call stencil's end: the status it hands on, and the Any it left boxed or its
// error raised; on to the epilogue.
CHAIN intptr_t stencil_host_return(PARAMS) {
  int rc = FINISHED_STATUS;
  AFTER_CALL()
  EXIT_CALL(CONT_chain, box(d, rc, RESULT));
}

// The native called and its result boxed by the host: one stencil per result kind the host boxes
// directly and number of stack slots (the others end in the thunk's own call stencil and
// stencil_host_return); on to the epilogue. Two of each, chosen when the entry is made: the plain
// one (stencil_hcall_) for the common entry, which keeps the lock, has no tensors and a host whose
// references are a plain count, and the full one (stencil_hcall_full_) for the others: the plain
// one tests nothing after the call.
#define PLAIN_AFTER() DATA();
#define PLAIN_REFERENCE(d, obj) (++*(intptr_t*)(obj), (void*)(obj))
#define FULL_AFTER() AFTER_CALL()
#define FULL_REFERENCE(d, obj) new_reference(d, obj)
#define HOST_CALLS_AS(name, AFTER, REFERENCE, ns)                                        \
  CHAIN intptr_t stencil_##name##_i64_s##ns(PARAMS) {                                    \
    int64_t value = CALL(i64, ns);                                                       \
    AFTER() EXIT_CALL(CONT_chain, d->new_int(value));                                    \
  }                                                                                      \
  CHAIN intptr_t stencil_##name##_i32_s##ns(PARAMS) {                                    \
    int64_t value = CALL(i32, ns);                                                       \
    AFTER() EXIT_CALL(CONT_chain, d->new_int(value));                                    \
  }                                                                                      \
  CHAIN intptr_t stencil_##name##_i16_s##ns(PARAMS) {                                    \
    int64_t value = CALL(i16, ns);                                                       \
    AFTER() EXIT_CALL(CONT_chain, d->new_int(value));                                    \
  }                                                                                      \
  CHAIN intptr_t stencil_##name##_i8_s##ns(PARAMS) {                                     \
    int64_t value = CALL(i8, ns);                                                        \
    AFTER() EXIT_CALL(CONT_chain, d->new_int(value));                                    \
  }                                                                                      \
  CHAIN intptr_t stencil_##name##_u32_s##ns(PARAMS) {                                    \
    int64_t value = CALL(u32, ns);                                                       \
    AFTER() EXIT_CALL(CONT_chain, d->new_int(value));                                    \
  }                                                                                      \
  CHAIN intptr_t stencil_##name##_u16_s##ns(PARAMS) {                                    \
    int64_t value = CALL(u16, ns);                                                       \
    AFTER() EXIT_CALL(CONT_chain, d->new_int(value));                                    \
  }                                                                                      \
  CHAIN intptr_t stencil_##name##_u8_s##ns(PARAMS) {                                     \
    int64_t value = CALL(u8, ns);                                                        \
    AFTER() EXIT_CALL(CONT_chain, d->new_int(value));                                    \
  }                                                                                      \
  CHAIN intptr_t stencil_##name##_void_s##ns(PARAMS) {                                   \
    CALL(void, ns);                                                                      \
    AFTER() EXIT_CALL(CONT_chain, REFERENCE(d, d->none));                                \
  }                                                                                      \
  /* A bool is read as its byte (nonzero: true), as the interpreter reads it. */         \
  CHAIN intptr_t stencil_##name##_bool_s##ns(PARAMS) {                                   \
    int value = CALL(bool, ns) != 0;                                                     \
    AFTER() EXIT_CALL(CONT_chain, REFERENCE(d, value ? d->true_value : d->false_value)); \
  }                                                                                      \
  CHAIN intptr_t stencil_##name##_f64_s##ns(PARAMS) {                                    \
    double value = CALL(f64, ns);                                                        \
    AFTER() EXIT_CALL(CONT_chain, d->new_float(value));                                  \
  }                                                                                      \
  CHAIN intptr_t stencil_##name##_f32_s##ns(PARAMS) {                                    \
    double value = (double)CALL(f32, ns);                                                \
    AFTER() EXIT_CALL(CONT_chain, d->new_float(value));                                  \
  }
#define HOST_CALLS(ns)                                   \
  DECLARE(int64_t, i64, ns)                              \
  DECLARE(int32_t, i32, ns)                              \
  DECLARE(int16_t, i16, ns)                              \
  DECLARE(int8_t, i8, ns)                                \
  DECLARE(uint32_t, u32, ns)                             \
  DECLARE(uint16_t, u16, ns)                             \
  DECLARE(uint8_t, u8, ns)                               \
  DECLARE(void, void, ns)                                \
  DECLARE(uint8_t, bool, ns)                             \
  DECLARE(double, f64, ns)                               \
  DECLARE(float, f32, ns)                                \
  HOST_CALLS_AS(hcall, PLAIN_AFTER, PLAIN_REFERENCE, ns) \
  HOST_CALLS_AS(hcall_full, FULL_AFTER, FULL_REFERENCE, ns)

HOST_CALLS(0)
HOST_CALLS(1)
HOST_CALLS(2)
HOST_CALLS(3)
HOST_CALLS(4)
HOST_CALLS(5)
HOST_CALLS(6)
HOST_CALLS(7)
HOST_CALLS(8)
