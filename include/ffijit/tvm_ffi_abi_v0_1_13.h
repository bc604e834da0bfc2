/*
 * The version-specific layout of the TVM FFI ABI at the released v0.1.13 (apache/tvm-ffi tag
 * v0.1.13): the object header with its one 64-bit reference count and the custom allocator's
 * alloc header, the 72-byte error cell, the sequence cell, the reflection records, the static types
 * this revision adds, the refcount protocol, the prototypes that changed, and the exported list.
 *
 * Included by ffijit/c_api.h (as FFIJIT_TVM_FFI_ABI_HEADER) when FFIJIT_TVM_FFI_ABI selects this
 * revision or one derived from it, after TVMFFIAny, TVMFFIByteArray, TVMFFIObjectHandle and the
 * deleter flags are declared and before the type-index enum. The revision's identity (name,
 * commit, version text) is its row of cmake/tvm_ffi_revisions.txt. Nothing else in ffijit spells
 * these layouts. C99 and C++17.
 */
#ifndef FFIJIT_TVM_FFI_ABI_V0_1_13_H_
#define FFIJIT_TVM_FFI_ABI_V0_1_13_H_

#ifndef FFIJIT_C_API_H_
#error "include ffijit/c_api.h, not this header"
#endif

/* ---- The version TVM FFI's c_api.h states (TVMFFIGetVersion's answer) ---- */
#define TVM_FFI_VERSION_MAJOR 0
#define TVM_FFI_VERSION_MINOR 1
#define TVM_FFI_VERSION_PATCH 13

/* ---- What this revision has (read where behaviour truly differs; every place that reads these
 * is listed in docs/architecture/02-tvm-ffi-abi-revisions.md) ----
 */
/* TVMFFI{Get,Set}CustomAllocator exist; objects header code allocates come from the custom
 * allocator, an alloc header before each. */
#define FFIJIT_TVM_FFI_HAS_CUSTOM_ALLOCATOR 1
/* The error cell has cause_chain and extra_context; backtraces are most recent call first. */
#define FFIJIT_TVM_FFI_HAS_ERROR_CAUSE_CHAIN 1
/* The Tensor object is header + DLTensor (72 bytes), with no cached shape objects or export. */
#define FFIJIT_TVM_FFI_TENSOR_OBJECT_SIZE 72
/* TVMFFITensorCreateUnsafeView exists. */
#define FFIJIT_TVM_FFI_HAS_TENSOR_UNSAFE_VIEW 1
/* The env allocator API is TVMFFIEnv{Set,Get}DLPackManagedTensorAllocator + TVMFFIEnvTensorAlloc.
 */
#define FFIJIT_TVM_FFI_HAS_DLPACK_MANAGED_TENSOR_ALLOCATOR 1
/* Optional<T> of a non-object T (int, String, Bytes, ...) is one 16-byte TVMFFIAny in header
 * code (an Int or None for Optional<int>). */
#define FFIJIT_TVM_FFI_OPTIONAL_VALUE_IS_ANY 1
/* Optional<T> of an ObjectRef-derived T, of ObjectPtr<T> and of Arc<T> is one 16-byte TVMFFIAny
 * too (None when empty): the size of every Optional<ObjectRef> member, reflected field and return
 * value (ModuleObj::GetFunction, StructuralEqual::GetFirstMismatch; AccessPathObj is 64 bytes,
 * VisitErrorContextObj 48). */
#define FFIJIT_TVM_FFI_OPTIONAL_OBJECT_IS_ANY 1
/* json::Stringify takes its indent as `const Optional<int>&` (by value before: another mangled
 * name). */
#define FFIJIT_TVM_FFI_JSON_STRINGIFY_INDENT_BY_REF 1
/* ModuleObj has GetFunctionDoc at virtual slot 4. */
#define FFIJIT_TVM_FFI_MODULE_HAS_FUNCTION_DOC 1
/* tvm::ffi::Error is exported (vtable, typeinfo, typeinfo name) and its what() is the message
 * alone (the traceback text is FullMessage()). */
#define FFIJIT_TVM_FFI_ERROR_CLASS_EXPORTED 1
#define FFIJIT_TVM_FFI_ERROR_WHAT_IS_MESSAGE 1
/* The extra C++ API has ReprPrint, Recursive{Eq,Lt,Le,Gt,Ge,Hash}, DeepCopy and
 * VisitErrorContext::FindAccessPaths (and their ffi.* globals). */
#define FFIJIT_TVM_FFI_HAS_DATACLASS_API 1
/* "bool" names {kDLBool, 8, 1}; short aliases (i32, f16, ...) parse. */
#define FFIJIT_TVM_FFI_DTYPE_BOOL_IS_DLBOOL 1
/* The DLPack version stamped into exported versioned tensors. */
#define FFIJIT_DLPACK_MAJOR 1
#define FFIJIT_DLPACK_MINOR 3
/* The library registers no testing.* globals (libtvm_ffi_testing.so does). */
#define FFIJIT_TVM_FFI_REGISTERS_TESTING_GLOBALS 0
/* List (75) and Dict (76) exist, with their ffi.List* / ffi.Dict* globals (and ffi.ArrayContains,
 * ffi.MapGetItemOrMissing, ffi.GetInvalidObject, ffi.ContainerFindFirstNonCPUDevice). */
#define FFIJIT_TVM_FFI_HAS_LIST_DICT 1
/* The enum types ffi.Enum/ffi.IntEnum/ffi.StrEnum/ffi.EnumState (reflected by the runtime) and
 * their JSON graph form (an IntEnum as its integer index, any other Enum as its string index). */
#define FFIJIT_TVM_FFI_HAS_ENUM 1
/* The runtime registers ffi.GetRegisteredTypeKeys, ffi.FunctionFromExternC,
 * ffi.MakeField{Getter,Setter}, ffi.ModuleGlobals{Add,Remove}, ffi.StructuralEqual,
 * ffi.StructuralKey/ffi.StructuralKeyEqual (with the ffi.StructuralKey type). */
#define FFIJIT_TVM_FFI_HAS_BINDING_GLOBALS_0_1 1
/* TVMFFIObjectDecRef(NULL) is a no-op returning 0 (the seed crashed; ffijit raised ValueError). */
#define FFIJIT_TVM_FFI_DECREF_NULL_IS_NOOP 1
/* The C API has TVMFFIGetVersion and TVMFFIHandleInitOnce/DeinitOnce. */
#define FFIJIT_TVM_FFI_HAS_GET_VERSION 1
#define FFIJIT_TVM_FFI_HAS_HANDLE_INIT_ONCE 1

/* The static object types after ffi.OpaquePyObject (74), as enumerators of TVMFFITypeIndex. */
#define FFIJIT_TVM_FFI_ABI_STATIC_TYPES_AFTER_74 \
  kTVMFFIList = 75, kTVMFFIDict = 76, kTVMFFIVisitInterrupt = 77,
/* Their type keys, as X(index, key): the runtime gives each a type-table entry. */
#define FFIJIT_TVM_FFI_ABI_STATIC_TYPE_KEYS_AFTER_74(X) \
  X(kTVMFFIList, "ffi.List")                            \
  X(kTVMFFIDict, "ffi.Dict")                            \
  X(kTVMFFIVisitInterrupt, "ffi.VisitInterrupt")
/* TVMFFITypeGetOrAllocIndex with parent_type_index -2 only looks the key up (-2 when unknown). */
#define FFIJIT_TVM_FFI_HAS_TYPE_INDEX_QUERY 1
/* TVMFFITypeRegisterField rejects a second field of the same name on one type. */
#define FFIJIT_TVM_FFI_REJECTS_DUPLICATE_FIELDS 1
/* Structural visitors (ffi.StructuralVisitor*, ffi.StructuralWalk, the __s_visit__ hooks of the
 * containers) and ffi.StructuralKey (hashed and compared as a map key through its __any_hash__ /
 * __any_equal__ hooks) exist. */
#define FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT 1
/* Fields may carry InitOff/KwOnly flags; ffi.GetKwargsObject gives the keyword-arguments marker and
 * ffi._RegisterFFIInit(type_index) makes a type's __ffi_init__ from its reflected fields (header
 * code calls it for every ObjectDef without an explicit init). */
#define FFIJIT_TVM_FFI_HAS_AUTO_INIT 1
/* ffi.GetGlobalFuncMetadata(name) returns the metadata a global was registered with. */
#define FFIJIT_TVM_FFI_HAS_GLOBAL_FUNC_METADATA 1
/* TVMFFITypeAttrColumn is {data, int32 size, int32 begin_index}. */
#define FFIJIT_TVM_FFI_HAS_ATTR_COLUMN_BEGIN_INDEX 1

/* The type-attribute columns the runtime creates at start-up (empty): header code looks them up by
 * name during static initialisation (EnumDef needs __ffi_enum__) and fails on a missing one. */
/* clang-format off */
#define FFIJIT_TVM_FFI_BUILTIN_ATTR_COLUMNS(X)                                              \
  X("__ffi_enum__") X("__any_hash__") X("__any_equal__") X("__s_equal__") X("__s_hash__") \
  X("__ffi_shallow_copy__") X("__ffi_repr__") X("__ffi_hash__") X("__ffi_eq__")           \
  X("__ffi_compare__") X("__ffi_new__") X("__ffi_init__") X("__data_to_json__")           \
  X("__data_from_json__") X("__s_visit__")
/* clang-format on */

#ifdef __cplusplus
extern "C" {
#endif

/*!
 * The 24-byte header at the start of every heap object: one 64-bit counter holding the strong count
 * in its low 32 bits and the weak count in its high 32 bits (a new object has one of each; the weak
 * one is owned collectively by the strong references), then the type index.
 */
struct TVMFFIObject {
  uint64_t combined_ref_count;
  int32_t type_index;
  uint32_t __padding;
  union {
    void (*deleter)(void* self, int flags);
    int64_t __ensure_align;
  };
};

/*! Sits in the 8 bytes just before every object that header code allocates; frees its space. */
typedef struct {
  void (*delete_space)(void* body);
} TVMFFIObjectAllocHeader;

/*! The process-wide allocator header code allocates objects from (see TVMFFIGetCustomAllocator). */
typedef struct {
  void* (*allocate)(size_t size, size_t alignment, int32_t type_index, void* context);
  void* context;
} TVMFFICustomAllocator;

/*! TVMFFIGetVersion's answer. */
typedef struct {
  uint32_t major;
  uint32_t minor;
  uint32_t patch;
} TVMFFIVersion;

/*! How update_backtrace changes the stored backtrace. */
typedef enum {
  kTVMFFIBacktraceUpdateModeReplace = 0,
  kTVMFFIBacktraceUpdateModeAppend = 1
} TVMFFIBacktraceUpdateMode;

/*! Payload of an Error object. `backtrace` lists the most recent call first; the cell owns one
 *  reference to `cause_chain` (an Error) and `extra_context` (any object), each NULL if absent. */
typedef struct {
  TVMFFIByteArray kind;
  TVMFFIByteArray message;
  TVMFFIByteArray backtrace;
  void (*update_backtrace)(TVMFFIObjectHandle self, const TVMFFIByteArray* backtrace,
                           int32_t update_mode);
  TVMFFIObjectHandle cause_chain;
  TVMFFIObjectHandle extra_context;
} TVMFFIErrorCell;

/*! The element store shared by Array (71) and List (75), at object +24. */
typedef struct {
  void* data;
  int64_t size;
  int64_t capacity;
  void (*data_deleter)(void* data);
} TVMFFISeqCell;

/* ---- Reflection ---- */

/*! Bits of TVMFFIFieldInfo::flags and TVMFFIMethodInfo::flags. */
typedef enum {
  kTVMFFIFieldFlagBitMaskWritable = 1 << 0,
  kTVMFFIFieldFlagBitMaskHasDefault = 1 << 1,
  kTVMFFIFieldFlagBitMaskIsStaticMethod = 1 << 2,
  kTVMFFIFieldFlagBitMaskSEqHashIgnore = 1 << 3,
  kTVMFFIFieldFlagBitMaskSEqHashDefRecursive = 1 << 4,
  kTVMFFIFieldFlagBitMaskDefaultFromFactory = 1 << 5,
  kTVMFFIFieldFlagBitMaskReprOff = 1 << 6,
  kTVMFFIFieldFlagBitMaskCompareOff = 1 << 7,
  kTVMFFIFieldFlagBitMaskHashOff = 1 << 8,
  kTVMFFIFieldFlagBitMaskInitOff = 1 << 9,
  kTVMFFIFieldFlagBitMaskKwOnly = 1 << 10,
  kTVMFFIFieldFlagBitSetterIsFunctionObj = 1 << 11,
  kTVMFFIFieldFlagBitMaskSEqHashDefNonRecursive = 1 << 12
} TVMFFIFieldFlagBitMask;
/* The seed's name of bit 4. */
#define kTVMFFIFieldFlagBitMaskSEqHashDef kTVMFFIFieldFlagBitMaskSEqHashDefRecursive

/*! Whether a field opens a definition region for free variables. */
typedef enum {
  kTVMFFIDefRegionKindNone = 0,
  kTVMFFIDefRegionKindRecursive = 1,
  kTVMFFIDefRegionKindNonRecursive = 2
} TVMFFIDefRegionKind;

/*! One reflected field of a type. `offset` counts from the object header's address. */
typedef struct {
  TVMFFIByteArray name;
  TVMFFIByteArray doc;
  TVMFFIByteArray metadata; /* JSON text */
  int64_t flags;
  int64_t size;
  int64_t alignment;
  int64_t offset;
  TVMFFIFieldGetter getter;
  /* A TVMFFIFieldSetter, or with kTVMFFIFieldFlagBitSetterIsFunctionObj a Function handle called
   * as (field address as an OpaquePtr, value). */
  void* setter;
  /* With kTVMFFIFieldFlagBitMaskHasDefault: the default, or with DefaultFromFactory a Function
   * () -> Any that makes it; None otherwise. */
  TVMFFIAny default_value_or_factory;
  /* A POD or static object index, 64 for any nullable object, -1 for "any". */
  int32_t field_static_type_index;
} TVMFFIFieldInfo;

/*! One reflected method; `method` is a Function (argument 0 is `self` unless static). */
typedef struct {
  TVMFFIByteArray name;
  TVMFFIByteArray doc;
  TVMFFIByteArray metadata; /* JSON text */
  int64_t flags;
  TVMFFIAny method;
} TVMFFIMethodInfo;

/*! A named column of per-type attributes (views): type index t has data[t - begin_index] when
 *  begin_index <= t < begin_index + size; anything else is absent. */
typedef struct {
  const TVMFFIAny* data;
  int32_t size;
  int32_t begin_index;
} TVMFFITypeAttrColumn;

/*! The entry of `type_index` in `column`, or NULL when it is absent (read as header code does). */
static inline const TVMFFIAny* FFIJITTypeAttrColumnEntry(const TVMFFITypeAttrColumn* column,
                                                         int32_t type_index) {
  const int64_t offset = (int64_t)type_index - column->begin_index;
  return offset >= 0 && offset < column->size ? &column->data[offset] : NULL;
}

/*! A type-table entry. `type_ancestors` has `type_depth` entries: [0] is ffi.Object,
 *  [type_depth - 1] the parent. `fields`/`methods` list the type's own members. */
#ifdef __cplusplus
struct TVMFFITypeInfo {
#else
typedef struct TVMFFITypeInfo {
#endif
  int32_t type_index;
  int32_t type_depth;
  TVMFFIByteArray type_key;
  const struct TVMFFITypeInfo** type_ancestors;
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

/* ---- Member names that differ between revisions, for code that builds on both ---- */
#define FFIJIT_TYPE_ANCESTORS type_ancestors
#define FFIJIT_MEMBER_METADATA metadata /* TVMFFIFieldInfo / TVMFFIMethodInfo schema text */
#define FFIJIT_FIELD_DEFAULT default_value_or_factory
#define FFIJIT_ERROR_BACKTRACE backtrace
/* Field flag bits only this revision has (0 on the other, so tests of them are false there). */
/* Field setters may be Function objects and defaults may come from factories (bits 11, 5). */
#define FFIJIT_TVM_FFI_HAS_FIELD_FUNCTIONS 1
#define FFIJIT_FIELD_FLAG_SETTER_IS_FUNCTION kTVMFFIFieldFlagBitSetterIsFunctionObj
#define FFIJIT_FIELD_FLAG_DEFAULT_FROM_FACTORY kTVMFFIFieldFlagBitMaskDefaultFromFactory
/* A field may open a non-recursive definition region (bit 12): the free variable it holds binds,
 * that variable's own fields do not. */
#define FFIJIT_FIELD_FLAG_SEQ_HASH_DEF_NON_RECURSIVE kTVMFFIFieldFlagBitMaskSEqHashDefNonRecursive

/* ---- The C functions whose prototypes belong to this revision ---- */

/*! Writes {0, 1, 13}. */
FFIJIT_API void TVMFFIGetVersion(TVMFFIVersion* out);
/*! The process-wide allocator; never NULL (a built-in one until TVMFFISetCustomAllocator). */
FFIJIT_API TVMFFICustomAllocator* TVMFFIGetCustomAllocator(void);
/*! Installs `allocator` (NULL restores the built-in one); it must live for the process. */
FFIJIT_API int TVMFFISetCustomAllocator(TVMFFICustomAllocator* allocator);
/*! A new Error (*out is +1). Nonzero without a raised error when allocation fails. */
FFIJIT_API int TVMFFIErrorCreate(const TVMFFIByteArray* kind, const TVMFFIByteArray* message,
                                 const TVMFFIByteArray* backtrace, TVMFFIObjectHandle* out);
/*! Like TVMFFIErrorCreate with a cause (an Error) and an extra context (any object); both are
 *  borrowed and may be NULL. */
FFIJIT_API int TVMFFIErrorCreateWithCauseAndExtraContext(
    const TVMFFIByteArray* kind, const TVMFFIByteArray* message, const TVMFFIByteArray* backtrace,
    TVMFFIObjectHandle cause_chain, TVMFFIObjectHandle extra_context, TVMFFIObjectHandle* out);
/*! Raises an error whose message is the concatenation of the non-NULL `parts`. */
FFIJIT_API void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** parts,
                                                  int32_t num_parts);
/*! This thread's backtrace text at the call, most recent call first (a thread-local buffer). */
FFIJIT_API const TVMFFIByteArray* TVMFFIBacktrace(const char* filename, int lineno,
                                                  const char* func, int cross_ffi_boundary);
/*! A Tensor with `prototype`'s metadata and data pointer, keeping `source` alive. */
FFIJIT_API int TVMFFITensorCreateUnsafeView(TVMFFIObjectHandle source, const DLTensor* prototype,
                                            TVMFFIObjectHandle* out);
/*! Runs `init` once for `*handle_addr` (double-checked under a global lock). */
FFIJIT_API int TVMFFIHandleInitOnce(void** handle_addr, int (*init)(void** result));
/*! Swaps `*handle_addr` with NULL and runs `deinit` on the old value when there was one. */
FFIJIT_API int TVMFFIHandleDeinitOnce(void** handle_addr, int (*deinit)(void* handle));

#ifdef __cplusplus
} /* extern "C" */
#endif

/* ---- The reference-count protocol on this header (header code does the same inline) ---- */
#define FFIJIT_REF_STRONG_ONE ((uint64_t)1)
#define FFIJIT_REF_WEAK_ONE ((uint64_t)1 << 32)
#define FFIJIT_REF_BOTH_ONE (FFIJIT_REF_STRONG_ONE | FFIJIT_REF_WEAK_ONE)

/*! Fills a fresh header: one strong and one weak reference. */
static inline void FFIJITHeaderInit(struct TVMFFIObject* obj, int32_t type_index,
                                    void (*deleter)(void* self, int flags)) {
  obj->combined_ref_count = FFIJIT_REF_BOTH_ONE;
  obj->type_index = type_index;
  obj->__padding = 0;
  obj->deleter = deleter;
}
/*! Sets the counts of a header that is not shared yet (objects built on the stack, in tests). */
static inline void FFIJITHeaderSetCounts(struct TVMFFIObject* obj, uint32_t strong, uint32_t weak) {
  obj->combined_ref_count = ((uint64_t)weak << 32) | strong;
}
static inline uint64_t FFIJITHeaderStrongCount(const struct TVMFFIObject* obj) {
  return __atomic_load_n(&obj->combined_ref_count, __ATOMIC_ACQUIRE) & 0xFFFFFFFFu;
}
static inline uint64_t FFIJITHeaderWeakCount(const struct TVMFFIObject* obj) {
  return __atomic_load_n(&obj->combined_ref_count, __ATOMIC_ACQUIRE) >> 32;
}
static inline void FFIJITHeaderIncStrong(struct TVMFFIObject* obj) {
  __atomic_fetch_add(&obj->combined_ref_count, FFIJIT_REF_STRONG_ONE, __ATOMIC_RELAXED);
}
static inline void FFIJITHeaderIncWeak(struct TVMFFIObject* obj) {
  __atomic_fetch_add(&obj->combined_ref_count, FFIJIT_REF_WEAK_ONE, __ATOMIC_RELAXED);
}
static inline void FFIJITHeaderDecWeak(struct TVMFFIObject* obj) {
  if (__atomic_fetch_sub(&obj->combined_ref_count, FFIJIT_REF_WEAK_ONE, __ATOMIC_ACQ_REL) ==
          FFIJIT_REF_WEAK_ONE &&
      obj->deleter != 0) {
    obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskWeak);
  }
}
static inline void FFIJITHeaderDecStrong(struct TVMFFIObject* obj) {
  /* acq_rel rather than release + fence: the same code on x86, and TSan understands it. */
  const uint64_t old =
      __atomic_fetch_sub(&obj->combined_ref_count, FFIJIT_REF_STRONG_ONE, __ATOMIC_ACQ_REL);
  if (old == FFIJIT_REF_BOTH_ONE) {
    if (obj->deleter != 0) obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskBoth);
  } else if ((old & 0xFFFFFFFFu) == 1) {
    if (obj->deleter == 0) return;
    obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskStrong);
    FFIJITHeaderDecWeak(obj);
  }
}
/*! Takes a strong reference if the value is still alive (nonzero then). */
static inline int FFIJITHeaderTryPromoteWeak(struct TVMFFIObject* obj) {
  uint64_t count = __atomic_load_n(&obj->combined_ref_count, __ATOMIC_RELAXED);
  while ((count & 0xFFFFFFFFu) != 0) {
    if (__atomic_compare_exchange_n(&obj->combined_ref_count, &count, count + 1, 1,
                                    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
      return 1;
    }
  }
  return 0;
}

/*
 * The C functions libtvm_ffi exports from c_api.h at this revision (38), in declaration order.
 * FFIJIT_TVM_FFI_C_API_FUNCTIONS(X) expands X(name) for each; tests check every one is exported.
 */
#define FFIJIT_TVM_FFI_C_API_FUNCTIONS(X)      \
  X(TVMFFIGetVersion)                          \
  X(TVMFFIObjectDecRef)                        \
  X(TVMFFIObjectIncRef)                        \
  X(TVMFFIObjectCreateOpaque)                  \
  X(TVMFFITypeKeyToIndex)                      \
  X(TVMFFIGetCustomAllocator)                  \
  X(TVMFFISetCustomAllocator)                  \
  X(TVMFFIFunctionCreate)                      \
  X(TVMFFIFunctionGetGlobal)                   \
  X(TVMFFIAnyViewToOwnedAny)                   \
  X(TVMFFIFunctionCall)                        \
  X(TVMFFIErrorMoveFromRaised)                 \
  X(TVMFFIErrorSetRaised)                      \
  X(TVMFFIErrorSetRaisedFromCStr)              \
  X(TVMFFIErrorSetRaisedFromCStrParts)         \
  X(TVMFFIErrorCreate)                         \
  X(TVMFFIErrorCreateWithCauseAndExtraContext) \
  X(TVMFFITensorFromDLPack)                    \
  X(TVMFFITensorToDLPack)                      \
  X(TVMFFITensorFromDLPackVersioned)           \
  X(TVMFFITensorToDLPackVersioned)             \
  X(TVMFFITensorCreateUnsafeView)              \
  X(TVMFFIStringFromByteArray)                 \
  X(TVMFFIBytesFromByteArray)                  \
  X(TVMFFIDataTypeFromString)                  \
  X(TVMFFIDataTypeToString)                    \
  X(TVMFFIFunctionSetGlobal)                   \
  X(TVMFFIFunctionSetGlobalFromMethodInfo)     \
  X(TVMFFITypeRegisterField)                   \
  X(TVMFFITypeRegisterMethod)                  \
  X(TVMFFITypeRegisterMetadata)                \
  X(TVMFFITypeRegisterAttr)                    \
  X(TVMFFIGetTypeAttrColumn)                   \
  X(TVMFFIBacktrace)                           \
  X(TVMFFITypeGetOrAllocIndex)                 \
  X(TVMFFIGetTypeInfo)                         \
  X(TVMFFIHandleInitOnce)                      \
  X(TVMFFIHandleDeinitOnce)
#define FFIJIT_TVM_FFI_NUM_C_API_FUNCTIONS 38
/* The C functions that the revisions of another C function set export and this one must not
 * (checked by tests; a module that needs one was built for one of those revisions), and those
 * revisions' names (from cmake/tvm_ffi_revisions.txt, through the generated config). */
#define FFIJIT_TVM_FFI_REMOVED_FUNCTIONS_REVISIONS FFIJIT_TVM_FFI_C_API_SEED_REVISIONS
#define FFIJIT_TVM_FFI_REMOVED_FUNCTIONS(X) \
  X(TVMFFITraceback)                        \
  X(TVMFFIEnvGetTensorAllocator)            \
  X(TVMFFIEnvSetTensorAllocator)

/* ---- Layout checks: these sizes and offsets are this revision's ABI (x86-64 LP64). ---- */
FFIJIT_STATIC_ASSERT(sizeof(struct TVMFFIObject) == 24, "TVMFFIObject header is 24 bytes");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFIObject, combined_ref_count) == 0,
                     "combined count at offset 0");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFIObject, type_index) == 8, "type_index at offset 8");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFIObject, deleter) == 16, "deleter at offset 16");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFIObjectAllocHeader) == 8, "alloc header is 8 bytes");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFICustomAllocator) == 16, "custom allocator is 16 bytes");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFICustomAllocator, context) == 8, "allocator context at 8");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFIVersion) == 12, "TVMFFIVersion is 12 bytes");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFIErrorCell) == 72, "TVMFFIErrorCell is 72 bytes");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIErrorCell, message) == 16, "error message at offset 16");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIErrorCell, backtrace) == 32, "error backtrace at offset 32");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIErrorCell, update_backtrace) == 48,
                     "update_backtrace at offset 48");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIErrorCell, cause_chain) == 56, "cause_chain at offset 56");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIErrorCell, extra_context) == 64, "extra_context at offset 64");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFISeqCell) == 32, "TVMFFISeqCell is 32 bytes");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFISeqCell, size) == 8, "seq size at 8");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFISeqCell, capacity) == 16, "seq capacity at 16");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFISeqCell, data_deleter) == 24, "seq data_deleter at 24");

FFIJIT_STATIC_ASSERT(sizeof(TVMFFIFieldFlagBitMask) == 4, "flag enum is 4 bytes");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFIFieldInfo) == 120, "TVMFFIFieldInfo is 120 bytes");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, doc) == 16, "field doc at 16");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, metadata) == 32, "field metadata at 32");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, flags) == 48, "field flags at 48");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, size) == 56, "field size at 56");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, alignment) == 64, "field alignment at 64");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, offset) == 72, "field offset at 72");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, getter) == 80, "field getter at 80");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, setter) == 88, "field setter at 88");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, default_value_or_factory) == 96,
                     "field default at 96");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIFieldInfo, field_static_type_index) == 112,
                     "field static type index at 112");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFIMethodInfo) == 72, "TVMFFIMethodInfo is 72 bytes");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIMethodInfo, metadata) == 32, "method metadata at 32");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFIMethodInfo, method) == 56, "method value at 56");
FFIJIT_STATIC_ASSERT(sizeof(TVMFFITypeAttrColumn) == 16, "TVMFFITypeAttrColumn is 16 bytes");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFITypeAttrColumn, size) == 8, "column size at 8");
FFIJIT_STATIC_ASSERT(offsetof(TVMFFITypeAttrColumn, begin_index) == 12, "column begin at 12");
FFIJIT_STATIC_ASSERT(sizeof(struct TVMFFITypeInfo) == 72, "TVMFFITypeInfo is 72 bytes");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFITypeInfo, type_ancestors) == 24, "ancestors at 24");
FFIJIT_STATIC_ASSERT(offsetof(struct TVMFFITypeInfo, metadata) == 64, "metadata at 64");

#endif /* FFIJIT_TVM_FFI_ABI_V0_1_13_H_ */
