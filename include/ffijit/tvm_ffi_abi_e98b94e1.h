/*
 * The version-specific layout of the TVM FFI ABI at apache/tvm-ffi commit e98b94e1 (0.1.0b4):
 * the object header, the error cell, the reflection records and the list of exported C functions.
 *
 * Included by ffijit/c_api.h (as FFIJIT_TVM_FFI_ABI_HEADER) when FFIJIT_TVM_FFI_ABI selects this
 * revision, after TVMFFIAny, TVMFFIByteArray, TVMFFIObjectHandle and the deleter flags are declared
 * and before the type-index enum. The revision's identity is its row of
 * cmake/tvm_ffi_revisions.txt; tvm_ffi_abi_v0_1_13.h is a complete header of the same shape.
 * Nothing else in ffijit spells these layouts. C99 and C++17.
 */
#ifndef FFIJIT_TVM_FFI_ABI_E98B94E1_H_
#define FFIJIT_TVM_FFI_ABI_E98B94E1_H_

#ifndef FFIJIT_C_API_H_
#error "include ffijit/c_api.h, not this header"
#endif

/* ---- What this revision has (read where behaviour truly differs; every place that reads these
 * is listed in docs/architecture/02-tvm-ffi-abi-revisions.md) ----
 */
#define FFIJIT_TVM_FFI_HAS_CUSTOM_ALLOCATOR 0
#define FFIJIT_TVM_FFI_HAS_ERROR_CAUSE_CHAIN 0
/* header + DLTensor + cached shape/strides objects and a DLPack export cache */
#define FFIJIT_TVM_FFI_TENSOR_OBJECT_SIZE 96
#define FFIJIT_TVM_FFI_HAS_TENSOR_UNSAFE_VIEW 0
/* TVMFFIEnv{Set,Get}TensorAllocator with the seed's DLPackTensorAllocator type */
#define FFIJIT_TVM_FFI_HAS_DLPACK_MANAGED_TENSOR_ALLOCATOR 0
/* Optional<int> is a std::optional<int> (8 bytes); Optional<ObjectRef> is one nullable object
 * pointer; json::Stringify takes its indent by value. */
#define FFIJIT_TVM_FFI_OPTIONAL_VALUE_IS_ANY 0
#define FFIJIT_TVM_FFI_OPTIONAL_OBJECT_IS_ANY 0
#define FFIJIT_TVM_FFI_JSON_STRINGIFY_INDENT_BY_REF 0
#define FFIJIT_TVM_FFI_MODULE_HAS_FUNCTION_DOC 0
/* tvm::ffi::Error is header-only (nothing exported) and its what() is the full traceback text. */
#define FFIJIT_TVM_FFI_ERROR_CLASS_EXPORTED 0
#define FFIJIT_TVM_FFI_ERROR_WHAT_IS_MESSAGE 0
/* The extra C++ API has ReprPrint, Recursive{Eq,Lt,Le,Gt,Ge,Hash}, DeepCopy and
 * VisitErrorContext::FindAccessPaths (and their ffi.* globals). */
#define FFIJIT_TVM_FFI_HAS_DATACLASS_API 0
#define FFIJIT_TVM_FFI_DTYPE_BOOL_IS_DLBOOL 0
#define FFIJIT_DLPACK_MAJOR 1
#define FFIJIT_DLPACK_MINOR 0
#define FFIJIT_TVM_FFI_REGISTERS_TESTING_GLOBALS 1
/* No List (75) or Dict (76) types, and none of their globals. */
#define FFIJIT_TVM_FFI_HAS_LIST_DICT 0
/* The enum types ffi.Enum/ffi.IntEnum/ffi.StrEnum/ffi.EnumState (reflected by the runtime) and
 * their JSON graph form (an IntEnum as its integer index, any other Enum as its string index). */
#define FFIJIT_TVM_FFI_HAS_ENUM 0
/* The runtime registers ffi.GetRegisteredTypeKeys, ffi.FunctionFromExternC,
 * ffi.MakeField{Getter,Setter}, ffi.ModuleGlobals{Add,Remove}, ffi.StructuralEqual,
 * ffi.StructuralKey/ffi.StructuralKeyEqual (with the ffi.StructuralKey type). */
#define FFIJIT_TVM_FFI_HAS_BINDING_GLOBALS_0_1 0
/* TVMFFIObjectDecRef(NULL) is an error (ffijit raises ValueError where TVM FFI crashed). */
#define FFIJIT_TVM_FFI_DECREF_NULL_IS_NOOP 0
/* The C API has TVMFFIGetVersion and TVMFFIHandleInitOnce/DeinitOnce. */
#define FFIJIT_TVM_FFI_HAS_GET_VERSION 0
#define FFIJIT_TVM_FFI_HAS_HANDLE_INIT_ONCE 0

/* No static object types after ffi.OpaquePyObject (74). */
#define FFIJIT_TVM_FFI_ABI_STATIC_TYPES_AFTER_74
#define FFIJIT_TVM_FFI_ABI_STATIC_TYPE_KEYS_AFTER_74(X)
/* parent_type_index -2 is no query mode: TVMFFITypeGetOrAllocIndex rejects it (ValueError). */
#define FFIJIT_TVM_FFI_HAS_TYPE_INDEX_QUERY 0
/* A second field of the same name on one type replaces the first (a reloaded module). */
#define FFIJIT_TVM_FFI_REJECTS_DUPLICATE_FIELDS 0
/* No structural visitors, __s_visit__ hooks or ffi.StructuralKey. */
#define FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT 0
/* No automatic __ffi_init__: no InitOff/KwOnly field flags, ffi.GetKwargsObject or
 * ffi._RegisterFFIInit. */
#define FFIJIT_TVM_FFI_HAS_AUTO_INIT 0
/* No ffi.GetGlobalFuncMetadata. */
#define FFIJIT_TVM_FFI_HAS_GLOBAL_FUNC_METADATA 0
/* TVMFFITypeAttrColumn is {data, size_t size}: no begin_index. */
#define FFIJIT_TVM_FFI_HAS_ATTR_COLUMN_BEGIN_INDEX 0

/* The type-attribute columns the runtime creates at start-up: none at this revision (header code
 * creates what it reads). */
#define FFIJIT_TVM_FFI_BUILTIN_ATTR_COLUMNS(X)

#ifdef __cplusplus
extern "C" {
#endif

/*!
 * The 24-byte header at the start of every heap object: a 32-bit weak count (starts at 1, owned
 * collectively by the strong references) and a 64-bit strong count (starts at 1).
 */
struct TVMFFIObject {
  int32_t type_index;
  uint32_t weak_ref_count;
  uint64_t strong_ref_count;
  union {
    void (*deleter)(void* self, int flags);
    int64_t __ensure_align;
  };
};

/*! Payload of an Error object. */
typedef struct {
  TVMFFIByteArray kind;
  TVMFFIByteArray message;
  TVMFFIByteArray traceback;
  void (*update_traceback)(TVMFFIObjectHandle self, const TVMFFIByteArray* traceback);
} TVMFFIErrorCell;

/* ---- Reflection ---- */

/*! Bits of TVMFFIFieldInfo::flags and TVMFFIMethodInfo::flags. */
typedef enum {
  kTVMFFIFieldFlagBitMaskWritable = 1 << 0,
  kTVMFFIFieldFlagBitMaskHasDefault = 1 << 1,
  kTVMFFIFieldFlagBitMaskIsStaticMethod = 1 << 2,
  kTVMFFIFieldFlagBitMaskSEqHashIgnore = 1 << 3,
  kTVMFFIFieldFlagBitMaskSEqHashDef = 1 << 4
} TVMFFIFieldFlagBitMask;

/*! One reflected field of a type. `offset` counts from the object header's address. */
typedef struct {
  TVMFFIByteArray name;
  TVMFFIByteArray doc;
  TVMFFIByteArray type_schema;
  int64_t flags;
  int64_t size;
  int64_t alignment;
  int64_t offset;
  TVMFFIFieldGetter getter;
  TVMFFIFieldSetter setter;
  /* Meaningful only with kTVMFFIFieldFlagBitMaskHasDefault; None otherwise. */
  TVMFFIAny default_value;
  /* A POD or static object index, 64 for any nullable object, -1 for "any". */
  int32_t field_static_type_index;
} TVMFFIFieldInfo;

/*! One reflected method; `method` is a Function (argument 0 is `self` unless static). */
typedef struct {
  TVMFFIByteArray name;
  TVMFFIByteArray doc;
  TVMFFIByteArray type_schema;
  int64_t flags;
  TVMFFIAny method;
} TVMFFIMethodInfo;

/*! A named column of per-type attributes: data[type_index] for type_index < size (views). */
typedef struct {
  const TVMFFIAny* data;
  size_t size;
} TVMFFITypeAttrColumn;

/*! The entry of `type_index` in `column`, or NULL when it is absent (read as header code does). */
static inline const TVMFFIAny* FFIJITTypeAttrColumnEntry(const TVMFFITypeAttrColumn* column,
                                                         int32_t type_index) {
  return type_index >= 0 && (size_t)type_index < column->size ? &column->data[type_index] : NULL;
}

/*! A type-table entry. `type_acenstors` (spelled as in TVM FFI) has `type_depth` entries: [0] is
 *  ffi.Object, [type_depth - 1] the parent. `fields`/`methods` list the type's own members. */
#ifdef __cplusplus
struct TVMFFITypeInfo {
#else
typedef struct TVMFFITypeInfo {
#endif
  int32_t type_index;
  int32_t type_depth;
  TVMFFIByteArray type_key;
  const struct TVMFFITypeInfo** type_acenstors;
  uint64_t type_key_hash;
  int32_t num_fields;
  int32_t num_methods;
  const TVMFFIFieldInfo* fields;
  const TVMFFIMethodInfo* methods;
  const TVMFFITypeMetadata* metadata;
#ifdef __cplusplus
};
#else
} TVMFFITypeInfo;
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

/*
 * The C functions libtvm_ffi exports from c_api.h at this revision (30), in declaration order.
 * FFIJIT_TVM_FFI_C_API_FUNCTIONS(X) expands X(name) for each; tests check every one is exported.
 */
#define FFIJIT_TVM_FFI_C_API_FUNCTIONS(X)  \
  X(TVMFFIObjectIncRef)                    \
  X(TVMFFIObjectDecRef)                    \
  X(TVMFFIObjectCreateOpaque)              \
  X(TVMFFITypeKeyToIndex)                  \
  X(TVMFFIFunctionCreate)                  \
  X(TVMFFIFunctionGetGlobal)               \
  X(TVMFFIAnyViewToOwnedAny)               \
  X(TVMFFIFunctionCall)                    \
  X(TVMFFIErrorMoveFromRaised)             \
  X(TVMFFIErrorSetRaised)                  \
  X(TVMFFIErrorSetRaisedFromCStr)          \
  X(TVMFFIErrorCreate)                     \
  X(TVMFFITensorFromDLPack)                \
  X(TVMFFITensorToDLPack)                  \
  X(TVMFFITensorFromDLPackVersioned)       \
  X(TVMFFITensorToDLPackVersioned)         \
  X(TVMFFIStringFromByteArray)             \
  X(TVMFFIBytesFromByteArray)              \
  X(TVMFFIDataTypeFromString)              \
  X(TVMFFIDataTypeToString)                \
  X(TVMFFIFunctionSetGlobal)               \
  X(TVMFFIFunctionSetGlobalFromMethodInfo) \
  X(TVMFFITypeRegisterField)               \
  X(TVMFFITypeRegisterMethod)              \
  X(TVMFFITypeRegisterMetadata)            \
  X(TVMFFITypeRegisterAttr)                \
  X(TVMFFIGetTypeAttrColumn)               \
  X(TVMFFITraceback)                       \
  X(TVMFFITypeGetOrAllocIndex)             \
  X(TVMFFIGetTypeInfo)
#define FFIJIT_TVM_FFI_NUM_C_API_FUNCTIONS 30
/* The C functions that the revisions of another C function set export and this one must not
 * (checked by tests; a module that needs one was built for one of those revisions), and those
 * revisions' names (from cmake/tvm_ffi_revisions.txt, through the generated config). */
#define FFIJIT_TVM_FFI_REMOVED_FUNCTIONS_REVISIONS FFIJIT_TVM_FFI_C_API_V0_1_REVISIONS
#define FFIJIT_TVM_FFI_REMOVED_FUNCTIONS(X)    \
  X(TVMFFIBacktrace)                           \
  X(TVMFFIGetCustomAllocator)                  \
  X(TVMFFISetCustomAllocator)                  \
  X(TVMFFIGetVersion)                          \
  X(TVMFFIErrorCreateWithCauseAndExtraContext) \
  X(TVMFFIErrorSetRaisedFromCStrParts)         \
  X(TVMFFITensorCreateUnsafeView)              \
  X(TVMFFIHandleInitOnce)                      \
  X(TVMFFIHandleDeinitOnce)                    \
  X(TVMFFIEnvTensorAlloc)                      \
  X(TVMFFIEnvGetDLPackManagedTensorAllocator)  \
  X(TVMFFIEnvSetDLPackManagedTensorAllocator)

/* ---- Member names that differ between revisions, for code that builds on both ---- */
#define FFIJIT_TYPE_ANCESTORS type_acenstors
#define FFIJIT_MEMBER_METADATA type_schema /* TVMFFIFieldInfo / TVMFFIMethodInfo schema text */
#define FFIJIT_FIELD_DEFAULT default_value
#define FFIJIT_ERROR_BACKTRACE traceback
/* Field flag bits only the other revision has (setter Function objects, default factories). */
/* Field setters may be Function objects and defaults may come from factories (bits 11, 5). */
#define FFIJIT_TVM_FFI_HAS_FIELD_FUNCTIONS 0
#define FFIJIT_FIELD_FLAG_SETTER_IS_FUNCTION 0
#define FFIJIT_FIELD_FLAG_DEFAULT_FROM_FACTORY 0
#define FFIJIT_FIELD_FLAG_SEQ_HASH_DEF_NON_RECURSIVE 0

/* ---- The C functions whose prototypes belong to this revision ---- */
#ifdef __cplusplus
extern "C" {
#endif
/*! A new Error (+1) from three byte arrays; NULL when allocation fails. */
FFIJIT_API TVMFFIObjectHandle TVMFFIErrorCreate(const TVMFFIByteArray* kind,
                                                const TVMFFIByteArray* message,
                                                const TVMFFIByteArray* traceback);
/*! This thread's traceback text at the call, most recent call last (a thread-local buffer). */
FFIJIT_API const TVMFFIByteArray* TVMFFITraceback(const char* filename, int lineno,
                                                  const char* func, int cross_ffi_boundary);
#ifdef __cplusplus
} /* extern "C" */
#endif

/* ---- The reference-count protocol on this header (header code does the same inline) ---- */
/*! Fills a fresh header: one strong and one (collective) weak reference. */
static inline void FFIJITHeaderInit(struct TVMFFIObject* obj, int32_t type_index,
                                    void (*deleter)(void* self, int flags)) {
  obj->type_index = type_index;
  obj->weak_ref_count = 1;
  obj->strong_ref_count = 1;
  obj->deleter = deleter;
}
/*! Sets the counts of a header that is not shared yet (objects built on the stack, in tests). */
static inline void FFIJITHeaderSetCounts(struct TVMFFIObject* obj, uint32_t strong, uint32_t weak) {
  obj->strong_ref_count = strong;
  obj->weak_ref_count = weak;
}
static inline uint64_t FFIJITHeaderStrongCount(const struct TVMFFIObject* obj) {
  return __atomic_load_n(&obj->strong_ref_count, __ATOMIC_ACQUIRE);
}
static inline uint64_t FFIJITHeaderWeakCount(const struct TVMFFIObject* obj) {
  return __atomic_load_n(&obj->weak_ref_count, __ATOMIC_ACQUIRE);
}
static inline void FFIJITHeaderIncStrong(struct TVMFFIObject* obj) {
  __atomic_fetch_add(&obj->strong_ref_count, 1, __ATOMIC_RELAXED);
}
static inline void FFIJITHeaderIncWeak(struct TVMFFIObject* obj) {
  __atomic_fetch_add(&obj->weak_ref_count, 1, __ATOMIC_RELAXED);
}
static inline void FFIJITHeaderDecWeak(struct TVMFFIObject* obj) {
  if (__atomic_fetch_sub(&obj->weak_ref_count, 1, __ATOMIC_ACQ_REL) == 1 && obj->deleter != 0) {
    obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskWeak);
  }
}
static inline void FFIJITHeaderDecStrong(struct TVMFFIObject* obj) {
  /* acq_rel rather than release + fence: the same code on x86, and TSan understands it. */
  if (__atomic_fetch_sub(&obj->strong_ref_count, 1, __ATOMIC_ACQ_REL) != 1) return;
  if (obj->deleter == 0) return;
  /* Weak count 1: only the collective reference of the strong ones is left; nobody can make a new
   * weak reference any more, so value and memory go together. */
  if (__atomic_load_n(&obj->weak_ref_count, __ATOMIC_ACQUIRE) == 1) {
    obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskBoth);
    return;
  }
  obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskStrong);
  FFIJITHeaderDecWeak(obj);
}
/*! Takes a strong reference if the value is still alive (nonzero then). */
static inline int FFIJITHeaderTryPromoteWeak(struct TVMFFIObject* obj) {
  uint64_t count = __atomic_load_n(&obj->strong_ref_count, __ATOMIC_RELAXED);
  while (count != 0) {
    if (__atomic_compare_exchange_n(&obj->strong_ref_count, &count, count + 1, 1, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED)) {
      return 1;
    }
  }
  return 0;
}

/* ---- Layout checks: these sizes and offsets are this revision's ABI (x86-64 LP64). ---- */
FFIJIT_STATIC_ASSERT(sizeof(struct TVMFFIObject) == 24, "TVMFFIObject header is 24 bytes");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFIObject, type_index) == 0, "type_index at offset 0");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFIObject, weak_ref_count) == 4, "weak count at offset 4");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFIObject, strong_ref_count) == 8,
                     "strong count at offset 8");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFIObject, deleter) == 16, "deleter at offset 16");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFIErrorCell) == 56, "TVMFFIErrorCell is 56 bytes");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIErrorCell, message) == 16, "error message at offset 16");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIErrorCell, traceback) == 32, "error traceback at offset 32");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIErrorCell, update_traceback) == 48,
                     "update_traceback at offset 48");

FFIJIT_STATIC_ASSERT(sizeof(TVMFFIFieldFlagBitMask) == 4, "flag enum is 4 bytes");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFIFieldInfo) == 120, "TVMFFIFieldInfo is 120 bytes");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, doc) == 16, "field doc at 16");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, type_schema) == 32, "field type_schema at 32");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, flags) == 48, "field flags at 48");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, size) == 56, "field size at 56");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, alignment) == 64, "field alignment at 64");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, offset) == 72, "field offset at 72");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, getter) == 80, "field getter at 80");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, setter) == 88, "field setter at 88");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, default_value) == 96, "field default at 96");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, field_static_type_index) == 112,
                     "field static type index at 112");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFIMethodInfo) == 72, "TVMFFIMethodInfo is 72 bytes");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIMethodInfo, doc) == 16, "method doc at 16");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIMethodInfo, type_schema) == 32, "method type_schema at 32");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIMethodInfo, flags) == 48, "method flags at 48");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIMethodInfo, method) == 56, "method value at 56");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFITypeAttrColumn) == 16, "TVMFFITypeAttrColumn is 16 bytes");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFITypeAttrColumn, size) == 8, "column size at 8");
FFIJIT_STATIC_ASSERT(sizeof(struct TVMFFITypeInfo) == 72, "TVMFFITypeInfo is 72 bytes");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFITypeInfo, type_depth) == 4, "type_depth at 4");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFITypeInfo, type_key) == 8, "type_key at 8");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFITypeInfo, type_acenstors) == 24, "ancestors at 24");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFITypeInfo, type_key_hash) == 32, "key hash at 32");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFITypeInfo, num_fields) == 40, "num_fields at 40");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFITypeInfo, num_methods) == 44, "num_methods at 44");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFITypeInfo, fields) == 48, "fields at 48");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFITypeInfo, methods) == 56, "methods at 56");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFITypeInfo, metadata) == 64, "metadata at 64");

#endif /* FFIJIT_TVM_FFI_ABI_E98B94E1_H_ */
