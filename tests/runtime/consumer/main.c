/* Consumer of an installed ffijit: makes a function, registers it, calls it by name. */
#include <stdio.h>
#include <string.h>

#include "ffijit/c_api.h"
#include "ffijit/c_env_api.h"

static int Twice(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "twice takes one int");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->v_int64 = 2 * args[0].v_int64;
  return 0;
}

int main(void) {
  TVMFFIObjectHandle func = NULL, found = NULL;
  TVMFFIByteArray name = {"consumer.twice", 14};
  TVMFFIAny arg, result;
  if (TVMFFIFunctionCreate(NULL, Twice, NULL, &func) != 0) return 1;
  if (TVMFFIFunctionSetGlobal(&name, func, 0) != 0) return 2;
  TVMFFIObjectDecRef(func);
  if (TVMFFIFunctionGetGlobal(&name, &found) != 0 || found == NULL) return 3;
  memset(&arg, 0, sizeof(arg));
  memset(&result, 0, sizeof(result));
  arg.type_index = kTVMFFIInt;
  arg.v_int64 = 21;
  if (TVMFFIFunctionCall(found, &arg, 1, &result) != 0 || result.v_int64 != 42) return 4;
  TVMFFIObjectDecRef(found);
  /* The env API from C99: this thread's stream for a device. */
  if (TVMFFIEnvSetStream(kDLCUDA, 0, &name, NULL) != 0 || TVMFFIEnvGetStream(kDLCUDA, 0) != &name) {
    return 5;
  }
  printf("consumer: twice(21) = %lld\n", (long long)result.v_int64);
  return 0;
}
