// The dataclass operations of TVM FFI v0.1.13's extra C++ API (include/tvm/ffi/extra/dataclass.h):
// `ReprPrint`, `RecursiveHash`, `RecursiveEq/Lt/Le/Gt/Ge` and `DeepCopy`, exported under their
// Itanium names, and the globals `ffi.ReprPrint`, `ffi.RecursiveHash`, `ffi.RecursiveEq/Lt/Le/Gt/
// Ge` and `ffi.DeepCopy`. e98b94e1 has none of them (FFIJIT_TVM_FFI_HAS_DATACLASS_API).
//
// This file holds those exports and globals; each operation is a file of its own
// (dataclass_repr.cc, dataclass_hash.cc, dataclass_compare.cc, dataclass_copy.cc), over the
// value reading of dataclass_common.h. The semantics below are what they implement together.
//
// Semantics (those of v0.1.13's src/ffi/extra/dataclass.cc, reimplemented recursively):
// - ReprPrint: None, True/False, ints, floats (ostream default format), dtypes, devices
//   ("cuda:0"); strings Python-escaped in double quotes, bytes as b"..."; Array "(a, b)" ("(a,)"
//   for one element), List "[a, b]", Map/Dict "{k: v}"; Shape "Shape(1, 2)"; Tensor
//   "float32[2, 3]@cpu:0"; an `__ffi_repr__` type attribute (self, repr_fn) -> str; any other
//   object `type_key(field=value, ...)` over its fields without the ReprOff flag (a name repeated
//   in a subclass is printed once), or just `type_key` when it has none (functions, errors).
//   A value already printed prints the same again; one still being printed prints "...".
//   TVM_FFI_REPR_WITH_ADDR=1 appends "@0x<address>" to objects, as upstream does.
// - RecursiveEq/compare: three-way over the same structure; strings and bytes compare in any form
//   by content; values of different types are unequal (and a TypeError when ordering); NaN equals
//   NaN only for equality; Maps/Dicts compare entry by entry and cannot be ordered; sequences
//   lexicographically then by length; objects field by field (without CompareOff) or through the
//   `__ffi_eq__` / `__ffi_compare__` type attributes (lhs, rhs, callback); a pair met again while
//   being compared is equal for Eq and a ValueError when ordering.
// - RecursiveHash: consistent with RecursiveEq, with TVM FFI's stable hash combine, so the numbers
//   match v0.1.13's; `__ffi_hash__` (self, hash_fn) -> int replaces the field walk, and a type
//   with `__ffi_eq__` or `__ffi_compare__` but no `__ffi_hash__` is a ValueError.
// - DeepCopy: POD values, strings, bytes and shapes are returned as they are; Arrays, Maps (and
//   Lists/Dicts, through the ffi.List* / ffi.Dict* globals when registered) are copied with their
//   elements; other objects need the `__ffi_shallow_copy__` type attribute (self) -> copy, after
//   which each field holding a copied value is set again. Shared and cyclic references are kept
//   shared in the copy.
#include <cstdint>
#include <string>
#include <utility>

#include "../cxx_abi/shims.h"
#include "../internal.h"
#include "dataclass_common.h"
#include "ffijit/function.h"
#include "ffijit/registry.h"

#if FFIJIT_TVM_FFI_HAS_DATACLASS_API

namespace ffijit {
namespace {

using internal::DeepCopyOf;
using internal::RecursiveCompare;
using internal::RecursiveHashOf;
using internal::ReprOf;

void RequireArgs(const char* name, int32_t num_args, int32_t expected) {
  if (num_args != expected) {
    throw Error("TypeError", std::string("Mismatched number of arguments when calling `") + name +
                                 "`: expected " + std::to_string(expected) + " but got " +
                                 std::to_string(num_args) + " arguments");
  }
}

void RegisterDataclassGlobals() {
  auto define = [](const char* name, Function::PackedBody body) {
    SetGlobalFunction(name, Function::FromPacked(std::move(body)), true);
  };
  define("ffi.ReprPrint", [](const AnyView* args, int32_t n, Any* result) {
    RequireArgs("ffi.ReprPrint", n, 1);
    *result = Any(ReprOf(args[0].raw()));
  });
  define("ffi.RecursiveHash", [](const AnyView* args, int32_t n, Any* result) {
    RequireArgs("ffi.RecursiveHash", n, 1);
    *result = Any(RecursiveHashOf(args[0].raw()));
  });
  define("ffi.DeepCopy", [](const AnyView* args, int32_t n, Any* result) {
    RequireArgs("ffi.DeepCopy", n, 1);
    *result = DeepCopyOf(args[0].raw());
  });
  struct Comparison {
    const char* name;
    bool eq_only;
    bool (*accept)(int32_t);
  };
  static const Comparison comparisons[] = {
      {"ffi.RecursiveEq", true, [](int32_t c) { return c == 0; }},
      {"ffi.RecursiveLt", false, [](int32_t c) { return c < 0; }},
      {"ffi.RecursiveLe", false, [](int32_t c) { return c <= 0; }},
      {"ffi.RecursiveGt", false, [](int32_t c) { return c > 0; }},
      {"ffi.RecursiveGe", false, [](int32_t c) { return c >= 0; }},
  };
  for (const Comparison& cmp : comparisons) {
    define(cmp.name, [&cmp](const AnyView* args, int32_t n, Any* result) {
      RequireArgs(cmp.name, n, 2);
      *result = Any(cmp.accept(RecursiveCompare(args[0].raw(), args[1].raw(), cmp.eq_only)));
    });
  }
}

// While the runtime loads; only allocation can fail, and that must not end the process.
__attribute__((constructor)) void RegisterDataclassGlobalsAtLoad() {
  RegisterAtLoad("the ffi.Recursive*/ReprPrint globals", RegisterDataclassGlobals);
}

}  // namespace
}  // namespace ffijit

namespace tvm {
namespace ffi {

using ffijit::internal::WithTvmErrors;

String ReprPrint(const Any& value) {
  return WithTvmErrors([&] { return String::From(ffijit::ReprOf(value.data_)); });
}

int64_t RecursiveHash(const Any& value) {
  return WithTvmErrors([&] { return ffijit::RecursiveHashOf(value.data_); });
}

bool RecursiveEq(const Any& lhs, const Any& rhs) {
  return WithTvmErrors([&] { return ffijit::RecursiveCompare(lhs.data_, rhs.data_, true) == 0; });
}
bool RecursiveLt(const Any& lhs, const Any& rhs) {
  return WithTvmErrors([&] { return ffijit::RecursiveCompare(lhs.data_, rhs.data_, false) < 0; });
}
bool RecursiveLe(const Any& lhs, const Any& rhs) {
  return WithTvmErrors([&] { return ffijit::RecursiveCompare(lhs.data_, rhs.data_, false) <= 0; });
}
bool RecursiveGt(const Any& lhs, const Any& rhs) {
  return WithTvmErrors([&] { return ffijit::RecursiveCompare(lhs.data_, rhs.data_, false) > 0; });
}
bool RecursiveGe(const Any& lhs, const Any& rhs) {
  return WithTvmErrors([&] { return ffijit::RecursiveCompare(lhs.data_, rhs.data_, false) >= 0; });
}

Any DeepCopy(const Any& value) {
  return WithTvmErrors([&] {
    Any result;
    result.data_ = ffijit::DeepCopyOf(value.data_).release();
    return result;
  });
}

}  // namespace ffi
}  // namespace tvm

#endif  // FFIJIT_TVM_FFI_HAS_DATACLASS_API
