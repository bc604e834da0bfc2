// Private helpers shared by the runtime's sources: object allocation and the C boundary guard.
#ifndef FFIJIT_RUNTIME_INTERNAL_H_
#define FFIJIT_RUNTIME_INTERNAL_H_

#include <cstdlib>
#include <new>
#include <string>
#include <string_view>

#include "ffijit/any.h"
#include "ffijit/c_api.h"
#include "ffijit/c_ext.h"
#include "ffijit/error.h"

namespace ffijit::internal {

// Allocates `size` zeroed bytes for an object and initialises its header (one strong, one weak
// reference). The deleter frees the memory with std::free when flag 2 arrives.
TVMFFIObject* AllocObject(size_t size, int32_t type_index, void (*deleter)(void*, int));

// A Str or Bytes object holding a copy of [data, data+size) plus a terminating NUL.
TVMFFIObject* NewBytesObject(int32_t type_index, const char* data, size_t size);

// Writes an owned string (SmallStr/SmallBytes when <= 7 bytes, else a Str/Bytes object) to *out.
void MakeOwnedBytes(bool is_str, const char* data, size_t size, TVMFFIAny* out);

// Views the characters of any string or bytes form; false when `any` is none of them.
bool ViewBytes(const TVMFFIAny& any, std::string_view* out) noexcept;

// Copies a view into an owned Any (RawStr becomes a String, ByteArrayPtr a Bytes, objects
// increfed).
void CopyToOwned(const TVMFFIAny& view, TVMFFIAny* out);

// Calls visit(key, value) for every entry of a Map object (either layout, made by ffijit or by
// header-compiled code), in iteration order, in one pass (FFIJITMapItemAt walks from the start).
void MapForEach(const TVMFFIObject* map,
                void (*visit)(void* ctx, const TVMFFIAny& key, const TVMFFIAny& value), void* ctx);
template <typename F>
void MapForEach(const TVMFFIObject* map, F&& visit) {
  MapForEach(
      map,
      [](void* ctx, const TVMFFIAny& key, const TVMFFIAny& value) {
        (*static_cast<F*>(ctx))(key, value);
      },
      &visit);
}

// Shared with the other libraries (one copy each, in the public headers): releasing an owned Any,
// and the NULL check of C entry point arguments.
using ffijit::details::ReleaseAny;
using ffijit::details::RequireNonNull;

// Every C API function of the runtime runs its body under this guard.
using ffijit::GuardCBoundary;

}  // namespace ffijit::internal

#endif  // FFIJIT_RUNTIME_INTERNAL_H_
