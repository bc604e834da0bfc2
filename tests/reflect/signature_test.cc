// The Signature model: factories, the printed forms, equality and hashing.
#include "ffijit/reflect/signature.h"
#include "signature_fixtures.h"

#include <gtest/gtest.h>

#include <unordered_set>

#include "test_util.h"

namespace ffijit {
namespace {

using testing::ErrorOf;

using ffijit_tests::Sig;

TEST(TypeToString, ScalarsAndSimpleTypes) {
  const std::pair<ScalarKind, const char*> names[] = {
      {ScalarKind::kI1, "i1"},   {ScalarKind::kI8, "i8"},     {ScalarKind::kI16, "i16"},
      {ScalarKind::kI32, "i32"}, {ScalarKind::kI64, "i64"},   {ScalarKind::kU8, "u8"},
      {ScalarKind::kU16, "u16"}, {ScalarKind::kU32, "u32"},   {ScalarKind::kU64, "u64"},
      {ScalarKind::kF16, "f16"}, {ScalarKind::kBF16, "bf16"}, {ScalarKind::kF32, "f32"},
      {ScalarKind::kF64, "f64"}};
  for (const auto& [kind, name] : names) {
    EXPECT_EQ(TypeToString(*Type::Scalar(kind)), name);
    EXPECT_STREQ(ScalarKindName(kind), name);
  }
  EXPECT_STREQ(ScalarKindName(ScalarKind::kAny), "any");
  EXPECT_EQ(TypeToString(*Type::Simple(TypeKind::kStr)), "str");
  EXPECT_EQ(TypeToString(*Type::Simple(TypeKind::kBytes)), "bytes");
  EXPECT_EQ(TypeToString(*Type::Simple(TypeKind::kOpaquePtr)), "ptr");
  EXPECT_EQ(TypeToString(*Type::Simple(TypeKind::kDataType)), "DataType");
  EXPECT_EQ(TypeToString(*Type::Simple(TypeKind::kDevice)), "Device");
  EXPECT_EQ(TypeToString(*Type::Simple(TypeKind::kUnknown)), "any");
  EXPECT_EQ(TypeToString(*Type::Object()), "object");
  EXPECT_EQ(TypeToString(*Type::Object("my.Thing")), "object<my.Thing>");
  EXPECT_EQ(TypeToString(*Type::Object("my.Thing", true)), "object<my.Thing>?");
  EXPECT_EQ(TypeToString(*Type::Object("has space")), "object<\"has space\">");
}

TEST(TypeToString, NDArrayForms) {
  EXPECT_EQ(TypeToString(*Type::NDArray(ScalarKind::kF32, 2, {-1, -1})), "ndarray<f32,2>");
  EXPECT_EQ(TypeToString(*Type::NDArray(ScalarKind::kF32, 3, {-1, 128, 64})),
            "ndarray<f32,[?,128,64]>");
  EXPECT_EQ(TypeToString(*Type::NDArray(ScalarKind::kI32, 0, {})), "ndarray<i32,0>");
  EXPECT_EQ(TypeToString(*Type::NDArray(ScalarKind::kAny, -1, {})), "ndarray<any>");
  EXPECT_EQ(TypeToString(*Type::NDArray(ScalarKind::kF64, -1, {})), "ndarray<f64>");
}

TEST(TypeToString, Structures) {
  auto i32 = Type::Scalar(ScalarKind::kI32);
  EXPECT_EQ(TypeToString(*Type::Sequence(TypeKind::kSList, {i32, i32})), "slist<i32,i32>");
  EXPECT_EQ(TypeToString(*Type::Sequence(TypeKind::kSTuple, {i32, nullptr})), "stuple<i32,null>");
  EXPECT_EQ(TypeToString(*Type::SDict({"b", "a"}, {i32, i32})), "sdict<b:i32,a:i32>");
  EXPECT_EQ(TypeToString(*Type::SDict({"x,y"}, {i32})), "sdict<\"x,y\":i32>");
  EXPECT_EQ(TypeToString(*Type::List(i32)), "list<i32>");
  EXPECT_EQ(TypeToString(*Type::Dict(Type::Simple(TypeKind::kStr), i32)), "dict<str,i32>");
  EXPECT_EQ(TypeToString(*Type::Named("a", i32)), "a: i32");
}

TEST(DeclarationString, ArgumentsAndResultShapes) {
  auto i64 = Type::Scalar(ScalarKind::kI64);
  auto f64 = Type::Scalar(ScalarKind::kF64);
  EXPECT_EQ(DeclarationString("add", Sig({Type::Named("a", i64), Type::Named("b", i64)}, {i64})),
            "add(a: i64, b: i64) -> i64");
  EXPECT_EQ(DeclarationString("f", Sig({i64, f64}, {i64, i64})), "f(i64, f64) -> (i64, i64)");
  EXPECT_EQ(DeclarationString("g", Sig({}, {})), "g() -> None");
}

TEST(CanonicalString, IncludesStatusConventionOnly) {
  auto i64 = Type::Scalar(ScalarKind::kI64);
  EXPECT_EQ(CanonicalString(Sig({i64}, {i64})), "(i64) -> i64");
  EXPECT_EQ(CanonicalString(Sig({i64}, {i64}, CallConvention::kStatus)), "(i64) -> i64 [status]");
}

TEST(SignatureEquality, AgreesWithCanonicalTextAndHash) {
  auto i64 = Type::Scalar(ScalarKind::kI64);
  std::vector<Signature> sigs = {
      Sig({i64}, {i64}),
      Sig({i64}, {i64}, CallConvention::kStatus),
      Sig({Type::Named("a", i64)}, {i64}),
      Sig({Type::Named("b", i64)}, {i64}),
      Sig({Type::NDArray(ScalarKind::kF32, 1, {-1})}, {}),
      Sig({Type::NDArray(ScalarKind::kF32, 1, {4})}, {}),
      Sig({Type::Object("x")}, {}),
      Sig({Type::Object("x", true)}, {}),
      Sig({Type::Sequence(TypeKind::kSList, {i64})}, {}),
      Sig({Type::Sequence(TypeKind::kSTuple, {i64})}, {}),
      Sig({Type::Sequence(TypeKind::kSTuple, {nullptr})}, {}),
      Sig({}, {i64, i64}),
      Sig({}, {Type::Sequence(TypeKind::kSTuple, {i64, i64})}),
  };
  std::unordered_set<std::string> texts;
  for (size_t i = 0; i < sigs.size(); ++i) {
    texts.insert(CanonicalString(sigs[i]));
    for (size_t j = 0; j < sigs.size(); ++j) {
      EXPECT_EQ(sigs[i] == sigs[j], i == j)
          << CanonicalString(sigs[i]) << " vs " << CanonicalString(sigs[j]);
    }
  }
  EXPECT_EQ(texts.size(), sigs.size());
  // Separately built but equal trees compare and hash equal.
  Signature a = Sig({Type::SDict({"k"}, {Type::List(i64)})}, {});
  Signature b = Sig({Type::SDict({"k"}, {Type::List(Type::Scalar(ScalarKind::kI64))})}, {});
  EXPECT_EQ(a, b);
  EXPECT_EQ(SignatureHash()(a), SignatureHash()(b));
}

TEST(TypeFactories, RejectInconsistentTypes) {
  ErrorOf([] { Type::NDArray(ScalarKind::kF32, 3, {4}); }, "rank 3 but 1 dims");
  ErrorOf([] { Type::NDArray(ScalarKind::kF32, -2, {}); }, "negative rank");
  ErrorOf([] { Type::NDArray(ScalarKind::kF32, -1, {1}); }, "unknown rank");
  ErrorOf([] { Type::NDArray(ScalarKind::kF32, 1, {-5}); }, "invalid dim -5");
  ErrorOf([] { Type::Scalar(ScalarKind::kAny); }, "only an ndarray element");
  ErrorOf([] { Type::Simple(TypeKind::kSList); }, "not a simple type");
  ErrorOf([] { Type::Sequence(TypeKind::kList, {}); }, "kSList or kSTuple");
  auto i32 = Type::Scalar(ScalarKind::kI32);
  ErrorOf([&] { Type::SDict({"a", "a"}, {i32, i32}); }, "duplicate key `a`");
  ErrorOf([&] { Type::SDict({"a"}, {}); }, "1 keys but 0 values");
  ErrorOf([&] { Type::Named("", i32); }, "empty keyword");
  ErrorOf([&] { Type::Named("a", Type::Named("b", i32)); }, "nested named");
  ErrorOf([&] { Type::List(nullptr); }, "null element");
  ErrorOf([&] { Type::Dict(i32, nullptr); }, "null key or value");
}

}  // namespace
}  // namespace ffijit
