/*
 * A program built against TVM FFI (linked with -ltvm_ffi, nothing of ffijit by name) that runs on
 * ffijit through the drop-in libtvm_ffi.so on LD_LIBRARY_PATH. It loads a module that is itself
 * linked with -ltvm_ffi and checks both see one registry (and one stream table):
 *   dropin_program <linked_module.so>   exits 0 on success, prints what failed otherwise.
 */
#include <stdio.h>
#include <string.h>

#include "ffijit/c_api.h"
#include "ffijit/c_env_api.h"

static int Double(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  (void)num_args;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 * 2;
  return 0;
}

static TVMFFIObjectHandle Global(const char* name) {
  TVMFFIByteArray key = {name, strlen(name)};
  TVMFFIObjectHandle func = NULL;
  if (TVMFFIFunctionGetGlobal(&key, &func) != 0) return NULL;
  return func;
}

static int Fail(const char* what) {
  TVMFFIObjectHandle error = NULL;
  TVMFFIErrorMoveFromRaised(&error);
  if (error != NULL) {
    const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((const char*)error + 24);
    fprintf(stderr, "dropin_program: %s: %.*s: %.*s\n", what, (int)cell->kind.size, cell->kind.data,
            (int)cell->message.size, cell->message.data);
    TVMFFIObjectDecRef(error);
  } else {
    fprintf(stderr, "dropin_program: %s\n", what);
  }
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) return Fail("usage: dropin_program <linked_module.so>");
  /* A global of the program, for the module to find. */
  TVMFFIObjectHandle dbl = NULL;
  if (TVMFFIFunctionCreate(NULL, Double, NULL, &dbl) != 0) return Fail("FunctionCreate");
  TVMFFIByteArray name = {"dropin.double", strlen("dropin.double")};
  if (TVMFFIFunctionSetGlobal(&name, dbl, 0) != 0) return Fail("SetGlobal");
  TVMFFIObjectDecRef(dbl);

  TVMFFIObjectHandle load = Global("ffi.ModuleLoadFromFile");
  if (load == NULL) return Fail("ffi.ModuleLoadFromFile is not registered");
  TVMFFIAny path = {0};
  path.type_index = kTVMFFIRawStr;
  path.v_c_str = argv[1];
  TVMFFIAny mod = {0};
  if (TVMFFIFunctionCall(load, &path, 1, &mod) != 0) return Fail("loading the module");

  /* The module's constructor registered a global in the same registry. */
  TVMFFIObjectHandle answer = Global("linked_module.answer");
  if (answer == NULL) return Fail("the module's global is not visible to the program");
  TVMFFIAny result = {0};
  if (TVMFFIFunctionCall(answer, NULL, 0, &result) != 0 || result.v_int64 != 42) {
    return Fail("calling linked_module.answer");
  }

  /* The module finds the program's global. */
  TVMFFIObjectHandle get = Global("ffi.ModuleGetFunction");
  TVMFFIAny get_args[3] = {mod, {0}, {0}};
  get_args[1].type_index = kTVMFFIRawStr;
  get_args[1].v_c_str = "call_global";
  get_args[2].type_index = kTVMFFIBool;
  TVMFFIAny func = {0};
  if (TVMFFIFunctionCall(get, get_args, 3, &func) != 0 || func.type_index != kTVMFFIFunction) {
    return Fail("getting call_global");
  }
  TVMFFIAny call_args[2] = {{0}, {0}};
  call_args[0].type_index = kTVMFFIRawStr;
  call_args[0].v_c_str = "dropin.double";
  call_args[1].type_index = kTVMFFIInt;
  call_args[1].v_int64 = 21;
  result.type_index = kTVMFFINone;
  if (TVMFFIFunctionCall(func.v_obj, call_args, 2, &result) != 0) return Fail("call_global");
  if (result.type_index != kTVMFFIInt || result.v_int64 != 42) {
    return Fail("call_global(dropin.double, 21) did not give 42");
  }
  /* One thread-local stream table: the program's stream is what the runtime reports. */
  int marker = 0;
  if (TVMFFIEnvSetStream(2, 0, &marker, NULL) != 0) return Fail("SetStream");
  if (TVMFFIEnvGetStream(2, 0) != &marker) return Fail("GetStream");

  TVMFFIObjectDecRef(func.v_obj);
  TVMFFIObjectDecRef(mod.v_obj);
  TVMFFIObjectDecRef(get);
  TVMFFIObjectDecRef(answer);
  TVMFFIObjectDecRef(load);
  printf("dropin_program: ok\n");
  return 0;
}
