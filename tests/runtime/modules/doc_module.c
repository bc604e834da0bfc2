/*
 * A module with the docstring and metadata safe-calls TVM FFI v0.1.13's export macros emit
 * (TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC, TVM_FFI_DLL_EXPORT_INCLUDE_METADATA): `__tvm_ffi__doc_<name>`
 * and `__tvm_ffi__metadata_<name>` return a str when called with no arguments. `twice` has both,
 * `plain` neither, `bad_doc` a docstring getter that returns an int.
 */
#include <string.h>

#include "ffijit/c_api.h"

#define EXPORT __attribute__((visibility("default")))

static int ReturnText(const char* text, TVMFFIAny* result) {
  TVMFFIByteArray bytes = {text, strlen(text)};
  return TVMFFIStringFromByteArray(&bytes, result);
}

/* twice(x: int) -> int */
EXPORT int __tvm_ffi_twice(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "twice expects one int");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = 2 * args[0].v_int64;
  return 0;
}

EXPORT int __tvm_ffi__doc_twice(void* self, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result) {
  (void)self;
  (void)args;
  if (num_args != 0) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "the doc getter takes no arguments");
    return -1;
  }
  return ReturnText("Returns twice its argument, a docstring long enough for a heap string.",
                    result);
}

EXPORT int __tvm_ffi__metadata_twice(void* self, const TVMFFIAny* args, int32_t num_args,
                                     TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  return ReturnText("{\"type_schema\": \"int(int)\"}", result);
}

/* plain() -> None: no docstring, no metadata. */
EXPORT int __tvm_ffi_plain(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  result->type_index = kTVMFFINone;
  return 0;
}

EXPORT int __tvm_ffi__doc_bad_doc(void* self, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = 7;
  return 0;
}
