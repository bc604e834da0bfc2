// SIP: builder from index paths, readable form, Combine with a raw signature, and bad input.
#include <gtest/gtest.h>

#include "ffijit/reflect/metadata.h"
#include "test_util.h"

namespace ffijit {
namespace {

using testing::ErrorOf;

TEST(SipFormat, BuilderSortsKeysLikeTheMangler) {
  // Set in raw order (foo before bar); the mangler writes dict keys sorted.
  const SipSignature sip = SipSignature::FromIndexPaths(
      {{int64_t{0}, std::string("foo")}, {int64_t{0}, std::string("bar")}, {int64_t{1}}},
      {{int64_t{0}}, {int64_t{1}}});
  EXPECT_EQ(PrintSip(sip), "I31!S27!k0D17!K4!bar_1K4!foo_0k1_2R12!S9!k0_0k1_1");
  EXPECT_EQ(PrintSip(SipSignature::FromIndexPaths({}, {})), "I1!R1!");
  EXPECT_EQ(PrintSip(SipSignature::FromIndexPaths({}, {{}})), "I1!R3!_0");
}

TEST(SipFormat, BuilderRejectsConflictingPaths) {
  using P = std::vector<SipPath>;
  ErrorOf(
      [] {
        SipSignature::FromIndexPaths(P{{int64_t{0}}, {int64_t{0}}}, {});
      },
      "sip: inputs raw index 1: its path is already taken");
  ErrorOf(
      [] {
        SipSignature::FromIndexPaths(P{{int64_t{0}}, {std::string("a")}}, {});
      },
      "mixes integer and string keys");
  ErrorOf([] { SipSignature::FromIndexPaths(P{{}, {int64_t{0}}}, {}); }, "below a raw leaf");
  ErrorOf([] { SipSignature::FromIndexPaths(P{{int64_t{-1}}}, {}); }, "negative sequence key");
  ErrorOf([] { SipSignature::FromIndexPaths(P{SipPath(40, int64_t{0})}, {}); },
          "path deeper than 32");
}

TEST(SipFormat, ReadableFormOfEmptyStructures) {
  EXPECT_EQ(ReadableSip(ParseSip("I1!R4!S1!").results), ":[\n],\n");
  EXPECT_EQ(ReadableSip(ParseSip("I1!R4!D1!").results), ":{\n},\n");
  EXPECT_EQ(ReadableSip(ParseSip("I1!R1!").results), "");
}

TEST(SipFormat, IndexPathsRequireEveryRawIndex) {
  ErrorOf([] { ParseSip("I12!S9!k0_0k1_2R1!").InputPaths(); },
          "sip: inputs use raw index 2 but not raw index 1");
  EXPECT_TRUE(ParseSip("I1!R4!S1!").ResultPaths().empty());
  ErrorOf([] { ParseSip("I8!_100000R1!").InputPaths(); },
          "sip: raw index 100000 is out of range (at most 65535)");
}

TEST(SipFormat, BadInputClasses) {
  struct Case {
    const char* text;
    const char* needle;
  };
  const Case cases[] = {
      {"", "sip: at offset 0: expected the inputs span"},
      {"I1!", "sip: at offset 3: expected the results span"},
      {"I1!R1!x", "at offset 7: expected a decimal integer"},
      {"I1!R1!I1!", "at offset 6: expected the end of the signature"},
      {"I5!_0_1R1!", "sip: at offset 5: expected one value in the I span, got a second one"},
      {"I3!k0R1!", "at offset 3: expected a value (_<raw index>, S<sequence> or D<dict>), got 'k'"},
      {"I4!_-1R1!", "negative raw index -1"},
      {"I12!S9!k0_0k1_0R1!", "sip: at offset 13: raw index 0 appears twice"},
      {"I12!S9!k0_0k0_1R1!", "sip: at offset 11: duplicate key 0"},
      {"I6!S3!k0R1!", "at offset 6: key 0 has no value"},
      {"I8!S5!K1!_0R1!", "expected a sequence key k<int>"},
      {"I6!D3!k0R1!", "expected a dict key K<len>!<key>"},
      {"I17!D13!K2!a_0K2!a_1R1!", "duplicate key a"},
      {"I7!S4!k-1R1!", "negative sequence key"},
      {"I99!R1!", "sip: at offset 1: span length 99 runs past the end of input (7 bytes)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    ErrorOf([&] { ParseSip(c.text); }, c.needle);
  }
}

TEST(SipFormat, NestingLimit) {
  // 31 nested sequences around a leaf make 32 levels and parse; more do not.
  auto nested = [](int depth) {
    std::string v = "_0";
    for (int i = 0; i < depth; ++i) v = "S" + std::to_string(v.size() + 3) + "!k0" + v;
    return "I" + std::to_string(v.size() + 1) + "!" + v + "R1!";
  };
  EXPECT_NO_THROW(ParseSip(nested(31)));
  ErrorOf([&] { ParseSip(nested(40)); }, "structures nested deeper than 32");
}

TEST(Combine, StructuresFromSipTypesFromRaw) {
  const Signature raw = ParseRaw("I16!S3!t6S3!t7S3!t2R6!S3!t2");
  EXPECT_EQ(CanonicalString(Combine(raw, ParseSip("I31!S27!k0D17!K4!bar_1K4!foo_0k1_2R3!_0"))),
            "(sdict<foo:i32,bar:i64>, f64) -> f64");
  EXPECT_EQ(CanonicalString(Combine(raw, ParseSip("I25!D21!K4!zed_0K2!a_1K2!b_2R3!_0"))),
            "(zed: i32, a: i64, b: f64) -> f64");
  const Signature two = ParseRaw("I1!R11!S3!t6S3!t7");
  // A root result sequence is a list, as IREE returns it (of any length, with None in holes).
  EXPECT_EQ(CanonicalString(Combine(two, ParseSip("I1!R12!S9!k0_0k1_1"))), "() -> slist<i32,i64>");
  EXPECT_EQ(CanonicalString(Combine(two, ParseSip("I1!R17!D13!K2!y_1K2!x_0"))),
            "() -> sdict<x:i32,y:i64>");
  EXPECT_EQ(CanonicalString(Combine(ParseRaw("I1!R1!"), ParseSip("I1!R4!S1!"))), "() -> slist<>");
  EXPECT_EQ(CanonicalString(Combine(ParseRaw("I1!R1!"), ParseSip("I1!R4!D1!"))), "() -> sdict<>");
  EXPECT_EQ(CanonicalString(Combine(ParseRaw("I1!R6!S3!t2"), ParseSip("I1!R8!S5!k0_0"))),
            "() -> slist<f64>");
}

// IREE maps SIP leaves by index: sequence keys may come in any order, and a key missing below the
// largest is a hole (None in a result, IREE's function_abi.cc none-fills its lists); a root
// argument sequence with a hole has no packed form and is refused.
TEST(Combine, SequenceKeyGapsAndOrder) {
  const Signature two = ParseRaw("I1!R11!S3!t6S3!t7");
  EXPECT_EQ(CanonicalString(Combine(two, ParseSip("I1!R12!S9!k1_0k3_1"))),
            "() -> slist<null,i32,null,i64>");
  EXPECT_EQ(CanonicalString(Combine(two, ParseSip("I1!R12!S9!k1_1k0_0"))), "() -> slist<i32,i64>");
  EXPECT_EQ(CanonicalString(Combine(two, ParseSip("I1!R18!S14!k0S9!k2_1k1_0"))),
            "() -> slist<slist<null,i32,i64>>");
  const Signature args = ParseRaw("I11!S3!t6S3!t7R1!");
  EXPECT_EQ(CanonicalString(Combine(args, ParseSip("I18!S14!k0S9!k2_0k5_1R1!"))),
            "(slist<null,null,i32,null,null,i64>) -> None");
  EXPECT_EQ(CanonicalString(Combine(args, ParseSip("I12!S9!k1_1k0_0R1!"))), "(i32, i64) -> None");
  ErrorOf([&] { Combine(args, ParseSip("I12!S9!k0_0k2_1R1!")); },
          "sip: inputs: no key k1 in the argument sequence (a positional argument that is never "
          "passed)");
  // Holes are bounded in all, not per sequence: a few huge keys cannot allocate without limit.
  std::string holes;
  for (int i = 0; i < 9999; ++i) holes += "null,";
  EXPECT_EQ(CanonicalString(Combine(ParseRaw("I1!R6!S3!t6"), ParseSip("I1!R11!S8!k9999_0"))),
            "() -> slist<" + holes + "i32>");
  ErrorOf([&] { Combine(ParseRaw("I1!R6!S3!t6"), ParseSip("I1!R12!S9!k65536_0")); },
          "sip: results: sequence key 65536 makes more than 65536 sequence slots in all");
  ErrorOf([&] { Combine(two, ParseSip("I1!R31!S27!k0S9!k40000_0k1S9!k40000_1")); },
          "sip: results: sequence key 40000 makes more than 65536 sequence slots in all");
}

// IREE maps each leaf to its raw value by index, so leaves may come in any raw order; the
// Signature records which native parameter (result) each leaf is, and only then differs.
TEST(Combine, LeavesOutOfRawOrder) {
  const Signature two = ParseRaw("I1!R11!S3!t6S3!t7");
  const Signature swapped = Combine(two, ParseSip("I1!R12!S9!k0_1k1_0"));
  EXPECT_EQ(CanonicalString(swapped), "() -> slist<i64,i32> [result leaves 1,0]");
  EXPECT_EQ(swapped.result_leaf_order, (std::vector<int32_t>{1, 0}));
  EXPECT_TRUE(swapped.arg_leaf_order.empty());
  // In raw order the order stays empty: every in-order signature is as before.
  const Signature in_order = Combine(two, ParseSip("I1!R12!S9!k0_0k1_1"));
  EXPECT_TRUE(in_order.result_leaf_order.empty());
  EXPECT_NE(swapped, in_order);
  EXPECT_NE(SignatureHash()(swapped), SignatureHash()(in_order));

  const Signature args = ParseRaw("I11!S3!t6S3!t7R1!");
  const Signature positional = Combine(args, ParseSip("I12!S9!k0_1k1_0R1!"));
  EXPECT_EQ(CanonicalString(positional), "(i64, i32) -> None [arg leaves 1,0]");
  // The raw form is the native's, in native order.
  EXPECT_EQ(PrintRaw(positional), "I11!S3!t6S3!t7R1!");
  ErrorOf([&] { PrintJson(positional); },
          "json: the iree.abi JSON has no way to say that the argument leaves are out of native "
          "order");
  ErrorOf([&] { PrintDeclaration(positional, "f"); },
          "declaration: a declaration has no way to say that the argument leaves are out of "
          "native order");
  ErrorOf([&] { PrintJson(swapped); },
          "json: the iree.abi JSON has no way to say that the result leaves are out of native "
          "order");

  // Dict slots are ordered by their first raw index, so only a nested mix is out of order:
  // a = [raw 0, raw 2], b = raw 1 flatten as 0, 2, 1.
  const Signature three = ParseRaw("I16!S3!t6S3!t7S3!t2R16!S3!t6S3!t7S3!t2");
  const SipSignature nested = SipSignature::FromIndexPaths(
      {{std::string("a"), int64_t{0}}, {std::string("b")}, {std::string("a"), int64_t{1}}},
      {{std::string("y")}, {std::string("x"), int64_t{0}}, {std::string("x"), int64_t{1}}});
  const Signature mixed = Combine(three, nested);
  EXPECT_EQ(CanonicalString(mixed),
            "(a: slist<i32,f64>, b: i64) -> sdict<y:i32,x:slist<i64,f64>> [arg leaves 0,2,1]");
  // The printed SIP and the raw form read back to the same signature (what `ffijit sig` shows).
  EXPECT_EQ(Combine(ParseRaw(PrintRaw(three)), ParseSip(PrintSip(nested))), mixed);

  // A tree built in code may repeat an index (the reader refuses that earlier).
  SipSignature twice;
  twice.results.kind = SipNode::Kind::kSequence;
  twice.results.keys = {int64_t{0}, int64_t{1}};
  twice.results.children.resize(2);
  for (SipNode& c : twice.results.children) {
    c.kind = SipNode::Kind::kRaw;
    c.raw_index = 0;
  }
  ErrorOf([&] { Combine(two, twice); }, "sip: results map raw index 0 twice");
}

TEST(Combine, RejectsMismatchedStructures) {
  const Signature raw = ParseRaw("I11!S3!t6S3!t7R1!");
  ErrorOf([&] { Combine(raw, ParseSip("I8!S5!k0_0R1!")); },
          "sip: inputs map 1 raw values but the raw signature has 2");
  ErrorOf([&] { Combine(raw, ParseSip("I17!S13!k0_0k1_1k2_2R1!")); },
          "inputs refer to raw index 2 but the raw signature has 2");
  ErrorOf([&] { Combine(raw, ParseSip("I12!S9!k0_0k1_0R1!")); }, "raw index 0 appears twice");
  ErrorOf([&] { Combine(raw, ParseSip("I12!S9!k0_0k1_1R3!_0")); },
          "results refer to raw index 0 but the raw signature has 0");
}

}  // namespace
}  // namespace ffijit
