// The interpreter's call stub for Linux AArch64 (AAPCS64): loads argument registers and stack from
// arrays (the frame layout of platform/abi.h, kAarch64).
//
// void ffijit_call_stub(const void* target,        x0
//                       const uint64_t* regs,      x1  [0..7] x0..x7, [8..15] d0..d7
//                       const uint64_t* stack,     x2  stack argument slots, in order
//                       uint64_t num_stack,        x3
//                       uint64_t* ret);            x4  out: x0, x1, d0, d1
//
// Every register is loaded whether used or not (cheaper than branching). A d register load sets
// the whole v register's low 64 bits, so f32 (s), f16 and bf16 (h) values, kept in the low bits
// of their frame word, arrive in the register's s or h view. Variadic targets need nothing more
// on Linux (the variadic part travels like any other argument).
#if defined(__aarch64__) && defined(__linux__)

// Loads every argument register from the array at x10, calls x9, and stores the return
// registers to the array at x19.
.macro CALL_WITH_REGS
        ldp     d0, d1, [x10, #64]
        ldp     d2, d3, [x10, #80]
        ldp     d4, d5, [x10, #96]
        ldp     d6, d7, [x10, #112]
        ldp     x0, x1, [x10, #0]
        ldp     x2, x3, [x10, #16]
        ldp     x4, x5, [x10, #32]
        ldp     x6, x7, [x10, #48]
        blr     x9
        stp     x0, x1, [x19, #0]
        stp     d0, d1, [x19, #16]
.endm

        .text
        .globl  ffijit_call_stub
        .hidden ffijit_call_stub
        .type   ffijit_call_stub, %function
        .p2align 4
ffijit_call_stub:
        .cfi_startproc
        stp     x29, x30, [sp, #-32]!
        .cfi_def_cfa_offset 32
        .cfi_offset x29, -32
        .cfi_offset x30, -24
        mov     x29, sp
        .cfi_def_cfa_register x29
        str     x19, [sp, #16]
        .cfi_offset x19, -16
        mov     x19, x4                 // ret survives the call in a callee-saved register
        mov     x9, x0                  // target
        mov     x10, x1                 // regs

        // Reserve num_stack slots rounded up to 16 bytes (sp stays 16-byte aligned), copy them.
        add     x11, x3, #1
        and     x11, x11, #~1
        lsl     x11, x11, #3
        sub     sp, sp, x11
        mov     x12, #0
1:      cmp     x12, x3
        b.hs    2f
        ldr     x13, [x2, x12, lsl #3]
        str     x13, [sp, x12, lsl #3]
        add     x12, x12, #1
        b       1b
2:
        CALL_WITH_REGS


        mov     sp, x29
        ldr     x19, [sp, #16]
        ldp     x29, x30, [sp], #32
        .cfi_def_cfa sp, 0
        .cfi_restore x19
        .cfi_restore x29
        .cfi_restore x30
        ret
        .cfi_endproc
        .size   ffijit_call_stub, .-ffijit_call_stub

// void ffijit_call_stub_regs(const void* target,   x0
//                            const uint64_t* regs, x1  as above
//                            uint64_t* ret);       x2  as above
// The same without stack arguments: the common case, with no copy loop.
        .globl  ffijit_call_stub_regs
        .hidden ffijit_call_stub_regs
        .type   ffijit_call_stub_regs, %function
        .p2align 4
ffijit_call_stub_regs:
        .cfi_startproc
        stp     x29, x30, [sp, #-32]!
        .cfi_def_cfa_offset 32
        .cfi_offset x29, -32
        .cfi_offset x30, -24
        mov     x29, sp
        str     x19, [sp, #16]
        .cfi_offset x19, -16
        mov     x19, x2
        mov     x9, x0
        mov     x10, x1
        CALL_WITH_REGS
        ldr     x19, [sp, #16]
        ldp     x29, x30, [sp], #32
        .cfi_def_cfa_offset 0
        .cfi_restore x19
        .cfi_restore x29
        .cfi_restore x30
        ret
        .cfi_endproc
        .size   ffijit_call_stub_regs, .-ffijit_call_stub_regs

#endif

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack,"",%progbits
#endif
