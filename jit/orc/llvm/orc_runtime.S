// LLVM's ORC runtime archive (liborc_rt-<arch>.a of Debian's libclang-rt-19-dev), embedded in the
// library at build time so that a JIT'd module's platform needs no file beside the library.
// CMake passes the archive's path as FFIJIT_ORC_RUNTIME_ARCHIVE.
        .section .rodata.ffijit_orc_runtime,"a"
        .balign 16
        .globl  ffijit_orc_runtime_start
        .hidden ffijit_orc_runtime_start
ffijit_orc_runtime_start:
        .incbin FFIJIT_ORC_RUNTIME_ARCHIVE
        .globl  ffijit_orc_runtime_end
        .hidden ffijit_orc_runtime_end
ffijit_orc_runtime_end:
        .byte   0
#if defined(__aarch64__)
        .section .note.GNU-stack,"",%progbits
#else
        .section .note.GNU-stack,"",@progbits
#endif
