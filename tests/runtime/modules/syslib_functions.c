/*
 * Functions of a "system library": statically linked into the test program, registered with
 * TVMFFIEnvModRegisterSystemLibSymbol from a constructor, as TVM FFI's generated code does.
 */
#include "ffijit/c_api.h"
#include "ffijit/c_env_api.h"

static int SysTriple(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "triple expects one int");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 * 3;
  return 0;
}

static int SysPrefixedTriple(void* self, const TVMFFIAny* args, int32_t num_args,
                             TVMFFIAny* result) {
  int status = SysTriple(self, args, num_args, result);
  if (status == 0) result->v_int64 += 1000;
  return status;
}

void* ffijit_test_syslib_ctx = 0;

__attribute__((constructor)) static void RegisterSystemLibFunctions(void) {
  TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_triple", (void*)&SysTriple);
  /* Under the prefix "mylib_": ffi.SystemLib("mylib_") finds this one first. */
  TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_mylib_triple", (void*)&SysPrefixedTriple);
  TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi__library_ctx", &ffijit_test_syslib_ctx);
}
