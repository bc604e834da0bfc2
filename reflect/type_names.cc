// Messages shared by the metadata readers that spell element types by name.
#include "type_names.h"

#include "ffijit/error.h"

namespace ffijit {

std::string UnsupportedIntegerWidth(std::string_view spelled, std::string_view digits) {
  return "unsupported integer width " + Excerpt(digits, 24) + " (`" + Excerpt(spelled, 32) +
         "`): no C type holds it; ffijit reads signed widths 1, 8, 16, 32, 64 and unsigned 8, 16, "
         "32, 64";
}

}  // namespace ffijit
