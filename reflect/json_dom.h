// A JSON tree that remembers the byte offset of every value, read with nlohmann's SAX parser
// (private to reflect/: the metadata parsers need offsets for their error messages).
#ifndef FFIJIT_REFLECT_JSON_DOM_H_
#define FFIJIT_REFLECT_JSON_DOM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ffijit {

struct JsonValue {
  enum class Kind { kNull, kBool, kInt, kFloat, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  size_t offset = 0;                // first byte of the value in the parsed text
  bool boolean = false;             // kBool
  int64_t integer = 0;              // kInt (integers above INT64_MAX read as kFloat)
  std::string string;               // kString
  std::vector<JsonValue> items;     // kArray elements; kObject member values
  std::vector<std::string> keys;    // kObject member keys, in the order written
  std::vector<size_t> key_offsets;  // kObject: where each key starts

  const char* KindName() const;
};

// Parses `text` (one JSON value, nothing after it but whitespace). Throws ValueError
// "<format>: at offset N: <what>" on a syntax error or nesting deeper than `max_depth`.
JsonValue ParseJsonDom(std::string_view text, const char* format, int max_depth);

// Throws ValueError "<format>: at offset N: <what>".
[[noreturn]] void ThrowAt(const char* format, size_t offset, const std::string& what);

}  // namespace ffijit

#endif  // FFIJIT_REFLECT_JSON_DOM_H_
