// What containers.cc (written against TVM FFI's headers) offers checked.cc (written against
// ffijit's): the container operations on values already checked, in types both sides can name.
// The pointers are TVMFFIAny and TVMFFIObjectHandle of the one C ABI, which the two header sets
// declare as different C++ types.
#ifndef FFIJIT_RUNTIME_ADDON_UNCHECKED_H_
#define FFIJIT_RUNTIME_ADDON_UNCHECKED_H_

#include <stddef.h>
#include <stdint.h>

extern "C" {

// c_ext.h's FFIJITSymbolSource in types both sides can name (checked.cc asserts they agree).
struct AddonSymbolSource {
  void* self;
  int (*find)(void* self, const char* name, void** address, size_t* size, int* is_code);
  void (*release)(void* self);
  const char* description;
};

// A new TVM FFI Array of copies of items[0..n), into *out; 0, or -1 with the error raised.
int FFIJITAddonArrayCreate(const void* items, int64_t n, void** out);
// A new TVM FFI Map; a repeated key keeps its first position and takes the last value.
int FFIJITAddonMapCreate(const void* keys, const void* values, int64_t n, void** out);
// The value stored under `key` in a Map or Dict (borrowed), or NULL when absent.
int FFIJITAddonMapGet(void* map, const void* key, const void** out_value);

}  // extern "C"

#endif  // FFIJIT_RUNTIME_ADDON_UNCHECKED_H_
