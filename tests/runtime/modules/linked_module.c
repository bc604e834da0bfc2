/*
 * A module built for TVM FFI: linked with -ltvm_ffi (DT_NEEDED libtvm_ffi.so) and nothing of
 * ffijit by name. Loaded next to ffijit, its libtvm_ffi.so must resolve to ffijit's one runtime:
 * it registers a global while loading and calls globals registered by its host.
 */
#include <string.h>

#include "ffijit/c_api.h"

#define EXPORT __attribute__((visibility("default")))

/* The characters of a string argument in any of its forms (RawStr, SmallStr, Str), or NULL. */
static const char* StrArg(const TVMFFIAny* arg) {
  if (arg->type_index == kTVMFFIRawStr) return arg->v_c_str;
  if (arg->type_index == kTVMFFISmallStr) return arg->v_bytes; /* NUL-terminated by producers */
  if (arg->type_index == kTVMFFIStr) {
    return ((const TVMFFIByteArray*)((const char*)arg->v_obj + sizeof(TVMFFIObject)))->data;
  }
  return NULL;
}

static int Answer(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = 42;
  return 0;
}

__attribute__((constructor)) static void RegisterAtLoad(void) {
  TVMFFIObjectHandle func = NULL;
  if (TVMFFIFunctionCreate(NULL, Answer, NULL, &func) != 0) return;
  TVMFFIByteArray name = {"linked_module.answer", strlen("linked_module.answer")};
  TVMFFIFunctionSetGlobal(&name, func, 1);
  TVMFFIObjectDecRef(func);
}

/* call_global(name: str, x) -> the global `name` called with x. */
EXPORT int __tvm_ffi_call_global(void* self, const TVMFFIAny* args, int32_t num_args,
                                 TVMFFIAny* result) {
  (void)self;
  const char* text = num_args == 2 ? StrArg(&args[0]) : NULL;
  if (text == NULL) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "call_global expects (name: str, x)");
    return -1;
  }
  TVMFFIByteArray name = {text, strlen(text)};
  TVMFFIObjectHandle func = NULL;
  if (TVMFFIFunctionGetGlobal(&name, &func) != 0) return -1;
  if (func == NULL) {
    TVMFFIErrorSetRaisedFromCStr("KeyError", "call_global: no such global");
    return -1;
  }
  TVMFFIAny arg = args[1];
  int status = TVMFFIFunctionCall(func, &arg, 1, result);
  TVMFFIObjectDecRef(func);
  return status;
}
