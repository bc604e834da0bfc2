// The reflection access paths of TVM FFI (apache/tvm-ffi, include/tvm/ffi/reflection/
// access_path.h): the types `ffi.reflection.AccessStep` and `ffi.reflection.AccessPath`, which
// StructuralEqual::GetFirstMismatch returns and header-compiled code reads inline.
//
// The runtime registers both types (fields, ConstTreeNode structural kind, a creator) while it
// loads, so code compiled from the headers finds them under their keys; objects made here have the
// layout that code reads (offsets from the object header): AccessStep {int32 kind @24, Any key
// @32}, 48 bytes; AccessPath {Optional parent @24, Optional step, int32 depth}: on e98b94e1 the
// Optionals are object pointers (step @32, depth @40, 48 bytes), on v0.1.13 16-byte Any cells
// (step @40, depth @56, 64 bytes).
#ifndef FFIJIT_RUNTIME_EXTRA_ACCESS_PATH_H_
#define FFIJIT_RUNTIME_EXTRA_ACCESS_PATH_H_

#include <cstdint>

#include "ffijit/any.h"
#include "ffijit/object.h"

namespace ffijit::internal {

// TVM FFI's reflection::AccessKind values.
enum class AccessKind : int32_t {
  kAttr = 0,
  kArrayItem = 1,
  kMapItem = 2,
  kAttrMissing = 3,
  kArrayItemMissing = 4,
  kMapItemMissing = 5,
};

int32_t AccessStepTypeIndex();
int32_t AccessPathTypeIndex();

// A new AccessStep holding its own copy of `key`.
ObjectPtr<> NewAccessStep(AccessKind kind, const AnyView& key);
// The root path (no parent, no step, depth 0).
ObjectPtr<> AccessPathRoot();
// `parent` (an AccessPath) extended by `step` (an AccessStep).
ObjectPtr<> ExtendAccessPath(const ObjectPtr<>& parent, const ObjectPtr<>& step);

}  // namespace ffijit::internal

#endif  // FFIJIT_RUNTIME_EXTRA_ACCESS_PATH_H_
