// Which types an opaque object (a header and a handle) may be made of: the one check of
// FFIJITObjectCreateOpaqueOfType in both builds, over the C ABI's type records.
#ifndef FFIJIT_RUNTIME_PORTABLE_OPAQUE_TYPES_H_
#define FFIJIT_RUNTIME_PORTABLE_OPAQUE_TYPES_H_

#include <cstdint>

namespace ffijit::portable {

// Throws a ValueError unless objects of `type_index` may be opaque objects: ffi.OpaquePyObject,
// dynamic types and their subtypes (any other layout would be read as a string, a function, ...);
// a KeyError for an unregistered index.
void RequireOpaqueType(int32_t type_index);

}  // namespace ffijit::portable

#endif  // FFIJIT_RUNTIME_PORTABLE_OPAQUE_TYPES_H_
