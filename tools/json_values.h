// JSON <-> packed values for `ffijit call` and `ffijit bench`: argument words in, results out.
//
// Arguments: null -> None, true/false -> Bool, integer literals -> Int, other numbers -> Float,
// strings -> Str, lists -> Array, objects -> Map (string keys), with three wrapper objects:
//   {"ndarray": <nested lists>, "dtype": "f32"}  a CPU Tensor (dtype optional: inferred)
//   {"bytes": "text"} or {"bytes": [0, 255, ...]}  a Bytes value
//   {"ptr": "0x1234"}                              an OpaquePtr
// Results print the other way round; Tensors as {"ndarray": ..., "dtype": ..., "shape": [...]},
// OpaquePtr as "0x...", DataType/Device as their strings, Bytes as {"bytes": [0, 255, ...]}, a Map
// with keys other than strings as {"map": [[key, value], ...]}, floats with round-trip precision
// and non-finite floats as NaN / Infinity / -Infinity (the JavaScript spellings; also accepted as a
// whole argument word).
#ifndef FFIJIT_TOOLS_JSON_VALUES_H_
#define FFIJIT_TOOLS_JSON_VALUES_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ffijit/any.h"

namespace ffijit::tool {

// Deepest nesting of lists/objects an argument may have.
inline constexpr int kMaxValueNesting = 64;

// Objects keep their keys in the order written (nlohmann::ordered_json).

// Parses one argument word. Throws ffijit::Error ("ValueError") on invalid JSON, an integer
// literal that does not fit 64 bits, a duplicate object key or nesting beyond kMaxValueNesting.
nlohmann::ordered_json ParseJsonValue(std::string_view text);

// The packed value a parsed argument stands for. Throws ffijit::Error ("ValueError") for a
// value that has none (an integer above INT64_MAX, a ragged ndarray, an unknown dtype, ...).
Any JsonToAny(const nlohmann::ordered_json& value);

// A packed value (a call's result) as JSON, and its text (one line).
nlohmann::ordered_json AnyToJson(const AnyView& value);
std::string FormatJson(const nlohmann::ordered_json& value);

}  // namespace ffijit::tool

#endif  // FFIJIT_TOOLS_JSON_VALUES_H_
