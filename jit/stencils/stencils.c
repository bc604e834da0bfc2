// Stencil sources of the copy-and-patch thunk tier, compiled by clang-19 at build time (never at
// run time) into one relocatable object per architecture; extract_stencils.py turns its text and
// relocations into the tables the tier copies and patches (stencil_tier.cc).
//
// Freestanding C: clang's own stdint.h/stddef.h only, so the file cross-compiles for AArch64
// without a sysroot. A thunk is a chain: the C-ABI entry (arity check, call count) calls the first
// argument stencil; each argument stencil converts one packed argument into the native parameter
// register it owns and jumps on (musttail) to the next; the call stencil calls the native and boxes
// its result. The chain uses clang's preserve_none convention, so the handle, the arguments, the
// result pointer and every native parameter stay in registers from stencil to stencil.
//
// Holes are undefined symbols the extractor recognises by name. The compiler takes a symbol's
// address for nonzero, so a hole that may be 0 is truncated (to int32_t) before a test reads it.
//
//   HOLE_<name>    a constant (its "address" is the value): argument offsets, the arity, a type
//                  index;
//   CONT_next      the next stencil of the chain (elided when it follows directly);
//   CONT_fail      the thunk's fallback stencil;
//   FN_<name>      a function of the process (the native, the fallback into the interpreter, the
//                  shared boxer); a branch to it goes through a veneer when out of range.
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
#define FAIL() __attribute__((musttail)) return CONT_fail(ARGS)
// Notes a value the stencil does not convert (see `bad`).
#define NOTE_BAD(cond) bad |= (int32_t)(cond)
// Before what must not run on a value already seen bad: the interpreter's.
#define GUARD() \
  if (__builtin_expect(bad != 0, 0)) FAIL()
#define ARITY ((int32_t)(uintptr_t)HOLE_arity)
#define ARG() ((const Any*)((const char*)a + (uintptr_t)HOLE_offset))

// ---- Entries: the packed entry point itself (C ABI) ----

int stencil_entry(void* h, const Any* a, int32_t n, Any* r) {
  if (__builtin_expect(n != (int32_t)(uintptr_t)HOLE_arity, 0)) return FN_fallback(h, a, n, r);
  DECLARE_JUNK
  return CONT_next(h, a, 0, r, JUNK_GARGS, JUNK_FARGS, 0);
}

// The same, counting calls down at handle + 56 (BoundFunction::calls_until_hot): the call that
// brings the count to zero takes the fallback, which reports it (the way to the hot tier). A plain
// load and store, as the LLVM cold tier: a count lost to a concurrent call only delays the report.
#define COUNT_DOWN()                                                         \
  int64_t* count = (int64_t*)((char*)h + 56);                                \
  int64_t left = *count - 1;                                                 \
  *count = left;                                                             \
  if (__builtin_expect(n != (int32_t)(uintptr_t)HOLE_arity || left == 0, 0)) \
    return FN_fallback(h, a, n, r);

int stencil_entry_counted(void* h, const Any* a, int32_t n, Any* r) {
  COUNT_DOWN()
  DECLARE_JUNK
  return CONT_next(h, a, 0, r, JUNK_GARGS, JUNK_FARGS, 0);
}

// Entries of a native with stack arguments or out-pointer results: the array the stencils fill,
// in this frame, which outlives the chain (the chain runs inside the call below).
int stencil_entry_frame(void* h, const Any* a, int32_t n, Any* r) {
  uint64_t frame[FRAME_WORDS];
  if (__builtin_expect(n != (int32_t)(uintptr_t)HOLE_arity, 0)) return FN_fallback(h, a, n, r);
  frame[SAVED_ARGS] = (uint64_t)(uintptr_t)a;
  DECLARE_JUNK
  return CONT_next(h, a, 0, r, JUNK_GARGS, JUNK_FARGS, frame);
}
int stencil_entry_frame_counted(void* h, const Any* a, int32_t n, Any* r) {
  uint64_t frame[FRAME_WORDS];
  COUNT_DOWN()
  frame[SAVED_ARGS] = (uint64_t)(uintptr_t)a;
  DECLARE_JUNK
  return CONT_next(h, a, 0, r, JUNK_GARGS, JUNK_FARGS, frame);
}

// Every error and every form the stencils do not convert: the interpreter, through FN_fallback.
CHAIN int stencil_fail(PARAMS) {
  return FN_fallback(h, a, ARITY, r);
}

// The same from a thunk with structure arguments, where `a` may be a structure's element.
CHAIN int stencil_fail_frame(PARAMS) {
  return FN_fallback(h, (const Any*)(uintptr_t)s[SAVED_ARGS], ARITY, r);
}

// A parameter inside a structure argument: the element its path reaches (FFIJITResolvePath, which
// raises the path's error: every earlier parameter passed, so it is the interpreter's first error
// too) stands in for the argument array, at offset 0, for the next stencil; stencil_restore puts
// the caller's array back after it.
extern const Any* FN_resolve_path(void* h, int32_t param, const Any* arg);
CHAIN int stencil_resolve(PARAMS) {
  GUARD();
  const Any* element = FN_resolve_path(h, (int32_t)(uintptr_t)HOLE_index, ARG());
  if (__builtin_expect(element == 0, 0)) return -1;
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

// An Int or a Bool (tags 1 and 2) whose value lies in [min, max], a range of 2^bits values
// starting at min: (x - min) >> bits is zero.
#define INT_BODY(REG, min, bits)                                          \
  const Any* v = ARG();                                                   \
  uint64_t x = v->u;                                                      \
  NOTE_BAD(((uint32_t)(v->type_index - kInt) > 1u) |                      \
           ((bits) < 64 && ((x - (uint64_t)(min)) >> ((bits)&63)) != 0)); \
  REG = x;                                                                \
  NEXT();

#define BODY_i8(REG) INT_BODY(REG, INT8_MIN, 8)
#define BODY_i16(REG) INT_BODY(REG, INT16_MIN, 16)
#define BODY_i32(REG) INT_BODY(REG, INT32_MIN, 32)
#define BODY_i64(REG) INT_BODY(REG, 0, 64)
#define BODY_u8(REG) INT_BODY(REG, 0, 8)
#define BODY_u16(REG) INT_BODY(REG, 0, 16)
#define BODY_u32(REG) INT_BODY(REG, 0, 32)
#define BODY_u64(REG) INT_BODY(REG, 0, 63)
#define BODY_bool(REG)                             \
  const Any* v = ARG();                            \
  NOTE_BAD((uint32_t)(v->type_index - kInt) > 1u); \
  REG = v->i != 0;                                 \
  NEXT();
// void*: OpaquePtr (4) or None (0, passed as NULL): the only tags with no bit but bit 2 set.
#define BODY_ptr(REG)                           \
  const Any* v = ARG();                         \
  NOTE_BAD((v->type_index & ~kOpaquePtr) != 0); \
  REG = v->type_index == kNone ? 0 : v->u;      \
  NEXT();
// const char*: a non-NULL RawStr, or a Str object (its data after the header) with no NUL inside,
// or a SmallStr (its bytes in the Any itself) of at most 7 bytes with no NUL inside. A NULL, a
// None (nullable or not), any malformed or NUL-holding string: the interpreter's.
#define BODY_str(REG)                                                                           \
  const Any* v = ARG();                                                                         \
  int32_t tag = v->type_index;                                                                  \
  if (tag == kRawStr) {                                                                         \
    if (__builtin_expect(v->p == 0, 0)) FAIL();                                                 \
    REG = v->u;                                                                                 \
  } else if (tag == kSmallStr) {                                                                \
    uint64_t len = v->small_len;                                                                \
    uint64_t word = v->u;                                                                       \
    if (__builtin_expect(len > 7 || (word >> 56) != 0, 0)) FAIL();                              \
    /* a NUL among the first len bytes: set the bytes past the end, then look for a zero */     \
    word |= ~(uint64_t)0 << (len * 8);                                                          \
    if (__builtin_expect(((word - 0x0101010101010101ull) & ~word & 0x8080808080808080ull) != 0, \
                         0))                                                                    \
      FAIL();                                                                                   \
    REG = (uint64_t)(uintptr_t)&v->u;                                                           \
  } else if (tag == kStr) {                                                                     \
    const char* obj = (const char*)v->p;                                                        \
    if (__builtin_expect(obj == 0 || HEADER_TYPE(obj) != kStr, 0)) FAIL();                      \
    const char* data = *(const char* const*)(obj + OBJECT_CELL);                                \
    uint64_t size = *(const uint64_t*)(obj + OBJECT_CELL + 8);                                  \
    if (__builtin_expect(FN_memchr(data, 0, size) != 0, 0)) FAIL();                             \
    REG = (uint64_t)(uintptr_t)data;                                                            \
  } else {                                                                                      \
    FAIL();                                                                                     \
  }                                                                                             \
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
#define BODY_dtype(REG)                 \
  const Any* v = ARG();                 \
  NOTE_BAD(v->type_index != kDataType); \
  REG = (uint32_t)v->u;                 \
  NEXT();
#define BODY_device(REG)              \
  const Any* v = ARG();               \
  NOTE_BAD(v->type_index != kDevice); \
  REG = v->u;                         \
  NEXT();
// DLTensor*: a Tensor object (its DLTensor after the header) or a non-NULL DLTensorPtr, checked as
// the interpreter checks it inline: the element type (when the plan checks it), the rank (ndim >= 0
// for any rank), a shape when ndim > 0. Static dims are not checked here (such plans are not the
// stencils'). DLTensor: ndim at 16, dtype at 20, shape at 24 (DLPack's ABI).
#define BODY_tensor(REG)                                                                         \
  const Any* v = ARG();                                                                          \
  int32_t tag = v->type_index;                                                                   \
  const char* t = (const char*)v->p;                                                             \
  if (tag == kTensor) {                                                                          \
    if (__builtin_expect(t == 0 || HEADER_TYPE(t) != kTensor, 0)) FAIL();                        \
    t += OBJECT_CELL;                                                                            \
  } else if (__builtin_expect(tag != kDLTensorPtr || t == 0, 0)) {                               \
    FAIL();                                                                                      \
  }                                                                                              \
  int32_t ndim = *(const int32_t*)(t + 16);                                                      \
  uint32_t dtype = *(const uint32_t*)(t + 20);                                                   \
  const void* shape = *(const void* const*)(t + 24);                                             \
  int32_t rank_plus_one = (int32_t)(uintptr_t)HOLE_rank_plus_one;                                \
  NOTE_BAD(((int32_t)(uintptr_t)HOLE_check_dtype & (dtype != (uint32_t)(uintptr_t)HOLE_dtype)) | \
           (rank_plus_one == 0 ? ndim < 0 : ndim != rank_plus_one - 1) |                         \
           (shape == 0 && ndim != 0));                                                           \
  REG = (uint64_t)(uintptr_t)t;                                                                  \
  NEXT();
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
    BODY_bytes(g##k, g##k1)                  \
  }
// An out-pointer parameter: result HOLE_index's zeroed 16-byte buffer in the entry's frame.
#define BODY_out(REG)                                     \
  uint64_t* buffer = RESULTS + 2 * (uintptr_t)HOLE_index; \
  buffer[0] = 0;                                          \
  buffer[1] = 0;                                          \
  REG = (uint64_t)(uintptr_t)buffer;                      \
  NEXT();

extern void* FN_memchr(const void* s, int c, size_t n);

#define DEFINE_GPR(name, k)                     \
  CHAIN int stencil_arg_##name##_g##k(PARAMS) { \
    BODY_##name(g##k)                           \
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

// A parameter on the stack: one stencil per conversion, its slot a hole.
#define SLOT ((uintptr_t)HOLE_slot)
#define DEFINE_STACK(name)                 \
  CHAIN int stencil_stack_##name(PARAMS) { \
    BODY_##name(s[SLOT])                   \
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
// A TVMFFIByteArray on the stack: two slots.
CHAIN int stencil_stack_bytes(PARAMS) {
  BODY_bytes(s[SLOT], s[SLOT + 1])
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
  NOTE_BAD(tag != kFloat && (uint32_t)(tag - kInt) > 1u);         \
  REG = __builtin_expect(tag == kFloat, 1) ? v->d : (double)v->i; \
  NEXT();
// An f32 in the register's low 32 bits (upper ones zero), where the native reads a float.
#define BODY_f32(REG)                                                       \
  const Any* v = ARG();                                                     \
  int32_t tag = v->type_index;                                              \
  NOTE_BAD(tag != kFloat && (uint32_t)(tag - kInt) > 1u);                   \
  float f = __builtin_expect(tag == kFloat, 1) ? (float)v->d : (float)v->i; \
  union {                                                                   \
    float f;                                                                \
    uint32_t bits;                                                          \
  } narrow = {f};                                                           \
  Word w = {narrow.bits};                                                   \
  REG = w.d;                                                                \
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
#define DEFINE_STACK_FLOAT(name)           \
  CHAIN int stencil_stack_##name(PARAMS) { \
    BODY_##name(((double*)s)[SLOT])        \
  }
#define DEFINE_SSE(name, k)                     \
  CHAIN int stencil_arg_##name##_f##k(PARAMS) { \
    BODY_##name(f##k)                           \
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

// ---- Calls: the native (FN_target_<kind>, its address patched in) and the boxing of its result
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


#define CALL_INT(type, kind, ns)                  \
  DECLARE(type, kind, ns)                         \
  CHAIN int stencil_call_##kind##_s##ns(PARAMS) { \
    GUARD();                                      \
    int64_t x = (int64_t)CALL(kind, ns);          \
    return box(r, kInt, (uint64_t)x);             \
  }
#define CALLS(ns)                                                                               \
  DECLARE(void, void, ns)                                                                       \
  CHAIN int stencil_call_void_s##ns(PARAMS) {                                                   \
    GUARD();                                                                                    \
    CALL(void, ns);                                                                             \
    return box(r, kNone, 0);                                                                    \
  }                                                                                             \
  CALL_INT(int64_t, i64, ns)                                                                    \
  CALL_INT(int32_t, i32, ns)                                                                    \
  CALL_INT(int16_t, i16, ns)                                                                    \
  CALL_INT(int8_t, i8, ns)                                                                      \
  CALL_INT(uint32_t, u32, ns)                                                                   \
  CALL_INT(uint16_t, u16, ns)                                                                   \
  CALL_INT(uint8_t, u8, ns)                                                                     \
  /* A u64 above INT64_MAX has no Int: the shared boxer raises its error. A bool is read as its \
     byte (nonzero: true), as the interpreter reads it. */                                      \
  DECLARE(uint64_t, u64, ns)                                                                    \
  CHAIN int stencil_call_u64_s##ns(PARAMS) {                                                    \
    GUARD();                                                                                    \
    uint64_t raw[2] = {CALL(u64, ns), 0};                                                       \
    if (__builtin_expect(raw[0] >> 63, 0)) return FN_box_result(h, 0, raw, r);                  \
    return box(r, kInt, raw[0]);                                                                \
  }                                                                                             \
  DECLARE(uint8_t, bool, ns)                                                                    \
  CHAIN int stencil_call_bool_s##ns(PARAMS) {                                                   \
    GUARD();                                                                                    \
    return box(r, kBool, CALL(bool, ns) != 0);                                                  \
  }                                                                                             \
  DECLARE(void*, ptr, ns)                                                                       \
  CHAIN int stencil_call_ptr_s##ns(PARAMS) {                                                    \
    GUARD();                                                                                    \
    void* p = CALL(ptr, ns);                                                                    \
    return box(r, p ? kOpaquePtr : kNone, (uint64_t)(uintptr_t)p);                              \
  }                                                                                             \
  DECLARE(double, f64, ns)                                                                      \
  CHAIN int stencil_call_f64_s##ns(PARAMS) {                                                    \
    GUARD();                                                                                    \
    Word w;                                                                                     \
    w.d = CALL(f64, ns);                                                                        \
    return box(r, kFloat, w.bits);                                                              \
  }                                                                                             \
  DECLARE(float, f32, ns)                                                                       \
  CHAIN int stencil_call_f32_s##ns(PARAMS) {                                                    \
    GUARD();                                                                                    \
    Word w;                                                                                     \
    w.d = (double)CALL(f32, ns);                                                                \
    return box(r, kFloat, w.bits);                                                              \
  }                                                                                             \
  /* The status convention without results: 0 is success (None), else the native's error. */    \
  DECLARE(int, status, ns)                                                                      \
  CHAIN int stencil_call_status_s##ns(PARAMS) {                                                 \
    GUARD();                                                                                    \
    int status = CALL(status, ns);                                                              \
    if (__builtin_expect(status != 0, 0)) return FN_propagate_status(h, status);                \
    return box(r, kNone, 0);                                                                    \
  }

// Results the shared boxers box. By return: the integer register (any conversion: the boxer reads
// the type's low bytes), the vector register (f16/bf16 bits), or the register pair (16-byte
// values). `one`: the single result, FFIJITBoxResult from a local buffer; `packs`: several or a
// structure, FFIJITBoxResults over the frame's buffers (a by-return leaf stored first);
// `outone`: the single result through an out-pointer.
typedef struct {
  uint64_t lo, hi;
} Pair;
extern int FN_box_results(void* h, const uint64_t (*raw)[2], Any* out);
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
#define BOXED_CALLS(ns)                                                               \
  DECLARE(uint64_t, gprw, ns)                                                         \
  DECLARE(double, ssew, ns)                                                           \
  DECLARE(Pair, pair, ns)                                                             \
  CHAIN int stencil_call_one_gpr_s##ns(PARAMS) {                                      \
    GUARD();                                                                          \
    uint64_t raw[2];                                                                  \
    RAW_gpr(ns, raw) return FN_box_result(h, 0, raw, r);                              \
  }                                                                                   \
  CHAIN int stencil_call_one_sse_s##ns(PARAMS) {                                      \
    GUARD();                                                                          \
    uint64_t raw[2];                                                                  \
    RAW_sse(ns, raw) return FN_box_result(h, 0, raw, r);                              \
  }                                                                                   \
  CHAIN int stencil_call_one_pair_s##ns(PARAMS) {                                     \
    GUARD();                                                                          \
    uint64_t raw[2];                                                                  \
    RAW_pair(ns, raw) return FN_box_result(h, 0, raw, r);                             \
  }                                                                                   \
  CHAIN int stencil_call_packs_gpr_s##ns(PARAMS) {                                    \
    GUARD();                                                                          \
    RAW_gpr(ns, RESULTS) return FN_box_results(h, (const uint64_t(*)[2])RESULTS, r);  \
  }                                                                                   \
  CHAIN int stencil_call_packs_sse_s##ns(PARAMS) {                                    \
    GUARD();                                                                          \
    RAW_sse(ns, RESULTS) return FN_box_results(h, (const uint64_t(*)[2])RESULTS, r);  \
  }                                                                                   \
  CHAIN int stencil_call_packs_pair_s##ns(PARAMS) {                                   \
    GUARD();                                                                          \
    RAW_pair(ns, RESULTS) return FN_box_results(h, (const uint64_t(*)[2])RESULTS, r); \
  }                                                                                   \
  CHAIN int stencil_call_packs_void_s##ns(PARAMS) {                                   \
    GUARD();                                                                          \
    CALL(void, ns);                                                                   \
    return FN_box_results(h, (const uint64_t(*)[2])RESULTS, r);                       \
  }                                                                                   \
  CHAIN int stencil_call_packs_status_s##ns(PARAMS) {                                 \
    GUARD();                                                                          \
    int status = CALL(status, ns);                                                    \
    if (__builtin_expect(status != 0, 0)) return FN_propagate_status(h, status);      \
    return FN_box_results(h, (const uint64_t(*)[2])RESULTS, r);                       \
  }                                                                                   \
  CHAIN int stencil_call_outone_void_s##ns(PARAMS) {                                  \
    GUARD();                                                                          \
    CALL(void, ns);                                                                   \
    return FN_box_result(h, 0, RESULTS, r);                                           \
  }                                                                                   \
  CHAIN int stencil_call_outone_status_s##ns(PARAMS) {                                \
    GUARD();                                                                          \
    int status = CALL(status, ns);                                                    \
    if (__builtin_expect(status != 0, 0)) return FN_propagate_status(h, status);      \
    return FN_box_result(h, 0, RESULTS, r);                                           \
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
