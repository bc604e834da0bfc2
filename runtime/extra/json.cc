// JSON text <-> values, as TVM FFI's C++ API `tvm::ffi::json::Parse` / `json::Stringify` and the
// globals `ffi.json.Parse` / `ffi.json.Stringify` (apache/tvm-ffi e98b94e1 and v0.1.13,
// include/tvm/ffi/extra/json.h). Objects become Maps (insertion-ordered, a repeated key keeps its
// first position and its last value), arrays Arrays; integers without a fraction or exponent are
// Int, other numbers Float; NaN, Infinity and -Infinity are accepted and written. Syntax errors
// read like Python's json module ("Expecting value: line 1 column 1 (char 0)"), which that
// version's tests check. Hand-written rather than nlohmann-based: the error texts and positions
// must match exactly, and the runtime stays free of dependencies.
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "../container_internal.h"
#include "../cxx_abi/shims.h"
#include "../internal.h"
#include "../string_internal.h"
#include "ffijit/c_ext.h"
#include "ffijit/object.h"
#include "ffijit/registry.h"

namespace ffijit {
namespace {

// Owned values built while parsing; released on every path.
struct OwnedList {
  std::vector<TVMFFIAny> items;
  ~OwnedList() {
    for (TVMFFIAny& item : items) internal::ReleaseAny(&item);
  }
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  // The value of the whole text; false with error() set on a syntax error.
  bool ParseDocument(TVMFFIAny* out) {
    SkipSpaces();
    if (!ParseValue(out)) return false;
    SkipSpaces();
    if (pos_ != text_.size()) {
      internal::ReleaseAny(out);
      return Fail("Extra data", pos_);
    }
    return true;
  }
  const std::string& error() const { return error_; }

 private:
  bool Fail(const char* what, size_t at) {
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < at && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    error_ = std::string(what) + ": line " + std::to_string(line) + " column " +
             std::to_string(at - line_start + 1) + " (char " + std::to_string(at) + ")";
    return false;
  }
  void SkipSpaces() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool StartsWith(std::string_view word) const { return text_.substr(pos_, word.size()) == word; }

  bool ParseValue(TVMFFIAny* out) {
    *out = TVMFFIAny{};
    if (pos_ >= text_.size()) return Fail("Expecting value", pos_);
    char c = text_[pos_];
    if (c == '"') return ParseString(out);
    if (c == '[') return ParseArray(out);
    if (c == '{') return ParseObject(out);
    if (StartsWith("null")) {
      pos_ += 4;
      return true;
    }
    if (StartsWith("true") || StartsWith("false")) {
      bool value = c == 't';
      pos_ += value ? 4 : 5;
      out->type_index = kTVMFFIBool;
      out->v_int64 = value;
      return true;
    }
    if (StartsWith("NaN")) return Float(std::nan(""), 3, out);
    if (StartsWith("Infinity")) return Float(HUGE_VAL, 8, out);
    if (StartsWith("-Infinity")) return Float(-HUGE_VAL, 9, out);
    return ParseNumber(out);
  }
  bool Float(double value, size_t length, TVMFFIAny* out) {
    pos_ += length;
    out->type_index = kTVMFFIFloat;
    out->v_float64 = value;
    return true;
  }

  // The maximal run of number characters must be a whole JSON number; otherwise the value is
  // missing where the run starts (as "123.456.789" and "123e" report).
  bool ParseNumber(TVMFFIAny* out) {
    size_t start = pos_, end = pos_;
    while (end < text_.size() && std::strchr("0123456789+-.eE", text_[end]) != nullptr &&
           text_[end] != '\0') {
      ++end;
    }
    std::string_view token = text_.substr(start, end - start);
    size_t i = 0;
    auto digits = [&] {
      size_t from = i;
      while (i < token.size() && token[i] >= '0' && token[i] <= '9') ++i;
      return i > from;
    };
    if (i < token.size() && token[i] == '-') ++i;
    if (i < token.size() && token[i] == '0') {
      ++i;
    } else if (!digits()) {
      return Fail("Expecting value", start);
    }
    bool is_float = false;
    if (i < token.size() && token[i] == '.') {
      ++i;
      is_float = true;
      if (!digits()) return Fail("Expecting value", start);
    }
    if (i < token.size() && (token[i] == 'e' || token[i] == 'E')) {
      ++i;
      is_float = true;
      if (i < token.size() && (token[i] == '+' || token[i] == '-')) ++i;
      if (!digits()) return Fail("Expecting value", start);
    }
    if (i != token.size()) return Fail("Expecting value", start);
    std::string copy(token);
    pos_ = end;
    if (!is_float) {
      errno = 0;
      char* stop = nullptr;
      long long value = std::strtoll(copy.c_str(), &stop, 10);
      if (errno == 0) {
        out->type_index = kTVMFFIInt;
        out->v_int64 = value;
        return true;
      }
      // Beyond int64: a Float, like any other number that does not fit.
    }
    out->type_index = kTVMFFIFloat;
    out->v_float64 = std::strtod(copy.c_str(), nullptr);
    return true;
  }

  // Four hex digits at `at`; false if they are not.
  bool Hex4(size_t at, uint32_t* code) const {
    if (at + 4 > text_.size()) return false;
    uint32_t value = 0;
    for (size_t k = at; k < at + 4; ++k) {
      char h = text_[k];
      value <<= 4;
      if (h >= '0' && h <= '9') {
        value |= static_cast<uint32_t>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        value |= static_cast<uint32_t>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        value |= static_cast<uint32_t>(h - 'A' + 10);
      } else {
        return false;
      }
    }
    *code = value;
    return true;
  }
  static void AppendUtf8(uint32_t code, std::string* out) {
    if (code < 0x80) {
      out->push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (code >> 6)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (code >> 12)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (code >> 18)));
      out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
  }

  // The characters of a string starting at the quote at pos_.
  bool ParseChars(std::string* chars) {
    size_t open = pos_++;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return Fail("Invalid control character at", pos_);
      if (c != '\\') {
        chars->push_back(c);
        ++pos_;
        continue;
      }
      size_t esc = pos_ + 1;  // the character after the backslash
      if (esc >= text_.size()) break;
      char kind = text_[esc];
      static const char kEscapes[] = "\"\\/bfnrt";
      static const char kDecoded[] = "\"\\/\b\f\n\r\t";
      const char* simple = std::strchr(kEscapes, kind);
      if (kind != '\0' && simple != nullptr) {
        chars->push_back(kDecoded[simple - kEscapes]);
        pos_ = esc + 1;
        continue;
      }
      if (kind != 'u') return Fail("Invalid \\escape", esc);
      uint32_t code;
      if (!Hex4(esc + 1, &code)) return Fail("Invalid \\uXXXX escape", esc);
      pos_ = esc + 5;
      if (code >= 0xDC00 && code <= 0xDFFF)
        return Fail("Invalid surrogate pair of \\uXXXX escapes", esc);
      if (code >= 0xD800 && code <= 0xDBFF) {
        if (text_.substr(pos_, 2) != "\\u") {
          return Fail("Invalid surrogate pair of \\uXXXX escapes", esc);
        }
        uint32_t low;
        if (!Hex4(pos_ + 2, &low)) return Fail("Invalid \\uXXXX escape", pos_ + 2);
        if (low < 0xDC00 || low > 0xDFFF) {
          return Fail("Invalid surrogate pair of \\uXXXX escapes", esc);
        }
        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        pos_ += 6;
      }
      AppendUtf8(code, chars);
    }
    return Fail("Unterminated string starting at", open);
  }
  bool ParseString(TVMFFIAny* out) {
    std::string chars;
    if (!ParseChars(&chars)) return false;
    internal::MakeOwnedBytes(true, chars.data(), chars.size(), out);
    return true;
  }

  bool ParseArray(TVMFFIAny* out) {
    ++pos_;  // '['
    OwnedList items;
    SkipSpaces();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return MakeArray(items, out);
    }
    for (;;) {
      SkipSpaces();
      items.items.push_back(TVMFFIAny{});
      if (!ParseValue(&items.items.back())) return false;
      SkipSpaces();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return MakeArray(items, out);
      }
      return Fail("Expecting ',' delimiter", pos_);
    }
  }
  static bool MakeArray(const OwnedList& items, TVMFFIAny* out) {
    TVMFFIObjectHandle array = nullptr;
    if (FFIJITArrayCreate(items.items.data(), static_cast<int64_t>(items.items.size()), &array)) {
      throw ffijit::Error::MoveFromRaised();
    }
    out->type_index = kTVMFFIArray;
    out->v_obj = static_cast<TVMFFIObject*>(array);
    return true;
  }

  bool ParseObject(TVMFFIAny* out) {
    ++pos_;  // '{'
    OwnedList keys, values;
    SkipSpaces();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return MakeMap(keys, values, out);
    }
    for (;;) {
      SkipSpaces();
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        return Fail("Expecting property name enclosed in double quotes", pos_);
      }
      keys.items.push_back(TVMFFIAny{});
      if (!ParseString(&keys.items.back())) return false;
      SkipSpaces();
      if (pos_ >= text_.size() || text_[pos_] != ':') return Fail("Expecting ':' delimiter", pos_);
      ++pos_;
      SkipSpaces();
      values.items.push_back(TVMFFIAny{});
      if (!ParseValue(&values.items.back())) return false;
      SkipSpaces();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return MakeMap(keys, values, out);
      }
      return Fail("Expecting ',' delimiter", pos_);
    }
  }
  static bool MakeMap(const OwnedList& keys, const OwnedList& values, TVMFFIAny* out) {
    TVMFFIObjectHandle map = nullptr;
    if (FFIJITMapCreate(keys.items.data(), values.items.data(),
                        static_cast<int64_t>(keys.items.size()), &map)) {
      throw ffijit::Error::MoveFromRaised();
    }
    out->type_index = kTVMFFIMap;
    out->v_obj = static_cast<TVMFFIObject*>(map);
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

std::string TypeKeyOf(const TVMFFIAny& value) {
  TVMFFIAny key{};
  if (FFIJITTypeIndexToKey(value.type_index, &key) != 0) {
    TVMFFIObjectHandle ignored = nullptr;
    TVMFFIErrorMoveFromRaised(&ignored);
    if (ignored) TVMFFIObjectDecRef(ignored);
    return "type index " + std::to_string(value.type_index);
  }
  std::string_view chars;
  internal::ViewBytes(key, &chars);
  std::string text(chars);
  internal::ReleaseAny(&key);
  return text;
}

class Writer {
 public:
  explicit Writer(int indent) : indent_(indent) {}
  std::string& text() { return out_; }

  void Value(const TVMFFIAny& value) {
    std::string_view chars;
    switch (value.type_index) {
      case kTVMFFINone:
        out_ += "null";
        return;
      case kTVMFFIBool:
        out_ += value.v_int64 ? "true" : "false";
        return;
      case kTVMFFIInt:
        out_ += std::to_string(value.v_int64);
        return;
      case kTVMFFIFloat:
        Float(value.v_float64);
        return;
      case kTVMFFISmallStr:
      case kTVMFFIStr:
        internal::ViewBytes(value, &chars);
        String(chars);
        return;
      case kTVMFFIArray:
        Array(*reinterpret_cast<const FFIJITArrayCell*>(value.v_obj + 1));
        return;
      case kTVMFFIMap:
        Object(value.v_obj);
        return;
      default:
        throw ffijit::Error("ValueError", "Unsupported type: `" + TypeKeyOf(value) + "`");
    }
  }

 private:
  void Float(double value) {
    char buffer[40];
    if (std::isnan(value)) {
      out_ += "NaN";
    } else if (std::isinf(value)) {
      out_ += value < 0 ? "-Infinity" : "Infinity";
    } else {
      double whole;
      // Integral values below 2^53 keep one decimal ("5.0"); the rest round-trip with 17 digits.
      if (std::fabs(value) < 9007199254740992.0 && std::modf(value, &whole) == 0) {
        std::snprintf(buffer, sizeof(buffer), "%.1f", whole);
      } else {
        std::snprintf(buffer, sizeof(buffer), "%.17g", value);
      }
      out_ += buffer;
    }
  }
  void String(std::string_view chars) {
    out_ += '"';
    for (char c : chars) {
      switch (c) {
        case '"':
          out_ += "\\\"";
          break;
        case '\\':
          out_ += "\\\\";
          break;
        case '/':
          out_ += "\\/";
          break;
        case '\b':
          out_ += "\\b";
          break;
        case '\f':
          out_ += "\\f";
          break;
        case '\n':
          out_ += "\\n";
          break;
        case '\r':
          out_ += "\\r";
          break;
        case '\t':
          out_ += "\\t";
          break;
        default: {
          auto byte = static_cast<unsigned char>(c);
          if (byte < 0x20 || byte == 0x7F) {
            char buffer[8];
            std::snprintf(buffer, sizeof(buffer), "\\u%04x", byte);
            out_ += buffer;
          } else {
            out_ += c;
          }
        }
      }
    }
    out_ += '"';
  }
  void Indent() {
    if (indent_ == 0) return;
    out_ += '\n';
    out_.append(static_cast<size_t>(depth_), ' ');
  }
  void Array(const FFIJITArrayCell& cell) {
    out_ += '[';
    depth_ += indent_;
    for (int64_t i = 0; i < cell.size; ++i) {
      if (i != 0) out_ += ',';
      Indent();
      Value(cell.data[i]);
    }
    depth_ -= indent_;
    Indent();
    out_ += ']';
  }
  void Object(TVMFFIObject* map) {
    out_ += '{';
    depth_ += indent_;
    bool first = true;
    internal::MapForEach(map, [&](const TVMFFIAny& key, const TVMFFIAny& value) {
      if (!first) out_ += ',';
      first = false;
      Indent();
      std::string_view chars;
      if ((key.type_index != kTVMFFIStr && key.type_index != kTVMFFISmallStr) ||
          !internal::ViewBytes(key, &chars)) {
        throw ffijit::Error("ValueError", "Expect key to be string, got `" + TypeKeyOf(key) + "`");
      }
      String(chars);
      out_ += indent_ != 0 ? ": " : ":";
      Value(value);
    });
    depth_ -= indent_;
    Indent();
    out_ += '}';
  }

  int indent_;
  int depth_ = 0;
  std::string out_;
};

// Parses `text`: 0 with the value in *out, 1 with a syntax error message in *message, or throws
// ffijit::Error (out of memory and the like).
int ParseText(std::string_view text, TVMFFIAny* out, std::string* message) {
  Parser parser(text);
  if (parser.ParseDocument(out)) return 0;
  *message = parser.error();
  return 1;
}

std::string StringifyValue(const TVMFFIAny& value, int indent) {
  Writer writer(indent);
  writer.Value(value);
  return std::move(writer.text());
}

// ---- The globals ----

int ParseGlobal(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return GuardCBoundary([&] {
    if (num_args != 1) {
      throw ffijit::Error(
          "TypeError", "ffi.json.Parse: expected 1 argument but got " + std::to_string(num_args));
    }
    std::string_view text;
    if (args[0].type_index != kTVMFFIRawStr && args[0].type_index != kTVMFFISmallStr &&
        args[0].type_index != kTVMFFIStr) {
      throw ffijit::Error("TypeError", "ffi.json.Parse: argument #0 must be a str, not `" +
                                           TypeKeyOf(args[0]) + "`");
    }
    internal::ViewBytes(args[0], &text);
    TVMFFIAny value{};
    std::string message;
    if (ParseText(text, &value, &message) != 0) throw ffijit::Error("ValueError", message);
    *result = value;
  });
}

int StringifyGlobal(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return GuardCBoundary([&] {
    if (num_args != 1 && num_args != 2) {
      throw ffijit::Error("TypeError", "ffi.json.Stringify: expected 1 or 2 arguments but got " +
                                           std::to_string(num_args));
    }
    int indent = 0;
    if (num_args == 2 && args[1].type_index != kTVMFFINone) {
      if (args[1].type_index != kTVMFFIInt || args[1].v_int64 < 0 || args[1].v_int64 > 64) {
        throw ffijit::Error("TypeError",
                            "ffi.json.Stringify: indent must be None or an int in [0, 64]");
      }
      indent = static_cast<int>(args[1].v_int64);
    }
    std::string text = StringifyValue(args[0], indent);
    internal::MakeOwnedBytes(true, text.data(), text.size(), result);
  });
}

// Registered while the runtime loads, as TVM FFI's runtime does.
__attribute__((constructor)) void RegisterJsonGlobals() {
  RegisterAtLoad("ffi.json.Parse and ffi.json.Stringify", [] {
    SetGlobalFunction("ffi.json.Parse", Function::FromSafeCall(nullptr, ParseGlobal, nullptr),
                      true);
    SetGlobalFunction("ffi.json.Stringify",
                      Function::FromSafeCall(nullptr, StringifyGlobal, nullptr), true);
  });
}

}  // namespace
}  // namespace ffijit

namespace tvm {
namespace ffi {

namespace json {

Any Parse(const String& json_str, String* error_msg) {
  return ffijit::internal::WithTvmErrors([&] {
    std::string_view text;
    ffijit::internal::ViewBytes(json_str.data_, &text);
    Any result;
    std::string message;
    int status = ffijit::ParseText(text, &result.data_, &message);
    if (status != 0 && error_msg == nullptr) throw ffijit::Error("ValueError", message);
    if (error_msg != nullptr) {
      // Replace the caller's string (whatever form it holds) with the message, or "" on success.
      ffijit::internal::ReleaseAny(&error_msg->data_);
      ffijit::internal::MakeOwnedBytes(true, message.data(), message.size(), &error_msg->data_);
    }
    return result;
  });
}

// The indent by const reference or by value (two mangled names; shims.h).
#if FFIJIT_TVM_FFI_JSON_STRINGIFY_INDENT_BY_REF
String Stringify(const Any& value, const Optional<int>& indent) {
#else
String Stringify(const Any& value, Optional<int> indent) {
#endif
  return ffijit::internal::WithTvmErrors([&] {
    std::string text = ffijit::StringifyValue(value.data_, indent.has_value() ? indent.value() : 0);
    String result;
    ffijit::internal::MakeOwnedBytes(true, text.data(), text.size(), &result.data_);
    return result;
  });
}

}  // namespace json
}  // namespace ffi
}  // namespace tvm
