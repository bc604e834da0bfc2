// Structural equality and hashing of plain values: tvm::ffi::StructuralEqual::Equal /
// StructuralHash::Hash (called by their mangled names, as code compiled from TVM FFI's headers
// calls them) and the global ffi.StructuralHash.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "ffijit/ffijit.h"
#include "runtime/tvm_header_style.h"

namespace ffijit {
namespace {

// A test-side tvm::ffi::Any holding its own reference to `value`.
tvm::ffi::Any Hold(const Any& value) {
  TVMFFIAny owned{};
  TVMFFIAnyViewToOwnedAny(&value.raw(), &owned);
  return tvm::ffi::Any(owned);
}

bool Equal(const Any& a, const Any& b, bool skip_tensor_content = false) {
  return tvm::ffi::StructuralEqual::Equal(Hold(a), Hold(b), false, skip_tensor_content);
}
uint64_t Hash(const Any& a, bool skip_tensor_content = false) {
  return tvm::ffi::StructuralHash::Hash(Hold(a), false, skip_tensor_content);
}

void ExpectSame(const Any& a, const Any& b) {
  EXPECT_TRUE(Equal(a, b));
  EXPECT_EQ(Hash(a), Hash(b));
}

TEST(Structural, ValuesCompareByContent) {
  ExpectSame(Any(int64_t{3}), Any(int64_t{3}));
  ExpectSame(Any(std::nan("")), Any(-std::nan("")));
  ExpectSame(Any("short"), Any(String("short")));  // RawStr copy vs SmallStr
  ExpectSame(Any(String("a longer string value")), Any(String("a longer string value")));
  ExpectSame(Any(Array{int64_t{1}, "x", Array{2.5}}), Any(Array{int64_t{1}, "x", Array{2.5}}));
  ExpectSame(Any(Map{{"a", int64_t{1}}, {"b", Array{true}}}),
             Any(Map{{"b", Array{true}}, {"a", int64_t{1}}}));  // order does not matter
  ExpectSame(Any(Shape{2, 3}), Any(Shape{2, 3}));
  EXPECT_FALSE(Equal(Any(int64_t{1}), Any(true)));
  EXPECT_FALSE(Equal(Any(int64_t{1}), Any(1.0)));
  EXPECT_FALSE(Equal(Any(Array{int64_t{1}, int64_t{2}}), Any(Array{int64_t{1}, int64_t{3}})));
  EXPECT_NE(Hash(Any(Array{int64_t{1}, int64_t{2}})), Hash(Any(Array{int64_t{2}, int64_t{1}})));
  EXPECT_FALSE(Equal(Any(Map{{"a", int64_t{1}}}), Any(Map{{"a", int64_t{2}}})));
  EXPECT_FALSE(Equal(Any(Map{{"a", int64_t{1}}}), Any(Map{{"b", int64_t{1}}})));
  EXPECT_FALSE(Equal(Any(Shape{2, 3}), Any(Shape{3, 2})));
}

TEST(Structural, TensorsCompareShapeDtypeAndDataUnlessSkipped) {
  Tensor a = Tensor::Empty({2, 2}, DataType(kDLFloat, 32, 1));
  Tensor b = Tensor::Empty({2, 2}, DataType(kDLFloat, 32, 1));
  ExpectSame(Any(a), Any(b));
  static_cast<float*>(b.data())[3] = 1.0f;
  EXPECT_FALSE(Equal(Any(a), Any(b)));
  EXPECT_TRUE(Equal(Any(a), Any(b), /*skip_tensor_content=*/true));
  EXPECT_EQ(Hash(Any(a), true), Hash(Any(b), true));
  EXPECT_FALSE(Equal(Any(a), Any(Tensor::Empty({2, 2}, DataType(kDLInt, 32, 1))), true));
}

TEST(Structural, ObjectsWithoutAStructuralKindAreTypeErrors) {
  // As in TVM FFI: a Function has no reflection metadata, so it has no structural form (even
  // compared with itself). Reflected types are covered in reflected_structural_test.cc.
  Function f = Function::FromTyped([] { return 1; });
  for (int op = 0; op < 2; ++op) {
    try {
      if (op == 0) Equal(Any(f), Any(f));
      if (op == 1) Hash(Any(Array{Any(f)}));
      ADD_FAILURE() << "a Function was compared structurally";
    } catch (const tvm::ffi::Error& e) {
      EXPECT_EQ(e.kind(), "TypeError");
      EXPECT_NE(e.message().find("`ffi.Function`"), std::string::npos) << e.message();
    }
  }
}

TEST(Structural, UnreadableTensorDataIsAnErrorNotACrash) {
  Tensor a = Tensor::Empty({4}, DataType(kDLFloat, 32, 1));
  TVMFFIObjectHandle handle = nullptr;
  int64_t shape[] = {4};
  int64_t strides[] = {2};
  DLManagedTensor managed{};
  managed.dl_tensor.data = a.data();
  managed.dl_tensor.device = DLDevice{kDLCPU, 0};
  managed.dl_tensor.ndim = 1;
  managed.dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
  managed.dl_tensor.shape = shape;
  managed.dl_tensor.strides = strides;
  ASSERT_EQ(TVMFFITensorFromDLPack(&managed, 0, 0, &handle), 0);
  Tensor strided(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle)));
  try {
    Equal(Any(a), Any(strided));
    FAIL() << "expected tvm::ffi::Error";
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.kind(), "RuntimeError");
    EXPECT_NE(e.message().find("contiguous"), std::string::npos);
  }
}

TEST(Structural, HashGlobalMatchesTheCxxFunction) {
  Any value(Map{{"k", Array{int64_t{1}, "two"}}});
  Any h = GetGlobalFunctionOrThrow("ffi.StructuralHash")(value, false, false);
  EXPECT_EQ(static_cast<uint64_t>(h.cast<int64_t>()), Hash(value));
  EXPECT_THROW(GetGlobalFunctionOrThrow("ffi.StructuralHash")(), Error);
}

}  // namespace
}  // namespace ffijit
