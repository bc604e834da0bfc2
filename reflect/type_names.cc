// Messages shared by the metadata readers and printers.
#include "type_names.h"

#include "ffijit/error.h"

namespace ffijit {

std::string UnsupportedIntegerWidth(std::string_view spelled, std::string_view digits) {
  return "unsupported integer width " + Excerpt(digits, 24) + " (`" + Excerpt(spelled, 32) +
         "`): no C type holds it; ffijit reads signed widths 1, 8, 16, 32, 64 and unsigned 8, 16, "
         "32, 64";
}

void RefuseOutputStorage(const Signature& sig, const char* format, const char* form) {
  for (size_t i = 0; i < sig.output_storage.size(); ++i) {
    if (sig.output_storage[i] < 0) continue;
    throw ValueError(std::string(format) + ": " + form + " has no way to say that argument #" +
                     std::to_string(i) + " is the output storage of result " +
                     std::to_string(sig.output_storage[i]));
  }
}

}  // namespace ffijit
