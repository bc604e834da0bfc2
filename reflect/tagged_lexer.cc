// The tagged integer/span lexer and builder of the raw and SIP signature formats.
#include "tagged_lexer.h"

#include <utility>

#include "json_dom.h"

namespace ffijit {
namespace {

bool IsIntegerTag(char c) {
  return (c >= 'a' && c <= 'z') || c == '_';
}
bool IsSpanTag(char c) {
  return c >= 'A' && c <= 'Z';
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

std::string Printable(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  static const char kHex[] = "0123456789abcdef";
  return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 15];
}

}  // namespace

const TaggedToken& TaggedLexer::Fail(size_t at, std::string what) {
  token_ = TaggedToken();
  token_.kind = TaggedToken::Kind::kError;
  token_.offset = base_ + at;
  error_ = std::move(what);
  error_offset_ = base_ + at;
  pos_ = text_.size();
  return token_;
}

const TaggedToken& TaggedLexer::Next() {
  if (token_.kind == TaggedToken::Kind::kError && !error_.empty()) return token_;
  if (pos_ >= text_.size()) {
    token_ = TaggedToken();
    token_.kind = TaggedToken::Kind::kEnd;
    token_.offset = base_ + text_.size();
    return token_;
  }
  const size_t start = pos_;
  const char tag = text_[start];
  if (!IsIntegerTag(tag) && !IsSpanTag(tag)) {
    return Fail(start, "expected a tag letter or '_', got " + Printable(tag));
  }
  size_t p = start + 1;
  bool negative = false;
  if (p < text_.size() && text_[p] == '-') {
    negative = true;
    ++p;
  }
  const size_t digits_begin = p;
  int64_t magnitude = 0;
  while (p < text_.size() && IsDigit(text_[p])) {
    const int digit = text_[p] - '0';
    // Accumulate as a negative-capable magnitude; INT64_MIN's magnitude does not fit, reject it.
    if (magnitude > (INT64_MAX - digit) / 10) {
      return Fail(digits_begin, "integer after tag '" + std::string(1, tag) + "' is out of range");
    }
    magnitude = magnitude * 10 + digit;
    ++p;
  }
  if (p == digits_begin) {
    const std::string got = p < text_.size() ? Printable(text_[p]) : std::string("end of input");
    return Fail(p,
                "expected a decimal integer after tag '" + std::string(1, tag) + "', got " + got);
  }
  const int64_t value = negative ? -magnitude : magnitude;

  token_ = TaggedToken();
  token_.tag = tag;
  token_.offset = base_ + start;
  if (IsIntegerTag(tag)) {
    token_.kind = TaggedToken::Kind::kInteger;
    token_.ival = value;
    pos_ = p;
    return token_;
  }
  // A span: the length counts the '!' so it is at least 1, and the content must fit.
  if (value < 1) {
    return Fail(start + 1, "span length " + std::to_string(value) + " of tag '" +
                               std::string(1, tag) + "' must be at least 1 (it counts the '!')");
  }
  if (p >= text_.size() || text_[p] != '!') {
    const std::string got = p < text_.size() ? Printable(text_[p]) : std::string("end of input");
    return Fail(p, "expected '!' after span length " + std::to_string(value) + ", got " + got);
  }
  const size_t remaining = text_.size() - p;  // includes the '!'
  if (static_cast<uint64_t>(value) > remaining) {
    // A nested lexer's input is its enclosing span, so say which end was overrun.
    const std::string where =
        base_ == 0
            ? "the end of input (" + std::to_string(text_.size()) + " bytes)"
            : "the end of its enclosing span (offset " + std::to_string(base_ + text_.size()) + ")";
    return Fail(start + 1, "span length " + std::to_string(value) + " runs past " + where);
  }
  token_.kind = TaggedToken::Kind::kSpan;
  token_.ival = value - 1;
  token_.sval = text_.substr(p + 1, static_cast<size_t>(value - 1));
  token_.content_offset = base_ + p + 1;
  pos_ = p + static_cast<size_t>(value);
  return token_;
}

TaggedBuilder& TaggedBuilder::Integer(int64_t value, char tag) {
  out_ += tag;
  out_ += std::to_string(value);
  return *this;
}

TaggedBuilder& TaggedBuilder::Span(std::string_view content, char tag) {
  out_ += tag;
  out_ += std::to_string(content.size() + 1);
  out_ += '!';
  out_.append(content.data(), content.size());
  return *this;
}

void ThrowLexError(const TaggedLexer& lexer, const char* format) {
  ThrowAt(format, lexer.error_offset(), lexer.error());
}

void ThrowUnexpectedSpan(const char* format, size_t offset, int index) {
  ThrowAt(format, offset,
          index == 0   ? "expected the inputs span I<len>!..."
          : index == 1 ? "expected the results span R<len>!..."
                       : "expected the end of the signature after the R span");
}

}  // namespace ffijit
