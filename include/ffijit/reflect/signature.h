// The Signature model: one typed description of a native function's arguments and results.
//
// Every call path is driven by a Signature. The IREE metadata formats and C++ type deduction
// all produce one; its canonical text is the thunk-cache key and defines equality and hashing.
#ifndef FFIJIT_REFLECT_SIGNATURE_H_
#define FFIJIT_REFLECT_SIGNATURE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ffijit/export.h"

namespace ffijit {

// Scalar element kinds, in the order of the raw signature's `t` codes where those exist.
enum class ScalarKind : uint8_t {
  kF32,   // t0 (default)
  kF16,   // t1
  kF64,   // t2
  kBF16,  // t3
  kI8,    // t4 (also i1 in raw form: bool is mangled as sint8)
  kI16,   // t5
  kI32,   // t6
  kI64,   // t7
  kU8,    // t8
  kU16,   // t9
  kU32,   // t10
  kU64,   // t11
  kI1,    // bool: no raw code of its own
  kAny,   // ndarray element type left unchecked (e.g. deduced from a bare DLTensor*)
};

enum class TypeKind : uint8_t {
  kScalar,     // scalar: `scalar`
  kNDArray,    // tensor: `scalar` element type, `rank`, `dims`
  kStr,        // const char* / String
  kBytes,      // TVMFFIByteArray / Bytes
  kOpaquePtr,  // void*
  kObject,     // TVMFFIObject*; `name` is the type key ("" = any object)
  kDataType,   // DLDataType by value
  kDevice,     // DLDevice by value
  kUnknown,    // any value, passed as `const TVMFFIAny*`
  kSList,      // fixed-arity list: `elements`, a null slot is a gap
  kSTuple,     // fixed-arity tuple: `elements`, a null slot is a gap
  kSDict,      // named slots: `keys` and `elements` in the order written
  kList,       // homogeneous list of unknown length: `elements[0]`
  kDict,       // homogeneous dict of unknown size: `elements[0]` key type, `elements[1]` value
  kNamed,      // top-level keyword argument: `name`, wrapped type `elements[0]`
};

struct Type;
using TypePtr = std::shared_ptr<const Type>;

// One node of a type tree. Immutable once built; shared freely.
struct FFIJIT_REFLECT_API Type {
  TypeKind kind = TypeKind::kUnknown;
  ScalarKind scalar = ScalarKind::kF32;  // kScalar, kNDArray element
  int32_t rank = -1;                     // kNDArray: -1 = unknown rank
  std::vector<int64_t> dims;             // kNDArray: one per rank, -1 = dynamic; empty if rank < 0
  std::string name;                      // kNamed keyword, kObject type key
  bool nullable = false;                 // kObject / kStr / kOpaquePtr: None accepted
  std::vector<std::string> keys;         // kSDict slot keys
  std::vector<TypePtr> elements;  // children (see TypeKind); nullptr only as a kSList/kSTuple gap

  // The factories check their arguments and throw ffijit::Error("ValueError", ...) on a
  // contradiction: rank and dims disagreeing, a dim below -1, a scalar of kind kAny, duplicate
  // sdict keys, a null child other than an slist/stuple gap, an empty or nested keyword.
  static TypePtr Scalar(ScalarKind k);
  static TypePtr NDArray(ScalarKind elt, int32_t rank, std::vector<int64_t> dims);
  static TypePtr Simple(TypeKind k);  // kStr, kBytes, kOpaquePtr, kDataType, kDevice, kUnknown
  static TypePtr Object(std::string type_key = "", bool nullable = false);
  static TypePtr Sequence(TypeKind k, std::vector<TypePtr> elements);  // kSList / kSTuple
  static TypePtr SDict(std::vector<std::string> keys, std::vector<TypePtr> values);
  static TypePtr List(TypePtr element);
  static TypePtr Dict(TypePtr key, TypePtr value);
  static TypePtr Named(std::string keyword, TypePtr inner);
};

// How the native function reports its results.
enum class CallConvention : uint8_t {
  kPlain,   // results by return value (one) or trailing out-pointers (several)
  kStatus,  // returns int (0 = success); results through trailing out-pointers; errors raised
};

struct Signature {
  std::vector<TypePtr> args;
  std::vector<TypePtr> results;
  CallConvention convention = CallConvention::kPlain;
  // Where each leaf sits among the native's parameters (results). Empty: the leaves, depth first
  // over args (results) with `named` wrappers transparent and gaps not counted, are the native's
  // parameters (results) in order. Otherwise entry k is the native index of the k-th leaf, a
  // permutation of 0..leaves-1 (a SIP may map leaves to raw values in any order). Kept empty for
  // the identity, so each signature has one form.
  std::vector<int32_t> arg_leaf_order;
  std::vector<int32_t> result_leaf_order;
  // Caller-provided output storage (IREE's `iree.abi.output` argument attribute). Empty: none.
  // Otherwise one entry per argument: the index of the result the argument is the storage of, or
  // -1. A storage argument is an ndarray of its result's type: the native receives it as any
  // tensor argument (a `DLTensor*`) and writes the result into it; the result is not among the
  // native's results, the packed result is the argument value itself. Kept empty when no argument
  // is storage, so each signature has one form.
  std::vector<int32_t> output_storage;
};

// Text forms (implemented in reflect/signature.cc).
//
// TypeToString, one type, no spaces except after a keyword's colon:
//   scalars        i1 i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64
//   ndarray        ndarray<f32> (unknown rank), ndarray<f32,2> (rank 2, every dim dynamic),
//                  ndarray<f32,[?,128,64]> (some dim static; ? is dynamic), ndarray<any,...>
//                  (element unchecked), ndarray<f32,0> (rank 0)
//   simple         str  bytes  ptr  object  object<type.key>  DataType  Device  any (kUnknown);
//                  a trailing ? marks nullable str / ptr / object: str?  object<my.T>?
//   structures     slist<i32,f32>  stuple<i32,null> (null is a gap, in slists too)
//   sdict<b:i32,a:f32> (order as
//                  written)  list<i64>  dict<str,f64>
//   named          a: i64
// Keys (sdict keys, keywords, type keys) print bare when they match [A-Za-z_][A-Za-z0-9_.]*, and
// otherwise as a double-quoted string with \" \\ and \xNN escapes, so the text is unambiguous.
//
// DeclarationString(name, sig): `name(<args joined by ", ">) -> <results>` where results are
// `None` (none), `T` (one) or `(T, U)` (several):
//   add(a: i64, b: i64) -> i64      f(i64, f64) -> (i64, i64)      g() -> None
//
// CanonicalString(sig): DeclarationString("", sig), plus ` [status]` for CallConvention::kStatus,
// then ` [arg leaves 1,0]` / ` [result leaves 1,0]` for a non-empty arg_leaf_order /
// result_leaf_order, then ` [arg 1 stores result 0]` (several joined by ", ") for output_storage:
//   (i64, f64) -> i64      (ndarray<f32,2>) -> None [status]
//   (slist<i64,f64>) -> None [arg leaves 1,0]
//   (ndarray<f32,1>, ndarray<f32,1>) -> ndarray<f32,1> [arg 1 stores result 0]
// Two signatures are equal exactly when their canonical strings are; SignatureHash hashes it.

// Canonical text: identical for every way of writing the same signature.
FFIJIT_REFLECT_API std::string CanonicalString(const Signature& sig);
// One type in the short form used in error messages and the canonical text, e.g. `ndarray<f32,2>`.
FFIJIT_REFLECT_API std::string TypeToString(const Type& type);
// A readable declaration for error messages: `name(a: i64, b: i64) -> i64`.
FFIJIT_REFLECT_API std::string DeclarationString(const std::string& function_name,
                                                 const Signature& sig);
// "" when sig.output_storage is well-formed, else what is wrong with it, naming the argument:
// it must be empty or have one entry per argument, each -1 or the index of a result no other
// argument names, whose type (an ndarray) is the argument's own (a keyword argument's inner type).
// Storage results are the packed results' own, so a signature with a result leaf order (a SIP's)
// has none.
FFIJIT_REFLECT_API std::string OutputStorageDefect(const Signature& sig);
FFIJIT_REFLECT_API bool operator==(const Signature& a, const Signature& b);
inline bool operator!=(const Signature& a, const Signature& b) {
  return !(a == b);
}
struct FFIJIT_REFLECT_API SignatureHash {
  size_t operator()(const Signature& sig) const;
};

FFIJIT_REFLECT_API const char* ScalarKindName(ScalarKind k);  // "i32", "bf16", ...

}  // namespace ffijit

#endif  // FFIJIT_REFLECT_SIGNATURE_H_
