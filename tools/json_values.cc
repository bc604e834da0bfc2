// JSON <-> packed values for `ffijit call` and `ffijit bench` (see json_values.h).
#include "json_values.h"

#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "ffijit/container.h"
#include "ffijit/error.h"
#include "ffijit/tensor.h"
#include "ndarray_json.h"

namespace ffijit::tool {
namespace {

using json = nlohmann::ordered_json;

// A SAX handler building the DOM like nlohmann's own, with three extra checks: nesting depth,
// duplicate object keys, and integer literals too large for 64 bits (nlohmann would silently read
// those as floats).
class ValueBuilder {
 public:
  json& root() { return root_; }
  const std::string& error() const { return error_; }

  bool null() { return Add(json()); }
  bool boolean(bool v) { return Add(json(v)); }
  bool number_integer(json::number_integer_t v) { return Add(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return Add(json(v)); }
  bool number_float(json::number_float_t v, const std::string& text) {
    if (text.find_first_of(".eE") == std::string::npos) {
      return Fail("integer " + Excerpt(text) + " does not fit in 64 bits");
    }
    return Add(json(v));
  }
  bool string(std::string& v) { return Add(json(std::move(v))); }
  bool binary(json::binary_t& v) { return Add(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return Open(json::object()); }
  bool key(std::string& k) {
    if (stack_.back()->contains(k)) return Fail("duplicate key \"" + k + "\" in an object");
    key_ = std::move(k);
    return true;
  }
  bool end_object() { return Close(); }
  bool start_array(std::size_t) { return Open(json::array()); }
  bool end_array() { return Close(); }
  bool parse_error(std::size_t, const std::string&, const json::exception& ex) {
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line 1, column 2: ...".
    std::string what = ex.what();
    const size_t bracket = what.find("] ");
    return Fail(bracket == std::string::npos ? what : what.substr(bracket + 2));
  }

 private:
  // Places a value; returns where it now lives.
  json* Place(json value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    json& slot = parent[key_];
    slot = std::move(value);
    return &slot;
  }
  bool Add(json value) {
    Place(std::move(value));
    return true;
  }
  bool Open(json container) {
    if (stack_.size() >= static_cast<size_t>(kMaxValueNesting)) {
      return Fail("nesting deeper than " + std::to_string(kMaxValueNesting) + " levels");
    }
    stack_.push_back(Place(std::move(container)));
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }
  bool Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }

  json root_;
  std::vector<json*> stack_;
  std::string key_;
  std::string error_;
};

Any ObjectToAny(const json& value) {
  if (value.contains("ndarray")) return JsonToTensor(value);
  if (value.contains("bytes") || value.contains("ptr")) {
    const char* wrapper = value.contains("bytes") ? "bytes" : "ptr";
    if (value.size() != 1) {
      throw ValueError(std::string("a {\"") + wrapper + "\": ...} value takes no other keys");
    }
    const json& inner = value.at(wrapper);
    if (value.contains("ptr")) {
      const std::string text = inner.is_string() ? inner.get<std::string>() : "";
      uint64_t address = 0;
      const char* end = text.data() + text.size();
      bool hex = text.size() > 2 && text.compare(0, 2, "0x") == 0;
      if (hex) {
        const auto [stop, error] = std::from_chars(text.data() + 2, end, address, 16);
        hex = stop == end && error == std::errc();
      }
      if (!hex) {
        throw ValueError("{\"ptr\": ...} needs a hexadecimal address string such as \"0x1f00\"");
      }
      TVMFFIAny raw{};
      raw.type_index = address == 0 ? kTVMFFINone : kTVMFFIOpaquePtr;
      raw.v_uint64 = address;
      return Any::Adopt(raw);
    }
    if (inner.is_string()) return Bytes(inner.get<std::string>());
    if (!inner.is_array()) throw ValueError("{\"bytes\": ...} needs a string or a list of 0..255");
    std::string bytes;
    for (const json& b : inner) {
      if (!b.is_number_integer() || b.get<int64_t>() < 0 || b.get<int64_t>() > 255) {
        throw ValueError("{\"bytes\": [...]} elements must be integers 0..255, got " + b.dump());
      }
      bytes.push_back(static_cast<char>(b.get<int64_t>()));
    }
    return Bytes(bytes);
  }
  std::vector<std::pair<Any, Any>> items;
  for (const auto& [key, item] : value.items()) items.emplace_back(String(key), JsonToAny(item));
  return Map(items);
}

std::string HexAddress(const void* p) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "0x%" PRIxPTR, reinterpret_cast<uintptr_t>(p));
  return buffer;
}

json BytesToJson(std::string_view bytes) {
  json list = json::array();
  for (char c : bytes) list.push_back(static_cast<int>(static_cast<unsigned char>(c)));
  return json{{"bytes", std::move(list)}};
}

json MapToJson(const Map& map) {
  const int64_t n = map.size();
  bool string_keys = true;
  for (int64_t i = 0; i < n; ++i) {
    string_keys = string_keys && details::IsStrForm(map.ItemAt(i).first.type_index());
  }
  if (string_keys) {
    json object = json::object();
    for (int64_t i = 0; i < n; ++i) {
      const auto [key, value] = map.ItemAt(i);
      object[key.cast<std::string>()] = AnyToJson(value);
    }
    return object;
  }
  // JSON object keys are strings: other keys print as a list of [key, value] pairs.
  json pairs = json::array();
  for (int64_t i = 0; i < n; ++i) {
    const auto [key, value] = map.ItemAt(i);
    pairs.push_back(json::array({AnyToJson(key), AnyToJson(value)}));
  }
  return json{{"map", std::move(pairs)}};
}

// Objects nest at most this deep when printed with their fields (reflected graphs may be cyclic).
constexpr int kMaxReflectedNesting = 16;
thread_local int reflected_nesting = 0;

// {"object": key, "fields": {name: value, ...}}: every reflected field of the type and of its
// ancestors, root first, read through the fields' getters. Types without fields print the key only.
json ReflectedObjectToJson(const AnyView& value) {
  const TVMFFIAny& raw = value.raw();
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(raw.type_index);
  json result{{"object", value.type_name()}};
  if (reflected_nesting >= kMaxReflectedNesting) return result;
  struct Nesting {
    Nesting() { ++reflected_nesting; }
    ~Nesting() { --reflected_nesting; }
  } nesting;
  std::vector<const TVMFFITypeInfo*> levels;
  if (info->type_depth > 0) {
    levels.assign(info->FFIJIT_TYPE_ANCESTORS, info->FFIJIT_TYPE_ANCESTORS + info->type_depth);
  }
  levels.push_back(info);
  json fields = json::object();
  for (const TVMFFITypeInfo* level : levels) {
    const int32_t count = __atomic_load_n(&level->num_fields, __ATOMIC_ACQUIRE);
    const TVMFFIFieldInfo* array = __atomic_load_n(&level->fields, __ATOMIC_ACQUIRE);
    for (int32_t i = 0; i < count; ++i) {
      const TVMFFIFieldInfo& field = array[i];
      if (field.getter == nullptr) continue;
      const std::string name(field.name.data, field.name.size);
      TVMFFIAny out{};
      if (field.getter(reinterpret_cast<char*>(raw.v_obj) + field.offset, &out) != 0) {
        Error error = Error::MoveFromRaised();
        fields[name] = json{{"error", error.kind() + ": " + error.message()}};
        continue;
      }
      Any owned = Any::Adopt(out);
      fields[name] = AnyToJson(owned);
    }
  }
  if (!fields.empty()) result["fields"] = std::move(fields);
  return result;
}

json ObjectToJson(const AnyView& value) {
  switch (value.type_index()) {
    case kTVMFFIArray: {
      json list = json::array();
      for (const AnyView& item : value.cast<Array>()) list.push_back(AnyToJson(item));
      return list;
    }
    case kTVMFFIMap:
      return MapToJson(value.cast<Map>());
    case kTVMFFITensor:
      return TensorToJson(value.cast<Tensor>());
    case kTVMFFIShape:
      return json{{"shape", value.cast<Shape>().ToVector()}};
    default:
      return ReflectedObjectToJson(value);
  }
}

void AppendJson(const json& value, std::string* out) {
  switch (value.type()) {
    case json::value_t::array: {
      out->push_back('[');
      bool first = true;
      for (const json& item : value) {
        if (!first) out->push_back(',');
        first = false;
        AppendJson(item, out);
      }
      out->push_back(']');
      return;
    }
    case json::value_t::object: {
      out->push_back('{');
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        if (!first) out->push_back(',');
        first = false;
        *out += json(key).dump(-1, ' ', false, json::error_handler_t::replace);
        out->push_back(':');
        AppendJson(item, out);
      }
      out->push_back('}');
      return;
    }
    case json::value_t::number_float: {
      const double d = value.get<double>();
      if (std::isnan(d)) {
        *out += "NaN";
      } else if (std::isinf(d)) {
        *out += d > 0 ? "Infinity" : "-Infinity";
      } else {
        *out += value.dump();  // shortest text that reads back as the same double
      }
      return;
    }
    default:
      // Strings that are not UTF-8 show U+FFFD for the bad bytes rather than failing.
      *out += value.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

}  // namespace

json ParseJsonValue(std::string_view text) {
  if (text == "NaN") return json(std::numeric_limits<double>::quiet_NaN());
  if (text == "Infinity") return json(std::numeric_limits<double>::infinity());
  if (text == "-Infinity") return json(-std::numeric_limits<double>::infinity());
  ValueBuilder builder;
  if (!json::sax_parse(text, &builder, json::input_format_t::json, true, false)) {
    throw ValueError(builder.error().empty() ? "invalid JSON" : builder.error());
  }
  return std::move(builder.root());
}

Any JsonToAny(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return Any();
    case json::value_t::boolean:
      return Any(value.get<bool>());
    case json::value_t::number_integer:
      return Any(value.get<int64_t>());
    case json::value_t::number_unsigned: {
      const uint64_t v = value.get<uint64_t>();
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        throw ValueError("integer " + std::to_string(v) + " does not fit an Int (int64)");
      }
      return Any(static_cast<int64_t>(v));
    }
    case json::value_t::number_float:
      return Any(value.get<double>());
    case json::value_t::string:
      return Any(String(value.get<std::string>()));
    case json::value_t::array: {
      std::vector<Any> items;
      items.reserve(value.size());
      for (const json& item : value) items.push_back(JsonToAny(item));
      return Array(items);
    }
    case json::value_t::object:
      return ObjectToAny(value);
    default:
      throw ValueError("unsupported JSON value " + value.dump());
  }
}

json AnyToJson(const AnyView& value) {
  const TVMFFIAny& raw = value.raw();
  switch (raw.type_index) {
    case kTVMFFINone:
      return json();
    case kTVMFFIBool:
      return json(raw.v_int64 != 0);
    case kTVMFFIInt:
      return json(raw.v_int64);
    case kTVMFFIFloat:
      return json(raw.v_float64);
    case kTVMFFIOpaquePtr:
      return json(HexAddress(raw.v_ptr));
    case kTVMFFIDataType:
      return json(DataTypeToString(raw.v_dtype));
    case kTVMFFIDevice:
      return json(DeviceToString(raw.v_device));
    case kTVMFFIDLTensorPtr:
      return json{{"dltensor", HexAddress(raw.v_ptr)}};
    case kTVMFFIRawStr:
    case kTVMFFISmallStr:
    case kTVMFFIStr:
      return json(std::string(details::ViewChars(raw)));
    case kTVMFFIByteArrayPtr:
    case kTVMFFISmallBytes:
    case kTVMFFIBytes:
      return BytesToJson(details::ViewChars(raw));
    default:
      break;
  }
  if (raw.type_index >= kTVMFFIStaticObjectBegin && raw.v_obj != nullptr) {
    return ObjectToJson(value);
  }
  return json{{"object", value.type_name()}};
}

std::string FormatJson(const json& value) {
  std::string out;
  AppendJson(value, &out);
  return out;
}

}  // namespace ffijit::tool
