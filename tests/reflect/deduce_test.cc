// SignatureOf: the Signature of C++ function types, deduced at compile time.
#include "ffijit/reflect/deduce.h"

#include <gtest/gtest.h>

#include "ffijit/reflect/metadata.h"

namespace ffijit::deduce_test {

// Natives whose types SignatureOf deduces (external linkage: only their types are used).
void Everything(bool, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t,
                float, double, void*, const char*, TVMFFIByteArray, DLTensor*, DLDataType, DLDevice,
                TVMFFIObject*, const TVMFFIAny*) {}
double Scale(DLTensor*, double k) noexcept {
  return k;
}
const char* Name() {
  return "x";
}

namespace {

TEST(SignatureOf, MapsEverySupportedType) {
  EXPECT_EQ(CanonicalString(SignatureOf<decltype(Everything)>()),
            "(i1, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, ptr, str, bytes, ndarray<any>, "
            "DataType, Device, object, any) -> None");
}

TEST(SignatureOf, FunctionPointersAndNoexcept) {
  EXPECT_EQ(CanonicalString(SignatureOf<decltype(&Scale)>()), "(ndarray<any>, f64) -> f64");
  EXPECT_EQ(SignatureOf<decltype(&Scale)>(), SignatureOf<decltype(Scale)>());
  EXPECT_EQ(CanonicalString(SignatureOf<const char* (*const)()>()), "() -> str");
  EXPECT_EQ(CanonicalString(SignatureOf<decltype(Name)>()), "() -> str");
  EXPECT_EQ(SignatureOf<long long(long, unsigned long long)>(),
            SignatureOf<int64_t(int64_t, uint64_t)>());
}

TEST(SignatureOf, DeducedSignaturesPrintAsJson) {
  EXPECT_EQ(PrintJson(SignatureOf<decltype(Scale)>()),
            R"({"a":[["ndarray",null,null],"f64"],"r":["f64"],"v":1})");
  EXPECT_EQ(ParseJson(PrintJson(SignatureOf<decltype(Everything)>())),
            SignatureOf<decltype(Everything)>());
}

}  // namespace
}  // namespace ffijit::deduce_test
