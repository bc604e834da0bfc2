// The structural comparison and hash (structural_equal.cc, structural_hash.cc), for the runtime's
// other users of them (ffi.StructuralKey in structural_visit.cc). Errors are ffijit::Error.
#ifndef FFIJIT_RUNTIME_EXTRA_STRUCTURAL_H_
#define FFIJIT_RUNTIME_EXTRA_STRUCTURAL_H_

#include <cstdint>

#include "ffijit/c_api.h"

namespace ffijit::internal {

// StructuralEqual::Equal of two views.
bool StructuralEqualValues(const TVMFFIAny& lhs, const TVMFFIAny& rhs, bool map_free_vars,
                           bool skip_tensor_content);

// StructuralHash::Hash of a view.
uint64_t StructuralHashValue(const TVMFFIAny& value, bool map_free_vars, bool skip_tensor_content);

}  // namespace ffijit::internal

#endif  // FFIJIT_RUNTIME_EXTRA_STRUCTURAL_H_
