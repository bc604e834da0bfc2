// ParseMetadata: format detection, the iree.reflection dict, and one canonical form per signature
// whichever way it was written.
#include <gtest/gtest.h>

#include "ffijit/reflect/deduce.h"
#include "ffijit/reflect/metadata.h"
#include "test_util.h"

namespace ffijit {

// A native whose type SignatureOf deduces (external linkage: only its type is used).
int64_t MetadataTestNativeAdd(int32_t a, double b) {
  return a + static_cast<int64_t>(b);
}

namespace {

using testing::ErrorOf;

TEST(Metadata, OneSignatureFourWays) {
  const Signature from_json =
      ParseMetadata(R"({"a":["i32","f64"],"r":["i64"],"v":1})", MetadataFormat::kJson);
  const Signature from_raw = ParseMetadata("I11!S3!t6S3!t2R6!S3!t7", MetadataFormat::kRaw);
  const Signature from_sip = ParseMetadata(
      R"({"abi":"sip","abiv":1,"f":"I11!S3!t6S3!t2R6!S3!t7","fv":"1","sip":"I12!S9!k0_0k1_1R3!_0"})",
      MetadataFormat::kSip);
  const Signature deduced = SignatureOf<decltype(MetadataTestNativeAdd)>();
  EXPECT_EQ(CanonicalString(from_json), "(i32, f64) -> i64");
  EXPECT_EQ(CanonicalString(from_raw), CanonicalString(from_json));
  EXPECT_EQ(CanonicalString(from_sip), CanonicalString(from_json));
  EXPECT_EQ(CanonicalString(deduced), CanonicalString(from_json));
  EXPECT_EQ(from_sip, deduced);
  EXPECT_EQ(SignatureHash()(from_raw), SignatureHash()(deduced));
  EXPECT_EQ(PrintRaw(deduced), "I11!S3!t6S3!t2R6!S3!t7");
  EXPECT_EQ(PrintJson(deduced), R"({"a":["i32","f64"],"r":["i64"],"v":1})");
}

TEST(Metadata, TensorsFromJsonAndRawAgree) {
  EXPECT_EQ(ParseMetadata(
                R"({"a":[["ndarray","f32",3,null,128,64]],"r":[["ndarray","i32",3,null,8,64]]})"),
            ParseMetadata("I15!B11!d-1d128d64R15!B11!t6d-1d8d64"));
}

TEST(Metadata, AutoDetection) {
  const Signature expected = ParseRaw("I6!S3!t6R1!");
  EXPECT_EQ(ParseMetadata("I6!S3!t6R1!\n"), expected);  // trailing newline from a file or stdin
  EXPECT_EQ(ParseMetadata(" {\"f\":\"I6!S3!t6R1!\"}"), expected);
  EXPECT_EQ(ParseMetadata(R"({"a":["i32"],"r":[]})"), expected);
  EXPECT_EQ(ParseMetadata(R"({"f":"I6!S3!t6R1!","sip":"I8!S5!k0_0R1!"})"), expected);
  ErrorOf([] { ParseMetadata(R"({"x":1})"); },
          "json: at offset 0: expected an iree.abi object (keys \"a\", \"r\") or an "
          "iree.reflection dict (keys \"iree.abi\", \"f\", \"sip\", \"iree.abi.declaration\")");
  ErrorOf([] { ParseMetadata("{\"a\":"); }, "json: at offset 5: invalid JSON");
  ErrorOf([] { ParseMetadata("nonsense"); }, "raw signature: at offset 1");
}

// IsMetadataDict is the one dict-or-bare rule (ParseMetadata's, the tool's): the first
// non-space character, and nothing else, decides.
TEST(Metadata, DictOrBareText) {
  EXPECT_TRUE(IsMetadataDict(R"({"f":"I1!R1!"})"));
  EXPECT_TRUE(IsMetadataDict(" \t\r\n{ not even json"));
  EXPECT_FALSE(IsMetadataDict("I1!R1!"));
  EXPECT_FALSE(IsMetadataDict("sync func @f() -> ()"));
  EXPECT_FALSE(IsMetadataDict("  [1]"));
  EXPECT_FALSE(IsMetadataDict(""));
  EXPECT_FALSE(IsMetadataDict("   "));
}

// IREE's current emitters attach {"iree.abi": "<the iree.abi JSON as text>", ...}; IREE's
// runtime reads that key and ignores the others (iree.abi.declaration, iree.abi.model, ...).
TEST(Metadata, IreeAbiReflectionDict) {
  const std::string abi = R"({"a":["i32",["named","a","i32"],["named","b","i32"]],"r":["i32"]})";
  const Signature expected = ParseJson(abi);
  const std::string dict = nlohmann::json{{"iree.abi", abi}}.dump();
  EXPECT_EQ(DetectMetadataFormat(dict), MetadataFormat::kJson);
  EXPECT_EQ(ParseMetadata(dict), expected);
  EXPECT_EQ(ParseMetadata(dict, MetadataFormat::kJson), expected);
  const std::string with_others = nlohmann::json{
      {"iree.abi.declaration", "sync func @f(%input0: f64) -> ()"},
      {"iree.abi", abi},
      {"iree.abi.model", "coarse-fences"},
      {"some.attr", 4}}.dump();
  EXPECT_EQ(ParseMetadata(with_others), expected);
  EXPECT_EQ(ParseMetadata(with_others, MetadataFormat::kJson), expected);
  // Preferred over the older members, as IREE's runtime reads only "iree.abi".
  EXPECT_EQ(ParseMetadata(nlohmann::json{{"iree.abi", abi}, {"f", "I1!R1!"}}.dump()), expected);
  // Errors inside the member say where they are, with offsets into the member's text.
  ErrorOf([] { ParseMetadata(R"({"iree.abi":"{\"a\":[\"i33\"],\"r\":[]}"})"); },
          "json: at offset 6: unsupported integer width 33 (`i33`): no C type holds it; ffijit "
          "reads signed widths 1, 8, 16, 32, 64 and unsigned 8, 16, 32, 64 (in the reflection "
          "dict's \"iree.abi\")");
  ErrorOf([] { ParseMetadata(R"({"iree.abi":"not json"})"); }, "json: at offset 0: invalid JSON");
  ErrorOf([] { ParseMetadata(R"({"iree.abi":{"a":[],"r":[]}})"); },
          "reflection dict: at offset 12: expected \"iree.abi\" to be a string, got an object");
  // kJson on an object with neither "a"/"r" nor "iree.abi" is read (and refused) as iree.abi.
  ErrorOf([] { ParseMetadata(R"({"f":"I1!R1!"})", MetadataFormat::kJson); },
          "json: at offset 1: unknown key \"f\"");
}

TEST(Metadata, ReflectionDictErrors) {
  ErrorOf([] { ParseMetadata(R"({"fv":"1"})", MetadataFormat::kRaw); },
          "reflection dict: at offset 0: missing \"f\"");
  ErrorOf([] { ParseMetadata(R"({"f":1})", MetadataFormat::kRaw); },
          "reflection dict: at offset 5: expected \"f\" to be a string, got an integer");
  ErrorOf([] { ParseMetadata(R"({"f":"I1!R1!","fv":"2"})", MetadataFormat::kRaw); },
          "reflection dict: at offset 19: unsupported version");
  ErrorOf([] { ParseMetadata(R"({"f":"I1!R1!","sip":"I1!R1!","abiv":3})"); },
          "unsupported version");
  ErrorOf([] { ParseMetadata(R"({"f":"I1!X"})", MetadataFormat::kRaw); },
          "(in the reflection dict's \"f\")");
  ErrorOf([] { ParseMetadata(R"({"sip":"I1!R1!"})", MetadataFormat::kSip); },
          "missing \"f\": the SIP gives only the structure");
  ErrorOf([] { ParseMetadata(R"({"f":"I1!R1!"})", MetadataFormat::kSip); }, "missing \"sip\"");
  ErrorOf([] { ParseMetadata(R"({"f":"I1!R1!","sip":"I3!_0R1!"})", MetadataFormat::kSip); },
          "sip: inputs refer to raw index 0 but the raw signature has 0 (in the reflection dict's "
          "\"sip\")");
  ErrorOf([] { ParseMetadata("[1]", MetadataFormat::kRaw); }, "raw signature: at offset 0");
  ErrorOf([] { ParseMetadata("I12!S9!k0_0k1_1R3!_0", MetadataFormat::kSip); },
          "a bare SIP string has structure but no types");
  ErrorOf([] { ParseMetadata("I2!xR1!", MetadataFormat::kSip); },
          "sip: at offset 4: expected a decimal integer after tag 'x'");
  ErrorOf([] { ParseMetadata("I1!R1!", MetadataFormat::kJson); }, "json: at offset 0");
}

TEST(Metadata, FormatNames) {
  EXPECT_STREQ(MetadataFormatName(MetadataFormat::kAuto), "auto");
  EXPECT_STREQ(MetadataFormatName(MetadataFormat::kJson), "json");
  EXPECT_STREQ(MetadataFormatName(MetadataFormat::kRaw), "raw");
  EXPECT_STREQ(MetadataFormatName(MetadataFormat::kSip), "sip");
  EXPECT_STREQ(MetadataFormatName(MetadataFormat::kDeclaration), "declaration");
}

TEST(Metadata, FormatsFromTheirNamesOnly) {
  for (MetadataFormat format : {MetadataFormat::kAuto, MetadataFormat::kJson, MetadataFormat::kRaw,
                                MetadataFormat::kSip, MetadataFormat::kDeclaration}) {
    EXPECT_EQ(MetadataFormatFromName(MetadataFormatName(format)), format);
  }
  for (const char* other : {"", "JSON", "xml", "json ", "?"}) {
    EXPECT_EQ(MetadataFormatFromName(other), std::nullopt) << other;
  }
}

}  // namespace
}  // namespace ffijit
