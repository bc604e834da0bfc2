/*
 * ffijit's own C extensions to the TVM FFI ABI (prefix FFIJIT): containers, type checks, devices.
 *
 * C99 and public: C callers use it directly, and the C++ headers' inline code (container.h,
 * registry.h, the payload cells in function.h and string.h) is built on it. Every function has a
 * plain C signature and follows the ABI's convention: 0 on success, -1 with a raised error
 * otherwise (FFIJITObjectIsInstance, a pure query, returns 1/0).
 */
#ifndef FFIJIT_C_EXT_H_
#define FFIJIT_C_EXT_H_

#include "ffijit/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*!
 * Payload of an Array object, right after the header: `data` holds `size` owned Any values in
 * room for `capacity`. The layout is TVM FFI's ArrayObj (header-compiled code reads and, on a
 * uniquely owned array, writes it inline): data@24, size@32, capacity@40, data_deleter@48. The
 * arrays ffijit makes store their elements inline at +56 (`data` points there) with no
 * `data_deleter`; an array made elsewhere may point `data` at storage `data_deleter(data)` frees
 * after the elements are released.
 */
typedef struct {
  TVMFFIAny* data;
  int64_t size;
  int64_t capacity;
  void (*data_deleter)(void* data);
} FFIJITArrayCell;

/*!
 * Payload of a Function object made by TVMFFIFunctionCreate. `cell.safe_call` may be swapped
 * atomically (tiering); `self` is the handle given at creation, so a thunk that receives the
 * Function object as its handle finds its target at a fixed offset.
 */
typedef struct {
  TVMFFIFunctionCell cell;
  void* self;
  TVMFFISafeCallType self_call;
  void (*self_deleter)(void* self);
} FFIJITFunctionCell;

/*! Payload of a Str or Bytes object: `data` points at `size` inline bytes plus a NUL. */
typedef struct {
  const char* data;
  size_t size;
} FFIJITBytesCell;

/* ---- Functions ---- */
/*!
 * The C++ `call` entry `void(const FunctionObj*, const AnyView*, int32_t, Any*)` of TVM FFI's
 * headers, which every Function ffijit creates stores at header+32 (TVMFFIFunctionCell.cpp_call).
 * It runs the object's safe_call and reports failure by throwing a C++ exception laid out as
 * `tvm::ffi::Error` (or `tvm::ffi::EnvErrorAlreadySet` for status -2), so only C++ code that
 * catches those may call it; C code calls TVMFFIFunctionCall.
 */
typedef void (*FFIJITCppCallEntry)(const void* func, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result);
FFIJIT_API FFIJITCppCallEntry FFIJITFunctionCppCallEntry(void);

/* ---- Containers ---- */
/*! A new Array holding copies (strong references) of items[0..n). */
FFIJIT_API int FFIJITArrayCreate(const TVMFFIAny* items, int64_t n, TVMFFIObjectHandle* out);
/*! A new Map; a repeated key keeps its first position and takes the last value. */
FFIJIT_API int FFIJITMapCreate(const TVMFFIAny* keys, const TVMFFIAny* values, int64_t n,
                               TVMFFIObjectHandle* out);
FFIJIT_API int FFIJITMapSize(TVMFFIObjectHandle map, int64_t* out);
/*! Borrowed pointer to the value stored under `key`, or NULL when absent. String keys compare by
 *  content whatever their form (RawStr, SmallStr, Str); bytes keys likewise. */
FFIJIT_API int FFIJITMapGet(TVMFFIObjectHandle map, const TVMFFIAny* key,
                            const TVMFFIAny** out_value);
/*! The i-th entry in insertion order (borrowed). */
FFIJIT_API int FFIJITMapItemAt(TVMFFIObjectHandle map, int64_t i, const TVMFFIAny** key,
                               const TVMFFIAny** value);
FFIJIT_API int FFIJITShapeCreate(const int64_t* dims, size_t n, TVMFFIObjectHandle* out);
#if FFIJIT_TVM_FFI_HAS_LIST_DICT
/*! A new List (TVM FFI 0.1's mutable sequence) holding copies of items[0..n): the Array's cell at
 *  +24 over a separate ::operator new buffer that `data_deleter` frees (header code grows it). */
FFIJIT_API int FFIJITListCreate(const TVMFFIAny* items, int64_t n, TVMFFIObjectHandle* out);
/*! A new Dict (TVM FFI 0.1's mutable map, the Map layout); keys as in FFIJITMapCreate. The Map
 *  functions above accept a Dict too. */
FFIJIT_API int FFIJITDictCreate(const TVMFFIAny* keys, const TVMFFIAny* values, int64_t n,
                                TVMFFIObjectHandle* out);
#endif

/* ---- Types ---- */
/*!
 * 1 if object_type_index is target_type_index or derives from it, else 0. Agrees with the
 * IsInstance that TVM FFI headers compile into modules (child-slot range, then the ancestors of
 * TVMFFIGetTypeInfo(object_type_index)); lock-free.
 */
FFIJIT_API int FFIJITObjectIsInstance(int32_t object_type_index, int32_t target_type_index);
/*! The registered key of a type index ("ffi.String", "int", ...), as an owned String. */
FFIJIT_API int FFIJITTypeIndexToKey(int32_t type_index, TVMFFIAny* out);

/*! Like TVMFFIObjectCreateOpaque, for any registered object type (TVMFFIObjectCreateOpaque
 *  accepts only kTVMFFIOpaquePyObject): an object of `type_index` holding `handle`. */
FFIJIT_API int FFIJITObjectCreateOpaqueOfType(void* handle, int32_t type_index,
                                              void (*deleter)(void* handle),
                                              TVMFFIObjectHandle* out);

/* ---- The TVM FFI revision this build implements ---- */
/*! What FFIJITGetTvmFfiAbi reports; every pointer is static. */
typedef struct {
  const char* name;    /* short revision name, e.g. "e98b94e1" */
  const char* commit;  /* full apache/tvm-ffi commit hash */
  const char* version; /* the TVM FFI package version at that commit, e.g. "0.1.0b4" */
  int32_t object_header_size;
  int32_t error_cell_size;
  int32_t type_info_size;
  int32_t num_functions;        /* entries in `functions` */
  const char* const* functions; /* the C functions TVM FFI exports at that revision */
} FFIJITTvmFfiAbi;
/*! The TVM FFI ABI revision (FFIJIT_TVM_FFI_ABI) the runtime was built for. Named apart from
 *  TVM FFI 0.1's TVMFFIGetVersion, which has a different prototype. Never NULL. */
FFIJIT_API const FFIJITTvmFfiAbi* FFIJITGetTvmFfiAbi(void);

/* ---- Devices ---- */
/*! Parses "cpu", "cpu:0", "cuda:1", ...; anything else is a ValueError quoting the string. */
FFIJIT_API int FFIJITDeviceFromString(const TVMFFIByteArray* str, DLDevice* out);
FFIJIT_API int FFIJITDeviceToString(const DLDevice* device, TVMFFIAny* out);

/* ---- Tensors ---- */
/*! A new compact CPU tensor with zeroed storage (for tests and tools). */
FFIJIT_API int FFIJITTensorCreateEmpty(const int64_t* shape, int32_t ndim, DLDataType dtype,
                                       DLDevice device, TVMFFIObjectHandle* out);

/*!
 * 0 when a producer's DLTensor may be read: ndim at most 64, a shape for every dimension, a data
 * type with storage, data for a non-empty tensor, and strides and byte_offset that address
 * memory a pointer can reach. Otherwise -1 with a ValueError "<func>: <what is wrong>". ffijit's
 * runtime checks every import this way; over TVM FFI's own library, whose importers trust the
 * producer, ffijit's front ends call it before handing a tensor over.
 */
FFIJIT_API int FFIJITTensorCheck(const DLTensor* tensor, const char* func);
/*! FFIJITTensorCheck for a versioned producer, after its DLPack major version and its read-only
 *  flag (a Tensor is writable: a native may write it, so read-only memory is refused). */
FFIJIT_API int FFIJITTensorCheckVersioned(const DLManagedTensorVersioned* from, const char* func);

/* ---- Globals ---- */
/*! Removes a global function; a KeyError when the name is not registered. */
FFIJIT_API int FFIJITFunctionRemoveGlobal(const TVMFFIByteArray* name);
/*! All registered global names, sorted, as a new Array of Strings. */
FFIJIT_API int FFIJITFunctionListGlobals(TVMFFIObjectHandle* out);

/* ---- Which TVM FFI ABI revision a module was built for ---- */
/*!
 * Refuses a module built for the other TVM FFI ABI revision, where its undefined symbols tell:
 * `names[0..n)` are the symbols the module leaves undefined (its imports). When one of them is a C
 * function that only the other revision exports (a v0.1 C++ module needs TVMFFIGetCustomAllocator
 * and TVMFFIBacktrace, an e98b94e1 one TVMFFITraceback), returns -1 with a RuntimeError that names
 * `module_name`, both revisions and the telling symbols; else 0. A module that touches none of
 * those (a C module that never reaches into an object header) cannot be told apart.
 */
FFIJIT_API int FFIJITCheckModuleAbiSymbols(const char* module_name, const TVMFFIByteArray* names,
                                           int32_t n);
/*!
 * FFIJITCheckModuleAbiSymbols on the undefined symbols of the ELF file at `path` (a shared
 * library's dynamic symbols, a relocatable object's symbol table). A file that is not ELF, or not
 * readable, passes (the loader reports it); a malformed ELF table is read only within its bounds.
 */
FFIJIT_API int FFIJITCheckModuleAbiFile(const char* path);

/* ---- Library modules over a symbol source ---- */
/*!
 * Where a library module finds its symbols when they do not come from a dlopen'ed library (the
 * JIT's object and bitcode modules). `find` sets *address to the symbol `name`'s address or NULL
 * when it is not defined, *size to its size in bytes (0 when unknown) and *is_code to 1 for a
 * function, 0 for data, -1 when unknown; it returns 0, or -1 with an error raised (a link that
 * failed). `release(self)` runs once, when no module uses the source any more. `description`
 * names the source in messages (e.g. the file); it is copied.
 */
typedef struct {
  void* self;
  int (*find)(void* self, const char* name, void** address, size_t* size, int* is_code);
  void (*release)(void* self);
  const char* description;
} FFIJITSymbolSource;
/*!
 * A new library module (kind "library") over `source`, loaded as a shared library is: context
 * symbols written, `__tvm_ffi__library_bin` decoded when defined (the result is then its module
 * 0), `__tvm_ffi__library_ctx` set. Its functions are the source's `__tvm_ffi_<name>` symbols.
 * On failure `source->release` has run.
 */
FFIJIT_API int FFIJITLibraryModuleCreate(const FFIJITSymbolSource* source, TVMFFIObjectHandle* out);
/*!
 * Writes the registered context symbols and `__tvm_ffi__library_ctx` (= `module`) again, for
 * symbols the source gained after the module was created (an object added to a JIT module).
 */
FFIJIT_API int FFIJITLibraryModuleBindContext(TVMFFIObjectHandle module);

#ifdef __cplusplus
} /* extern "C" */
#endif

FFIJIT_STATIC_ASSERT(sizeof(FFIJITArrayCell) == 32, "FFIJITArrayCell is 32 bytes");
FFIJIT_STATIC_ASSERT(offsetof(FFIJITArrayCell, data_deleter) == 24, "Array data_deleter at +48");
FFIJIT_STATIC_ASSERT(offsetof(FFIJITFunctionCell, self) == 16, "Function self after the cell");

#endif /* FFIJIT_C_EXT_H_ */
