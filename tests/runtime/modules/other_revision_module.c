/*
 * A module built for the TVM FFI ABI revision this ffijit does not implement: besides an ordinary
 * packed function it calls a C function that only the other revision exports (what every C++
 * translation unit of that revision does when it makes an object or throws). The loaders must
 * refuse it before any of its code runs. Shared by the shared-library and JIT-object tests.
 */
#include "ffijit/c_api.h"

#if FFIJIT_TVM_FFI_ABI == FFIJIT_TVM_FFI_ABI_V0_1_13
/* e98b94e1's traceback function (v0.1 renamed it TVMFFIBacktrace). */
extern const TVMFFIByteArray* TVMFFITraceback(const char* file, int line, const char* func,
                                              int cross_ffi_boundary);
#define OTHER_REVISION_CALL() TVMFFITraceback(__FILE__, __LINE__, "other_revision", 0)
#else
/* v0.1's allocator and backtrace functions, which header code calls inline. */
extern void* TVMFFIGetCustomAllocator(void);
extern const TVMFFIByteArray* TVMFFIBacktrace(const char* file, int line, const char* func,
                                              int cross_ffi_boundary);
#define OTHER_REVISION_CALL() \
  (TVMFFIGetCustomAllocator(), TVMFFIBacktrace(__FILE__, __LINE__, "other_revision", 0))
#endif

__attribute__((visibility("default"))) int __tvm_ffi_other_revision(void* self,
                                                                    const TVMFFIAny* args,
                                                                    int32_t num_args,
                                                                    TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  const TVMFFIByteArray* trace = OTHER_REVISION_CALL();
  result->type_index = kTVMFFIInt;
  result->v_int64 = (int64_t)trace->size;
  return 0;
}
