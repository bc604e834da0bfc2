/* The hand-written safe_calls of BM_Call/handwritten_inlined: the bodies of handwritten_calls.h
 * with their natives' bodies (call_natives.c, compiled here as static functions) in the same
 * translation unit, so gcc -O2 inlines each native into its safe_call. The slow path is
 * handwritten.c's (FFIJITBenchHandwrittenInit sets it for both). */
#include <string.h>

#define FFIJIT_BENCH_NATIVE_LINKAGE static
#include "call_natives.c"

#define FFIJIT_BENCH_HANDWRITTEN(name) FFIJITBenchHandwrittenInlined##name
#define FFIJIT_BENCH_NATIVE(handle, native, type) (&native)
#include "handwritten_calls.h"

TVMFFISafeCallType FFIJITBenchHandwrittenInlinedFor(const char* name) {
  if (strcmp(name, "i64_i64_i64") == 0) return &FFIJITBenchHandwrittenInlinedI64x3;
  if (strcmp(name, "i64_f64_i32_f32_ptr") == 0) return &FFIJITBenchHandwrittenInlinedMixed;
  if (strcmp(name, "dev_dtype_i64") == 0) return &FFIJITBenchHandwrittenInlinedDevDtype;
  if (strcmp(name, "tensor") == 0) return &FFIJITBenchHandwrittenInlinedTensor;
  if (strcmp(name, "str") == 0) return &FFIJITBenchHandwrittenInlinedStr;
  return NULL;
}
