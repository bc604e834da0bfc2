/*
 * ffijit's C registration API: bind a native function pointer plus metadata text into a packed
 * Function, optionally under a global name, and call it with keyword arguments.
 *
 * C99. Every function returns 0 on success and -1 with a raised error otherwise (take it with
 * TVMFFIErrorMoveFromRaised). A program built against TVM FFI's own headers includes them first.
 */
#ifndef FFIJIT_JIT_BRIDGE_H_
#define FFIJIT_JIT_BRIDGE_H_

#ifdef TVM_FFI_C_API_H_
/* After TVM FFI's own <tvm/ffi/c_api.h> (a program built against TVM FFI's headers, over the
 * add-on build): the same C ABI is declared already. */
#include "ffijit/export.h"
#else
#include "ffijit/c_api.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*! Metadata formats (the numbers of ffijit::MetadataFormat). */
typedef enum {
  kFFIJITFormatAuto = 0, /* detected from the text */
  kFFIJITFormatJson = 1, /* the iree.abi JSON, bare or as {"iree.abi":"..."} */
  kFFIJITFormatRaw = 2,  /* the raw mangled signature, bare or as {"fv":"1","f":"..."} */
  kFFIJITFormatSip = 3,  /* {"sip":"...","f":"..."} */
  /* an iree.abi.declaration, bare or as {"iree.abi.declaration":"..."} */
  kFFIJITFormatDeclaration = 4
} FFIJITMetadataFormat;

/*! Registration flags, or-ed together. */
typedef enum {
  /* The native returns int (0 = success), writes every result through trailing out-pointers and
   * raises its errors through the C API. */
  kFFIJITStatusConvention = 1,
  /* Replace a global function of the same name instead of failing with a RuntimeError. */
  kFFIJITAllowOverride = 2,
  /* Never compile a JIT thunk for this function; it stays on the interpreter. */
  kFFIJITInterpretOnly = 4,
  /* The interpreter calls the target through libffi instead of its register stub; implies nothing
   * about the JIT (combine with kFFIJITInterpretOnly to keep every call on libffi). The one way to
   * choose this path, for comparing call paths (`ffijit bench`) and for cross-checking; signatures
   * with f16/bf16 are refused because libffi cannot express them. */
  kFFIJITUseLibffi = 8
} FFIJITRegisterFlags;

/*!
 * A new packed Function calling `fn` as `metadata` (in `format`) describes. `name` appears in
 * error messages (NULL: "<anonymous>"). *out receives one strong reference.
 */
FFIJIT_JIT_API int FFIJITMakeFunction(void* fn, const char* metadata, int format, int flags,
                                      const char* name, TVMFFIObjectHandle* out);

/*!
 * Like FFIJITMakeFunction, then registers the function under `global_name` (also its name in
 * messages). `out` may be NULL; otherwise it receives one strong reference.
 * FFIJITFunctionRemoveGlobal (c_ext.h) removes the name again; the binding is freed with its last
 * reference.
 */
FFIJIT_JIT_API int FFIJITRegister(void* fn, const char* metadata, int format, int flags,
                                  const char* global_name, TVMFFIObjectHandle* out);

/*!
 * A plain C function pointer with the signature `metadata` (in `format`) describes, which calls
 * `func` (any Function) with its arguments packed and returns its result unpacked. `flags` may be
 * kFFIJITStatusConvention (the pointer returns 0 or -1 with the error raised, results through
 * trailing out-pointers); otherwise a failed call returns a zero value with the error left raised.
 * The pointer stays valid while *out_keepalive lives: a Function that calls `func` too, released
 * with TVMFFIObjectDecRef. Needs the JIT (a RuntimeError without it).
 */
FFIJIT_JIT_API int FFIJITMakeNativeCallback(TVMFFIObjectHandle func, const char* metadata,
                                            int format, int flags, void** out_fnptr,
                                            TVMFFIObjectHandle* out_keepalive);

/*!
 * Calls `func` with `num_args` positional arguments followed by `num_kwargs` keyword arguments
 * (kw_names[i] = kw_values[i]). A keyword no argument has is a KeyError; a value given twice or an
 * argument given no value is a TypeError. Any Function accepts a call without keywords.
 */
FFIJIT_JIT_API int FFIJITCallWithKeywords(TVMFFIObjectHandle func, const TVMFFIAny* args,
                                          int32_t num_args, const char* const* kw_names,
                                          const TVMFFIAny* kw_values, int32_t num_kwargs,
                                          TVMFFIAny* result);

/*!
 * Compiles `func`'s JIT thunk now (blocking; a cached signature costs no compile) and switches the
 * function to it. 0 on success; -1 with a RuntimeError saying why the function stays interpreted
 * (interpret-only, not made by ffijit, a build without LLVM, a compile failure). Functions are
 * compiled in the background by policy anyway (see FFIJIT_JIT); this is for callers that want the
 * fast tier before the first call, e.g. benchmarks.
 */
FFIJIT_JIT_API int FFIJITCompileNow(TVMFFIObjectHandle func);

/*! The tiers a function made by this API runs on, in the order it may climb them. */
typedef enum {
  /* the interpreter walks the call plan: where every function starts, and where one registered
   * kFFIJITInterpretOnly, under the policy "never" or with a signature no tier compiles stays */
  kFFIJITTierInterpreted = 0,
  /* its copy-and-patch thunk, made at registration without LLVM */
  kFFIJITTierStencil = 1,
  /* the cold LLVM tier: the thunk shared by every function of its signature */
  kFFIJITTierLlvm = 2,
  /* the hot tier: an LLVM thunk of its own, specialised to its native */
  kFFIJITTierHot = 3,
  /* the hot tier with its native's body (LLVM IR of a JIT module) inlined into the thunk */
  kFFIJITTierHotInlined = 4
} FFIJITTier;

/*!
 * *out = the FFIJITTier `func` runs on now. Answering needs no LLVM: the LLVM plugin is not loaded
 * for it. -1 with a ValueError when `func` or `out` is NULL, a TypeError when `func` was not made
 * by ffijit's registration (a packed function of another origin has no tier).
 */
FFIJIT_JIT_API int FFIJITFunctionTier(TVMFFIObjectHandle func, int* out);

/*!
 * *out = 1 when `func` runs compiled code (any tier but kFFIJITTierInterpreted, the stencil tier
 * included), else 0 (also for a function not made by this API, which is never compiled). -1 with a
 * ValueError when `func` or `out` is NULL.
 */
FFIJIT_JIT_API int FFIJITIsJitCompiled(TVMFFIObjectHandle func, int* out);

/*! The readable CallPlan of a function made by this API, as an owned String in *out. */
FFIJIT_JIT_API int FFIJITDescribeFunction(TVMFFIObjectHandle func, TVMFFIAny* out);

/*! How a front end that converts its own values may pass a top-level argument straight. */
typedef enum {
  kFFIJITArgumentOther = 0,   /* anything else: a structure, a string, an object, output
                                 storage (handed back as a result: it must outlive the call) */
  kFFIJITArgumentInteger = 1, /* a bool or integer scalar */
  kFFIJITArgumentFloat = 2,   /* an f16, bf16, f32 or f64 scalar */
  kFFIJITArgumentTensor = 3,  /* a tensor (DLTensor*) */
  kFFIJITArgumentPointer = 4  /* an opaque pointer (void*) */
} FFIJITArgumentKind;

/*! One top-level argument of a function made by this API. */
typedef struct {
  int32_t kind;        /* FFIJITArgumentKind */
  const char* keyword; /* the keyword it may be passed by, "" when positional only */
} FFIJITArgumentInfo;

/*! A function made by this API, as its CallPlan records it. */
typedef struct {
  const char* name;          /* its name in messages (FFIJITMakeFunction's `name`) */
  const char* declaration;   /* `name(types...) -> result`, as error messages quote it */
  int32_t status_convention; /* 1 when made with kFFIJITStatusConvention, else 0 */
  int32_t num_args;          /* its number of top-level arguments */
} FFIJITFunctionInfo;

/*!
 * Fills *info, and args[i] for the first min(capacity, num_args) top-level arguments, from the
 * CallPlan of `func` (so a binding need not parse the metadata again). The strings belong to the
 * function and live as long as it does. `args` may be NULL when `capacity` is 0. A TypeError when
 * `func` was not made by this API.
 */
FFIJIT_JIT_API int FFIJITDescribeArguments(TVMFFIObjectHandle func, FFIJITFunctionInfo* info,
                                           FFIJITArgumentInfo* args, int32_t capacity);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FFIJIT_JIT_BRIDGE_H_ */
