// The tagged integer/span lexer and builder shared by the raw and SIP signature formats (private).
//
// Grammar: a token is a tag character followed by a decimal integer. Lowercase letters and `_` tag
// integers (`_5`, `d-1`). Uppercase letters tag spans: the integer is the span's length counting
// the `!` that follows it, then come length-1 bytes of content (`A7!foobar`). Any other tag byte,
// a missing `!`, a length below 1 or a span running past the input is an error.
#ifndef FFIJIT_REFLECT_TAGGED_LEXER_H_
#define FFIJIT_REFLECT_TAGGED_LEXER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ffijit {

struct TaggedToken {
  enum class Kind { kInteger, kSpan, kEnd, kError };
  Kind kind = Kind::kEnd;
  char tag = 0;
  int64_t ival = 0;           // kInteger: the value; kSpan: the content length
  std::string_view sval;      // kSpan: the content
  size_t offset = 0;          // where the token (its tag) starts, counted from the outermost input
  size_t content_offset = 0;  // kSpan: where the content starts, same origin
};

// Every call to Next() consumes input, so no loop over it can spin; after the end or an error it
// keeps returning kEnd or kError.
class TaggedLexer {
 public:
  // `base_offset` is added to every reported offset, so nested lexers report absolute positions.
  explicit TaggedLexer(std::string_view text, size_t base_offset = 0)
      : text_(text), base_(base_offset) {}

  const TaggedToken& Next();
  const TaggedToken& token() const { return token_; }
  // For kError: what was wrong, and where (absolute offset).
  const std::string& error() const { return error_; }
  size_t error_offset() const { return error_offset_; }

 private:
  const TaggedToken& Fail(size_t at, std::string what);

  std::string_view text_;
  size_t base_ = 0;
  size_t pos_ = 0;
  TaggedToken token_;
  std::string error_;
  size_t error_offset_ = 0;
};

// Throws the lexer's error (kError) as "<format>: at offset N: ...", the parsers' ValueError.
[[noreturn]] void ThrowLexError(const TaggedLexer& lexer, const char* format);

// Reads a raw or SIP signature's top level, `I<len>!...R<len>!...` and nothing after it, calling
// read_span(0, inputs span) and then read_span(1, results span) as each is lexed (so an error in
// the inputs' content is reported before anything later). Errors name `format`.
template <typename ReadSpan>
void ReadInputAndResultSpans(std::string_view text, const char* format, ReadSpan&& read_span);

// Writes tokens back in the same grammar.
class TaggedBuilder {
 public:
  TaggedBuilder& Integer(int64_t value, char tag = '_');
  TaggedBuilder& Span(std::string_view content, char tag);
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

// Throws ValueError "<format>: at offset N: <what>" for an unexpected top-level token.
[[noreturn]] void ThrowUnexpectedSpan(const char* format, size_t offset, int index);

template <typename ReadSpan>
void ReadInputAndResultSpans(std::string_view text, const char* format, ReadSpan&& read_span) {
  TaggedLexer lexer(text);
  const char expected[2] = {'I', 'R'};
  for (int i = 0; i < 2; ++i) {
    const TaggedToken& tok = lexer.Next();
    if (tok.kind == TaggedToken::Kind::kError) ThrowLexError(lexer, format);
    if (tok.kind != TaggedToken::Kind::kSpan || tok.tag != expected[i]) {
      ThrowUnexpectedSpan(format, tok.offset, i);
    }
    read_span(i, tok);
  }
  const TaggedToken& tail = lexer.Next();
  if (tail.kind == TaggedToken::Kind::kError) ThrowLexError(lexer, format);
  if (tail.kind != TaggedToken::Kind::kEnd) ThrowUnexpectedSpan(format, tail.offset, 2);
}

}  // namespace ffijit

#endif  // FFIJIT_REFLECT_TAGGED_LEXER_H_
