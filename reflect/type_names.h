// Messages shared by the metadata readers and printers (private to reflect/).
#ifndef FFIJIT_REFLECT_TYPE_NAMES_H_
#define FFIJIT_REFLECT_TYPE_NAMES_H_

#include <string>
#include <string_view>

#include "ffijit/reflect/signature.h"

namespace ffijit {

// The refusal for an integer type of a width no C type holds, e.g. i4 or i128: names the width
// and the widths that are read. `spelled` is the type as written, `digits` its width (which may be
// too long to convert).
std::string UnsupportedIntegerWidth(std::string_view spelled, std::string_view digits);

// Throws ValueError "<format>: <form> has no way to say that argument #i is the output storage
// of result N" for the first storage argument of `sig`, if it has one: for the printers of the
// formats without IREE's `iree.abi.output` (the iree.abi JSON, the raw signature).
void RefuseOutputStorage(const Signature& sig, const char* format, const char* form);

}  // namespace ffijit

#endif  // FFIJIT_REFLECT_TYPE_NAMES_H_
