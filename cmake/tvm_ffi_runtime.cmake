# The add-on build (FFIJIT_TVM_FFI_RUNTIME=<prefix>): ffijit over TVM FFI's own libtvm_ffi.so
# instead of a runtime of its own. The prefix is a TVM FFI install as `cmake --install` lays it
# out and as the apache-tvm-ffi wheel's `tvm_ffi/` folder holds it: include/tvm/ffi,
# include/dlpack and lib/libtvm_ffi.so. Checks the install and reads its version (the headers'
# TVM_FFI_VERSION_* and, when the build can run what it compiles, the library's
# TVMFFIGetVersion); tvm_ffi_revisions.cmake maps the version to a row of the revision table.
# Sets FFIJIT_TVM_FFI_RUNTIME_VERSION ("major.minor.patch"), FFIJIT_TVM_FFI_RUNTIME_INCLUDE_DIR and
# FFIJIT_TVM_FFI_RUNTIME_LIBRARY_DIR and the imported target ffijit_tvm_ffi (TVM FFI's library).
set(FFIJIT_TVM_FFI_RUNTIME "" CACHE PATH
    "A TVM FFI install (include/tvm/ffi, include/dlpack, lib/libtvm_ffi.so) to run over instead of ffijit's own runtime: the add-on build")
if(NOT FFIJIT_TVM_FFI_RUNTIME)
  return()
endif()
get_filename_component(_tvm_prefix "${FFIJIT_TVM_FFI_RUNTIME}" ABSOLUTE)
foreach(file include/tvm/ffi/c_api.h include/dlpack/dlpack.h lib/libtvm_ffi.so)
  if(NOT EXISTS "${_tvm_prefix}/${file}")
    message(FATAL_ERROR "FFIJIT_TVM_FFI_RUNTIME=${FFIJIT_TVM_FFI_RUNTIME}: no ${file} there; point "
                        "it at a TVM FFI install (the folder holding include/ and lib/, e.g. the "
                        "apache-tvm-ffi wheel's tvm_ffi/ folder)")
  endif()
endforeach()
file(STRINGS "${_tvm_prefix}/include/tvm/ffi/c_api.h" _tvm_version_lines
     REGEX "^#define TVM_FFI_VERSION_(MAJOR|MINOR|PATCH) ")
set(_tvm_version "")
foreach(part MAJOR MINOR PATCH)
  set(_value "")
  foreach(line IN LISTS _tvm_version_lines)
    if(line MATCHES "^#define TVM_FFI_VERSION_${part} ([0-9]+)")
      set(_value ${CMAKE_MATCH_1})
    endif()
  endforeach()
  if(_value STREQUAL "")
    message(FATAL_ERROR "FFIJIT_TVM_FFI_RUNTIME: ${_tvm_prefix}/include/tvm/ffi/c_api.h defines no "
                        "TVM_FFI_VERSION_${part}: a TVM FFI older than the releases the add-on "
                        "build supports")
  endif()
  list(APPEND _tvm_version ${_value})
endforeach()
list(JOIN _tvm_version "." FFIJIT_TVM_FFI_RUNTIME_VERSION)

# The library must be the headers' release: a header/library mismatch would misread every layout.
if(NOT CMAKE_CROSSCOMPILING)
  set(_probe ${CMAKE_BINARY_DIR}/CMakeFiles/tvm_ffi_version_probe.c)
  file(WRITE ${_probe} "#include <stdio.h>\n#include <tvm/ffi/c_api.h>\n"
       "int main(void) { TVMFFIVersion v; TVMFFIGetVersion(&v);\n"
       "  printf(\"%u.%u.%u\", (unsigned)v.major, (unsigned)v.minor, (unsigned)v.patch); return 0; }\n")
  try_run(_probe_run _probe_compile ${CMAKE_BINARY_DIR}/CMakeFiles/tvm_ffi_version_probe ${_probe}
          CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${_tvm_prefix}/include"
          LINK_LIBRARIES "${_tvm_prefix}/lib/libtvm_ffi.so"
          COMPILE_OUTPUT_VARIABLE _probe_compile_output RUN_OUTPUT_VARIABLE _probe_version)
  if(NOT _probe_compile OR NOT _probe_run EQUAL 0)
    message(FATAL_ERROR "FFIJIT_TVM_FFI_RUNTIME: cannot call TVMFFIGetVersion in "
                        "${_tvm_prefix}/lib/libtvm_ffi.so:\n${_probe_compile_output}")
  endif()
  if(NOT _probe_version STREQUAL FFIJIT_TVM_FFI_RUNTIME_VERSION)
    message(FATAL_ERROR "FFIJIT_TVM_FFI_RUNTIME: the headers in ${_tvm_prefix}/include are TVM FFI "
                        "${FFIJIT_TVM_FFI_RUNTIME_VERSION} but lib/libtvm_ffi.so reports "
                        "${_probe_version}: one install, please")
  endif()
endif()

set(FFIJIT_TVM_FFI_RUNTIME_INCLUDE_DIR ${_tvm_prefix}/include)
set(FFIJIT_TVM_FFI_RUNTIME_LIBRARY_DIR ${_tvm_prefix}/lib)
add_library(ffijit_tvm_ffi SHARED IMPORTED GLOBAL)
set_target_properties(ffijit_tvm_ffi PROPERTIES IMPORTED_LOCATION ${_tvm_prefix}/lib/libtvm_ffi.so
                      IMPORTED_NO_SONAME FALSE)
message(STATUS "ffijit: the add-on build, over TVM FFI ${FFIJIT_TVM_FFI_RUNTIME_VERSION} in ${_tvm_prefix}")
