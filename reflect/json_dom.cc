// JSON with byte offsets: nlohmann's SAX parser fed through a position-recording iterator.
#include "json_dom.h"

#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "ffijit/error.h"

namespace ffijit {
namespace {

// An input iterator over the text that records how many bytes the parser has read. nlohmann
// dereferences each byte once, right before advancing past it.
class CountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  CountingIterator(const char* p, const char* begin, size_t* consumed)
      : p_(p), begin_(begin), consumed_(consumed) {}
  reference operator*() const {
    *consumed_ = static_cast<size_t>(p_ - begin_) + 1;
    return *p_;
  }
  CountingIterator& operator++() {
    ++p_;
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator old = *this;
    ++p_;
    return old;
  }
  bool operator==(const CountingIterator& o) const { return p_ == o.p_; }
  bool operator!=(const CountingIterator& o) const { return p_ != o.p_; }

 private:
  const char* p_;
  const char* begin_;
  size_t* consumed_;
};

// Builds JsonValues from SAX events. nlohmann reports each event after lexing its token and before
// reading the next one, so a value starts at the first byte after the previous event's end that is
// not whitespace or a separator (a number's lookahead byte is always such a byte or a bracket).
class DomBuilder {
 public:
  using json = nlohmann::json;
  DomBuilder(std::string_view text, const size_t* consumed, int max_depth)
      : text_(text), consumed_(consumed), max_depth_(max_depth) {}

  bool null() { return Scalar(JsonValue::Kind::kNull); }
  bool boolean(bool v) {
    JsonValue value = Make(JsonValue::Kind::kBool);
    value.boolean = v;
    return Add(std::move(value));
  }
  bool number_integer(json::number_integer_t v) {
    JsonValue value = Make(JsonValue::Kind::kInt);
    value.integer = v;
    return Add(std::move(value));
  }
  bool number_unsigned(json::number_unsigned_t v) {
    if (v > static_cast<json::number_unsigned_t>(INT64_MAX)) return Scalar(JsonValue::Kind::kFloat);
    return number_integer(static_cast<int64_t>(v));
  }
  bool number_float(json::number_float_t, const json::string_t&) {
    return Scalar(JsonValue::Kind::kFloat);
  }
  bool string(json::string_t& v) {
    JsonValue value = Make(JsonValue::Kind::kString);
    value.string = std::move(v);
    return Add(std::move(value));
  }
  bool binary(json::binary_t&) { return Scalar(JsonValue::Kind::kNull); }
  bool start_object(std::size_t) { return Open(JsonValue::Kind::kObject); }
  bool key(json::string_t& k) {
    stack_.back().key_offsets.push_back(ValueStart());
    stack_.back().keys.push_back(std::move(k));
    Mark();
    return true;
  }
  bool end_object() { return Close(); }
  bool start_array(std::size_t) { return Open(JsonValue::Kind::kArray); }
  bool end_array() { return Close(); }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& e) {
    // nlohmann's message reads "[json.exception.parse_error.101] parse error at line 1,
    // column 5: syntax error while parsing value - <detail>"; keep the part after the column.
    std::string what = e.what();
    const size_t column = what.find("column ");
    const size_t colon = column == std::string::npos ? column : what.find(": ", column);
    if (colon != std::string::npos) what = what.substr(colon + 2);
    // `position` counts the bytes read through the offending token; point at its first byte. At
    // the end of input `last_token` is a placeholder, not input bytes.
    if (what.find("end of input") != std::string::npos) {
      error_offset_ = text_.size();
    } else {
      error_offset_ = position >= last_token.size() ? position - last_token.size() : 0;
      if (error_offset_ > text_.size()) error_offset_ = text_.size();
    }
    error_ = "invalid JSON: " + what;
    return false;
  }

  JsonValue TakeRoot() { return std::move(root_); }
  const std::string& error() const { return error_; }
  size_t error_offset() const { return error_offset_; }

 private:
  size_t ValueStart() const {
    size_t p = last_end_;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t' || text_[p] == '\n' ||
                                text_[p] == '\r' || text_[p] == ',' || text_[p] == ':')) {
      ++p;
    }
    return p;
  }
  void Mark() { last_end_ = *consumed_; }
  JsonValue Make(JsonValue::Kind kind) {
    JsonValue value;
    value.kind = kind;
    value.offset = ValueStart();
    Mark();
    return value;
  }
  bool Scalar(JsonValue::Kind kind) { return Add(Make(kind)); }
  bool Add(JsonValue value) {
    if (stack_.empty()) {
      root_ = std::move(value);
    } else {
      stack_.back().items.push_back(std::move(value));
    }
    return true;
  }
  bool Open(JsonValue::Kind kind) {
    JsonValue value = Make(kind);
    if (static_cast<int>(stack_.size()) >= max_depth_) {
      error_offset_ = value.offset;
      error_ = "nesting deeper than " + std::to_string(max_depth_) + " levels";
      return false;
    }
    stack_.push_back(std::move(value));
    return true;
  }
  bool Close() {
    JsonValue done = std::move(stack_.back());
    stack_.pop_back();
    Mark();
    return Add(std::move(done));
  }

  std::string_view text_;
  const size_t* consumed_;
  int max_depth_;
  size_t last_end_ = 0;
  std::vector<JsonValue> stack_;
  JsonValue root_;
  std::string error_;
  size_t error_offset_ = 0;
};

}  // namespace

const char* JsonValue::KindName() const {
  switch (kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "a boolean";
    case Kind::kInt:
      return "an integer";
    case Kind::kFloat:
      return "a non-integer number";
    case Kind::kString:
      return "a string";
    case Kind::kArray:
      return "an array";
    case Kind::kObject:
      return "an object";
  }
  return "?";
}

void ThrowAt(const char* format, size_t offset, const std::string& what) {
  // A safety net: each site already quotes inputs through Excerpt.
  throw ValueError(std::string(format) + ": at offset " + std::to_string(offset) + ": " +
                   Excerpt(what, 4 * kExcerptLimit));
}

JsonValue ParseJsonDom(std::string_view text, const char* format, int max_depth) {
  size_t consumed = 0;
  DomBuilder builder(text, &consumed, max_depth);
  const char* begin = text.data();
  CountingIterator first(begin, begin, &consumed);
  CountingIterator last(begin + text.size(), begin, &consumed);
  const bool ok = nlohmann::json::sax_parse(first, last, &builder);
  if (!ok) {
    ThrowAt(format, builder.error_offset(),
            builder.error().empty() ? std::string("invalid JSON") : builder.error());
  }
  return builder.TakeRoot();
}

}  // namespace ffijit
