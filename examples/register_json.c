/* Registering a C function at run time from iree.abi JSON metadata with the C API
 * (ffijit/jit/bridge.h), then finding it by global name and calling it through TVMFFIFunctionCall,
 * like any other TVM FFI packed function. Also shows the error paths: a wrong argument, and
 * metadata that does not parse. */
#include <stdio.h>
#include <string.h>

#include "ffijit/c_api.h"
#include "ffijit/c_ext.h"
#include "ffijit/jit/bridge.h"

/* The native function: knows nothing about ffijit. */
static double lerp(double a, double b, double t) {
  return a + (b - a) * t;
}

/* Its signature: three named f64 arguments, one f64 result. */
static const char* const kLerpAbi =
    "{\"a\":[[\"named\",\"a\",\"f64\"],[\"named\",\"b\",\"f64\"],[\"named\",\"t\",\"f64\"]],"
    "\"r\":[\"f64\"],\"v\":1}";

/* Takes the thread's raised error, prints it as "Kind: message" and releases it. Returns 1 when
 * there was one (with the expected kind, if `kind` is not NULL). */
static int PrintRaised(const char* kind) {
  TVMFFIObjectHandle error = NULL;
  const TVMFFIErrorCell* cell;
  int matches;
  TVMFFIErrorMoveFromRaised(&error);
  if (error == NULL) {
    printf("  (no error was raised)\n");
    return 0;
  }
  cell = (const TVMFFIErrorCell*)((const TVMFFIObject*)error + 1);
  printf("  -> %.*s: %.*s\n", (int)cell->kind.size, cell->kind.data, (int)cell->message.size,
         cell->message.data);
  matches = kind == NULL || (strlen(kind) == cell->kind.size &&
                             memcmp(kind, cell->kind.data, cell->kind.size) == 0);
  TVMFFIObjectDecRef(error);
  return matches;
}

static TVMFFIAny Float(double v) {
  TVMFFIAny a;
  memset(&a, 0, sizeof(a));
  a.type_index = kTVMFFIFloat;
  a.v_float64 = v;
  return a;
}

int main(void) {
  TVMFFIByteArray name = {"example.lerp", 12};
  TVMFFIObjectHandle func = NULL;
  TVMFFIAny args[3], result;

  /* 1. Register: address, metadata, format, flags, global name. `out` may be NULL: the registry
   *    keeps the function alive. */
  if (FFIJITRegister((void*)&lerp, kLerpAbi, kFFIJITFormatJson, 0, "example.lerp", NULL) != 0) {
    PrintRaised(NULL);
    return 1;
  }
  printf("registered example.lerp from %s\n", kLerpAbi);

  /* 2. Anyone in the process can now find it by name... */
  if (TVMFFIFunctionGetGlobal(&name, &func) != 0 || func == NULL) {
    printf("lookup failed\n");
    return 1;
  }

  /* 3. ...and call it with packed arguments. The caller sets the result to None first and owns
   *    what comes back (a Float here: nothing to release). */
  args[0] = Float(10.0);
  args[1] = Float(20.0);
  args[2] = Float(0.25);
  result.type_index = kTVMFFINone;
  if (TVMFFIFunctionCall(func, args, 3, &result) != 0) {
    PrintRaised(NULL);
    return 1;
  }
  printf("example.lerp(10, 20, 0.25) = %g\n", result.v_float64);
  if (result.type_index != kTVMFFIFloat || result.v_float64 != 12.5) return 1;

  /* An Int is accepted for an f64 parameter (the conversion contract). */
  memset(&args[2], 0, sizeof(args[2]));
  args[2].type_index = kTVMFFIInt;
  args[2].v_int64 = 1;
  result.type_index = kTVMFFINone;
  if (TVMFFIFunctionCall(func, args, 3, &result) != 0 || result.v_float64 != 20.0) {
    PrintRaised(NULL);
    return 1;
  }
  printf("example.lerp(10, 20, 1)    = %g   (an Int converts to f64)\n", result.v_float64);

  /* 4. A wrong argument: the call returns -1 and the error waits in the thread's error slot. */
  memset(&args[1], 0, sizeof(args[1]));
  args[1].type_index = kTVMFFIRawStr;
  args[1].v_c_str = "twenty";
  result.type_index = kTVMFFINone;
  printf("example.lerp(10, \"twenty\", 1):\n");
  if (TVMFFIFunctionCall(func, args, 3, &result) != -1) return 1;
  if (!PrintRaised("TypeError")) return 1;

  /* Too few arguments. */
  printf("example.lerp(10):\n");
  if (TVMFFIFunctionCall(func, args, 1, &result) != -1) return 1;
  if (!PrintRaised("TypeError")) return 1;
  TVMFFIObjectDecRef(func);

  /* 5. Metadata that does not parse is refused at registration, with the offset of the problem. */
  printf("registering with metadata {\"a\":[\"f65\"],\"r\":[]}:\n");
  if (FFIJITRegister((void*)&lerp, "{\"a\":[\"f65\"],\"r\":[]}", kFFIJITFormatJson, 0,
                     "example.broken", NULL) != -1) {
    return 1;
  }
  if (!PrintRaised("ValueError")) return 1;

  /* 6. The global name goes away again (the binding dies with its last reference). */
  TVMFFIByteArray global = {"example.lerp", 12};
  if (FFIJITFunctionRemoveGlobal(&global) != 0) {
    PrintRaised(NULL);
    return 1;
  }
  printf("done\n");
  return 0;
}
