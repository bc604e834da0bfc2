/*
 * The TVM FFI ABI at the release v0.1.13-post2 (apache/tvm-ffi tag v0.1.13-post2): v0.1.13's
 * (tvm_ffi_abi_v0_1_13.h), except for the facts restated here. Its exported C functions, global
 * functions, type indices and C layouts are v0.1.13's; what changed is the version and C++
 * layouts behind unchanged mangled names, so modules of the two cannot be told apart by their
 * imports. Header code no longer allocates objects through TVMFFIGetCustomAllocator, which the
 * library still exports (v0.1.13 modules import it): nothing for ffijit to change.
 *
 * Included by ffijit/c_api.h (as FFIJIT_TVM_FFI_ABI_HEADER) when FFIJIT_TVM_FFI_ABI selects this
 * revision; its identity is its row of cmake/tvm_ffi_revisions.txt. C99 and C++17.
 */
#ifndef FFIJIT_TVM_FFI_ABI_V0_1_13_POST2_H_
#define FFIJIT_TVM_FFI_ABI_V0_1_13_POST2_H_

#include "ffijit/tvm_ffi_abi_v0_1_13.h"

/* TVMFFIGetVersion reports 0.1.14. */
#undef TVM_FFI_VERSION_PATCH
#define TVM_FFI_VERSION_PATCH 14

/* Optional<T> of an ObjectRef-derived T, of ObjectPtr<T> and of Arc<T> is one nullable pointer
 * again (8 bytes): ModuleObj::GetFunction (virtual and exported) and
 * StructuralEqual::GetFirstMismatch return 8 bytes, AccessPathObj is 48 bytes (parent/step/depth
 * at 24/32/40), VisitErrorContextObj 40, and reflected Optional<ObjectRef> fields are 8 bytes.
 * Optional<int>, Optional<String> and Optional<Bytes> stay one TVMFFIAny. */
#undef FFIJIT_TVM_FFI_OPTIONAL_OBJECT_IS_ANY
#define FFIJIT_TVM_FFI_OPTIONAL_OBJECT_IS_ANY 0

#endif /* FFIJIT_TVM_FFI_ABI_V0_1_13_POST2_H_ */
