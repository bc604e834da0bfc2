// Structure results (slist/stuple/sdict results, nested, with gaps): the native returns the
// leaves flat, the packed result is the structure, on every executor; from IREE's signatures in
// each metadata form (the iree.abi JSON, raw + SIP); and the errors and references of a leaf that
// cannot be boxed.
#include <string>

#include "catch_error.h"
#include "ffijit/container.h"
#include "ffijit/reflect/metadata.h"
#include "ffijit/tensor.h"
#include "jit/interp_test_util.h"

namespace ffijit::testing {
namespace {

using ffijit_tests::CatchError;

// A compact text of a packed result: Int as digits, Float with a '.', None, Str quoted, Array as
// [..], Map as {"k": ..} in the Map's own order, a Tensor as its dtype bits and shape.
std::string Show(const AnyView& v) {
  switch (v.type_index()) {
    case kTVMFFINone:
      return "None";
    case kTVMFFIInt:
      return std::to_string(v.cast<int64_t>());
    case kTVMFFIBool:
      return v.cast<bool>() ? "True" : "False";
    case kTVMFFIFloat: {
      std::string s = std::to_string(v.cast<double>());
      while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
      return s;
    }
    case kTVMFFISmallStr:
    case kTVMFFIStr:
      return "\"" + v.cast<std::string>() + "\"";
    case kTVMFFIArray: {
      Array a = v.cast<Array>();
      std::string out = "[";
      for (int64_t i = 0; i < a.size(); ++i) out += (i ? ", " : "") + Show(a[i]);
      return out + "]";
    }
    case kTVMFFIMap: {
      Map m = v.cast<Map>();
      std::string out = "{";
      for (int64_t i = 0; i < m.size(); ++i) {
        auto [key, value] = m.ItemAt(i);
        out += (i ? ", " : "") + Show(key) + ": " + Show(value);
      }
      return out + "}";
    }
    case kTVMFFITensor: {
      const auto* dl = reinterpret_cast<const DLTensor*>(v.raw().v_obj + 1);
      std::string out = "tensor<" + std::to_string(dl->dtype.bits);
      for (int32_t d = 0; d < dl->ndim; ++d) out += "," + std::to_string(dl->shape[d]);
      return out + ">";
    }
    default:
      return "<" + v.type_name() + ">";
  }
}

Signature Json(const char* text) {
  return ParseMetadata(text, MetadataFormat::kJson);
}

// The tensors the natives hand back (one strong reference each, handed over).
Tensor g_t1, g_t2;
TVMFFIObject* HandOver(const Tensor& t) {
  details::IncRef(t.get());
  return t.get();
}

extern "C" {
void two_i32(int32_t* a, int32_t* b) {
  *a = 7;
  *b = -8;
}
void two_tensors(DLTensor* x, DLTensor* y, TVMFFIObject** a, TVMFFIObject** b) {
  (void)x;
  (void)y;
  *a = HandOver(g_t1);
  *b = HandOver(g_t2);
}
// (i64, sdict<a:slist<f64,null,str>, b:i32>)
void nested(int64_t k, int64_t* r0, double* a0, const char** a2, int32_t* b) {
  *r0 = k;
  *a0 = 0.5 * static_cast<double>(k);
  *a2 = "leaf";
  *b = static_cast<int32_t>(k) + 1;
}
double one_leaf(double x) {
  return x * 2;
}
void no_leaves() {}
int status_pair(int64_t x, int64_t* a, double* b) {
  if (x < 0) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "negative");
    return 1;
  }
  *a = x;
  *b = 1.5;
  return 0;
}
// A u64 leaf that does not fit an Int, after a tensor leaf whose reference must not leak.
void bad_second(TVMFFIObject** t, uint64_t* big) {
  *t = HandOver(g_t1);
  *big = UINT64_MAX;
}
}

class StructureResultTest : public ::testing::TestWithParam<CallPath> {
 protected:
  void SetUp() override {
    g_t1 = Tensor::Empty({2, 3}, DataType::Float(32));
    g_t2 = Tensor::Empty({4}, DataType::Float(32));
  }
  void TearDown() override {
    g_t1 = Tensor();
    g_t2 = Tensor();
  }
};

// IREE's `{"a":[],"r":[["slist","i32","i32"]]}`: one structure result is the structure itself.
TEST_P(StructureResultTest, ListOfTwoScalars) {
  Function f =
      Bind("two", two_i32, Json(R"({"a":[],"r":[["slist","i32","i32"]],"v":1})"), GetParam());
  EXPECT_EQ(Show(Call(f, {})), "[7, -8]");
}

// A TF model's `"r":[["stuple",nd,nd]]`: the tensors the native handed over end up in the tuple,
// each with exactly the reference it handed over.
TEST_P(StructureResultTest, TupleOfTensors) {
  Function f =
      Bind("tensors", two_tensors,
           Json(R"({"a":[["ndarray","f32",2,2,3],["ndarray","f32",1,4]],)"
                R"("r":[["stuple",["ndarray","f32",2,2,3],["ndarray","f32",1,4]]],"v":1})"),
           GetParam());
  {
    Any r = Call(f, {g_t1, g_t2});
    EXPECT_EQ(Show(r), "[tensor<32,2,3>, tensor<32,4>]");
    EXPECT_EQ(g_t1.use_count(), 2);
    EXPECT_EQ(g_t2.use_count(), 2);
  }
  EXPECT_EQ(g_t1.use_count(), 1);
  EXPECT_EQ(g_t2.use_count(), 1);
}

// mobilebert's SIP result dict `sdict<end_logits,start_logits>`, read from its raw signature and
// SIP (IREE's function_abi_test.py), and from the iree.abi JSON of the same model (IREE PR 6636):
// a Map keyed by IREE's names.
TEST_P(StructureResultTest, SipResultDictIsAMap) {
  const char* sip =
      R"({"f":"I34!B9!t6d1d384B9!t6d1d384B9!t6d1d384R19!B7!d1d384B7!d1d384","fv":"1",)"
      R"("sip":"I53!D49!K10!input_ids_1K11!input_mask_2K12!segment_ids_0R39!D35!K11!end_logits_0K13!start_logits_1"})";
  Signature from_sip = ParseMetadata(sip, MetadataFormat::kAuto);
  ASSERT_EQ(from_sip.results.size(), 1u);
  EXPECT_EQ(TypeToString(*from_sip.results[0]),
            "sdict<end_logits:ndarray<f32,[1,384]>,start_logits:ndarray<f32,[1,384]>>");
  auto bert = +[](DLTensor*, DLTensor*, DLTensor*, TVMFFIObject** end, TVMFFIObject** start) {
    *end = HandOver(g_t1);
    *start = HandOver(g_t2);
  };
  g_t1 = Tensor::Empty({1, 384}, DataType::Float(32));
  g_t2 = Tensor::Empty({1, 384}, DataType::Float(32));
  Tensor ids = Tensor::Empty({1, 384}, DataType::Int(32));
  Function f = Bind("bert", bert, from_sip, GetParam());
  Any r = Call(f, {ids, ids, ids});
  ASSERT_EQ(r.type_index(), kTVMFFIMap);
  EXPECT_EQ(Show(r), "{\"end_logits\": tensor<32,1,384>, \"start_logits\": tensor<32,1,384>}");
  Map m = r.cast<Map>();
  EXPECT_EQ(m.at(Any("end_logits")).raw().v_obj, g_t1.get());
  EXPECT_EQ(m.at(Any("start_logits")).raw().v_obj, g_t2.get());

  Function g = Bind("bert_json", bert,
                    Json(R"({"a":[["named","segment_ids",["ndarray","i32",2,1,384]],)"
                         R"(["named","input_mask",["ndarray","i32",2,1,384]],)"
                         R"(["named","input_ids",["ndarray","i32",2,1,384]]],)"
                         R"("r":[["sdict",["end_logits",["ndarray","f32",2,1,384]],)"
                         R"(["start_logits",["ndarray","f32",2,1,384]]]],"v":1})"),
                    GetParam());
  EXPECT_EQ(Show(Call(g, {ids, ids, ids})),
            "{\"end_logits\": tensor<32,1,384>, \"start_logits\": tensor<32,1,384>}");
}

// Several results, one of them nested with a gap: an Array of the results, the gap None, the
// dict a Map; the leaves in depth-first order are the native's out-pointers.
TEST_P(StructureResultTest, NestedResultWithGap) {
  Function f = Bind(
      "nested", nested,
      Json(
          R"({"a":["i64"],"r":["i64",["sdict",["a",["slist","f64",null,"str"]],["b","i32"]]],"v":1})"),
      GetParam());
  EXPECT_EQ(Show(Call(f, {4})), "[4, {\"a\": [2.0, None, \"leaf\"], \"b\": 5}]");
  EXPECT_EQ(DescribeFunction(f),
            "nested(i64) -> (i64, sdict<a:slist<f64,null,str>,b:i32>)\n"
            "  convention: plain, returns: void, registers: 5 gpr + 0 sse, stack slots: 0\n"
            "  arg #0 i64\n"
            "    param 0: int64_t <- #0 i64 @ gpr[0]\n"
            "  result #0: int64_t i64 (out-pointer @ gpr[1])\n"
            "  result #1[\"a\"][0]: double f64 (out-pointer @ gpr[2])\n"
            "  result #1[\"a\"][2]: const char* str (out-pointer @ gpr[3])\n"
            "  result #1[\"b\"]: int32_t i32 (out-pointer @ gpr[4])\n");
}

// One leaf comes back as the return value, as one result would; zero leaves still make the
// (empty, or all-None) structure.
TEST_P(StructureResultTest, OneOrNoLeaves) {
  Function one =
      Bind("one", one_leaf, Json(R"({"a":["f64"],"r":[["slist","f64"]],"v":1})"), GetParam());
  EXPECT_EQ(Show(Call(one, {1.25})), "[2.5]");
  Function dict = Bind("one_dict", one_leaf,
                       Json(R"({"a":["f64"],"r":[["sdict",["x","f64"]]],"v":1})"), GetParam());
  EXPECT_EQ(Show(Call(dict, {1.0})), "{\"x\": 2.0}");
  Function empty = Bind("empty", no_leaves, Json(R"({"a":[],"r":[["slist"]],"v":1})"), GetParam());
  EXPECT_EQ(Show(Call(empty, {})), "[]");
  Function gaps =
      Bind("gaps", no_leaves, Json(R"({"a":[],"r":[["stuple",null,null]],"v":1})"), GetParam());
  EXPECT_EQ(Show(Call(gaps, {})), "[None, None]");
  Function empty_dict =
      Bind("empty_dict", no_leaves, Json(R"({"a":[],"r":[["sdict"]],"v":1})"), GetParam());
  EXPECT_EQ(Show(Call(empty_dict, {})), "{}");
}

TEST_P(StructureResultTest, StatusConvention) {
  Function f =
      Bind("status_pair", status_pair,
           Sig({S(ScalarKind::kI64)},
               {Type::Sequence(TypeKind::kSTuple, {S(ScalarKind::kI64), S(ScalarKind::kF64)})},
               CallConvention::kStatus),
           GetParam());
  EXPECT_EQ(Show(Call(f, {3})), "[3, 1.5]");
  Error e = CallError(f, {-1});
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(), "negative");
}

// A leaf that cannot be boxed: the error names its place in the structure, and the reference the
// native handed over for an earlier leaf is released.
TEST_P(StructureResultTest, LeafErrorNamesThePathAndReleasesTheOthers) {
  Function f =
      Bind("bad_second", bad_second,
           Json(R"({"a":[],"r":[["sdict",["t",["ndarray","f32",2,2,3]],["n","u64"]]],"v":1})"),
           GetParam());
  Error e = CallError(f, {});
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(),
            "Out of range result #0[\"n\"] of `bad_second() -> sdict<t:ndarray<f32,[2,3]>,n:u64>`: "
            "18446744073709551615 does not fit an Int (int64)");
  EXPECT_EQ(g_t1.use_count(), 1);
}

INSTANTIATE_TEST_SUITE_P(Paths, StructureResultTest, AllCallPaths(), PathName);

// The parsers and Type::SDict refuse a repeated key; a Type built field by field is refused at
// registration too (its Map would silently keep one value).
TEST(StructureResult, RepeatedDictKeyIsRefused) {
  auto built =
      std::make_shared<Type>(*Type::SDict({"x", "y"}, {S(ScalarKind::kI64), S(ScalarKind::kI64)}));
  built->keys[1] = "x";
  TypePtr dict = built;
  Error e = CatchError([&] { Bind("dup", two_i32, Sig({}, {dict})); });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(), "malformed sdict type `sdict<x:i64,x:i64>`: key `x` appears twice");
}

#if FFIJIT_HAVE_LLVM
// A callback returns flat C results: a structure result is refused by name.
TEST(StructureResult, CallbacksRefuseStructureResults) {
  Function packed = Function::FromTyped([](int64_t x) { return x; });
  Error e = CatchError([&] {
    NativeCallback cb(packed, Json(R"({"a":["i64"],"r":[["slist","i64"]],"v":1})"),
                      JitEngine::Default());
  });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(),
            "Cannot make a native callback `callback(i64) -> slist<i64>`: a result is a "
            "structure; callbacks return flat C results");
}
#endif

}  // namespace
}  // namespace ffijit::testing
