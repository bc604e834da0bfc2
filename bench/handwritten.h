/*
 * The yardstick of BM_Call/handwritten: one hand-written C safe_call per benchmark signature
 * (call_natives.h), what a careful programmer would write for the packed convention.
 *
 * Each obeys the conversion contract a JIT thunk obeys: the arity and every tag checked, the i32
 * range-checked, the value-validity rules (an object tag carries a non-NULL object whose header
 * type_index is the tag; a small string's length is at most 7; a tensor of rank > 0 has a shape),
 * a string for a C string parameter holds no NUL inside, the result boxed. Each reads the native
 * from the Function object (handle + 40, where a registered function keeps it) and is installed as
 * the function's safe_call, exactly as a thunk is. Anything else -- a rare form or an error -- goes
 * to the slow path given to FFIJITBenchHandwrittenInit (the function's interpreter entry), as a
 * thunk's does, so errors are the same byte for byte. C99, compiled -O2. The bodies are in
 * handwritten_calls.h.
 */
#ifndef FFIJIT_BENCH_HANDWRITTEN_H_
#define FFIJIT_BENCH_HANDWRITTEN_H_

#include "ffijit/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a registered function keeps its native's address (checked against the real layout by
 * tests/jit/orc/handwritten_test.cc). */
#define FFIJIT_BENCH_TARGET_OFFSET 40

/* Sets the slow path every handwritten safe_call takes for what it does not convert itself. */
void FFIJITBenchHandwrittenInit(TVMFFISafeCallType slow_path);

int FFIJITBenchHandwrittenI64x3(void* handle, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result);
int FFIJITBenchHandwrittenMixed(void* handle, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result);
int FFIJITBenchHandwrittenDevDtype(void* handle, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result);
int FFIJITBenchHandwrittenTensor(void* handle, const TVMFFIAny* args, int32_t num_args,
                                 TVMFFIAny* result);
int FFIJITBenchHandwrittenStr(void* handle, const TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result);

/* The handwritten safe_call for the call case `name` (call_natives.h), or NULL. */
TVMFFISafeCallType FFIJITBenchHandwrittenFor(const char* name);
/* The same safe_call with the native's body in its translation unit, inlined by gcc -O2
 * (handwritten_inlined.c): it ignores the handle's native and runs call_natives.c's. */
TVMFFISafeCallType FFIJITBenchHandwrittenInlinedFor(const char* name);

#ifdef __cplusplus
}
#endif

#endif /* FFIJIT_BENCH_HANDWRITTEN_H_ */
