// TVM FFI 0.1's enum types (include/tvm/ffi/enum.h): `ffi.Enum` singletons with a canonical integer
// and string index, the `ffi.IntEnum` / `ffi.StrEnum` kinds, and the per-type `ffi.EnumState`
// registry that EnumDef stores in the `__ffi_enum__` type attribute. The JSON graph serialization
// writes an enum as one of its indices and reads it back as the registered singleton.
#ifndef FFIJIT_RUNTIME_EXTRA_ENUM_H_
#define FFIJIT_RUNTIME_EXTRA_ENUM_H_

#include <cstdint>

#include "ffijit/any.h"

namespace ffijit::internal {

// When `value` is an enum singleton: stores its JSON data in *data (the integer index of an
// IntEnum, the string index of any other Enum) and returns true. False for anything else, and
// always on revisions without enums.
bool EnumToJSONData(const TVMFFIAny& value, Any* data);

// When `type_index` is an enum type: stores in *out the registered singleton whose canonical index
// is `data` (an int for an IntEnum, a str otherwise) and returns true; a ValueError naming the type
// when there is none, a TypeError for data of the wrong kind. False for non-enum types.
bool EnumFromJSONData(int32_t type_index, const AnyView& data, Any* out);

}  // namespace ffijit::internal

#endif  // FFIJIT_RUNTIME_EXTRA_ENUM_H_
