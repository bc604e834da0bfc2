// TVMFFIGetVersion (from v0.1.13 on): the TVM FFI release whose ABI this runtime implements. Not
// in runtime/portable/: the add-on build must leave TVM FFI's own in place.
#include "ffijit/c_ext.h"

#if FFIJIT_TVM_FFI_HAS_GET_VERSION
extern "C" void TVMFFIGetVersion(TVMFFIVersion* out) {
  // Never fails, as TVM FFI documents; a NULL `out` has nowhere to receive the answer.
  if (out == nullptr) return;
  out->major = TVM_FFI_VERSION_MAJOR;
  out->minor = TVM_FFI_VERSION_MINOR;
  out->patch = TVM_FFI_VERSION_PATCH;
}
#endif
