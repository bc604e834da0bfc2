/*
 * A module built for a TVM FFI ABI revision of another C function set than this ffijit's: besides
 * an ordinary packed function it refers to every C function only those revisions export (what
 * every C++ translation unit of such a revision does when it makes an object or throws). The
 * loaders must refuse it before any of its code runs. Shared by the shared-library and JIT-object
 * tests.
 */
#include "ffijit/c_api.h"

/* The other revisions' functions, declared only to be imported: their prototypes do not matter. */
#define FFIJIT_DECLARE_IMPORT(name) extern void name(void);
FFIJIT_TVM_FFI_REMOVED_FUNCTIONS(FFIJIT_DECLARE_IMPORT)
#undef FFIJIT_DECLARE_IMPORT

/* A visible table of their addresses keeps every one an undefined symbol of the module. */
#define FFIJIT_IMPORT_ADDRESS(name) name,
__attribute__((visibility("default"))) void (*const other_revision_imports[])(void) = {
    FFIJIT_TVM_FFI_REMOVED_FUNCTIONS(FFIJIT_IMPORT_ADDRESS)};
#undef FFIJIT_IMPORT_ADDRESS

__attribute__((visibility("default"))) int __tvm_ffi_other_revision(void* self,
                                                                    const TVMFFIAny* args,
                                                                    int32_t num_args,
                                                                    TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  other_revision_imports[0]();
  result->type_index = kTVMFFIInt;
  result->v_int64 = (int64_t)(sizeof(other_revision_imports) / sizeof(other_revision_imports[0]));
  return 0;
}
