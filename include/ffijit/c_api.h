/*
 * ffijit C ABI: the TVM FFI value/object model and packed calling convention, byte for byte.
 *
 * C99 and C++ compatible. Every exported function returns 0 on success and -1 on failure with an
 * Error object stored in thread-local storage (take it with TVMFFIErrorMoveFromRaised); nothing
 * throws across this boundary.
 */
#ifndef FFIJIT_C_API_H_
#define FFIJIT_C_API_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#include "ffijit/export.h"

#ifdef __cplusplus
#define FFIJIT_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define FFIJIT_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/*
 * The TVM FFI revision whose layouts this build implements, chosen at build time (CMake cache
 * variable FFIJIT_TVM_FFI_ABI, one row of cmake/tvm_ffi_revisions.txt). The generated config,
 * installed with the headers so that every consumer sees the revision the library was built for,
 * gives each revision's C id (FFIJIT_TVM_FFI_ABI_<ID>), the selected one, its identity and its
 * header (FFIJIT_TVM_FFI_ABI_HEADER), included below.
 */
#include "ffijit/tvm_ffi_abi_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- DLPack >= 1.0 additions, declared here when the installed dlpack.h predates them. ---- */
#ifndef DLPACK_MAJOR_VERSION
#define FFIJIT_DECLARES_DLPACK_VERSIONED 1
/*! The DLPack ABI version a versioned managed tensor carries. */
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

/*! DLPack 1.0 managed tensor: version, flags, and a deleter that takes the versioned struct. */
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
/* DLPack 1.0 adds a boolean type code after kDLComplex (5). */
#define FFIJIT_DL_BOOL_CODE 6
#else
#define FFIJIT_DECLARES_DLPACK_VERSIONED 0
#define FFIJIT_DL_BOOL_CODE kDLBool
#endif
/* DLPack 1.2 names the allocator type of TVM FFI's environment API (a managed tensor shaped like
 * `prototype`; failures reported through SetError). Declared here for older dlpack.h. */
#if !defined(DLPACK_MAJOR_VERSION) || (DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION < 2)
typedef int (*DLPackManagedTensorAllocator)(DLTensor* prototype, DLManagedTensorVersioned** out,
                                            void* error_ctx,
                                            void (*SetError)(void* error_ctx, const char* kind,
                                                             const char* message));
#endif
/* The DLPack version ffijit stamps into exported tensors is the revision's (FFIJIT_DLPACK_*). */

/* ---- Deleter flags: which part of an object the deleter must release. ---- */
typedef enum {
  kTVMFFIObjectDeleterFlagBitMaskStrong = 1, /* destroy the value (last strong reference gone) */
  kTVMFFIObjectDeleterFlagBitMaskWeak = 2,   /* free the memory (last weak reference gone) */
  kTVMFFIObjectDeleterFlagBitMaskBoth = 3
} TVMFFIObjectDeleterFlagBitMask;

/*! Opaque handle to a TVMFFIObject. */
typedef void* TVMFFIObjectHandle;

/*! The object header; its layout is version-specific (see the ABI header below). */
typedef struct TVMFFIObject TVMFFIObject;

/*! The 16-byte tagged union every argument and result travels in. Unused bytes are zero. */
typedef struct TVMFFIAny {
  int32_t type_index;
  union {
    uint32_t zero_padding;
    uint32_t small_str_len;
  };
  union {
    int64_t v_int64;
    double v_float64;
    void* v_ptr;
    const char* v_c_str;
    TVMFFIObject* v_obj;
    DLDataType v_dtype;
    DLDevice v_device;
    char v_bytes[8];
    uint64_t v_uint64;
  };
} TVMFFIAny;

/*! A borrowed byte range; not NUL-terminated in general. */
typedef struct {
  const char* data;
  size_t size;
} TVMFFIByteArray;

/*! Payload of a Shape object. */
typedef struct {
  const int64_t* data;
  size_t size;
} TVMFFIShapeCell;

/*! Packed calling convention: 0 on success, -1 with a raised error otherwise. */
typedef int (*TVMFFISafeCallType)(void* handle, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result);

/*! Payload of a Function object; TVMFFIFunctionCall passes the object itself as `handle`. */
typedef struct {
  TVMFFISafeCallType safe_call;
  /* At header+32: the C++ `call` entry that code compiled from TVM FFI's C++ headers calls
   * directly; it reports failure by throwing. Every Function ffijit creates sets it to
   * FFIJITFunctionCppCallEntry() (c_ext.h). C code must not call it. */
  void* cpp_call;
} TVMFFIFunctionCell;

/* ---- Reflection records alike at both revisions (the others are in the revision's header) ---- */

/*! Reads the field at address `field` into `result` (an owned value, +1 for objects). */
typedef int (*TVMFFIFieldGetter)(void* field, TVMFFIAny* result);
/*! Converts `value` (a view), stores it at `field` and releases the old value. */
typedef int (*TVMFFIFieldSetter)(void* field, const TVMFFIAny* value);
/*! Makes a new default instance; `*result` is +1. */
typedef int (*TVMFFIObjectCreator)(TVMFFIObjectHandle* result);

/*! How structural equality and hashing treat objects of a type. */
typedef enum {
  kTVMFFISEqHashKindUnsupported = 0,
  kTVMFFISEqHashKindTreeNode = 1,
  kTVMFFISEqHashKindFreeVar = 2,
  kTVMFFISEqHashKindDAGNode = 3,
  kTVMFFISEqHashKindConstTreeNode = 4,
  kTVMFFISEqHashKindUniqueInstance = 5
} TVMFFISEqHashKind;

/*! Per-type extra information, registered at most once per type. */
typedef struct {
  TVMFFIByteArray doc;
  TVMFFIObjectCreator creator; /* may be NULL */
  int32_t total_size;          /* the C++ sizeof, 0 if unknown */
  TVMFFISEqHashKind structural_eq_hash_kind;
} TVMFFITypeMetadata;

/* ---- The selected TVM FFI revision's layouts: object header, error cell, reflection records. ----
 */
#ifdef __cplusplus
} /* extern "C" */
#endif
#include FFIJIT_TVM_FFI_ABI_HEADER
#ifdef __cplusplus
extern "C" {
#endif

/* ---- Type indices (same numbers as TVM FFI). ---- */
typedef enum {
  kTVMFFIAny = -1,
  kTVMFFINone = 0,
  kTVMFFIInt = 1,
  kTVMFFIBool = 2,
  kTVMFFIFloat = 3,
  kTVMFFIOpaquePtr = 4,
  kTVMFFIDataType = 5,
  kTVMFFIDevice = 6,
  kTVMFFIDLTensorPtr = 7,
  kTVMFFIRawStr = 8,
  kTVMFFIByteArrayPtr = 9,
  kTVMFFIObjectRValueRef = 10,
  kTVMFFISmallStr = 11,
  kTVMFFISmallBytes = 12,
  kTVMFFIStaticObjectBegin = 64,
  kTVMFFIObject = 64,
  kTVMFFIStr = 65,
  kTVMFFIBytes = 66,
  kTVMFFIError = 67,
  kTVMFFIFunction = 68,
  kTVMFFIShape = 69,
  kTVMFFITensor = 70,
  kTVMFFIArray = 71,
  kTVMFFIMap = 72,
  kTVMFFIModule = 73,
  kTVMFFIOpaquePyObject = 74,
  /* The static object types the revision adds after 74 (v0.1.13: List 75, Dict 76,
   * VisitInterrupt 77); kTVMFFIStaticObjectEnd follows them. */
  FFIJIT_TVM_FFI_ABI_STATIC_TYPES_AFTER_74 kTVMFFIStaticObjectEnd,
  kTVMFFIDynObjectBegin = 128
} TVMFFITypeIndex;

/*! Payload of an opaque object made by TVMFFIObjectCreateOpaque. */
typedef struct {
  void* handle;
} TVMFFIOpaqueObjectCell;

/* ---- Objects and types ---- */
FFIJIT_API int TVMFFIObjectIncRef(TVMFFIObjectHandle obj);
FFIJIT_API int TVMFFIObjectDecRef(TVMFFIObjectHandle obj);
/*! An object of type 74 (kTVMFFIOpaquePyObject) holding `handle`; `deleter(handle)` runs when it
 *  dies. Any other type index is a RuntimeError (FFIJITObjectCreateOpaqueOfType takes any type). */
FFIJIT_API int TVMFFIObjectCreateOpaque(void* handle, int32_t type_index,
                                        void (*deleter)(void* handle), TVMFFIObjectHandle* out);
/*! Exact key lookup; an unknown key is an InternalError ``Cannot find type `K` ``. */
FFIJIT_API int TVMFFITypeKeyToIndex(const TVMFFIByteArray* type_key, int32_t* out_tindex);
/*!
 * The index of `type_key`, allocating it when new (child slots, overflow, depth as in TVM FFI). An
 * existing key returns its index whatever the other arguments. Where TVM FFI aborts (no parent for
 * a dynamic type, a parent out of the table, a taken static index, a wrong depth, no slot left),
 * ffijit returns -1 with an error raised (ValueError / RuntimeError naming the key).
 */
FFIJIT_API int32_t TVMFFITypeGetOrAllocIndex(const TVMFFIByteArray* type_key,
                                             int32_t static_type_index, int32_t type_depth,
                                             int32_t num_child_slots,
                                             int32_t child_slots_can_overflow,
                                             int32_t parent_type_index);

/* ---- The type table and reflection (ownership and thread-safety: docs/guide/09-reflection.md)
 * ---- */
/*!
 * The entry of `type_index`, valid for the life of the process. Never NULL: an index with no entry
 * (out of range, an empty slot) gets a shared placeholder entry whose type_index is -1 and key
 * "ffijit.UnknownType" (depth 0, no members), and no error is raised. TVM FFI aborts instead.
 */
FFIJIT_API const TVMFFITypeInfo* TVMFFIGetTypeInfo(int32_t type_index);
/*! Appends a field (strings copied, default kept as an owned copy when HasDefault is set). */
FFIJIT_API int TVMFFITypeRegisterField(int32_t type_index, const TVMFFIFieldInfo* info);
/*! Appends a method (strings copied, the method value retained). */
FFIJIT_API int TVMFFITypeRegisterMethod(int32_t type_index, const TVMFFIMethodInfo* info);
/*! Sets a type's metadata, once; a second call is a RuntimeError. */
FFIJIT_API int TVMFFITypeRegisterMetadata(int32_t type_index, const TVMFFITypeMetadata* metadata);
/*! Sets column `attr_name` at `type_index` (an owned copy); index 0 only creates the column. */
FFIJIT_API int TVMFFITypeRegisterAttr(int32_t type_index, const TVMFFIByteArray* attr_name,
                                      const TVMFFIAny* attr_value);
/*! The column named `attr_name`, NULL if never created. Re-read data/size on every lookup. */
FFIJIT_API const TVMFFITypeAttrColumn* TVMFFIGetTypeAttrColumn(const TVMFFIByteArray* attr_name);

/* ---- Functions and the global registry ---- */
FFIJIT_API int TVMFFIFunctionCreate(void* self, TVMFFISafeCallType safe_call,
                                    void (*deleter)(void* self), TVMFFIObjectHandle* out);
FFIJIT_API int TVMFFIFunctionSetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle f,
                                       int allow_override);
/*! Registers method_info->method (a Function, or None for a null entry) under its name, keeping
 *  doc, schema and flags. */
FFIJIT_API int TVMFFIFunctionSetGlobalFromMethodInfo(const TVMFFIMethodInfo* method_info,
                                                     int allow_override);
/*! *out is +1, or NULL with a 0 return when no function has that name. */
FFIJIT_API int TVMFFIFunctionGetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle* out);
FFIJIT_API int TVMFFIFunctionCall(TVMFFIObjectHandle func, TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result);
FFIJIT_API int TVMFFIAnyViewToOwnedAny(const TVMFFIAny* any_view, TVMFFIAny* out);

/* ---- Errors ---- */
FFIJIT_API void TVMFFIErrorSetRaised(TVMFFIObjectHandle error);
FFIJIT_API void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message);
FFIJIT_API void TVMFFIErrorMoveFromRaised(TVMFFIObjectHandle* result);
/* TVMFFIErrorCreate and the traceback/backtrace function: see the revision's header. */

/* ---- Strings, bytes, data types ---- */
FFIJIT_API int TVMFFIStringFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out);
FFIJIT_API int TVMFFIBytesFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out);
FFIJIT_API int TVMFFIDataTypeFromString(const TVMFFIByteArray* str, DLDataType* out);
FFIJIT_API int TVMFFIDataTypeToString(const DLDataType* dtype, TVMFFIAny* out);

/* ---- DLPack tensors ---- */
FFIJIT_API int TVMFFITensorFromDLPack(DLManagedTensor* from, int32_t require_alignment,
                                      int32_t require_contiguous, TVMFFIObjectHandle* out);
FFIJIT_API int TVMFFITensorToDLPack(TVMFFIObjectHandle from, DLManagedTensor** out);
FFIJIT_API int TVMFFITensorFromDLPackVersioned(DLManagedTensorVersioned* from,
                                               int32_t require_alignment,
                                               int32_t require_contiguous, TVMFFIObjectHandle* out);
FFIJIT_API int TVMFFITensorToDLPackVersioned(TVMFFIObjectHandle from,
                                             DLManagedTensorVersioned** out);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* ---- Layout checks: these sizes and offsets are the ABI. ---- */
FFIJIT_STATIC_ASSERT(sizeof(TVMFFIAny) == 16, "TVMFFIAny is 16 bytes");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIAny, v_int64) == 8, "TVMFFIAny payload at offset 8");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIAny, small_str_len) == 4, "small_str_len at offset 4");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFISEqHashKind) == 4, "eq/hash kind enum is 4 bytes");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFITypeMetadata) == 32, "TVMFFITypeMetadata is 32 bytes");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFITypeMetadata, creator) == 16, "metadata creator at 16");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFITypeMetadata, total_size) == 24, "metadata total_size at 24");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFITypeMetadata, structural_eq_hash_kind) == 28,
                     "metadata eq/hash kind at 28");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFIByteArray) == 16, "TVMFFIByteArray is 16 bytes");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIByteArray, size) == 8, "TVMFFIByteArray size at offset 8");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIShapeCell, size) == 8, "TVMFFIShapeCell size at offset 8");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFunctionCell, safe_call) == 0, "safe_call at offset 0");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFIOpaqueObjectCell) == 8, "TVMFFIOpaqueObjectCell is 8 bytes");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFITypeIndex) == 4, "TVMFFITypeIndex is 4 bytes");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFIShapeCell) == 16, "TVMFFIShapeCell is 16 bytes");
FFIJIT_STATIC_ASSERT(sizeof(DLDataType) == 4, "DLDataType is 4 bytes");
FFIJIT_STATIC_ASSERT(sizeof(DLDevice) == 8, "DLDevice is 8 bytes");
FFIJIT_STATIC_ASSERT(sizeof(DLTensor) == 48, "DLTensor is 48 bytes");

#endif /* FFIJIT_C_API_H_ */
