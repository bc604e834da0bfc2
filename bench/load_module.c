/*
 * The smallest module a compiler emits: one exported TVM FFI function. BM_ModuleLoad loads it
 * built against ffijit's c_api.h; tools/tvm_ffi_bench_compare.sh builds it with
 * FFIJIT_BENCH_TVM_FFI_HEADERS against TVM FFI's own, so one file is a module of both libraries.
 */
#ifdef FFIJIT_BENCH_TVM_FFI_HEADERS
#include <tvm/ffi/c_api.h>
#else
#include "ffijit/c_api.h"
#endif

__attribute__((visibility("default"))) int __tvm_ffi_add_one(void* self, const TVMFFIAny* args,
                                                             int32_t num_args, TVMFFIAny* result) {
  (void)self;
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add_one expects one int");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 + 1;
  return 0;
}
