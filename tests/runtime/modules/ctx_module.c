/*
 * A module that calls functions it does not define, as generated code does: through its
 * `__tvm_ffi__library_ctx` and TVMFFIEnvModLookupFromImports (imports first, then globals).
 */
#include "ffijit/c_api.h"
#include "ffijit/c_env_api.h"

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

EXPORT void* __tvm_ffi__library_ctx = NULL;

/* call_by_name(name: str, x: any) -> name(x), the function found from this module's imports. */
EXPORT int __tvm_ffi_call_by_name(void* self, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result) {
  (void)self;
  const char* name = num_args == 2 ? StrArg(&args[0]) : NULL;
  if (name == NULL) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "call_by_name expects (name: str, x)");
    return -1;
  }
  TVMFFIObjectHandle func = NULL;
  if (TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx, name, &func) != 0) {
    return -1; /* the lookup's error stays raised */
  }
  /* `func` is borrowed from the module's cache: no DecRef. */
  TVMFFIAny arg = args[1];
  return TVMFFIFunctionCall(func, &arg, 1, result);
}

/* lookup_twice(name: str) -> bool: whether two lookups give the same (cached) function. */
EXPORT int __tvm_ffi_lookup_twice(void* self, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result) {
  (void)self;
  const char* name = num_args == 1 ? StrArg(&args[0]) : NULL;
  if (name == NULL) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "lookup_twice expects (name: str)");
    return -1;
  }
  TVMFFIObjectHandle first = NULL, second = NULL;
  if (TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx, name, &first) != 0 ||
      TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx, name, &second) != 0) {
    return -1;
  }
  result->type_index = kTVMFFIBool;
  result->zero_padding = 0;
  result->v_int64 = first == second;
  return 0;
}
