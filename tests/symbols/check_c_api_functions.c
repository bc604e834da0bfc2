/*
 * Checks the TVM FFI C functions libffijit_runtime exports against the revision the build chose:
 * every function of FFIJIT_TVM_FFI_C_API_FUNCTIONS must be there (a module built against that
 * revision's headers links to each), and none of FFIJIT_TVM_FFI_REMOVED_FUNCTIONS (the functions
 * of revisions with another C function set: a module that finds one would take this library for
 * the wrong revision).
 *
 *     check_c_api_functions LIBRARY.so
 *
 * The library is opened by path with dlopen, so the check sees its dynamic symbol table as a
 * module's loader does. Exit status 0 when both hold, 1 (listing each offender) otherwise.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "ffijit/c_api.h"

static int failures = 0;

static void RequireExported(void* library, const char* name) {
  if (dlsym(library, name) == NULL) {
    printf("missing: %s is in the " FFIJIT_TVM_FFI_ABI_NAME " C API but not exported\n", name);
    ++failures;
  }
}

static void RequireAbsent(void* library, const char* name) {
  if (dlsym(library, name) != NULL) {
    printf("extra: %s is exported but not part of the " FFIJIT_TVM_FFI_ABI_NAME " C API\n", name);
    ++failures;
  }
}

#define FFIJIT_REQUIRE_EXPORTED(name) RequireExported(library, #name);
#define FFIJIT_REQUIRE_ABSENT(name) RequireAbsent(library, #name);

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s LIBRARY.so\n", argv[0]);
    return 2;
  }
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    fprintf(stderr, "cannot open %s: %s\n", argv[1], dlerror());
    return 2;
  }
  FFIJIT_TVM_FFI_C_API_FUNCTIONS(FFIJIT_REQUIRE_EXPORTED)
  FFIJIT_TVM_FFI_REMOVED_FUNCTIONS(FFIJIT_REQUIRE_ABSENT)
  if (failures == 0) {
    printf("%s: all %d " FFIJIT_TVM_FFI_ABI_NAME " C API functions exported, none removed\n",
           argv[1], FFIJIT_TVM_FFI_NUM_C_API_FUNCTIONS);
  }
  dlclose(library);
  return failures == 0 ? 0 : 1;
}
