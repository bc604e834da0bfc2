/*
 * A library carrying a `__tvm_ffi__library_bin` blob: the import tree and the modules to build.
 * The blob's contents depend on the BIN_CASE macro, so one source yields the valid case and
 * each malformed one.
 *   BIN_CASE 0: modules {_lib, "ffijit_test" "payload"}, module 0 imports module 1 (valid)
 *   BIN_CASE 1: the child-index vector claims far more entries than the blob holds
 *   BIN_CASE 2: a child index out of range
 *   BIN_CASE 3: the byte count runs past the end of the symbol
 *   BIN_CASE 4: modules 0 and 1 import each other (a cycle)
 *   BIN_CASE 5: a module kind whose loader is not registered
 */
#include <stdint.h>

#include "ffijit/c_api.h"

#define EXPORT __attribute__((visibility("default")))
#define BYTE(v, i) (char)((((uint64_t)(v)) >> (8 * (i))) & 0xff)
#define U64(v) \
  BYTE(v, 0), BYTE(v, 1), BYTE(v, 2), BYTE(v, 3), BYTE(v, 4), BYTE(v, 5), BYTE(v, 6), BYTE(v, 7)

#ifndef BIN_CASE
#define BIN_CASE 0
#endif

#if BIN_CASE == 4
#define CHILD_COUNT 2
#define INDPTR U64(0), U64(1), U64(2)
#define CHILDREN U64(1), U64(0)
#else
#define CHILD_COUNT 1
#define INDPTR U64(0), U64(1), U64(1)
#if BIN_CASE == 2
#define CHILDREN U64(7)
#else
#define CHILDREN U64(1)
#endif
#endif

#if BIN_CASE == 5
#define SECOND_KIND U64(12), 'n', 'o', '_', 's', 'u', 'c', 'h', '_', 'k', 'i', 'n', 'd'
#else
#define SECOND_KIND U64(11), 'f', 'f', 'i', 'j', 'i', 't', '_', 't', 'e', 's', 't'
#endif

#define BODY                                                                                   \
  U64(3), INDPTR, U64(BIN_CASE == 1 ? 1000000 : CHILD_COUNT), CHILDREN, U64(4), '_', 'l', 'i', \
      'b', SECOND_KIND, U64(7), 'p', 'a', 'y', 'l', 'o', 'a', 'd'

static const char kBody[] = {BODY};

EXPORT const char __tvm_ffi__library_bin[] = {
    U64(BIN_CASE == 3 ? sizeof(kBody) + 100 : sizeof(kBody)), BODY};

EXPORT void* __tvm_ffi__library_ctx = NULL;

/* ctx_is_set() -> bool: whether the loader published this library's module. */
EXPORT int __tvm_ffi_ctx_is_set(void* self, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  result->type_index = kTVMFFIBool;
  result->zero_padding = 0;
  result->v_int64 = __tvm_ffi__library_ctx != NULL;
  return 0;
}
