// CallPlan: the flat description of how one packed call reaches one native function.
//
// Internal to libffijit_jit (not installed). Lowering (jit/lowering/lower.cc) turns a Signature
// into a CallPlan once, at registration time; both executors obey it: the interpreter
// (jit/interpreter/interpreter.cc) walks it per call, the ORC JIT compiles it into a thunk. It is
// plain data (no virtuals, no callbacks) so that a compiler can read every decision out of it, and
// it is the single source of truth for what a call accepts and does.
//
// Vocabulary: a *packed argument* is one TVMFFIAny of the caller's array (or one keyword);
// a *native parameter* is one C parameter of the target. Structures (slist/stuple/sdict) make one
// packed argument feed several native parameters; several results add trailing out-pointer
// parameters after all argument parameters. A structure result is its leaves, returned flat like
// several results, and reassembled into the packed result as CallPlan::result_shape describes.
#ifndef FFIJIT_JIT_PLAN_CALL_PLAN_H_
#define FFIJIT_JIT_PLAN_CALL_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/plugin_export.h"
#include "ffijit/c_api.h"
#include "ffijit/reflect/signature.h"

namespace ffijit {

// How one packed value becomes one native parameter value (and, for results, how a native value
// is boxed back). Each row is one row of docs/design.md's conversion contract.
enum class Conversion : uint8_t {
  // C `bool`. Accepts Bool, Int (nonzero = true). Passed as 0/1 in an integer register.
  kBool,
  // Fixed-width integers. Accept Int, Bool. The value must fit the type, else ValueError naming
  // the value and the type. Passed sign- (kI*) or zero- (kU*) extended to 64 bits.
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kU16,
  kU32,
  kU64,
  // Floats. Accept Float, Int, Bool; rounded to nearest, ties to even. Passed in a vector register:
  // f64 in the low 64 bits, f32 in the low 32, f16/bf16 as their IEEE bit pattern in the low 16
  // (the C types `_Float16` / `__bf16`).
  kF16,
  kBF16,
  kF32,
  kF64,
  // `void*`. Accepts OpaquePtr, and None (passed as NULL).
  kOpaquePtr,
  // `const char*`, NUL-terminated, borrowed for the call. Accepts RawStr, SmallStr (points into the
  // caller's TVMFFIAny), Str; None (as NULL) only when `nullable`.
  kStr,
  // `TVMFFIByteArray` by value (16 bytes), borrowed. Accepts ByteArrayPtr, SmallBytes, Bytes and
  // the three string forms.
  kBytes,
  // `DLTensor*`, borrowed. Accepts DLTensorPtr and Tensor; element type, rank and every static dim
  // are checked against NativeParam::tensor (ValueError on mismatch).
  kTensor,
  // `DLDataType` by value (4 bytes). Accepts DataType, or a string such as "float32" (parsed).
  kDataType,
  // `DLDevice` by value (8 bytes). Accepts Device, or a string such as "cuda:1" (parsed).
  kDevice,
  // `TVMFFIObject*`, borrowed. Accepts an object whose type is `object_type_index` or a subtype;
  // None (as NULL) only when `nullable`. kTVMFFIObject as the index accepts every object.
  kObject,
  // `const TVMFFIAny*`, borrowed view of the packed value itself. Accepts anything.
  kAnyView,
};

// What the executors and code generators know of each conversion's native type: one row per
// Conversion, the one place such a property is written down.
struct ConversionInfo {
  const char* c_type;  // the C type, e.g. "int32_t", "DLTensor*" (generated code and messages)
  uint8_t bytes;       // its size: how many low bytes of a register word are defined
  bool is_integer;     // i8..i64, u8..u64 (not bool)
  bool is_signed;      // i8..i64
  bool is_float;       // f16, bf16, f32, f64: passed in vector registers
  // Every value of the C type converts unchanged and without a check that can fail, so a typed
  // C++ caller may pass it to the native directly (not u64: above INT64_MAX it has no Int).
  bool direct_from_cpp;
  int64_t min, max;  // integers: the Int values that fit
};

// Indexed by Conversion, in its order.
inline constexpr ConversionInfo kConversionInfo[] = {
    {"bool", 1, false, false, false, true, 0, 0},
    {"int8_t", 1, true, true, false, true, INT8_MIN, INT8_MAX},
    {"int16_t", 2, true, true, false, true, INT16_MIN, INT16_MAX},
    {"int32_t", 4, true, true, false, true, INT32_MIN, INT32_MAX},
    {"int64_t", 8, true, true, false, true, INT64_MIN, INT64_MAX},
    {"uint8_t", 1, true, false, false, true, 0, UINT8_MAX},
    {"uint16_t", 2, true, false, false, true, 0, UINT16_MAX},
    {"uint32_t", 4, true, false, false, true, 0, UINT32_MAX},
    {"uint64_t", 8, true, false, false, false, 0, INT64_MAX},
    {"_Float16", 2, false, false, true, false, 0, 0},
    {"__bf16", 2, false, false, true, false, 0, 0},
    {"float", 4, false, false, true, true, 0, 0},
    {"double", 8, false, false, true, true, 0, 0},
    {"void*", 8, false, false, false, true, 0, 0},
    {"const char*", 8, false, false, false, false, 0, 0},
    {"TVMFFIByteArray", 16, false, false, false, false, 0, 0},
    {"DLTensor*", 8, false, false, false, false, 0, 0},
    {"DLDataType", 4, false, false, false, true, 0, 0},
    {"DLDevice", 8, false, false, false, true, 0, 0},
    {"TVMFFIObject*", 8, false, false, false, false, 0, 0},
    {"const TVMFFIAny*", 8, false, false, false, false, 0, 0},
};
static_assert(sizeof(kConversionInfo) / sizeof(kConversionInfo[0]) ==
                  static_cast<size_t>(Conversion::kAnyView) + 1,
              "one row per Conversion");

inline const ConversionInfo& InfoOf(Conversion c) {
  return kConversionInfo[static_cast<size_t>(c)];
}
inline const char* ConversionCTypeName(Conversion c) {
  return InfoOf(c).c_type;
}
inline bool IsFloatConversion(Conversion c) {
  return InfoOf(c).is_float;
}
inline bool IsIntegerConversion(Conversion c) {
  return InfoOf(c).is_integer;
}

// Where the platform C ABI puts one native parameter (or reads one result). The rules of each
// platform are in jit/platform/ (abi.h); the register numbers below are indices into that
// platform's argument registers, never register names.
enum class AbiClass : uint8_t {
  kGpr,        // one integer argument register: slot = its index (0 = rdi / x0)
  kSse,        // one vector argument register: slot = its index (0 = xmm0 / v0)
  kGprPair,    // a 16-byte struct in integer registers slot, slot+1
  kStack,      // one 8-byte stack slot: slot = index in 8-byte units from the first stack argument
  kStackPair,  // a 16-byte struct in stack slots slot, slot+1 (did not fit in registers)
  kMemory,     // a struct larger than 16 bytes, passed by hidden copy (no current type needs it)
};

struct AbiLocation {
  AbiClass cls = AbiClass::kGpr;
  int32_t slot = 0;
};

// One step from a container value to the element a native parameter reads.
struct PathStep {
  enum Kind : uint8_t {
    kArrayIndex,  // the container must be an Array with exactly `expected_size` elements; read
                  // element `index` (slist and stuple)
    kMapKey,      // the container must be a Map; read the value at string key `key` (sdict);
                  // a missing key is a KeyError
  };
  Kind kind = kArrayIndex;
  int64_t index = 0;
  int64_t expected_size = 0;
  std::string key;
  // The container's type text (TypeToString), e.g. "slist<i64,f32>", for error messages.
  std::string container_type;
};

// Element type / rank / static dims a kTensor parameter checks.
struct TensorCheck {
  bool check_dtype = false;   // false for element kind `kAny`
  DLDataType dtype{};         // expected element type when check_dtype
  int32_t rank = -1;          // -1: any rank
  std::vector<int64_t> dims;  // one per rank when rank >= 0; -1 = dynamic (not checked)
};

// An object type key no type has yet (lowering allocates no type index for it).
inline constexpr int32_t kUnresolvedTypeIndex = -1;

// One native argument parameter, in native call order.
struct NativeParam {
  // Source: the packed argument at `position` (0-based, after keyword binding), then `path` steps
  // (path_begin .. path_begin + path_size in CallPlan::path_steps) into nested Arrays/Maps.
  int32_t position = 0;
  int32_t path_begin = 0;
  int32_t path_size = 0;
  // The conversion, and its inputs.
  Conversion conversion = Conversion::kI64;
  bool nullable = false;  // kStr, kObject: None accepted (as NULL)
  // kObject: the type index, or kUnresolvedTypeIndex while no type has object_type_key; resolved
  // on first need (ObjectTypeIndexOf in marshal.h), so naming an unknown key allocates nothing.
  mutable int32_t object_type_index = kTVMFFIObject;
  std::string object_type_key;  // kObject: as written ("" = any object)
  TensorCheck tensor;           // kTensor
  // The native type as written in the signature (TypeToString), the `Expected ...` of messages.
  std::string type_text;
  // Platform placement.
  AbiLocation abi;
};

// How the native returns (before boxing).
enum class ReturnKind : uint8_t {
  kVoid,     // nothing (void, or every result goes through out-pointers)
  kGpr,      // the first integer result register (integers, bool, pointers, DLDataType, DLDevice)
  kSse,      // the first vector result register (floats)
  kGprPair,  // the first two integer result registers (TVMFFIByteArray, TVMFFIAny)
  kStatus,   // an int status in the first integer register: 0 = success, nonzero = raised
};

// One result of the function, in signature order.
struct ResultSlot {
  // The native type of the result; boxing follows it: void -> None, bool/ints/floats ->
  // Bool/Int/Float (a u64 above INT64_MAX is a ValueError), kOpaquePtr -> OpaquePtr (NULL -> None),
  // kStr -> an owned String copy (NULL -> None), kBytes (TVMFFIByteArray) -> an owned Bytes copy,
  // kObject / kTensor (a Tensor object) -> the object, one strong reference handed over by the
  // native (NULL -> None), kDataType / kDevice -> DataType / Device, kAnyView -> the TVMFFIAny
  // itself, owned (the native hands it over).
  Conversion conversion = Conversion::kI64;
  // kObject: the returned object must be of this type or a subtype (else RuntimeError); resolved
  // from object_type_key on first need, like NativeParam's.
  mutable int32_t object_type_index = kTVMFFIObject;
  std::string object_type_key;
  std::string type_text;
  // true: returned by value (CallPlan::return_kind says where); false: the native takes a trailing
  // pointer parameter at `out_abi` to a zeroed 16-byte buffer and writes the result there.
  bool by_return = false;
  AbiLocation out_abi;
  // Where the result sits in the packed result, for messages: "#1", or "#0[1]" / "#0[\"k\"]"
  // for a leaf of a structure result.
  std::string label;
};

// One node of a structure result, in preorder: a container node is followed by its `size`
// children's subtrees. A leaf takes the boxed result at `index` (results are in native order, the
// leaves in structure order, which a SIP may permute); a gap (an slist/stuple slot with no type) is
// None; an argument node is a result written into caller-provided output storage (a Signature's
// output_storage), which no native result carries: the packed argument at `index` as the caller
// passed it (a Tensor object, a new reference; a DLTensorPtr, the same pointer).
struct ResultNode {
  enum Kind : uint8_t {
    kLeaf,      // the boxed result at `index`
    kGap,       // None
    kArray,     // an Array of the next `size` subtrees (slist, stuple; also the several results)
    kMap,       // a Map from `keys[i]` to the i-th of the next `size` subtrees (sdict)
    kArgument,  // the packed argument at position `index` (output storage)
  };
  Kind kind = kLeaf;
  int32_t size = 0;
  std::vector<std::string> keys;  // kMap
  int32_t index = 0;              // kLeaf: index into CallPlan::results; kArgument: a position
};

// Per packed argument (one per top-level Signature argument).
struct PackedArg {
  std::string keyword;    // kNamed: the keyword it may be passed by; "" = positional only
  std::string type_text;  // TypeToString of the argument
  // Its native parameters: the num_params entries of params whose position is this argument's,
  // params[first_param .. +num_params] unless the signature's arg_leaf_order scatters them (then
  // first_param is the first of them in native order).
  int32_t first_param = 0;
  int32_t num_params = 0;
};

struct CallPlan {
  std::string function_name;
  // DeclarationString(function_name, signature): quoted verbatim in every error message.
  std::string declaration;
  // CanonicalString(signature): the JIT's thunk-cache key (independent of the function name).
  std::string canonical;
  CallConvention convention = CallConvention::kPlain;

  // Arity and keyword table: exactly args.size() packed arguments are required.
  std::vector<PackedArg> args;
  // Native argument parameters in call order (out-pointers are not listed here; see results):
  // the leaves of the arguments depth first, permuted by the signature's arg_leaf_order.
  std::vector<NativeParam> params;
  std::vector<PathStep> path_steps;
  // The native's results, in native order: the leaves of every result, depth first, permuted by
  // the signature's result_leaf_order when it has one (each keeps its label).
  std::vector<ResultSlot> results;
  // Empty unless some result is a structure or output storage; then the packed result is
  // result_shape[0]'s tree, built by FFIJITBoxResults on every path whatever the number of leaves
  // (even 0 or 1).
  std::vector<ResultNode> result_shape;
  ReturnKind return_kind = ReturnKind::kVoid;
  // ReturnKind::kGpr / kSse / kGprPair: the conversion of the returned value (results[0]).
  // kStatus: the native returns `int`.

  // Register and stack use of the whole native call (argument params + out-pointers).
  int32_t num_gpr = 0;    // integer argument registers used
  int32_t num_sse = 0;    // vector argument registers used
  int32_t num_stack = 0;  // 8-byte stack slots

  int32_t num_args() const { return static_cast<int32_t>(args.size()); }
  // The packed result is built by FFIJITBoxResults (an Array of several results, or a structure)
  // rather than boxed from the single result.
  bool packs_results() const { return results.size() > 1 || !result_shape.empty(); }
  bool has_keywords() const;
  // The position of the first argument a result is written into (output storage), or -1.
  // Inline: the LLVM plugin, which links no lowering, asks it too.
  int32_t FirstStorageArgument() const {
    for (const ResultNode& node : result_shape) {
      if (node.kind == ResultNode::kArgument) return node.index;
    }
    return -1;
  }
  // Packed position of `keyword`, or -1.
  int32_t KeywordPosition(const std::string& keyword) const;
};

// Lowers a Signature. Throws ffijit::Error (TypeError/ValueError) for signatures the executors
// cannot call (e.g. a scalar of element kind `any`, a malformed structure).
FFIJIT_JIT_PLUGIN_API CallPlan Lower(const Signature& sig, std::string function_name);

// A readable multi-line dump of a plan (for the command-line tool and for debugging).
std::string PlanToString(const CallPlan& plan);

}  // namespace ffijit

#endif  // FFIJIT_JIT_PLAN_CALL_PLAN_H_
