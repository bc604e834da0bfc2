// What string.cc defines for the runtime's other sources: making, viewing and copying strings and
// bytes in any of their forms.
#ifndef FFIJIT_RUNTIME_STRING_INTERNAL_H_
#define FFIJIT_RUNTIME_STRING_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ffijit/c_api.h"

namespace ffijit::internal {

// A Str or Bytes object holding a copy of [data, data+size) plus a terminating NUL.
TVMFFIObject* NewBytesObject(int32_t type_index, const char* data, size_t size);

// Writes an owned string (SmallStr/SmallBytes when <= 7 bytes, else a Str/Bytes object) to *out.
void MakeOwnedBytes(bool is_str, const char* data, size_t size, TVMFFIAny* out);

// Views the characters of any string or bytes form; false when `any` is none of them.
bool ViewBytes(const TVMFFIAny& any, std::string_view* out) noexcept;

// CopyToOwned for everything but the plain values.
void CopyToOwnedSlow(const TVMFFIAny& view, TVMFFIAny* out);

// Copies a view into an owned Any (RawStr becomes a String, ByteArrayPtr a Bytes, objects
// increfed). The plain values (None, int, bool, float, opaque pointer, dtype, device) copy as they
// are, inline: container constructors copy their items in a loop.
inline void CopyToOwned(const TVMFFIAny& view, TVMFFIAny* out) {
  if (static_cast<uint32_t>(view.type_index) <= kTVMFFIDevice) {
    *out = view;
    return;
  }
  CopyToOwnedSlow(view, out);
}

}  // namespace ffijit::internal

#endif  // FFIJIT_RUNTIME_STRING_INTERNAL_H_
