/* The thunk chain's convention, shared by the stencils that make it (stencils.c) and those that
 * enter it (host_stencils.c): the packed value's layout, the chain's preserve_none parameters and
 * where they sit, the frame's layout, the junk a stencil passes in registers nobody set, and how
 * the native is called. Freestanding C (clang-19, stencils only). */
#ifndef FFIJIT_JIT_STENCILS_GENERATE_STENCIL_CHAIN_H_
#define FFIJIT_JIT_STENCILS_GENERATE_STENCIL_CHAIN_H_

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
// A value a stencil does not convert fails at once: a conditional branch to the fail stencil (on
// x86-64 a conditional jump straight to it), which hands the call to the interpreter; that starts
// over and raises the first error (a stencil that raises, stencil_resolve, runs after every earlier
// check passed). A branch never taken costs less than noting the value in a register every stencil
// passes on and testing it before the call. The entry's argument count is not needed past the entry
// (it is the arity, a hole). `s`: the native's stack arguments, an array in the entry's frame.
//
// The parameters' order places them in registers (clang-19's preserve_none takes r12, r13, r14,
// r15, rdi, rsi, rdx, rcx, r8, r9, r11, rax on x86-64; x20..x28, then x0.. on AArch64). On x86-64
// the native parameters g0..g5 sit in the C ABI's argument registers; `a` and `h` in r11 and rax,
// which the C ABI lets a function change (h is read for the call, which needs no copy of it after);
// `r` and `s` in r12 and r13, which the native keeps, so that the result is stored through r
// after the call without a copy; and two parameters nothing sets, x2 and x3, hold r14 and r15:
// every stencil passes all four on unchanged, so no stencil changes r12..r15, and the entry saves
// only what it sets there and rbx (see the entries).
#if defined(__x86_64__)
#define PARAMS \
  Any *r, uint64_t *s, uint64_t x2, uint64_t x3, GPARAMS, const Any *a, void *h, FPARAMS
#define ARGS r, s, x2, x3, GARGS, a, h, FARGS
#else
#define PARAMS void *h, const Any *a, Any *r, uint64_t *s, GPARAMS, FPARAMS
#define ARGS h, a, r, s, GARGS, FARGS
#endif
#if defined(__x86_64__)
// A stencil written in assembly (an entry or an epilogue, where C cannot say what the chain
// needs): its own section, named as the extractor expects; its holes are undefined symbols, as in
// C.
#define STR2(x) #x
#define STR(x) STR2(x)
#define ASM_STENCIL(name, body)                            \
  __asm__(".section .text.stencil_" #name                  \
          ",\"ax\",@progbits\n"                            \
          ".globl stencil_" #name "\n.type stencil_" #name \
          ",@function\n"                                   \
          "stencil_" #name ":\n" body ".size stencil_" #name ",.-stencil_" #name "\n.text\n");
#endif

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
// The same without a cost: on x86-64 an empty asm claims whatever the parameter registers hold
// (a nondeterministic value costs a zeroing instruction per register there). CLAIM_JUNK declares
// them; CLAIMED_GARGS, CLAIMED_FARGS and CLAIMED_X (x2, x3) pass them.
#if defined(__x86_64__)
#define CLAIM_JUNK                                                                                \
  register uint64_t j0 __asm__("rdi"), j1 __asm__("rsi"), j2 __asm__("rdx"), j3 __asm__("rcx"),   \
      j4 __asm__("r8"), j5 __asm__("r9"), jx2 __asm__("r14"), jx3 __asm__("r15");                 \
  register double k0 __asm__("xmm0"), k1 __asm__("xmm1"), k2 __asm__("xmm2"), k3 __asm__("xmm3"), \
      k4 __asm__("xmm4"), k5 __asm__("xmm5"), k6 __asm__("xmm6"), k7 __asm__("xmm7");             \
  __asm__(""                                                                                      \
          : "=r"(j0), "=r"(j1), "=r"(j2), "=r"(j3), "=r"(j4), "=r"(j5), "=r"(jx2), "=r"(jx3),     \
            "=x"(k0), "=x"(k1), "=x"(k2), "=x"(k3), "=x"(k4), "=x"(k5), "=x"(k6), "=x"(k7));
#define CLAIMED_GARGS j0, j1, j2, j3, j4, j5
#define CLAIMED_FARGS k0, k1, k2, k3, k4, k5, k6, k7
#define CLAIMED_X jx2, jx3
#else
#define CLAIM_JUNK
#define CLAIMED_GARGS JUNK_GARGS
#define CLAIMED_FARGS JUNK_FARGS
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

// The native, called with every parameter register and `ns` stack slots, its return type `type`
// named by `kind` (one call stencil per kind and count).
// The native is called through the handle, BoundFunction::target at handle + 40 (asserted in
// bound_function.h), as the LLVM thunks call it: one indirect call, where a direct call to a
// native out of rel32 range would go through a veneer's jump as well.
#define TARGET_AT 40
#define TARGET(kind, ns) target_##kind##_s##ns
#define DECLARE(type, kind, ns) typedef type (*TARGET(kind, ns))(GTYPES, FTYPES STYPES_##ns);
#define CALL(kind, ns) \
  (*(const TARGET(kind, ns)*)((const char*)h + TARGET_AT))(GARGS, FARGS STACK_##ns)

// The call stencil's end: the status to the epilogue (in g0; on x86-64 in `h`'s register, rax,
// where the C ABI returns it). Every other parameter register is dead after the native's call: on
// x86-64 an empty asm claims whatever they hold (a nondeterministic value costs a zeroing
// instruction per register, and the values they held before the call would have to be saved across
// it).
#if defined(__x86_64__)
#define FINISH(status)                                                                            \
  {                                                                                               \
    register uint64_t j0 __asm__("rdi"), j1 __asm__("rsi"), j2 __asm__("rdx"), j3 __asm__("rcx"), \
        j4 __asm__("r8"), j5 __asm__("r9"), ja __asm__("r11");                                    \
    register double k0 __asm__("xmm0"), k1 __asm__("xmm1"), k2 __asm__("xmm2"),                   \
        k3 __asm__("xmm3"), k4 __asm__("xmm4"), k5 __asm__("xmm5"), k6 __asm__("xmm6"),           \
        k7 __asm__("xmm7");                                                                       \
    uintptr_t st = (uintptr_t)(uint32_t)(status);                                                 \
    __asm__ volatile(""                                                                           \
                     : "=r"(j0), "=r"(j1), "=r"(j2), "=r"(j3), "=r"(j4), "=r"(j5), "=r"(ja),      \
                       "=x"(k0), "=x"(k1), "=x"(k2), "=x"(k3), "=x"(k4), "=x"(k5), "=x"(k6),      \
                       "=x"(k7));                                                                 \
    __attribute__((musttail)) return CONT_next(r, s, x2, x3, j0, j1, j2, j3, j4, j5,              \
                                               (const Any*)ja, (void*)st, k0, k1, k2, k3, k4, k5, \
                                               k6, k7);                                           \
  }
#else
#define FINISH(status)                                                                           \
  {                                                                                              \
    __attribute__((musttail)) return CONT_next(h, a, r, s, (uint64_t)(uint32_t)(status), JUNK_G, \
                                               JUNK_G, JUNK_G, JUNK_G, JUNK_G, JUNK_G, JUNK_G,   \
                                               JUNK_FARGS);                                      \
  }
#endif
// What the stage after the call stencil (the epilogue) reads as the status FINISH handed on.
#if defined(__x86_64__)
#define FINISHED_STATUS ((int)(uint32_t)(uintptr_t)h)
#else
#define FINISHED_STATUS ((int)g0)
#endif

#endif /* FFIJIT_JIT_STENCILS_GENERATE_STENCIL_CHAIN_H_ */
