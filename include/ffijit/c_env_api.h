/*
 * ffijit's implementation of TVM FFI's environment API (tvm/ffi/extra/c_env_api.h): per-thread
 * device streams, the DLPack tensor allocator, frontend signal checks, and the hooks generated
 * modules use to find functions (imports, context symbols, the system library).
 *
 * C99 and C++ compatible; the names and prototypes are TVM FFI's, so code compiled against that
 * header links against ffijit unchanged. Every `int` function returns 0 on success and -1 with a
 * raised error otherwise (take it with TVMFFIErrorMoveFromRaised).
 */
#ifndef FFIJIT_C_ENV_API_H_
#define FFIJIT_C_ENV_API_H_

#include "ffijit/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! An opaque device stream (a cudaStream_t, for instance); NULL is the default stream. */
typedef void* TVMFFIStreamHandle;

/* ---- Streams (one table per thread) ---- */
/*!
 * Sets this thread's current stream for (device_type, device_id). If opt_out_original_stream is
 * not NULL it receives the previous stream (NULL when none was set). A negative device type or id
 * is a ValueError.
 */
FFIJIT_API int TVMFFIEnvSetStream(int32_t device_type, int32_t device_id, TVMFFIStreamHandle stream,
                                  TVMFFIStreamHandle* opt_out_original_stream);
/*! This thread's stream for (device_type, device_id); NULL when never set (or negative ids). */
FFIJIT_API TVMFFIStreamHandle TVMFFIEnvGetStream(int32_t device_type, int32_t device_id);

/* ---- Tensor allocator ----
 * An allocator makes a tensor shaped like `prototype` (its data pointer is ignored) and stores a
 * new managed tensor in *out. It returns 0 on success; on failure it calls
 * SetError(error_ctx, kind, message) and returns nonzero. One allocator per thread, and one for
 * the process that threads without their own use. The revisions name the type and the functions
 * differently; the behaviour is the same. */
#if FFIJIT_TVM_FFI_HAS_DLPACK_MANAGED_TENSOR_ALLOCATOR
/*!
 * Sets this thread's tensor allocator (NULL unsets it) and, when write_to_global_context is
 * nonzero, the process-wide one too. If opt_out_original_allocator is not NULL it receives this
 * thread's previous allocator.
 */
FFIJIT_API int TVMFFIEnvSetDLPackManagedTensorAllocator(
    DLPackManagedTensorAllocator allocator, int write_to_global_context,
    DLPackManagedTensorAllocator* opt_out_original_allocator);
/*! This thread's allocator if set, else the process-wide one (which may be NULL). */
FFIJIT_API DLPackManagedTensorAllocator TVMFFIEnvGetDLPackManagedTensorAllocator(void);
/*!
 * Allocates a tensor shaped like `prototype` with the current allocator and stores it in *out as
 * a new Tensor (+1; the Tensor owns the allocator's managed tensor). No allocator is a
 * RuntimeError; an allocator's failure is raised with the kind and message it reported.
 */
FFIJIT_API int TVMFFIEnvTensorAlloc(DLTensor* prototype, TVMFFIObjectHandle* out);
#else
/*! The allocator type (DLPack 1.2 later names it DLPackManagedTensorAllocator). */
typedef int (*DLPackTensorAllocator)(DLTensor* prototype, DLManagedTensorVersioned** out,
                                     void* error_ctx,
                                     void (*SetError)(void* error_ctx, const char* kind,
                                                      const char* message));
/*!
 * Sets this thread's tensor allocator (NULL unsets it) and, when write_to_global_context is
 * nonzero, the process-wide one too. If opt_out_original_allocator is not NULL it receives this
 * thread's previous allocator.
 */
FFIJIT_API int TVMFFIEnvSetTensorAllocator(DLPackTensorAllocator allocator,
                                           int write_to_global_context,
                                           DLPackTensorAllocator* opt_out_original_allocator);
/*! This thread's allocator if set, else the process-wide one (which may be NULL). */
FFIJIT_API DLPackTensorAllocator TVMFFIEnvGetTensorAllocator(void);
#endif

/* ---- Frontend signals ---- */
/*!
 * Asks the frontend whether a signal (Ctrl-C) is pending: 0 when no hook is registered or the hook
 * returns 0, -1 when the hook returns nonzero (the frontend then holds the error: return -2 from
 * a safe_call).
 */
FFIJIT_API int TVMFFIEnvCheckSignals(void);
/*!
 * Registers a frontend C API: "PyErr_CheckSignals" (int (*)(void)), "PyGILState_Ensure"
 * (void* (*)(void)) or "PyGILState_Release" (void (*)(void*)). Any other name is a ValueError.
 */
FFIJIT_API int TVMFFIEnvRegisterCAPI(const char* name, void* symbol);

/* ---- Modules ---- */
/*!
 * Finds `func_name` for a library module's generated code: `library_ctx` is the value the loader
 * stored in the library's `__tvm_ffi__library_ctx`. Searches the module's imports (depth first),
 * then the global functions; *out is borrowed (the module's cache holds it). Not found is a
 * RuntimeError.
 */
FFIJIT_API int TVMFFIEnvModLookupFromImports(TVMFFIObjectHandle library_ctx, const char* func_name,
                                             TVMFFIObjectHandle* out);
/*! Registers a context symbol: every library loaded afterwards that exports a `void*` variable
 *  named `name` gets `symbol` written into it. */
FFIJIT_API int TVMFFIEnvModRegisterContextSymbol(const char* name, void* symbol);
/*! Adds (or replaces) `name` in the system-library symbol table that ffi.SystemLib reads. */
FFIJIT_API int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* symbol);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FFIJIT_C_ENV_API_H_ */
