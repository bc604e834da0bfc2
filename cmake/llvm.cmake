# Which LLVM the JIT is built against, and the tools that must match it.
#
# FFIJIT_SUPPORTED_LLVM_VERSIONS is the one list of LLVM major versions ffijit builds with, in
# order of preference: the first is the default (19: docs/guide/07-tiering-and-caching.md, section
# 7.9, has the measurements). The choice, in order:
#   - FFIJIT_LLVM_VERSION=NN: LLVM NN (from LLVM_DIR if given, else /usr/lib/llvm-NN);
#   - LLVM_DIR alone: the LLVM found there;
#   - neither: the first of the list installed under /usr/lib/llvm-NN, else whatever LLVM CMake
#     finds on its own.
# Any other version is refused by name. Everything version-specific then follows the chosen LLVM:
# clang-NN compiles the stencils and the test and benchmark bitcode (which an older LLVM cannot
# read), LLVM's ORC runtime comes from its clang resource folder (libclang-rt-NN-dev), and
# jit/CMakeLists.txt compiles the workarounds of jit/orc/llvm_patches/ that version needs. Source
# differences live in jit/orc/llvm/llvm_compat.h alone.
set(FFIJIT_SUPPORTED_LLVM_VERSIONS 19 22)
set(FFIJIT_LLVM_VERSION "" CACHE STRING
    "LLVM major version to build the JIT with (one of ${FFIJIT_SUPPORTED_LLVM_VERSIONS}); empty: \
from LLVM_DIR, else the first of them installed")
string(REPLACE ";" ", " _ffijit_llvm_list "${FFIJIT_SUPPORTED_LLVM_VERSIONS}")

if(FFIJIT_LLVM_VERSION)
  if(NOT FFIJIT_LLVM_VERSION IN_LIST FFIJIT_SUPPORTED_LLVM_VERSIONS)
    message(FATAL_ERROR "ffijit: FFIJIT_LLVM_VERSION=${FFIJIT_LLVM_VERSION} is not supported; "
                        "ffijit builds with LLVM ${_ffijit_llvm_list}")
  endif()
  set(_ffijit_llvm_hint /usr/lib/llvm-${FFIJIT_LLVM_VERSION}/lib/cmake/llvm)
elseif(NOT LLVM_DIR)
  foreach(_version IN LISTS FFIJIT_SUPPORTED_LLVM_VERSIONS)
    if(EXISTS /usr/lib/llvm-${_version}/lib/cmake/llvm/LLVMConfig.cmake)
      set(_ffijit_llvm_hint /usr/lib/llvm-${_version}/lib/cmake/llvm)
      break()
    endif()
  endforeach()
endif()
# LLVM's version file accepts only an exact major.minor request, so ask for any version and check
# the major number here.
find_package(LLVM CONFIG HINTS ${_ffijit_llvm_hint})
if(NOT LLVM_FOUND)
  message(FATAL_ERROR "ffijit: no LLVM found; the JIT needs LLVM ${_ffijit_llvm_list} (e.g. "
                      "llvm-19-dev, or ./build.sh deps), or configure with -DFFIJIT_ENABLE_JIT=OFF")
endif()
if(NOT LLVM_VERSION_MAJOR IN_LIST FFIJIT_SUPPORTED_LLVM_VERSIONS)
  message(FATAL_ERROR "ffijit: LLVM ${LLVM_PACKAGE_VERSION} (${LLVM_DIR}) is not supported; "
                      "ffijit builds with LLVM ${_ffijit_llvm_list}")
endif()
if(FFIJIT_LLVM_VERSION AND NOT LLVM_VERSION_MAJOR EQUAL FFIJIT_LLVM_VERSION)
  message(FATAL_ERROR "ffijit: FFIJIT_LLVM_VERSION=${FFIJIT_LLVM_VERSION}, but LLVM_DIR "
                      "(${LLVM_DIR}) is LLVM ${LLVM_PACKAGE_VERSION}: unset one of them")
endif()
# The resolved version, for the rest of the build.
set(FFIJIT_LLVM_MAJOR ${LLVM_VERSION_MAJOR})
message(STATUS "ffijit: LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")

# The chosen LLVM's clang-NN and clang++-NN (on PATH, or in that LLVM's tools folder). Cached per
# version, so that a reconfigure with another LLVM does not keep the previous one's clang.
find_program(FFIJIT_LLVM${FFIJIT_LLVM_MAJOR}_CLANG NAMES clang-${FFIJIT_LLVM_MAJOR}
             HINTS ${LLVM_TOOLS_BINARY_DIR})
find_program(FFIJIT_LLVM${FFIJIT_LLVM_MAJOR}_CLANGXX NAMES clang++-${FFIJIT_LLVM_MAJOR}
             HINTS ${LLVM_TOOLS_BINARY_DIR})
set(FFIJIT_LLVM_CLANG ${FFIJIT_LLVM${FFIJIT_LLVM_MAJOR}_CLANG})
set(FFIJIT_LLVM_CLANGXX ${FFIJIT_LLVM${FFIJIT_LLVM_MAJOR}_CLANGXX})
