/*
 * The shared-library module tools/tvm_ffi_bench_compare.sh loads: one exported TVM FFI function
 * compiled against TVM FFI's own c_api.h, so the same file is a module of both libraries.
 */
#include <tvm/ffi/c_api.h>

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
