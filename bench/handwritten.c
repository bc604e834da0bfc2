/* The hand-written safe_calls of BM_Call/handwritten (see handwritten.h for the contract): the
 * bodies of handwritten_calls.h, each calling its native through the handle. */
#include <string.h>

#define FFIJIT_BENCH_HANDWRITTEN(name) FFIJITBenchHandwritten##name
#define FFIJIT_BENCH_NATIVE(handle, native, type) \
  ((type)(*(void* const*)((const char*)(handle) + FFIJIT_BENCH_TARGET_OFFSET)))
#include "handwritten_calls.h"

static TVMFFISafeCallType slow_path;

void FFIJITBenchHandwrittenInit(TVMFFISafeCallType slow) {
  slow_path = slow;
}

int FFIJITBenchHandwrittenSlow(void* handle, const TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result) {
  return slow_path(handle, args, num_args, result);
}

TVMFFISafeCallType FFIJITBenchHandwrittenFor(const char* name) {
  if (strcmp(name, "i64_i64_i64") == 0) return &FFIJITBenchHandwrittenI64x3;
  if (strcmp(name, "i64_f64_i32_f32_ptr") == 0) return &FFIJITBenchHandwrittenMixed;
  if (strcmp(name, "dev_dtype_i64") == 0) return &FFIJITBenchHandwrittenDevDtype;
  if (strcmp(name, "tensor") == 0) return &FFIJITBenchHandwrittenTensor;
  if (strcmp(name, "str") == 0) return &FFIJITBenchHandwrittenStr;
  return NULL;
}
