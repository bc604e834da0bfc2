# Reads cmake/tvm_ffi_revisions.txt (the table of TVM FFI revisions), checks FFIJIT_TVM_FFI_ABI
# against it and writes ffijit/tvm_ffi_abi_config.h: the C id of every revision, the selected one,
# its identity and the header c_api.h includes. Sets FFIJIT_TVM_FFI_ABI (cache, default from the
# table), FFIJIT_TVM_FFI_REVISIONS (all names), FFIJIT_TVM_FFI_ABI_BASE (the base revision of the
# selected one, or empty) and FFIJIT_TVM_FFI_ABI_CONFIG_CONTENT (the generated header's text).
set(FFIJIT_TVM_FFI_REVISION_TABLE ${CMAKE_CURRENT_LIST_DIR}/tvm_ffi_revisions.txt)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${FFIJIT_TVM_FFI_REVISION_TABLE})
file(STRINGS ${FFIJIT_TVM_FFI_REVISION_TABLE} _rev_lines REGEX "^[^#]")
set(FFIJIT_TVM_FFI_REVISIONS "")
set(_rev_default "")
set(_rev_number 0)
foreach(line IN LISTS _rev_lines)
  string(REGEX REPLACE "[ \t]+" ";" fields "${line}")
  list(LENGTH fields count)
  if(NOT count EQUAL 10)
    message(FATAL_ERROR "tvm_ffi_revisions.txt: a row needs 10 columns, got ${count}: '${line}'")
  endif()
  list(GET fields 0 name)
  math(EXPR _rev_number "${_rev_number} + 1")
  list(APPEND FFIJIT_TVM_FFI_REVISIONS ${name})
  set(_rev_${name}_number ${_rev_number})
  set(i 0)
  foreach(column id tag commit version header base c_api lane default)
    math(EXPR i "${i} + 1")
    list(GET fields ${i} value)
    set(_rev_${name}_${column} ${value})
  endforeach()
  if(_rev_${name}_default STREQUAL "yes")
    if(_rev_default)
      message(FATAL_ERROR "tvm_ffi_revisions.txt: both ${_rev_default} and ${name} are the default")
    endif()
    set(_rev_default ${name})
  endif()
endforeach()
if(NOT _rev_default)
  message(FATAL_ERROR "tvm_ffi_revisions.txt: no row is the default")
endif()

list(JOIN FFIJIT_TVM_FFI_REVISIONS ", " _rev_names)
# The add-on build implements no runtime: its revision is the one of the TVM FFI it runs over.
if(FFIJIT_TVM_FFI_RUNTIME_VERSION)
  set(_rev_install "")
  set(_rev_versions "")
  foreach(name IN LISTS FFIJIT_TVM_FFI_REVISIONS)
    list(APPEND _rev_versions "${_rev_${name}_version} (${name})")
    if(_rev_${name}_version STREQUAL FFIJIT_TVM_FFI_RUNTIME_VERSION)
      set(_rev_install ${name})
    endif()
  endforeach()
  if(NOT _rev_install)
    list(JOIN _rev_versions ", " _rev_versions)
    message(FATAL_ERROR "FFIJIT_TVM_FFI_RUNTIME: TVM FFI ${FFIJIT_TVM_FFI_RUNTIME_VERSION} is not a "
                        "release ffijit knows; it knows ${_rev_versions} (cmake/tvm_ffi_revisions.txt)")
  endif()
  if(DEFINED CACHE{FFIJIT_TVM_FFI_ABI} AND NOT FFIJIT_TVM_FFI_ABI STREQUAL _rev_install)
    message(FATAL_ERROR "FFIJIT_TVM_FFI_ABI=${FFIJIT_TVM_FFI_ABI}, but the TVM FFI at "
                        "FFIJIT_TVM_FFI_RUNTIME is ${FFIJIT_TVM_FFI_RUNTIME_VERSION}, revision "
                        "${_rev_install}: leave FFIJIT_TVM_FFI_ABI unset in the add-on build")
  endif()
  set(_rev_default ${_rev_install})
endif()
set(FFIJIT_TVM_FFI_ABI ${_rev_default}
    CACHE STRING "TVM FFI ABI revision to implement (one of ${_rev_names})")
set_property(CACHE FFIJIT_TVM_FFI_ABI PROPERTY STRINGS ${FFIJIT_TVM_FFI_REVISIONS})
if(NOT FFIJIT_TVM_FFI_ABI IN_LIST FFIJIT_TVM_FFI_REVISIONS)
  message(FATAL_ERROR "FFIJIT_TVM_FFI_ABI=${FFIJIT_TVM_FFI_ABI}: ffijit knows ${_rev_names} "
                      "(cmake/tvm_ffi_revisions.txt)")
endif()
set(_sel ${FFIJIT_TVM_FFI_ABI})
set(FFIJIT_TVM_FFI_ABI_BASE "")
if(NOT _rev_${_sel}_base STREQUAL "-")
  set(FFIJIT_TVM_FFI_ABI_BASE ${_rev_${_sel}_base})
endif()

# The generated header: every revision's id, and the selected revision's identity and header.
set(_c "")
foreach(name IN LISTS FFIJIT_TVM_FFI_REVISIONS)
  string(APPEND _c "#define FFIJIT_TVM_FFI_ABI_${_rev_${name}_id} ${_rev_${name}_number}\n")
endforeach()
string(APPEND _c "#ifndef FFIJIT_TVM_FFI_ABI\n"
                 "#define FFIJIT_TVM_FFI_ABI FFIJIT_TVM_FFI_ABI_${_rev_${_sel}_id}\n#endif\n")
# Per C API set: the revisions that export it, for messages about a module built for one of them.
set(_c_apis "")
foreach(name IN LISTS FFIJIT_TVM_FFI_REVISIONS)
  set(api ${_rev_${name}_c_api})
  if(NOT api IN_LIST _c_apis)
    list(APPEND _c_apis ${api})
    set(_api_${api}_names "")
  endif()
  list(APPEND _api_${api}_names ${name})
endforeach()
foreach(api IN LISTS _c_apis)
  list(JOIN _api_${api}_names " or " names)
  string(APPEND _c "/* The revisions whose libtvm_ffi exports the C function set ${api}. */\n"
                   "#define FFIJIT_TVM_FFI_C_API_${api}_REVISIONS \"${names}\"\n")
endforeach()
set(_chain "#if")
foreach(name IN LISTS FFIJIT_TVM_FFI_REVISIONS)
  set(tag ${_rev_${name}_tag})
  if(tag STREQUAL "-")
    set(tag "")
  endif()
  string(APPEND _c
         "${_chain} FFIJIT_TVM_FFI_ABI == FFIJIT_TVM_FFI_ABI_${_rev_${name}_id}\n"
         "#define FFIJIT_TVM_FFI_ABI_NAME \"${name}\"\n"
         "#define FFIJIT_TVM_FFI_ABI_TAG \"${tag}\"\n"
         "#define FFIJIT_TVM_FFI_ABI_COMMIT \"${_rev_${name}_commit}\"\n"
         "#define FFIJIT_TVM_FFI_ABI_VERSION_TEXT \"${_rev_${name}_version}\"\n"
         "#define FFIJIT_TVM_FFI_ABI_HEADER \"ffijit/${_rev_${name}_header}\"\n")
  set(_chain "#elif")
endforeach()
string(APPEND _c "#else\n#error \"FFIJIT_TVM_FFI_ABI names no TVM FFI revision this ffijit knows\"\n"
                 "#endif\n")
set(FFIJIT_TVM_FFI_ABI_CONFIG_CONTENT "${_c}")
