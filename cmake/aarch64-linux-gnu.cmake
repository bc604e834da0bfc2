# Toolchain for the AArch64 lane: Debian's cross compiler, with the arm64 packages of ffijit's
# dependencies unpacked into a sysroot (FFIJIT_AARCH64_SYSROOT; `./build.sh aarch64` makes it).
# Tests run under qemu-aarch64-static through CMAKE_CROSSCOMPILING_EMULATOR.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_ASM_COMPILER aarch64-linux-gnu-gcc)

if(NOT FFIJIT_AARCH64_SYSROOT)
  set(FFIJIT_AARCH64_SYSROOT "$ENV{FFIJIT_AARCH64_SYSROOT}")
endif()
if(NOT IS_DIRECTORY "${FFIJIT_AARCH64_SYSROOT}")
  message(FATAL_ERROR "FFIJIT_AARCH64_SYSROOT='${FFIJIT_AARCH64_SYSROOT}' is not a directory: "
                      "run ./build.sh aarch64, which unpacks the arm64 packages there")
endif()
# try_compile projects re-read this file; pass the sysroot on to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES FFIJIT_AARCH64_SYSROOT)

set(CMAKE_FIND_ROOT_PATH "${FFIJIT_AARCH64_SYSROOT}" /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# The linker does not look in the sysroot for the libraries libLLVM itself needs (libffi, z3, ...).
set(_ffijit_a64_libdirs "${FFIJIT_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu"
                        "${FFIJIT_AARCH64_SYSROOT}/lib/aarch64-linux-gnu")
foreach(dir IN LISTS _ffijit_a64_libdirs)
  string(APPEND CMAKE_EXE_LINKER_FLAGS_INIT " -Wl,-rpath-link,${dir}")
  string(APPEND CMAKE_SHARED_LINKER_FLAGS_INIT " -Wl,-rpath-link,${dir}")
endforeach()

# libLLVM carries its own RUNPATH, which governs its dependencies, so the emulator gets the
# sysroot's library directories through LD_LIBRARY_PATH rather than an rpath. qemu-user cannot
# execute a foreign binary from inside the guest (no binfmt hand-off), so death tests that would
# re-run the test binary fork instead (FFIJIT_TEST_FORK_DEATH_TESTS, read by those tests). The
# emulator's own translation cache grows with every new code address the guest runs, so the
# guest's resident set measures the emulator too (FFIJIT_TEST_UNDER_EMULATOR, read by the leak test).
list(JOIN _ffijit_a64_libdirs ":" _ffijit_a64_ld_path)
# For a test that needs its own LD_LIBRARY_PATH in front of the emulator's (tests/runtime/modules).
set(FFIJIT_EMULATOR_LIBRARY_PATH "${_ffijit_a64_ld_path}")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L /usr/aarch64-linux-gnu
                                  -E LD_LIBRARY_PATH=${_ffijit_a64_ld_path}
                                  -E FFIJIT_TEST_FORK_DEATH_TESTS=1 -E FFIJIT_TEST_UNDER_EMULATOR=1)
