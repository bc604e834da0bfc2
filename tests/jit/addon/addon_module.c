/* A TVM FFI module as its users write one, compiled against TVM FFI's own headers to an object
 * file that ffijit's add-on build loads as a JIT module: a packed function, a context symbol and
 * a call back into TVM FFI's library. */
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

void* __tvm_ffi__library_ctx = 0;

int __tvm_ffi_add_one(void* handle, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)handle;
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add_one takes one int");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 + 1;
  return 0;
}

/* Whether the loader wrote this module into `__tvm_ffi__library_ctx`: 1 when it did. */
int __tvm_ffi_has_context(void* handle, const TVMFFIAny* args, int32_t num_args,
                          TVMFFIAny* result) {
  (void)handle;
  (void)args;
  (void)num_args;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = __tvm_ffi__library_ctx != 0;
  return 0;
}
