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

// Writes tokens back in the same grammar.
class TaggedBuilder {
 public:
  TaggedBuilder& Integer(int64_t value, char tag = '_');
  TaggedBuilder& Span(std::string_view content, char tag);
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

}  // namespace ffijit

#endif  // FFIJIT_REFLECT_TAGGED_LEXER_H_
