// The functions of c_ext.h that take values and names from callers: every value is checked as
// ffijit's runtime checks it (details::RequireWellFormed, the value-validity contract) before
// TVM FFI's library, which trusts its callers, sees it (containers.cc, through unchecked.h), and
// names are quoted in errors as excerpts.
#include <cstddef>
#include <string>

#include "ffijit/any.h"
#include "ffijit/c_ext.h"
#include "ffijit/error.h"
#include "ffijit/function.h"
#include "ffijit/registry.h"
#include "unchecked.h"

using namespace ffijit;

// modules.cc takes FFIJITSymbolSource as unchecked.h restates it.
static_assert(sizeof(AddonSymbolSource) == sizeof(FFIJITSymbolSource));
static_assert(offsetof(AddonSymbolSource, find) == offsetof(FFIJITSymbolSource, find));
static_assert(offsetof(AddonSymbolSource, release) == offsetof(FFIJITSymbolSource, release));
static_assert(offsetof(AddonSymbolSource, description) ==
              offsetof(FFIJITSymbolSource, description));

extern "C" {

int FFIJITArrayCreate(const TVMFFIAny* items, int64_t n, TVMFFIObjectHandle* out) {
  int status = GuardCBoundary([&] {
    details::RequireNonNull(out, "FFIJITArrayCreate", "out");
    if (n < 0) throw ValueError("FFIJITArrayCreate: negative size " + std::to_string(n));
    if (n > 0) details::RequireNonNull(items, "FFIJITArrayCreate", "items");
    for (int64_t i = 0; i < n; ++i) details::RequireWellFormed(items[i], "FFIJITArrayCreate");
  });
  return status != 0 ? status : FFIJITAddonArrayCreate(items, n, out);
}

int FFIJITMapCreate(const TVMFFIAny* keys, const TVMFFIAny* values, int64_t n,
                    TVMFFIObjectHandle* out) {
  int status = GuardCBoundary([&] {
    details::RequireNonNull(out, "FFIJITMapCreate", "out");
    if (n < 0) throw ValueError("FFIJITMapCreate: negative size " + std::to_string(n));
    if (n > 0) {
      details::RequireNonNull(keys, "FFIJITMapCreate", "keys");
      details::RequireNonNull(values, "FFIJITMapCreate", "values");
    }
    for (int64_t i = 0; i < n; ++i) {
      details::RequireWellFormed(keys[i], "FFIJITMapCreate");
      details::RequireWellFormed(values[i], "FFIJITMapCreate");
    }
  });
  return status != 0 ? status : FFIJITAddonMapCreate(keys, values, n, out);
}

int FFIJITMapGet(TVMFFIObjectHandle map, const TVMFFIAny* key, const TVMFFIAny** out_value) {
  int status = GuardCBoundary([&] {
    details::RequireNonNull(map, "FFIJITMapGet", "map");
    details::RequireNonNull(key, "FFIJITMapGet", "key");
    details::RequireNonNull(out_value, "FFIJITMapGet", "out_value");
    details::RequireWellFormed(*key, "FFIJITMapGet");
  });
  if (status != 0) return status;
  const void* found = nullptr;
  status = FFIJITAddonMapGet(map, key, &found);
  *out_value = static_cast<const TVMFFIAny*>(found);
  return status;
}

int FFIJITFunctionRemoveGlobal(const TVMFFIByteArray* name) {
  return GuardCBoundary([&] {
    details::RequireNonNull(name, "FFIJITFunctionRemoveGlobal", "name");
    if (name->data == nullptr && name->size != 0) {
      throw ValueError("FFIJITFunctionRemoveGlobal: NULL name data with nonzero size");
    }
    if (name->size == 0) throw ValueError("FFIJITFunctionRemoveGlobal: empty function name");
    static const Function remove = GetGlobalFunctionOrThrow("ffi.FunctionRemoveGlobal");
    const std::string key(name->data, name->size);
    if (!remove(key).cast<bool>()) {
      throw KeyError("global function `" + Excerpt(key) + "` is not registered");
    }
  });
}

}  // extern "C"
