// CallWithCanaries (x86-64): calls a C-ABI function of four integer arguments with rbx, rbp and
// r12..r15 set to known values, and stores what those registers hold after it, so that a test can
// check code that saves and restores them by hand (the stencil tier's assembly entries and
// epilogues) on every way out.
#ifndef FFIJIT_TESTS_REGISTER_CANARIES_H_
#define FFIJIT_TESTS_REGISTER_CANARIES_H_

#include <cstdint>

#if defined(__x86_64__)
#define FFIJIT_CANARY_RBX 0x5a5a0000000000b1
#define FFIJIT_CANARY_RBP 0x5a5a0000000000b2
#define FFIJIT_CANARY_R12 0x5a5a0000000000c1
#define FFIJIT_CANARY_R13 0x5a5a0000000000c2
#define FFIJIT_CANARY_R14 0x5a5a0000000000c3
#define FFIJIT_CANARY_R15 0x5a5a0000000000c4
#define FFIJIT_CANARY_STR2(x) #x
#define FFIJIT_CANARY_STR(x) FFIJIT_CANARY_STR2(x)

namespace ffijit_tests {

// rbx, rbp, r12, r13, r14, r15: what CallWithCanaries sets and what `out` must hold after it.
constexpr uint64_t kRegisterCanaries[6] = {FFIJIT_CANARY_RBX, FFIJIT_CANARY_RBP, FFIJIT_CANARY_R12,
                                           FFIJIT_CANARY_R13, FFIJIT_CANARY_R14, FFIJIT_CANARY_R15};

// Returns fn(a0, a1, a2, a3)'s rax; out[0..5] gets rbx, rbp, r12..r15 as fn left them.
__attribute__((naked, noinline)) static inline uint64_t CallWithCanaries(
    const void* /*fn*/, uint64_t /*a0*/, uint64_t /*a1*/, uint64_t /*a2*/, uint64_t /*a3*/,
    uint64_t* /*out*/) {
  __asm__(
      "push %rbp\n push %rbx\n push %r12\n push %r13\n push %r14\n push %r15\n"
      "push %r9\n"  // out; seven pushes leave the stack 16-byte aligned for the call
      "mov %rdi, %rax\n mov %rsi, %rdi\n mov %rdx, %rsi\n mov %rcx, %rdx\n mov %r8, %rcx\n"
      "movabs $" FFIJIT_CANARY_STR(FFIJIT_CANARY_RBX) ", %rbx\n"
      "movabs $" FFIJIT_CANARY_STR(FFIJIT_CANARY_RBP) ", %rbp\n"
      "movabs $" FFIJIT_CANARY_STR(FFIJIT_CANARY_R12) ", %r12\n"
      "movabs $" FFIJIT_CANARY_STR(FFIJIT_CANARY_R13) ", %r13\n"
      "movabs $" FFIJIT_CANARY_STR(FFIJIT_CANARY_R14) ", %r14\n"
      "movabs $" FFIJIT_CANARY_STR(FFIJIT_CANARY_R15) ", %r15\n"
      "call *%rax\n"
      "pop %r9\n"
      "mov %rbx, 0(%r9)\n mov %rbp, 8(%r9)\n mov %r12, 16(%r9)\n mov %r13, 24(%r9)\n"
      "mov %r14, 32(%r9)\n mov %r15, 40(%r9)\n"
      "pop %r15\n pop %r14\n pop %r13\n pop %r12\n pop %rbx\n pop %rbp\n ret\n");
}

}  // namespace ffijit_tests

#endif  // __x86_64__
#endif  // FFIJIT_TESTS_REGISTER_CANARIES_H_
