// Messages shared by the metadata readers that spell element types by name (private to reflect/).
#ifndef FFIJIT_REFLECT_TYPE_NAMES_H_
#define FFIJIT_REFLECT_TYPE_NAMES_H_

#include <string>
#include <string_view>

namespace ffijit {

// The refusal for an integer type of a width no C type holds, e.g. i4 or i128: names the width
// and the widths that are read. `spelled` is the type as written, `digits` its width (which may be
// too long to convert).
std::string UnsupportedIntegerWidth(std::string_view spelled, std::string_view digits);

}  // namespace ffijit

#endif  // FFIJIT_REFLECT_TYPE_NAMES_H_
