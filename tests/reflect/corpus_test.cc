// Every entry of the real-world corpus: accepted ones parse, round-trip and match what their
// source states; rejected ones get a clear error.
#include <gtest/gtest.h>

#include <regex>

#include "ffijit/reflect/metadata.h"
#include "test_util.h"

namespace ffijit {
namespace {

using nlohmann::json;
using testing::ErrorOf;

std::vector<json> Entries(const std::string& format) {
  std::vector<json> out;
  for (const json& e : testing::LoadCorpus("iree_signatures.json")) {
    if (e["format"] == format) out.push_back(e);
  }
  return out;
}

json Expected(const json& e) {
  return e["expected"].is_object() ? e["expected"] : json::object();
}

// The IREE index path of every leaf, in flattening order: top-level arguments are addressed by
// position (named ones by keyword); a single result is addressed from inside, several by position.
void AddLeafPaths(const Type* t, json path, json* out) {
  if (t == nullptr) return;
  switch (t->kind) {
    case TypeKind::kSList:
    case TypeKind::kSTuple:
      for (size_t i = 0; i < t->elements.size(); ++i) {
        json p = path;
        p.push_back(i);
        AddLeafPaths(t->elements[i].get(), p, out);
      }
      return;
    case TypeKind::kSDict:
      for (size_t i = 0; i < t->elements.size(); ++i) {
        json p = path;
        p.push_back(t->keys[i]);
        AddLeafPaths(t->elements[i].get(), p, out);
      }
      return;
    default:
      out->push_back(path);
  }
}

json ArgPaths(const Signature& sig) {
  json out = json::array();
  for (size_t i = 0; i < sig.args.size(); ++i) {
    const Type* t = sig.args[i].get();
    if (t->kind == TypeKind::kNamed) {
      AddLeafPaths(t->elements[0].get(), json::array({t->name}), &out);
    } else {
      AddLeafPaths(t, json::array({i}), &out);
    }
  }
  return out;
}

json ResultPaths(const Signature& sig) {
  json out = json::array();
  if (sig.results.size() == 1) {
    AddLeafPaths(sig.results[0].get(), json::array(), &out);
    return out;
  }
  for (size_t i = 0; i < sig.results.size(); ++i) {
    AddLeafPaths(sig.results[i].get(), json::array({i}), &out);
  }
  return out;
}

TEST(Corpus, RawEntries) {
  const auto entries = Entries("raw");
  ASSERT_EQ(entries.size(), 28u);
  for (const json& e : entries) {
    const std::string text = e["text"];
    SCOPED_TRACE(text);
    ASSERT_EQ(e["verdict"], "accept");
    const Signature sig = ParseRaw(text);
    EXPECT_EQ(PrintRaw(sig), text);  // the mangler writes exactly what the compiler wrote
    EXPECT_EQ(ParseMetadata(text), sig);
    EXPECT_EQ(ParseMetadata("{\"f\":\"" + text + "\",\"fv\":\"1\"}", MetadataFormat::kRaw), sig);
    EXPECT_EQ(ParseJson(PrintJson(sig)), sig);

    const json expected = Expected(e);
    std::string readable;
    if (expected.contains("FunctionSignatureToString")) {
      readable = expected["FunctionSignatureToString"];
    } else if (expected.contains("comment_in_source")) {
      readable = std::regex_replace(expected["comment_in_source"].get<std::string>(),
                                    std::regex("^Raw signature is: "), "");
    } else if (expected.contains("repr")) {
      std::smatch m;
      const std::string repr = expected["repr"];
      ASSERT_TRUE(std::regex_match(repr, m, std::regex("<FunctionAbi (.*) SIP:'(.*)'>")));
      readable = m[1];
      const Signature combined = Combine(sig, ParseSip(m[2].str()));
      EXPECT_EQ(CanonicalString(combined),
                "(ndarray<f32,[1]>, ndarray<f32,[1]>) -> ndarray<f32,[1]>");
    }
    if (!readable.empty()) {
      EXPECT_EQ(ReadableRaw(text), readable);
    }
  }
}

TEST(Corpus, RawEntriesMatchTheirMlirFunctions) {
  // The MLIR function each string was emitted for, as a Signature.
  EXPECT_EQ(CanonicalString(ParseRaw("I19!B7!t7d4d4B7!t7d5d5R10!B7!t7d5d5")),
            "(ndarray<i64,[4,4]>, ndarray<i64,[5,5]>) -> ndarray<i64,[5,5]>");
  EXPECT_EQ(CanonicalString(ParseRaw("I11!B8!t7d-1d4R1!")), "(ndarray<i64,[?,4]>) -> None");
  EXPECT_EQ(CanonicalString(ParseRaw("I6!S3!t4R1!")), "(i8) -> None");  // i1 is mangled as sint8
  EXPECT_EQ(CanonicalString(ParseRaw("I4!U1!R4!U1!")), "(any) -> any");
  EXPECT_EQ(CanonicalString(ParseRaw("I1!R6!B3!t6")), "() -> ndarray<i32,0>");
  EXPECT_EQ(CanonicalString(ParseRaw("I10!B7!d-1d-1R10!B7!d-1d-1")),
            "(ndarray<f32,2>) -> ndarray<f32,2>");
}

// "inputs.SetRawSignatureIndex(0, {{0, \"foo\"}}); results.SetRawSignatureIndex(0, {})".
void ParseManglerCalls(const std::string& calls, std::vector<SipPath>* inputs,
                       std::vector<SipPath>* results) {
  const std::regex call(R"((inputs|results)\.SetRawSignatureIndex\((\d+), \{(\{([^}]*)\})?\}\))");
  for (auto it = std::sregex_iterator(calls.begin(), calls.end(), call);
       it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    SipPath path;
    const std::string items = m[4];
    const std::regex item(R"re("([^"]*)"|(-?\d+))re");
    for (auto i = std::sregex_iterator(items.begin(), items.end(), item);
         i != std::sregex_iterator(); ++i) {
      if ((*i)[1].matched) {
        path.emplace_back(std::in_place_type<std::string>, (*i)[1].str());
      } else {
        path.emplace_back(std::in_place_type<int64_t>, std::stoll((*i)[2].str()));
      }
    }
    auto* side = m[1] == "inputs" ? inputs : results;
    const size_t index = std::stoul(m[2].str());
    if (side->size() <= index) side->resize(index + 1);
    (*side)[index] = path;
  }
}

TEST(Corpus, SipEntries) {
  const auto entries = Entries("sip");
  ASSERT_EQ(entries.size(), 15u);
  for (const json& e : entries) {
    const std::string text = e["text"];
    SCOPED_TRACE(text);
    ASSERT_EQ(e["verdict"], "accept");
    const SipSignature sip = ParseSip(text);
    EXPECT_EQ(PrintSip(sip), text);
    // The index paths rebuild the same string (emitters write keys sorted), except that paths
    // to leaves cannot express an empty sequence or dict.
    if (text.find("S1!") == std::string::npos && text.find("D1!") == std::string::npos) {
      EXPECT_EQ(PrintSip(SipSignature::FromIndexPaths(sip.InputPaths(), sip.ResultPaths())), text);
    }

    const json expected = Expected(e);
    if (expected.contains("ToStringVisitor_inputs")) {
      EXPECT_EQ(ReadableSip(sip.inputs), expected["ToStringVisitor_inputs"].get<std::string>());
      EXPECT_EQ(ReadableSip(sip.results), expected["ToStringVisitor_results"].get<std::string>());
    }
    if (expected.contains("mangler_calls")) {
      std::vector<SipPath> in, out;
      ParseManglerCalls(expected["mangler_calls"], &in, &out);
      ASSERT_FALSE(in.empty());
      EXPECT_EQ(PrintSip(SipSignature::FromIndexPaths(in, out)), text);
      EXPECT_EQ(sip.InputPaths(), in);
      EXPECT_EQ(sip.ResultPaths(), out);
    }
    if (expected.contains("paired_raw_f")) {
      const std::string f = expected["paired_raw_f"];
      const Signature sig = ParseMetadata(json({{"f", f}, {"fv", "1"}, {"sip", text}}).dump());
      // "pack_inputs(input_ids=..., input_mask=..., segment_ids=...)" packs 3 buffers; the result
      // is a dict of end_logits and start_logits.
      EXPECT_EQ(CanonicalString(sig),
                "(segment_ids: ndarray<i32,[1,384]>, input_ids: ndarray<i32,[1,384]>, "
                "input_mask: ndarray<i32,[1,384]>) -> "
                "sdict<end_logits:ndarray<f32,[1,384]>,start_logits:ndarray<f32,[1,384]>>");
    }
  }
}

bool UsesAliasTags(const std::string& text) {
  for (const char* alias :
       {"py_uniform_list", "pytuple", "py_uniform_dict", "pystr", "sdict_kwargs"}) {
    if (text.find(alias) != std::string::npos) return true;
  }
  return false;
}

TEST(Corpus, JsonEntries) {
  const auto entries = Entries("v1json");
  ASSERT_EQ(entries.size(), 30u);
  int rejected = 0;
  for (const json& e : entries) {
    const std::string text = e["text"];
    SCOPED_TRACE(text);
    if (e["verdict"] == "reject") {
      ++rejected;
      const std::string message =
          ErrorOf([&] { ParseJson(text); }, "rank 3 disagrees with the 1 dim listed");
      EXPECT_EQ(message.rfind("json: at offset ", 0), 0u) << message;
      ErrorOf([&] { ParseMetadata(text); }, "rank 3 disagrees");
      continue;
    }
    const Signature sig = ParseJson(text);
    EXPECT_EQ(ParseMetadata(text), sig);
    const std::string printed = PrintJson(sig);
    EXPECT_EQ(ParseJson(printed), sig) << printed;
    EXPECT_EQ(PrintJson(ParseJson(printed)), printed);
    // Emitter output without aliases is reproduced byte for byte.
    if (text.find("\"v\":1") != std::string::npos && !UsesAliasTags(text)) {
      EXPECT_EQ(printed, text);
    }

    const json expected = Expected(e);
    if (expected.contains("callee_arg_index_paths")) {
      json want = expected["callee_arg_index_paths"];
      json got = ArgPaths(sig);
      if (text.find("sdict_kwargs") != std::string::npos) {
        // The old form listed keyword leaves first on the callee; compare the set of leaves.
        std::sort(want.begin(), want.end());
        std::sort(got.begin(), got.end());
      }
      EXPECT_EQ(got, want);
      EXPECT_EQ(ResultPaths(sig), expected["callee_result_index_paths"]);
    }
    if (expected.contains("cases")) {
      for (const json& c : expected["cases"]) {
        std::smatch m;
        const std::string vm_args = c.value("vm_args", "");
        if (std::regex_search(vm_args, m, std::regex(R"(VmVariantList\((\d+)\))"))) {
          EXPECT_EQ(sig.args.size(), std::stoul(m[1].str())) << vm_args;
        }
      }
    }
  }
  EXPECT_EQ(rejected, 1);
}

TEST(Corpus, JsonEntriesReadAsTheModelSaysTheyShould) {
  EXPECT_EQ(CanonicalString(ParseJson(
                R"({"a": ["i32", ["named", "a", "i32"], ["named", "b", "i32"]], "r": ["i32"]})")),
            "(i32, a: i32, b: i32) -> i32");
  EXPECT_EQ(CanonicalString(ParseJson(R"({"a":[["py_uniform_list","f64"]],"r":[],"v":1})")),
            "(list<f64>) -> None");
  EXPECT_EQ(CanonicalString(ParseJson(R"({"a":[["pytuple","f64","i64"]],"r":[],"v":1})")),
            "(stuple<f64,i64>) -> None");
  EXPECT_EQ(CanonicalString(ParseJson(R"({"a":[["py_uniform_dict","pystr","f64"]],"r":[],"v":1})")),
            "(dict<str,f64>) -> None");
  EXPECT_EQ(CanonicalString(ParseJson(R"({"a":[["ndarray","f32",2,null,3]],"r":[],"v":1})")),
            "(ndarray<f32,[?,3]>) -> None");
  EXPECT_EQ(CanonicalString(ParseJson(R"({"a":["f64","i64","i1"],"r":["f64","i64","i1"],"v":1})")),
            "(f64, i64, i1) -> (f64, i64, i1)");
}

TEST(Corpus, PartialRawSignaturesAreIncompleteButTheirInputsParse) {
  const json corpus = testing::LoadCorpus("iree_lexer_cases.json");
  for (const json& e : corpus["f_partial"]) {
    const std::string text = e["text"];
    SCOPED_TRACE(text);
    ErrorOf([&] { ParseRaw(text); }, "expected the results span");
    const Signature sig = ParseRaw(text + "R1!");
    EXPECT_EQ(sig.args.size(), 1u);
    EXPECT_EQ(PrintRaw(sig), text + "R1!");
  }
}

TEST(Corpus, RawFragmentsAreWhatTheManglerWrites) {
  const json corpus = testing::LoadCorpus("iree_lexer_cases.json");
  const std::map<std::string, TypePtr> built = {
      {"RawSignatureManglerTest.DefaultBuffer", Type::NDArray(ScalarKind::kF32, 0, {})},
      {"RawSignatureManglerTest.FullBuffer", Type::NDArray(ScalarKind::kF64, 3, {-1, 128, 64})},
      {"RawSignatureManglerTest.DefaultScalar", Type::Scalar(ScalarKind::kF32)},
      {"RawSignatureManglerTest.FullScalar", Type::Scalar(ScalarKind::kI32)},
      {"RawSignatureManglerTest.AnyRef", Type::Object()},
  };
  ASSERT_EQ(corpus["raw_fragments"].size(), built.size());
  for (const json& e : corpus["raw_fragments"]) {
    const std::string fragment = e["text"];
    Signature sig;
    sig.args.push_back(built.at(e["test"].get<std::string>()));
    const std::string raw = PrintRaw(sig);
    EXPECT_EQ(raw, "I" + std::to_string(fragment.size() + 1) + "!" + fragment + "R1!");
    EXPECT_EQ(ParseRaw(raw), sig);
  }
}

}  // namespace
}  // namespace ffijit
