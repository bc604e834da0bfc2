// Stencil sources of the copy-and-patch thunk tier, compiled by clang-19 at build time (never at
// run time) into one relocatable object per architecture; extract_stencils.py turns its text and
// relocations into the tables the tier copies and patches (stencil_tier.cc).
//
// Freestanding C: clang's own stdint.h/stddef.h only, so the file cross-compiles for AArch64
// without a sysroot. A thunk is a chain: the C-ABI entry (arity check, call count) starts the first
// argument stencil; each argument stencil converts one packed argument into the native parameter
// register it owns and jumps on (musttail) to the next, or to the fail stencil; the call stencil
// calls the native, boxes its result and jumps on to the epilogue, which returns. The chain uses
// clang's preserve_none convention, so the handle, the arguments, the result pointer and every
// native parameter stay in registers from stencil to stencil. On x86-64 the entry, the epilogue
// and the fail stencil are a few lines of assembly (see the entries): the entry jumps into the
// chain instead of calling it.
//
// Holes are undefined symbols the extractor recognises by name. The compiler takes a symbol's
// address for nonzero, so a hole that may be 0 is truncated (to int32_t) before a test reads it.
//
//   HOLE_<name>    a constant (its "address" is the value): argument offsets, the arity, a type
//                  index;
//   CONT_next      the next stencil of the chain (elided when it follows directly);
//   CONT_fail      the thunk's fallback stencil;
//   FN_<name>      a function of the process (the fallback into the interpreter, the shared
//                  boxer); a branch to it goes through a veneer when out of range. (The native is
//                  read from the handle, see the calls.)
#include <stddef.h>
#include <stdint.h>

#include "stencil_chain.h"

// The object header's layout differs between TVM FFI revisions (type_index at offset 0 or 8):
// its offset and size are holes, patched from the library's own TVMFFIObject.
extern char HOLE_header_type[], HOLE_header_size[];
#define HEADER_TYPE(obj) (*(const int32_t*)((const char*)(obj) + (uintptr_t)HOLE_header_type))

enum {
  kNone = 0,
  kInt = 1,
  kBool = 2,
  kFloat = 3,
  kOpaquePtr = 4,
  kDataType = 5,
  kDevice = 6,
  kDLTensorPtr = 7,
  kRawStr = 8,
  kByteArrayPtr = 9,
  kSmallStr = 11,
  kSmallBytes = 12,
  kStr = 65,
  kBytes = 66,
  kTensor = 70,
};
// An object's payload (a Str's {data, size}) follows its header.
#define OBJECT_CELL ((uintptr_t)HOLE_header_size)

extern int CHAIN CONT_next(PARAMS);
extern int CHAIN CONT_fail(PARAMS);
extern char HOLE_arity[], HOLE_offset[], HOLE_type_index[], HOLE_slot[], HOLE_index[];
// A tensor parameter's checks: rank + 1 (0: any rank), whether to check the element type, and it.
extern char HOLE_rank_plus_one[], HOLE_check_dtype[], HOLE_dtype[];
extern int FN_fallback(void* h, const Any* a, int32_t n, Any* r);

#define NEXT() __attribute__((musttail)) return CONT_next(ARGS)
// A value the stencil does not convert: the interpreter's, through the jump at the stencil's end
// (FAIL_EXIT). Placed last in the source, it is the block the compiler lays out last and turns into
// a conditional jump to CONT_fail where it can, so the stencil ends with the jump to CONT_next,
// which the tier drops.
#define FAIL() goto fail
#define CHECK(ok) \
  if (__builtin_expect(!(ok), 0)) FAIL()
#define FAIL_EXIT          \
  fail:                    \
  __attribute__((unused)); \
  __attribute__((musttail)) return CONT_fail(ARGS);
#define ARITY ((int32_t)(uintptr_t)HOLE_arity)
#define ARG() ((const Any*)((const char*)a + (uintptr_t)HOLE_offset))

// ---- Entries: the packed entry point itself (C ABI), and the chain's end ----
// A thunk is laid out entry, argument stencils, call stencil, epilogue, fail stencil. The call
// stencil passes its status on to the epilogue (FINISH), which returns it from the thunk.
//
// On x86-64 the entry does not call the chain: it saves what the chain may change, sets h, a, r
// (and s) and falls into the first stencil; the epilogue restores and returns to the thunk's
// caller, and the fail stencil restores and jumps to the fallback with the caller's arguments. A
// C entry would have to call the chain (a C function cannot leave registers saved for another to
// restore), and that nested call and return cost more than the whole chain's checks. What the
// chain may change of what the C ABI keeps: rbx (preserve_none keeps only rbp, and rbx is no
// parameter), and of r12..r15 only what the entry sets (every stencil passes them on, see PARAMS):
// r12 (r), and r13 (s) with a frame. The stack pointer at the first stencil is 8 below a multiple
// of 16, as at any function's start. These few instructions are assembly, written for the stencil
// object like the C: their holes are the same undefined symbols.
#define FRAME_BYTES 216
_Static_assert(FRAME_WORDS * 8 <= FRAME_BYTES && FRAME_BYTES % 16 == 8, "the entry's frame");
#if defined(__x86_64__)
// In: rdi h, rsi a, edx n, rcx r (the C ABI's safe_call).
#define ARITY_CHECK "  cmpl $HOLE_arity, %edx\n  jne FN_fallback\n"
// The count at handle + 56 (BoundFunction::calls_until_hot), counted down: the call that brings
// it to zero takes the fallback, which reports it (the way to the hot tier). A plain decrement, as
// the LLVM cold tier: a count lost to a concurrent call only delays the report.
#define COUNT_DOWN "  decq 56(%rdi)\n  je FN_fallback\n"
#define SET_CHAIN "  mov %rcx, %r12\n  mov %rsi, %r11\n  mov %rdi, %rax\n  jmp CONT_next\n"
// Without a frame: two pushes, the stack 8 below a multiple of 16 again.
#define SAVE "  push %rbx\n  push %r12\n"
#define RESTORE "  pop %r12\n  pop %rbx\n"
// With a frame: s is its base; the caller's argument array kept at s[SAVED_ARGS].
#define SAVE_FRAME \
  "  push %rbx\n  push %r12\n  push %r13\n  sub $" STR(FRAME_BYTES) ", %rsp\n" \
  "  mov %rsp, %r13\n  mov %rsi, " STR(SAVED_ARGS) "*8(%rsp)\n"
#define RESTORE_FRAME "  add $" STR(FRAME_BYTES) ", %rsp\n  pop %r13\n  pop %r12\n  pop %rbx\n"
ASM_STENCIL(entry, ARITY_CHECK SAVE SET_CHAIN)
ASM_STENCIL(entry_counted, COUNT_DOWN ARITY_CHECK SAVE SET_CHAIN)
ASM_STENCIL(entry_frame, ARITY_CHECK SAVE_FRAME SET_CHAIN)
ASM_STENCIL(entry_frame_counted, COUNT_DOWN ARITY_CHECK SAVE_FRAME SET_CHAIN)
// The status in rax (see FINISH).
ASM_STENCIL(epilogue, RESTORE "  ret\n")
ASM_STENCIL(epilogue_frame, RESTORE_FRAME "  ret\n")
// Every error and every form the stencils do not convert: the interpreter, through FN_fallback,
// with the caller's arguments (from a thunk with a frame, the array kept in it: `a` may be a
// structure's element).
#define FALLBACK_ARGS(args) \
  "  mov %rax, %rdi\n  mov " args ", %rsi\n  mov $HOLE_arity, %edx\n  mov %r12, %rcx\n"
ASM_STENCIL(fail, FALLBACK_ARGS("%r11") RESTORE "  jmp FN_fallback\n")
ASM_STENCIL(fail_frame,
            FALLBACK_ARGS(STR(SAVED_ARGS) "*8(%r13)") RESTORE_FRAME "  jmp FN_fallback\n")
#else
// Elsewhere the entries are C functions that call the chain, and the epilogue returns.
#define JUNK_S ((uint64_t*)__builtin_nondeterministic_value((uintptr_t)0))
int stencil_entry(void* h, const Any* a, int32_t n, Any* r) {
  if (__builtin_expect(n != ARITY, 0)) return FN_fallback(h, a, n, r);
  return CONT_next(h, a, r, JUNK_S, JUNK_GARGS, JUNK_FARGS);
}

// The same, counting calls down at handle + 56 (BoundFunction::calls_until_hot), as the x86-64
// entry.
#define COUNT_DOWN()                          \
  int64_t* count = (int64_t*)((char*)h + 56); \
  int64_t left = *count - 1;                  \
  *count = left;                              \
  if (__builtin_expect(n != ARITY || left == 0, 0)) return FN_fallback(h, a, n, r);

int stencil_entry_counted(void* h, const Any* a, int32_t n, Any* r) {
  COUNT_DOWN()
  return CONT_next(h, a, r, JUNK_S, JUNK_GARGS, JUNK_FARGS);
}

// Entries of a native with stack arguments or out-pointer results: the array the stencils fill,
// in this frame, which outlives the chain (the chain runs inside the call below).
int stencil_entry_frame(void* h, const Any* a, int32_t n, Any* r) {
  uint64_t frame[FRAME_WORDS];
  if (__builtin_expect(n != ARITY, 0)) return FN_fallback(h, a, n, r);
  frame[SAVED_ARGS] = (uint64_t)(uintptr_t)a;
  return CONT_next(h, a, r, frame, JUNK_GARGS, JUNK_FARGS);
}
int stencil_entry_frame_counted(void* h, const Any* a, int32_t n, Any* r) {
  uint64_t frame[FRAME_WORDS];
  COUNT_DOWN()
  frame[SAVED_ARGS] = (uint64_t)(uintptr_t)a;
  return CONT_next(h, a, r, frame, JUNK_GARGS, JUNK_FARGS);
}

CHAIN int stencil_epilogue(PARAMS) {
  return FINISHED_STATUS;
}
CHAIN int stencil_epilogue_frame(PARAMS) {
  return FINISHED_STATUS;
}

// Every error and every form the stencils do not convert: the interpreter, through FN_fallback.
CHAIN int stencil_fail(PARAMS) {
  return FN_fallback(h, a, ARITY, r);
}

// The same from a thunk with a frame, where `a` may be a structure's element.
CHAIN int stencil_fail_frame(PARAMS) {
  return FN_fallback(h, (const Any*)(uintptr_t)s[SAVED_ARGS], ARITY, r);
}
#endif

// A parameter inside a structure argument: the element its path reaches (FFIJITResolvePath, which
// raises the path's error: every earlier parameter passed, so it is the interpreter's first error
// too) stands in for the argument array, at offset 0, for the next stencil; stencil_restore puts
// the caller's array back after it.
extern const Any* FN_resolve_path(void* h, int32_t param, const Any* arg);
CHAIN int stencil_resolve(PARAMS) {
  const Any* element = FN_resolve_path(h, (int32_t)(uintptr_t)HOLE_index, ARG());
  /* its error raised, the interpreter raises it again (the first error, as above) */
  if (__builtin_expect(element == 0, 0)) __attribute__((musttail)) return CONT_fail(ARGS);
  a = element;
  NEXT();
}
CHAIN int stencil_restore(PARAMS) {
  a = (const Any*)(uintptr_t)s[SAVED_ARGS];
  NEXT();
}

// ---- Arguments: one stencil per (conversion, register) ----
// BODY_<conversion>(REG) converts the argument at HOLE_offset into the parameter REG, or fails.
// The checks are the LLVM thunks' (jit/orc/codegen/thunk_checks.cc) and the plan's contract:
// whatever they do not accept goes to the interpreter, which converts it or raises.

// An Int or a Bool (tags 1 and 2) whose value the native's type holds: it survives the round trip
// through that type. The empty asm keeps the extension and compare (two instructions on x86-64),
// which the compiler would otherwise turn into a range check with a 64-bit constant.
#define INT_BODY(REG, type)                      \
  const Any* v = ARG();                          \
  uint64_t x = v->u;                             \
  CHECK((uint32_t)(v->type_index - kInt) <= 1u); \
  int64_t narrowed = (int64_t)(type)x;           \
  __asm__("" : "+r"(narrowed));                  \
  CHECK(narrowed == (int64_t)x);                 \
  REG = x;                                       \
  NEXT();

#define BODY_i8(REG) INT_BODY(REG, int8_t)
#define BODY_i16(REG) INT_BODY(REG, int16_t)
#define BODY_i32(REG) INT_BODY(REG, int32_t)
#define BODY_i64(REG)                            \
  const Any* v = ARG();                          \
  CHECK((uint32_t)(v->type_index - kInt) <= 1u); \
  REG = v->u;                                    \
  NEXT();
#define BODY_u8(REG) INT_BODY(REG, uint8_t)
#define BODY_u16(REG) INT_BODY(REG, uint16_t)
#define BODY_u32(REG) INT_BODY(REG, uint32_t)
// An Int is signed: a u64 takes the non-negative ones.
#define BODY_u64(REG)                            \
  const Any* v = ARG();                          \
  CHECK((uint32_t)(v->type_index - kInt) <= 1u); \
  CHECK(v->i >= 0);                              \
  REG = v->u;                                    \
  NEXT();
#define BODY_bool(REG)                           \
  const Any* v = ARG();                          \
  CHECK((uint32_t)(v->type_index - kInt) <= 1u); \
  REG = v->i != 0;                               \
  NEXT();
// void*: OpaquePtr (4) or None (0, passed as NULL): the only tags with no bit but bit 2 set.
// Without a branch: the payload masked by the tag (all ones for 4, none for 0).
#define BODY_ptr(REG)                                        \
  const Any* v = ARG();                                      \
  uint32_t tag = (uint32_t)v->type_index;                    \
  CHECK((tag & ~(uint32_t)kOpaquePtr) == 0);                 \
  REG = v->u & ((uint64_t)0 - (uint64_t)(tag / kOpaquePtr)); \
  NEXT();
extern void* FN_memchr(const void* s, int c, size_t n);
// Whether a word has a zero byte.
#define ZERO_BYTE(w) ((((w)-0x0101010101010101ull) & ~(w)&0x8080808080808080ull) != 0)
#if defined(__x86_64__)
// Whether size bytes at data hold a NUL, without a call (which would save and restore every
// parameter register around it): SSE2 compares of 16 bytes at a time, every load inside the
// string's bytes or, for a string shorter than 16, inside the 4 KiB page that holds them (a load
// that does not cross a page boundary cannot fault where the string's own bytes do not).
typedef char Bytes16 __attribute__((vector_size(16), aligned(1)));
static inline __attribute__((always_inline)) uint32_t ZeroMask(const char* at) {
  Bytes16 bytes = *(const Bytes16*)at;
  return (uint32_t)__builtin_ia32_pmovmskb128(bytes == (Bytes16){0});
}
static inline __attribute__((always_inline)) int HAS_NUL(const char* data, uint64_t size) {
  if (size == 0) return 0;
  if (size <= 16) {
    // The 16 bytes from data (the mask's lowest bit is the first byte) or, when they would cross
    // into the next page, the 16 ending at the string's end, in the same page.
    if (((uintptr_t)data & 4095) <= 4096 - 16) {
      uint32_t mask = ZeroMask(data);
      return mask != 0 && (uint64_t)__builtin_ctz(mask) < size;
    }
    uint32_t mask = ZeroMask(data + size - 16);
    return mask != 0 && (uint64_t)(31 - __builtin_clz(mask)) >= 16 - size;
  }
  uint64_t at = 0;
  do {
    if (ZeroMask(data + at) != 0) return 1;
    at += 16;
  } while (at + 16 < size);
  return ZeroMask(data + size - 16) != 0;
}
#else
// Whether size bytes at data hold a NUL.
#define HAS_NUL(data, size) (FN_memchr(data, 0, size) != 0)
#endif
// const char*: a non-NULL RawStr, or a Str object (its data after the header) with no NUL inside,
// or a SmallStr (its bytes in the Any itself) of at most 7 bytes with no NUL inside. A NULL, a
// None (nullable or not), any malformed or NUL-holding string: the interpreter's.
#define BODY_str(REG)                                                                       \
  const Any* v = ARG();                                                                     \
  int32_t tag = v->type_index;                                                              \
  if (__builtin_expect(tag == kStr, 1)) {                                                   \
    const char* obj = (const char*)v->p;                                                    \
    CHECK(obj != 0 && HEADER_TYPE(obj) == kStr);                                            \
    const char* data = *(const char* const*)(obj + OBJECT_CELL);                            \
    uint64_t size = *(const uint64_t*)(obj + OBJECT_CELL + 8);                              \
    CHECK(!HAS_NUL(data, size));                                                            \
    REG = (uint64_t)(uintptr_t)data;                                                        \
  } else if (tag == kRawStr) {                                                              \
    CHECK(v->p != 0);                                                                       \
    REG = v->u;                                                                             \
  } else {                                                                                  \
    CHECK(tag == kSmallStr);                                                                \
    uint64_t len = v->small_len;                                                            \
    uint64_t word = v->u;                                                                   \
    CHECK(len <= 7 && (word >> 56) == 0);                                                   \
    /* a NUL among the first len bytes: set the bytes past the end, then look for a zero */ \
    CHECK(!ZERO_BYTE(word | ~(uint64_t)0 << (len * 8)));                                    \
    REG = (uint64_t)(uintptr_t)&v->u;                                                       \
  }                                                                                         \
  NEXT();
// TVMFFIObject*: an object whose header type index is HOLE_type_index exactly (any object when it
// is 64, kTVMFFIObject: then the header must equal the tag). Subtypes, None: the interpreter's.
#define BODY_obj(REG)                                                                         \
  const Any* v = ARG();                                                                       \
  int32_t tag = v->type_index;                                                                \
  const char* obj = (const char*)v->p;                                                        \
  int32_t want = (int32_t)(uintptr_t)HOLE_type_index;                                         \
  if (__builtin_expect(                                                                       \
          tag < 64 || obj == 0 || HEADER_TYPE(obj) != tag || (want != 64 && tag != want), 0)) \
    FAIL();                                                                                   \
  REG = v->u;                                                                                 \
  NEXT();

// DLDataType (4 bytes, zero-extended) and DLDevice (8 bytes): their own tags only (a string to
// parse is the interpreter's).
#define BODY_dtype(REG)              \
  const Any* v = ARG();              \
  CHECK(v->type_index == kDataType); \
  REG = (uint32_t)v->u;              \
  NEXT();
#define BODY_device(REG)           \
  const Any* v = ARG();            \
  CHECK(v->type_index == kDevice); \
  REG = v->u;                      \
  NEXT();
// A host entry's argument (host_stencils.c) its own stencil has checked and stored in the one
// shape the native's parameter takes (a Str as a RawStr, a Device, a DataType zero-extended, an
// Int for an i64): the payload as it is. Host entries only: nothing else writes their Anys.
#define BODY_payload(REG) \
  REG = ARG()->u;         \
  NEXT();
// DLTensor*: a Tensor object (its DLTensor after the header) or a non-NULL DLTensorPtr, checked as
// the interpreter checks it inline: the element type (when the plan checks it), the rank (ndim >= 0
// for any rank), a shape when ndim > 0. Static dims are not checked here (such plans are not the
// stencils'). DLTensor: ndim at 16, dtype at 20, shape at 24 (DLPack's ABI).
#define BODY_tensor(REG)                                                                      \
  const Any* v = ARG();                                                                       \
  int32_t tag = v->type_index;                                                                \
  const char* t = (const char*)v->p;                                                          \
  int32_t rank_plus_one = (int32_t)(uintptr_t)HOLE_rank_plus_one;                             \
  int32_t ndim;                                                                               \
  if (__builtin_expect(tag != kTensor, 0)) goto pointer;                                      \
  CHECK(t != 0 && HEADER_TYPE(t) == kTensor);                                                 \
  t += OBJECT_CELL;                                                                           \
  tensor:                                                                                     \
  ndim = *(const int32_t*)(t + 16);                                                           \
  if ((int32_t)(uintptr_t)HOLE_check_dtype)                                                   \
    CHECK(*(const uint32_t*)(t + 20) == (uint32_t)(uintptr_t)HOLE_dtype);                     \
  /* zero-extended, so that any rank (rank_plus_one 0: -1 here) never matches */              \
  if (__builtin_expect((uint64_t)(uint32_t)ndim != (uint64_t)(uint32_t)rank_plus_one - 1, 0)) \
    goto any_rank;                                                                            \
  ranked:                                                                                     \
  if (__builtin_expect(*(const void* const*)(t + 24) == 0, 0)) goto no_shape;                 \
  shaped:                                                                                     \
  REG = (uint64_t)(uintptr_t)t;                                                               \
  NEXT();                                                                                     \
  /* out of the straight path, in the order the compiler keeps */                             \
  pointer:                                                                                    \
  CHECK(tag == kDLTensorPtr && t != 0);                                                       \
  goto tensor;                                                                                \
  any_rank:                                                                                   \
  CHECK(rank_plus_one == 0 && ndim >= 0);                                                     \
  goto ranked;                                                                                \
  no_shape:                                                                                   \
  CHECK(ndim == 0);                                                                           \
  goto shaped;
// const TVMFFIAny*: the packed value itself, when it keeps the value-validity contract (the
// library's details::FindAnyDefect, FN_any_defect: 0 for a well-formed value).
extern int32_t FN_any_defect(const Any* v);
#define BODY_any(REG)                                     \
  const Any* v = ARG();                                   \
  if (__builtin_expect(FN_any_defect(v) != 0, 0)) FAIL(); \
  REG = (uint64_t)(uintptr_t)v;                           \
  NEXT();
// TVMFFIByteArray by value, {data, size} in two registers or stack slots: a non-NULL
// ByteArrayPtr, a well-formed SmallBytes or SmallStr (its bytes in the Any), a Bytes or Str object
// (its {data, size} after the header). A RawStr (its strlen) and anything else: the interpreter's.
#define BODY_bytes(DATA, SIZE)                                                           \
  const Any* v = ARG();                                                                  \
  int32_t tag = v->type_index;                                                           \
  const char* p = (const char*)v->p;                                                     \
  if (tag == kBytes || tag == kStr) {                                                    \
    if (__builtin_expect(p == 0 || HEADER_TYPE(p) != tag, 0)) FAIL();                    \
    DATA = *(const uint64_t*)(p + OBJECT_CELL);                                          \
    SIZE = *(const uint64_t*)(p + OBJECT_CELL + 8);                                      \
  } else if (tag == kSmallBytes || tag == kSmallStr) {                                   \
    uint64_t len = v->small_len;                                                         \
    if (__builtin_expect(len > 7 || (tag == kSmallStr && (v->u >> 56) != 0), 0)) FAIL(); \
    DATA = (uint64_t)(uintptr_t)&v->u;                                                   \
    SIZE = len;                                                                          \
  } else if (tag == kByteArrayPtr && p != 0) {                                           \
    DATA = *(const uint64_t*)p;                                                          \
    SIZE = *(const uint64_t*)(p + 8);                                                    \
  } else {                                                                               \
    FAIL();                                                                              \
  }                                                                                      \
  NEXT();
#define DEFINE_PAIR(k, k1)                   \
  CHAIN int stencil_arg_bytes_p##k(PARAMS) { \
    BODY_bytes(g##k, g##k1) FAIL_EXIT        \
  }
// An out-pointer parameter: result HOLE_index's zeroed 16-byte buffer in the entry's frame.
#define BODY_out(REG)                                     \
  uint64_t* buffer = RESULTS + 2 * (uintptr_t)HOLE_index; \
  buffer[0] = 0;                                          \
  buffer[1] = 0;                                          \
  REG = (uint64_t)(uintptr_t)buffer;                      \
  NEXT();

#define DEFINE_GPR(name, k)                     \
  CHAIN int stencil_arg_##name##_g##k(PARAMS) { \
    BODY_##name(g##k) FAIL_EXIT                 \
  }
#if NGPR == 6
#define GPR_STENCILS(name) \
  DEFINE_GPR(name, 0)      \
  DEFINE_GPR(name, 1)      \
  DEFINE_GPR(name, 2)      \
  DEFINE_GPR(name, 3)      \
  DEFINE_GPR(name, 4)      \
  DEFINE_GPR(name, 5)
#else
#define GPR_STENCILS(name) \
  DEFINE_GPR(name, 0)      \
  DEFINE_GPR(name, 1)      \
  DEFINE_GPR(name, 2)      \
  DEFINE_GPR(name, 3)      \
  DEFINE_GPR(name, 4)      \
  DEFINE_GPR(name, 5)      \
  DEFINE_GPR(name, 6)      \
  DEFINE_GPR(name, 7)
#endif

DEFINE_PAIR(0, 1)
DEFINE_PAIR(1, 2)
DEFINE_PAIR(2, 3)
DEFINE_PAIR(3, 4)
DEFINE_PAIR(4, 5)
#if NGPR == 8
DEFINE_PAIR(5, 6)
DEFINE_PAIR(6, 7)
#endif

GPR_STENCILS(bool)
GPR_STENCILS(i8)
GPR_STENCILS(i16)
GPR_STENCILS(i32)
GPR_STENCILS(i64)
GPR_STENCILS(u8)
GPR_STENCILS(u16)
GPR_STENCILS(u32)
GPR_STENCILS(u64)
GPR_STENCILS(ptr)
GPR_STENCILS(str)
GPR_STENCILS(obj)
GPR_STENCILS(dtype)
GPR_STENCILS(tensor)
GPR_STENCILS(any)
GPR_STENCILS(device)
GPR_STENCILS(out)
GPR_STENCILS(payload)

// A parameter on the stack: one stencil per conversion, its slot a hole.
#define SLOT ((uintptr_t)HOLE_slot)
#define DEFINE_STACK(name)                 \
  CHAIN int stencil_stack_##name(PARAMS) { \
    BODY_##name(s[SLOT]) FAIL_EXIT         \
  }
DEFINE_STACK(bool)
DEFINE_STACK(i8)
DEFINE_STACK(i16)
DEFINE_STACK(i32)
DEFINE_STACK(i64)
DEFINE_STACK(u8)
DEFINE_STACK(u16)
DEFINE_STACK(u32)
DEFINE_STACK(u64)
DEFINE_STACK(ptr)
DEFINE_STACK(str)
DEFINE_STACK(obj)
DEFINE_STACK(dtype)
DEFINE_STACK(tensor)
DEFINE_STACK(any)
DEFINE_STACK(device)
DEFINE_STACK(out)
DEFINE_STACK(payload)
// A TVMFFIByteArray on the stack: two slots.
CHAIN int stencil_stack_bytes(PARAMS) {
  BODY_bytes(s[SLOT], s[SLOT + 1]) FAIL_EXIT
}

// Floats: a Float, or an Int/Bool converted with one rounding from the exact value (as the
// interpreter). The register holds a double; an f32 sits in its low 32 bits (upper ones zero),
// where the native reads a float.
typedef union {
  uint64_t bits;
  double d;
} Word;
// A Float is the common case: the branch to the Int conversion is not taken (a select of both
// readings costs more, and cvtsi2sd's write of the low lane depends on the register's old value).
#define BODY_f64(REG)                                             \
  const Any* v = ARG();                                           \
  int32_t tag = v->type_index;                                    \
  CHECK(tag == kFloat || (uint32_t)(tag - kInt) <= 1u);           \
  REG = __builtin_expect(tag == kFloat, 1) ? v->d : (double)v->i; \
  NEXT();
// An f32 in the register's low 32 bits (upper ones zero), where the native reads a float.
#if defined(__x86_64__)
// x86-64: converted into a zeroed register (cvtsd2ss and cvtsi2ss write the low lane only).
typedef float Float4 __attribute__((vector_size(16)));
typedef double Double2 __attribute__((vector_size(16)));
#define NARROW(tag, v)                                                      \
  ((Double2)(__builtin_expect(tag == kFloat, 1)                             \
                 ? __builtin_ia32_cvtsd2ss((Float4){0}, (Double2){v->d, 0}) \
                 : (Float4){(float)v->i, 0, 0, 0}))[0]
#else
static inline double NarrowBits(float f) {
  union {
    float f;
    uint32_t bits;
  } narrow = {f};
  Word w = {narrow.bits};
  return w.d;
}
#define NARROW(tag, v) NarrowBits(__builtin_expect(tag == kFloat, 1) ? (float)v->d : (float)v->i)
#endif
#define BODY_f32(REG)                                   \
  const Any* v = ARG();                                 \
  int32_t tag = v->type_index;                          \
  CHECK(tag == kFloat || (uint32_t)(tag - kInt) <= 1u); \
  REG = NARROW(tag, v);                                 \
  NEXT();

// f16/bf16: a Float or an Int/Bool rounded once from the exact value by the library's own
// converters (the interpreter's); the bits in the register's low 16 (upper ones zero).
extern uint16_t FN_f16_from_double(double d);
extern uint16_t FN_f16_from_int(int64_t i);
extern uint16_t FN_bf16_from_double(double d);
extern uint16_t FN_bf16_from_int(int64_t i);
#define HALF_BODY(REG, kind)                                      \
  const Any* v = ARG();                                           \
  int32_t tag = v->type_index;                                    \
  uint16_t half;                                                  \
  if (tag == kFloat) {                                            \
    half = FN_##kind##_from_double(v->d);                         \
  } else {                                                        \
    if (__builtin_expect((uint32_t)(tag - kInt) > 1u, 0)) FAIL(); \
    half = FN_##kind##_from_int(v->i);                            \
  }                                                               \
  Word w = {half};                                                \
  REG = w.d;                                                      \
  NEXT();
#define BODY_f16(REG) HALF_BODY(REG, f16)
#define BODY_bf16(REG) HALF_BODY(REG, bf16)
#define DEFINE_STACK_FLOAT(name)              \
  CHAIN int stencil_stack_##name(PARAMS) {    \
    BODY_##name(((double*)s)[SLOT]) FAIL_EXIT \
  }
#define DEFINE_SSE(name, k)                     \
  CHAIN int stencil_arg_##name##_f##k(PARAMS) { \
    BODY_##name(f##k) FAIL_EXIT                 \
  }
#define SSE_STENCILS(name) \
  DEFINE_SSE(name, 0)      \
  DEFINE_SSE(name, 1)      \
  DEFINE_SSE(name, 2)      \
  DEFINE_SSE(name, 3)      \
  DEFINE_SSE(name, 4)      \
  DEFINE_SSE(name, 5)      \
  DEFINE_SSE(name, 6)      \
  DEFINE_SSE(name, 7)
SSE_STENCILS(f64)
SSE_STENCILS(f32)
SSE_STENCILS(f16)
SSE_STENCILS(bf16)
// On the stack, a float's slot holds the same bits as its register would (the low 32 for an f32).
DEFINE_STACK_FLOAT(f64)
DEFINE_STACK_FLOAT(f32)
DEFINE_STACK_FLOAT(f16)
DEFINE_STACK_FLOAT(bf16)

// ---- Calls: the native (read from the handle) and the boxing of its result
// ---- The native is called with every parameter register, set or not: a C function reads only its
// own.

// The tag and its zero padding in one 8-byte store (both targets are little-endian): a constant
// word, never a constant in a data section (stencils have none).
static inline int box(Any* r, int32_t tag, uint64_t payload) {
  *(uint64_t*)r = (uint32_t)tag;
  r->u = payload;
  return 0;
}

// The shared boxer (FFIJITBoxResult) and a status native's error (FFIJITPropagateStatus).
extern int FN_box_result(void* h, int32_t index, const uint64_t raw[2], Any* out);
extern int FN_propagate_status(void* h, int32_t status);

// One call stencil per (result kind, stack slots), the native called as stencil_chain.h's CALL
// says.
#define CALL_INT(type, kind, ns)                  \
  DECLARE(type, kind, ns)                         \
  CHAIN int stencil_call_##kind##_s##ns(PARAMS) { \
    int64_t x = (int64_t)CALL(kind, ns);          \
    FINISH(box(r, kInt, (uint64_t)x))             \
  }
#define CALLS(ns)                                                                                \
  DECLARE(void, void, ns)                                                                        \
  CHAIN int stencil_call_void_s##ns(PARAMS) {                                                    \
    CALL(void, ns);                                                                              \
    FINISH(box(r, kNone, 0))                                                                     \
  }                                                                                              \
  CALL_INT(int64_t, i64, ns)                                                                     \
  CALL_INT(int32_t, i32, ns)                                                                     \
  CALL_INT(int16_t, i16, ns)                                                                     \
  CALL_INT(int8_t, i8, ns)                                                                       \
  CALL_INT(uint32_t, u32, ns)                                                                    \
  CALL_INT(uint16_t, u16, ns)                                                                    \
  CALL_INT(uint8_t, u8, ns)                                                                      \
  /* A u64 above INT64_MAX has no Int: the shared boxer raises its error. A bool is read as its  \
     byte (nonzero: true), as the interpreter reads it. */                                       \
  DECLARE(uint64_t, u64, ns)                                                                     \
  CHAIN int stencil_call_u64_s##ns(PARAMS) {                                                     \
    uint64_t raw[2] = {CALL(u64, ns), 0};                                                        \
    if (__builtin_expect(raw[0] >> 63, 0)) FINISH(FN_box_result(h, 0, raw, r))                   \
    FINISH(box(r, kInt, raw[0]))                                                                 \
  }                                                                                              \
  DECLARE(uint8_t, bool, ns)                                                                     \
  CHAIN int stencil_call_bool_s##ns(PARAMS){FINISH(box(r, kBool, CALL(bool, ns) != 0))} DECLARE( \
      void*, ptr, ns) CHAIN int stencil_call_ptr_s##ns(PARAMS) {                                 \
    void* p = CALL(ptr, ns);                                                                     \
    FINISH(box(r, p ? kOpaquePtr : kNone, (uint64_t)(uintptr_t)p))                               \
  }                                                                                              \
  DECLARE(double, f64, ns)                                                                       \
  CHAIN int stencil_call_f64_s##ns(PARAMS) {                                                     \
    Word w;                                                                                      \
    w.d = CALL(f64, ns);                                                                         \
    FINISH(box(r, kFloat, w.bits))                                                               \
  }                                                                                              \
  DECLARE(float, f32, ns)                                                                        \
  CHAIN int stencil_call_f32_s##ns(PARAMS) {                                                     \
    Word w;                                                                                      \
    w.d = (double)CALL(f32, ns);                                                                 \
    FINISH(box(r, kFloat, w.bits))                                                               \
  }                                                                                              \
  /* The status convention without results: 0 is success (None), else the native's error. */     \
  DECLARE(int, status, ns)                                                                       \
  CHAIN int stencil_call_status_s##ns(PARAMS) {                                                  \
    int status = CALL(status, ns);                                                               \
    if (__builtin_expect(status != 0, 0)) FINISH(FN_propagate_status(h, status))                 \
    FINISH(box(r, kNone, 0))                                                                     \
  }

// Results the shared boxers box. By return: the integer register (any conversion: the boxer reads
// the type's low bytes), the vector register (f16/bf16 bits), or the register pair (16-byte
// values). `one`: the single result, FFIJITBoxResult from a local buffer; `packs`: several or a
// structure, FFIJITBoxResults over the frame's buffers (a by-return leaf stored first);
// `outone`: the single result through an out-pointer.
typedef struct {
  uint64_t lo, hi;
} Pair;
extern int FN_box_results(void* h, const uint64_t (*raw)[2], Any* out, const Any* args);
#define RAW_gpr(ns, raw)   \
  raw[0] = CALL(gprw, ns); \
  raw[1] = 0;
#define RAW_sse(ns, raw)  \
  {                       \
    Word w;               \
    w.d = CALL(ssew, ns); \
    raw[0] = w.bits;      \
    raw[1] = 0;           \
  }
#define RAW_pair(ns, raw)    \
  {                          \
    Pair p = CALL(pair, ns); \
    raw[0] = p.lo;           \
    raw[1] = p.hi;           \
  }
#define BOXED_CALLS(ns)                                                                         \
  DECLARE(uint64_t, gprw, ns)                                                                   \
  DECLARE(double, ssew, ns)                                                                     \
  DECLARE(Pair, pair, ns)                                                                       \
  CHAIN int stencil_call_one_gpr_s##ns(PARAMS) {                                                \
    uint64_t raw[2];                                                                            \
    RAW_gpr(ns, raw) FINISH(FN_box_result(h, 0, raw, r))                                        \
  }                                                                                             \
  CHAIN int stencil_call_one_sse_s##ns(PARAMS) {                                                \
    uint64_t raw[2];                                                                            \
    RAW_sse(ns, raw) FINISH(FN_box_result(h, 0, raw, r))                                        \
  }                                                                                             \
  CHAIN int stencil_call_one_pair_s##ns(PARAMS) {                                               \
    uint64_t raw[2];                                                                            \
    RAW_pair(ns, raw) FINISH(FN_box_result(h, 0, raw, r))                                       \
  }                                                                                             \
  CHAIN int stencil_call_packs_gpr_s##ns(PARAMS){RAW_gpr(ns, RESULTS) FINISH(FN_box_results(    \
      h, (const uint64_t(*)[2])RESULTS, r, a))} CHAIN int stencil_call_packs_sse_s##ns(PARAMS){ \
      RAW_sse(ns, RESULTS)                                                                      \
          FINISH(FN_box_results(h, (const uint64_t(*)[2])RESULTS, r,                            \
                                a))} CHAIN int stencil_call_packs_pair_s##ns(PARAMS){           \
      RAW_pair(ns, RESULTS)                                                                     \
          FINISH(FN_box_results(h, (const uint64_t(*)[2])RESULTS, r,                            \
                                a))} CHAIN int stencil_call_packs_void_s##ns(PARAMS) {          \
    CALL(void, ns);                                                                             \
    FINISH(FN_box_results(h, (const uint64_t(*)[2])RESULTS, r, a))                              \
  }                                                                                             \
  CHAIN int stencil_call_packs_status_s##ns(PARAMS) {                                           \
    int status = CALL(status, ns);                                                              \
    if (__builtin_expect(status != 0, 0)) FINISH(FN_propagate_status(h, status))                \
    FINISH(FN_box_results(h, (const uint64_t(*)[2])RESULTS, r, a))                              \
  }                                                                                             \
  CHAIN int stencil_call_outone_void_s##ns(PARAMS) {                                            \
    CALL(void, ns);                                                                             \
    FINISH(FN_box_result(h, 0, RESULTS, r))                                                     \
  }                                                                                             \
  CHAIN int stencil_call_outone_status_s##ns(PARAMS) {                                          \
    int status = CALL(status, ns);                                                              \
    if (__builtin_expect(status != 0, 0)) FINISH(FN_propagate_status(h, status))                \
    FINISH(FN_box_result(h, 0, RESULTS, r))                                                     \
  }

CALLS(0)
CALLS(1)
CALLS(2)
CALLS(3)
CALLS(4)
CALLS(5)
CALLS(6)
CALLS(7)
CALLS(8)
BOXED_CALLS(0)
BOXED_CALLS(1)
BOXED_CALLS(2)
BOXED_CALLS(3)
BOXED_CALLS(4)
BOXED_CALLS(5)
BOXED_CALLS(6)
BOXED_CALLS(7)
BOXED_CALLS(8)
