// The type check of FFIJITObjectCreateOpaqueOfType (opaque_types.h), over TypeIndexToKey and the
// C ABI's type records.
#include "opaque_types.h"

#include <string>

#include "ffijit/error.h"
#include "ffijit/object.h"

namespace ffijit::portable {

void RequireOpaqueType(int32_t type_index) {
  if (type_index < kTVMFFIStaticObjectBegin) {
    throw Error("ValueError", "FFIJITObjectCreateOpaqueOfType: type index " +
                                  std::to_string(type_index) + " is not an object type");
  }
  TypeIndexToKey(type_index);  // throws KeyError for an unregistered index
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  for (int32_t d = 0; d <= info->type_depth; ++d) {
    const int32_t layout =
        d == info->type_depth ? type_index : info->FFIJIT_TYPE_ANCESTORS[d]->type_index;
    if (layout != kTVMFFIObject && layout != kTVMFFIOpaquePyObject &&
        layout < kTVMFFIDynObjectBegin) {
      throw Error("ValueError", "FFIJITObjectCreateOpaqueOfType: type index " +
                                    std::to_string(type_index) + " (`" +
                                    TypeIndexToKey(type_index) +
                                    "`) is not an opaque type: only ffi.OpaquePyObject, dynamic "
                                    "types and their subtypes hold an opaque handle");
    }
  }
}

}  // namespace ffijit::portable
