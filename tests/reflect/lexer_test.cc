// The tagged integer/span lexer: every case of the old IREE lexer, the builder, and bad input.
#include "tagged_lexer.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace ffijit {
namespace {

const char* KindName(TaggedToken::Kind k) {
  switch (k) {
    case TaggedToken::Kind::kInteger:
      return "kInteger";
    case TaggedToken::Kind::kSpan:
      return "kSpan";
    case TaggedToken::Kind::kEnd:
      return "kEnd";
    case TaggedToken::Kind::kError:
      return "kError";
  }
  return "?";
}

// Lexes `text` and compares with the corpus token list; then checks the terminal token repeats.
void ExpectTokens(const std::string& text, const nlohmann::json& tokens) {
  TaggedLexer lexer(text);
  for (const auto& want : tokens) {
    const TaggedToken& got = lexer.Next();
    ASSERT_EQ(KindName(got.kind), want[0].get<std::string>()) << text;
    if (want.size() > 1) {
      EXPECT_EQ(std::string(1, got.tag), want[1].get<std::string>()) << text;
      EXPECT_EQ(got.ival, want[2].get<int64_t>()) << text;
      EXPECT_EQ(std::string(got.sval), want[3].get<std::string>()) << text;
    }
  }
  const TaggedToken::Kind last = lexer.token().kind;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(lexer.Next().kind, last) << "terminal token repeats";
}

TEST(TaggedLexer, EveryCorpusCase) {
  const nlohmann::json corpus = testing::LoadCorpus("iree_lexer_cases.json");
  ASSERT_GE(corpus["lexer_cases"].size(), 11u);
  for (const auto& c : corpus["lexer_cases"]) {
    SCOPED_TRACE(c["test"].get<std::string>());
    const std::string text = c["text"];
    ExpectTokens(text, c["tokens"]);
    if (c.contains("nested_of_X")) {
      TaggedLexer outer(text);
      TaggedToken span;
      while (true) {
        span = outer.Next();
        if (span.kind != TaggedToken::Kind::kInteger) break;
      }
      ASSERT_EQ(span.tag, 'X');
      ExpectTokens(std::string(span.sval), c["nested_of_X"]);
    }
  }
}

TEST(TaggedBuilder, WritesTheCorpusEncodings) {
  EXPECT_EQ(TaggedBuilder().Integer(5).Integer(1, 'a').Integer(10, 'z').Integer(-5991, 'x').str(),
            "_5a1z10x-5991");
  EXPECT_EQ(TaggedBuilder().Span("foobar", 'A').Span("FOOBAR_23_FOOBAR", 'Z').str(),
            "A7!foobarZ17!FOOBAR_23_FOOBAR");
  EXPECT_EQ(TaggedBuilder().Span("12345", 'A').Span("-23", 'Z').str(), "A6!12345Z4!-23");
  EXPECT_EQ(TaggedBuilder().Span("!2345", 'A').Span("-23", 'Z').str(), "A6!!2345Z4!-23");
  TaggedBuilder inner;
  inner.Integer(6);
  EXPECT_EQ(TaggedBuilder().Integer(5).Span(inner.str(), 'X').str(), "_5X3!_6");
  EXPECT_EQ(TaggedBuilder().Span("", 'Z').str(), "Z1!");
}

// Each malformed input: the first token is an error at `offset` saying `what`.
TEST(TaggedLexer, BadInputNamesOffsetAndProblem) {
  struct Case {
    std::string text;
    size_t offset;
    const char* what;
  };
  const Case cases[] = {
      {"\x01"
       "1 ",
       0, "expected a tag letter or '_', got byte 0x01"},
      {"Z4abc", 2, "expected '!' after span length 4, got 'a'"},
      {"_+12", 1, "expected a decimal integer after tag '_', got '+'"},
      {"Z-3abc", 1, "span length -3 of tag 'Z' must be at least 1"},
      {"Z0!", 1, "span length 0"},
      {"A99!abc", 1, "span length 99 runs past the end of input (7 bytes)"},
      {"_", 1, "got end of input"},
      {"A5", 2, "expected '!' after span length 5, got end of input"},
      {"_99999999999999999999", 1, "out of range"},
      {"!", 0, "expected a tag letter"},
      {"5", 0, "expected a tag letter"},
  };
  for (const Case& c : cases) {
    TaggedLexer lexer(c.text);
    const TaggedToken& tok = lexer.Next();
    EXPECT_EQ(tok.kind, TaggedToken::Kind::kError) << c.text;
    EXPECT_EQ(lexer.error_offset(), c.offset) << c.text;
    EXPECT_NE(lexer.error().find(c.what), std::string::npos) << c.text << ": " << lexer.error();
    EXPECT_EQ(lexer.Next().kind, TaggedToken::Kind::kError);
  }
}

TEST(TaggedLexer, NestedLexerReportsAbsoluteOffsets) {
  TaggedLexer outer("_1X5!A9!x");
  outer.Next();
  const TaggedToken span = outer.Next();
  ASSERT_EQ(span.kind, TaggedToken::Kind::kSpan);
  EXPECT_EQ(span.content_offset, 5u);
  TaggedLexer inner(span.sval, span.content_offset);
  EXPECT_EQ(inner.Next().kind, TaggedToken::Kind::kError);
  EXPECT_EQ(inner.error_offset(), 6u);
  EXPECT_NE(inner.error().find("end of its enclosing span (offset 9)"), std::string::npos)
      << inner.error();
}

// The old lexer could loop forever on a malformed span: every step must consume input.
TEST(TaggedLexer, AlwaysTerminates) {
  const std::string inputs[] = {"A1!A1!A1!", "Z1!Z1", "a-", "a--1", "A-0!", "A1!!", "__1"};
  for (const std::string& text : inputs) {
    TaggedLexer lexer(text);
    int steps = 0;
    while (steps < 100) {
      const TaggedToken::Kind k = lexer.Next().kind;
      ++steps;
      if (k == TaggedToken::Kind::kEnd || k == TaggedToken::Kind::kError) break;
    }
    EXPECT_LE(steps, static_cast<int>(text.size()) + 1) << text;
  }
}

}  // namespace
}  // namespace ffijit
