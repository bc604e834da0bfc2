/* The thunk chain's convention, shared by the stencils that make it (stencils.c) and those that
 * call into it (host_stencils.c): the packed value's layout, the chain's preserve_none parameters
 * (the handle, the packed arguments, the `bad` note, the result, every native parameter register,
 * the frame), the frame's layout, and the junk an entry passes in registers nobody set.
 * Freestanding C (clang-19, stencils only). */
#ifndef FFIJIT_JIT_STENCILS_STENCIL_CHAIN_H_
#define FFIJIT_JIT_STENCILS_STENCIL_CHAIN_H_

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
#define NGPR 6
#elif defined(__aarch64__)
#define NGPR 8
#else
#error "stencils are built for x86-64 and AArch64 only"
#endif
#define NSSE 8

typedef struct Any {
  int32_t type_index;
  uint32_t small_len;
  union {
    int64_t i;
    uint64_t u;
    double d;
    void* p;
    const char* s;
  };
} Any;

#define CHAIN __attribute__((preserve_none))
#if NGPR == 6
#define GPARAMS uint64_t g0, uint64_t g1, uint64_t g2, uint64_t g3, uint64_t g4, uint64_t g5
#define GARGS g0, g1, g2, g3, g4, g5
#define GTYPES uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t
#else
#define GPARAMS                                                                              \
  uint64_t g0, uint64_t g1, uint64_t g2, uint64_t g3, uint64_t g4, uint64_t g5, uint64_t g6, \
      uint64_t g7
#define GARGS g0, g1, g2, g3, g4, g5, g6, g7
#define GTYPES uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t
#endif
#define FPARAMS \
  double f0, double f1, double f2, double f3, double f4, double f5, double f6, double f7
#define FARGS f0, f1, f2, f3, f4, f5, f6, f7
#define FTYPES double, double, double, double, double, double, double, double
// `bad`: nonzero once a stencil has seen a value it does not convert. The scalar stencils only note
// it (their loads are safe whatever the tag) and go on without a branch; the call stencil and any
// stencil that must dereference or raise check it first and hand the call to the interpreter,
// which starts over and raises the first error. The entry's argument count is not needed past the
// entry (it is the arity, a hole).
// `s`: the native's stack arguments, an array in the entry's frame (last, so that on x86-64 the
// native parameters g0..g5 sit in the C ABI's argument registers already).
#define PARAMS void *h, const Any *a, int32_t bad, Any *r, GPARAMS, FPARAMS, uint64_t *s
#define ARGS h, a, bad, r, GARGS, FARGS, s
// Stack slots a thunk may fill, and results it may take through out-pointers (more: the LLVM
// tiers). The entry's frame holds both: the stack slots, then one 16-byte buffer per result.
#define MAX_STACK 8
#define MAX_RESULTS 8
#define RESULTS (s + MAX_STACK)
// The caller's argument array, kept while a structure element stands in for it (stencil_resolve).
#define SAVED_ARGS (MAX_STACK + 2 * MAX_RESULTS)
#define FRAME_WORDS (SAVED_ARGS + 1)

// Whatever the registers hold: a parameter register nobody set is never read by the native.
#define JUNK_G __builtin_nondeterministic_value((uint64_t)0)
#define JUNK_F __builtin_nondeterministic_value(0.0)
#if NGPR == 6
#define JUNK_GARGS JUNK_G, JUNK_G, JUNK_G, JUNK_G, JUNK_G, JUNK_G
#else
#define JUNK_GARGS JUNK_G, JUNK_G, JUNK_G, JUNK_G, JUNK_G, JUNK_G, JUNK_G, JUNK_G
#endif
#define JUNK_FARGS JUNK_F, JUNK_F, JUNK_F, JUNK_F, JUNK_F, JUNK_F, JUNK_F, JUNK_F
#if defined(__x86_64__)
// On x86-64 the parameter registers g0..g5 and f0..f7 are the C ABI's argument registers: an empty
// asm claims whatever they hold as the junk, where a nondeterministic value costs a zeroing
// instruction per register on every call.
#undef JUNK_GARGS
#undef JUNK_FARGS
#define JUNK_GARGS j0, j1, j2, j3, j4, j5
#define JUNK_FARGS k0, k1, k2, k3, k4, k5, k6, k7
#define DECLARE_JUNK                                                                              \
  register uint64_t j0 __asm__("rdi"), j1 __asm__("rsi"), j2 __asm__("rdx"), j3 __asm__("rcx"),   \
      j4 __asm__("r8"), j5 __asm__("r9");                                                         \
  register double k0 __asm__("xmm0"), k1 __asm__("xmm1"), k2 __asm__("xmm2"), k3 __asm__("xmm3"), \
      k4 __asm__("xmm4"), k5 __asm__("xmm5"), k6 __asm__("xmm6"), k7 __asm__("xmm7");             \
  __asm__(""                                                                                      \
          : "=r"(j0), "=r"(j1), "=r"(j2), "=r"(j3), "=r"(j4), "=r"(j5), "=x"(k0), "=x"(k1),       \
            "=x"(k2), "=x"(k3), "=x"(k4), "=x"(k5), "=x"(k6), "=x"(k7));
#else
#define DECLARE_JUNK
#endif

// The stack arguments passed after every register parameter: the C ABI puts them on the stack in
// order, one 8-byte slot each (both platforms).
#define STACK_0
#define STACK_1 , s[0]
#define STACK_2 STACK_1, s[1]
#define STACK_3 STACK_2, s[2]
#define STACK_4 STACK_3, s[3]
#define STACK_5 STACK_4, s[4]
#define STACK_6 STACK_5, s[5]
#define STACK_7 STACK_6, s[6]
#define STACK_8 STACK_7, s[7]
#define STYPES_0
#define STYPES_1 , uint64_t
#define STYPES_2 STYPES_1, uint64_t
#define STYPES_3 STYPES_2, uint64_t
#define STYPES_4 STYPES_3, uint64_t
#define STYPES_5 STYPES_4, uint64_t
#define STYPES_6 STYPES_5, uint64_t
#define STYPES_7 STYPES_6, uint64_t
#define STYPES_8 STYPES_7, uint64_t

// The native, called with every parameter register and `ns` stack slots: FN_target_<kind>_s<ns>,
// `kind` naming its return type `type` (one call stencil per kind and count).
#define TARGET(kind, ns) FN_target_##kind##_s##ns
#define DECLARE(type, kind, ns) extern type TARGET(kind, ns)(GTYPES, FTYPES STYPES_##ns);
#define CALL(kind, ns) TARGET(kind, ns)(GARGS, FARGS STACK_##ns)

#endif /* FFIJIT_JIT_STENCILS_STENCIL_CHAIN_H_ */
