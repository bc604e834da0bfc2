// Test helpers over raw TVMFFIAny values: building malformed ones (a tag with any object, a small
// string that claims any length, an Array whose element store lies) and printing results
// comparably across executors.
#ifndef FFIJIT_TESTS_ANY_FIXTURES_H_
#define FFIJIT_TESTS_ANY_FIXTURES_H_

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

#include "ffijit/c_ext.h"

namespace ffijit_tests {

// A value tagged `tag` over `obj`, whether or not the two agree (or `obj` is NULL).
inline TVMFFIAny Tagged(int32_t tag, TVMFFIObject* obj) {
  TVMFFIAny a{};
  a.type_index = tag;
  a.v_obj = obj;
  return a;
}

// A small string holding `text` whose length byte says `claimed_length`.
inline TVMFFIAny SmallStr(const char* text, uint32_t claimed_length) {
  TVMFFIAny a{};
  a.type_index = kTVMFFISmallStr;
  std::memcpy(a.v_bytes, text, std::strlen(text));
  a.small_str_len = claimed_length;
  return a;
}

// An Array whose element store (data, size, capacity, data_deleter at object +24) a test rewrites
// at will, as a forged or foreign Array would present it. The store the Array was made with is put
// back before the last reference goes, so the Array's deleter releases what it really holds.
class ForgedArray {
 public:
  // An Array of the Ints first, first + 1, ..., made the ordinary way.
  explicit ForgedArray(int64_t size, int64_t first = 1) {
    TVMFFIAny items[8] = {};
    for (int64_t i = 0; i < size && i < 8; ++i) {
      items[i].type_index = kTVMFFIInt;
      items[i].v_int64 = first + i;
    }
    if (FFIJITArrayCreate(items, size < 8 ? size : 8, &handle_) != 0) handle_ = nullptr;
    if (handle_ != nullptr) original_ = *cell();
  }
  ~ForgedArray() {
    if (handle_ == nullptr) return;
    *cell() = original_;
    TVMFFIObjectDecRef(handle_);
  }
  ForgedArray(const ForgedArray&) = delete;
  ForgedArray& operator=(const ForgedArray&) = delete;

  FFIJITArrayCell* cell() const {
    return reinterpret_cast<FFIJITArrayCell*>(static_cast<TVMFFIObject*>(handle_) + 1);
  }
  // Where an Array's elements live when it stores them itself (right after the cell).
  TVMFFIAny* inline_items() const { return reinterpret_cast<TVMFFIAny*>(cell() + 1); }
  // The packed value: tagged Array over this object.
  TVMFFIAny any() const { return Tagged(kTVMFFIArray, static_cast<TVMFFIObject*>(handle_)); }

 private:
  TVMFFIObjectHandle handle_ = nullptr;
  FFIJITArrayCell original_{};
};

// A result in comparable text: POD values as their 16 bytes, strings and bytes by content, Arrays
// and Maps element by element (a Map in its order), other objects by type.
inline std::string Canonical(const TVMFFIAny& a) {
  std::ostringstream out;
  if (a.type_index == kTVMFFIStr || a.type_index == kTVMFFIBytes) {
    const auto* cell = reinterpret_cast<const FFIJITBytesCell*>(a.v_obj + 1);
    out << a.type_index << ":\"" << std::string(cell->data, cell->size) << "\"";
  } else if (a.type_index == kTVMFFIArray) {
    const auto* cell = reinterpret_cast<const FFIJITArrayCell*>(a.v_obj + 1);
    out << "[";
    for (int64_t i = 0; i < cell->size; ++i) out << Canonical(cell->data[i]) << ",";
    out << "]";
  } else if (a.type_index == kTVMFFIMap) {
    int64_t size = 0;
    if (FFIJITMapSize(a.v_obj, &size) != 0) return "map?";
    out << "{";
    for (int64_t i = 0; i < size; ++i) {
      const TVMFFIAny* key = nullptr;
      const TVMFFIAny* value = nullptr;
      if (FFIJITMapItemAt(a.v_obj, i, &key, &value) != 0) return "map?";
      out << Canonical(*key) << ":" << Canonical(*value) << ",";
    }
    out << "}";
  } else if (a.type_index >= kTVMFFIStaticObjectBegin) {
    out << "object" << a.type_index;
  } else {
    const auto* bytes = reinterpret_cast<const unsigned char*>(&a);
    char hex[3];
    for (size_t i = 0; i < sizeof a; ++i) {
      std::snprintf(hex, sizeof hex, "%02x", bytes[i]);
      out << hex;
    }
  }
  return out.str();
}

}  // namespace ffijit_tests

#endif  // FFIJIT_TESTS_ANY_FIXTURES_H_
