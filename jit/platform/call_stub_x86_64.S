// The interpreter's call stub for x86-64 System V: loads argument registers and stack from arrays
// (the frame layout of platform/abi.h, kX86_64SysV).
//
// void ffijit_call_stub(const void* target,        rdi
//                       const uint64_t* regs,      rsi  [0..5] rdi..r9, [6..13] xmm0..xmm7
//                       const uint64_t* stack,     rdx  stack argument slots, in order
//                       uint64_t num_stack,        rcx
//                       uint64_t* ret);            r8   out: rax, rdx, xmm0, xmm1
//
// Every register is loaded whether used or not (cheaper than branching). al = 8 bounds the SSE
// registers used, which makes variadic targets correct too.
#if defined(__x86_64__) && defined(__ELF__) && !defined(_WIN32)

// Loads every argument register from the array at r10 and calls r11.
.macro CALL_WITH_REGS
        movq    48(%r10), %xmm0
        movq    56(%r10), %xmm1
        movq    64(%r10), %xmm2
        movq    72(%r10), %xmm3
        movq    80(%r10), %xmm4
        movq    88(%r10), %xmm5
        movq    96(%r10), %xmm6
        movq    104(%r10), %xmm7
        movq    0(%r10), %rdi
        movq    8(%r10), %rsi
        movq    16(%r10), %rdx
        movq    24(%r10), %rcx
        movq    32(%r10), %r8
        movq    40(%r10), %r9
        movl    $8, %eax
        callq   *%r11
.endm

// Stores the return registers to the array at `out`.
.macro STORE_RETURN out
        movq    %rax, 0(\out)
        movq    %rdx, 8(\out)
        movq    %xmm0, 16(\out)
        movq    %xmm1, 24(\out)
.endm

        .text
        .globl  ffijit_call_stub
        .hidden ffijit_call_stub
        .type   ffijit_call_stub, @function
        .p2align 4
ffijit_call_stub:
        .cfi_startproc
        pushq   %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register %rbp
        pushq   %rbx
        pushq   %r12
        .cfi_offset %rbx, -24
        .cfi_offset %r12, -32
        movq    %r8, %r12               // ret survives the call in a callee-saved register
        movq    %rdi, %r11              // target
        movq    %rsi, %r10              // regs

        // Reserve num_stack slots, keeping rsp 16-byte aligned at the call (it is now, after
        // three pushes on top of the return address).
        leaq    15(,%rcx,8), %rax
        andq    $-16, %rax
        subq    %rax, %rsp
        xorl    %eax, %eax
1:      cmpq    %rcx, %rax
        jae     2f
        movq    (%rdx,%rax,8), %rbx
        movq    %rbx, (%rsp,%rax,8)
        incq    %rax
        jmp     1b
2:
        CALL_WITH_REGS

        STORE_RETURN %r12

        leaq    -16(%rbp), %rsp
        popq    %r12
        popq    %rbx
        popq    %rbp
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size   ffijit_call_stub, .-ffijit_call_stub

// void ffijit_call_stub_regs(const void* target,   rdi
//                            const uint64_t* regs, rsi  as above
//                            uint64_t* ret);       rdx  as above
// The same without stack arguments: the common case, with no copy loop and one saved register.
        .globl  ffijit_call_stub_regs
        .hidden ffijit_call_stub_regs
        .type   ffijit_call_stub_regs, @function
        .p2align 4
ffijit_call_stub_regs:
        .cfi_startproc
        pushq   %rbx                    // also aligns rsp to 16 for the call
        .cfi_def_cfa_offset 16
        .cfi_offset %rbx, -16
        movq    %rdx, %rbx
        movq    %rdi, %r11
        movq    %rsi, %r10
        CALL_WITH_REGS
        STORE_RETURN %rbx
        popq    %rbx
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size   ffijit_call_stub_regs, .-ffijit_call_stub_regs

#endif

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack,"",@progbits
#endif
