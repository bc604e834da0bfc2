/*
 * A stand-in for the real libtvm_ffi.so at link time only: it gives the test program and module
 * their DT_NEEDED entry "libtvm_ffi.so", exactly as linking against TVM FFI would. It is never
 * loaded: at run time LD_LIBRARY_PATH (or the module's RUNPATH) points at ffijit's drop-in
 * directory instead. If it is loaded anyway, every entry point says so and aborts.
 */
#include <stdio.h>
#include <stdlib.h>

#define STUB(name)                                                                     \
  __attribute__((visibility("default"))) void name(void) {                             \
    fprintf(stderr,                                                                    \
            "%s: the link-time stand-in libtvm_ffi.so was loaded instead of ffijit's " \
            "drop-in\n",                                                               \
            #name);                                                                    \
    abort();                                                                           \
  }

STUB(TVMFFIFunctionCreate)
STUB(TVMFFIFunctionSetGlobal)
STUB(TVMFFIFunctionGetGlobal)
STUB(TVMFFIFunctionCall)
STUB(TVMFFIObjectDecRef)
STUB(TVMFFIErrorSetRaisedFromCStr)
STUB(TVMFFIErrorMoveFromRaised)
STUB(TVMFFIStringFromByteArray)
STUB(TVMFFIEnvGetStream)
STUB(TVMFFIEnvSetStream)
