// Any/AnyView conversions (the conversion contract), strings and bytes, view -> owned.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "ffijit/ffijit.h"

namespace ffijit {
namespace {

// Runs `body`, which must throw an Error of `kind` whose message contains every part.
template <typename F>
void ExpectError(F&& body, const std::string& kind, std::initializer_list<std::string> parts) {
  try {
    body();
    FAIL() << "expected a " << kind;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const auto& part : parts) EXPECT_NE(e.message().find(part), std::string::npos) << e.what();
  }
}

TEST(AnyTest, ScalarsRoundTrip) {
  EXPECT_EQ(Any(42).type_index(), kTVMFFIInt);
  EXPECT_EQ(Any(int64_t{-7}).cast<int64_t>(), -7);
  EXPECT_EQ(Any(true).type_index(), kTVMFFIBool);
  EXPECT_TRUE(Any(true).cast<bool>());
  EXPECT_EQ(Any(2.5).cast<double>(), 2.5);
  EXPECT_EQ(Any(2.5f).type_index(), kTVMFFIFloat);
  EXPECT_TRUE(Any().is_none());
  EXPECT_TRUE(Any(nullptr).is_none());
  int x = 0;
  EXPECT_EQ(Any(static_cast<void*>(&x)).cast<void*>(), &x);
  EXPECT_EQ(Any(static_cast<void*>(nullptr)).type_index(), kTVMFFINone);
  EXPECT_EQ(Any().cast<void*>(), nullptr);
}

TEST(AnyTest, UnusedBytesAreZero) {
  Any a(int8_t{-1});
  EXPECT_EQ(a.raw().zero_padding, 0u);
  Any b(true);
  EXPECT_EQ(b.raw().v_uint64, 1u);
  Any c(DataType::Float(32));
  EXPECT_EQ(c.raw().v_uint64 >> 32, 0u);
}

TEST(AnyTest, IntegersAcceptIntAndBoolWithRangeChecks) {
  EXPECT_EQ(Any(true).cast<int32_t>(), 1);
  EXPECT_EQ(Any(127).cast<int8_t>(), 127);
  EXPECT_EQ(Any(-128).cast<int8_t>(), -128);
  EXPECT_EQ(Any(255).cast<uint8_t>(), 255);
  ExpectError([] { Any(300).cast<int8_t>(); }, "ValueError",
              {"value 300 is out of range for `i8`"});
  ExpectError([] { Any(-129).cast<int8_t>(); }, "ValueError",
              {"value -129 is out of range for `i8`"});
  ExpectError([] { Any(-1).cast<uint64_t>(); }, "ValueError",
              {"value -1 is out of range for `u64`"});
  ExpectError([] { Any(70000).cast<uint16_t>(); }, "ValueError",
              {"value 70000 is out of range for `u16`"});
  ExpectError([] { Any(int64_t{1} << 40).cast<int32_t>(); }, "ValueError",
              {"out of range for `i32`"});
  ExpectError([] { Any(1.5).cast<int64_t>(); }, "TypeError", {"expected `i64` but got `float`"});
  ExpectError([] { Any("12").cast<int32_t>(); }, "TypeError", {"expected `i32` but got `str`"});
  ExpectError([] { Any(~uint64_t{0}); }, "ValueError", {"18446744073709551615"});
}

TEST(AnyTest, BoolAndFloatAcceptances) {
  EXPECT_FALSE(Any(0).cast<bool>());
  EXPECT_TRUE(Any(-3).cast<bool>());
  ExpectError([] { Any(1.0).cast<bool>(); }, "TypeError", {"expected `bool` but got `float`"});
  EXPECT_EQ(Any(3).cast<double>(), 3.0);
  EXPECT_EQ(Any(true).cast<float>(), 1.0f);
  ExpectError([] { Any().cast<double>(); }, "TypeError", {"expected `f64` but got `None`"});
  ExpectError([] { Any(3).cast<void*>(); }, "TypeError", {"expected `ptr` but got `int`"});
}

// Every message names a value's type with this one function, in the metadata's spelling.
TEST(AnyTest, TypeNamesUseTheMetadataSpelling) {
  auto name_of = [](int32_t type_index, const void* payload = nullptr) {
    TVMFFIAny any{};
    any.type_index = type_index;
    any.v_ptr = const_cast<void*>(payload);
    return details::AnyTypeName(any);
  };
  int x = 0;
  EXPECT_EQ(name_of(kTVMFFINone), "None");
  EXPECT_EQ(name_of(kTVMFFIInt), "int");
  EXPECT_EQ(name_of(kTVMFFIBool), "bool");
  EXPECT_EQ(name_of(kTVMFFIFloat), "float");
  EXPECT_EQ(name_of(kTVMFFIOpaquePtr, &x), "ptr");
  EXPECT_EQ(name_of(kTVMFFIDataType), "DataType");
  EXPECT_EQ(name_of(kTVMFFIDevice), "Device");
  EXPECT_EQ(name_of(kTVMFFIDLTensorPtr, &x), "ndarray");
  EXPECT_EQ(name_of(kTVMFFIRawStr, "text"), "str");
  EXPECT_EQ(name_of(kTVMFFIRawStr), "None");  // a NULL RawStr is taken as None everywhere
  EXPECT_EQ(name_of(kTVMFFISmallStr), "str");
  EXPECT_EQ(name_of(kTVMFFIByteArrayPtr, &x), "bytes");
  EXPECT_EQ(name_of(kTVMFFISmallBytes), "bytes");
  EXPECT_EQ(name_of(63), "type#63");
  EXPECT_EQ(name_of(100000, &x), "object#100000");
  EXPECT_EQ(Any(Tensor::Empty({1}, DataType("int8"))).type_name(), "ndarray");
  EXPECT_EQ(Any(String("a heap string")).type_name(), "str");
  EXPECT_EQ(Any(Bytes("heap bytes here")).type_name(), "bytes");
  EXPECT_EQ(Any(Array{1}).type_name(), "ffi.Array");
  EXPECT_EQ(Any(Map{{1, 2}}).type_name(), "ffi.Map");
}

TEST(AnyTest, TryCastReturnsNulloptOnMismatch) {
  EXPECT_EQ(Any(5).try_cast<int32_t>(), std::optional<int32_t>(5));
  EXPECT_FALSE(Any(500).try_cast<int8_t>().has_value());
  EXPECT_FALSE(Any("x").try_cast<double>().has_value());
  EXPECT_EQ(Any().cast<std::optional<int>>(), std::nullopt);
  EXPECT_EQ(Any(4).cast<std::optional<int>>(), std::optional<int>(4));
}

TEST(StringTest, SevenBytesStayInlineEightGoToTheHeap) {
  String seven("1234567");
  EXPECT_TRUE(seven.is_inline());
  EXPECT_EQ(seven.any().type_index, kTVMFFISmallStr);
  EXPECT_EQ(seven.any().small_str_len, 7u);
  EXPECT_EQ(seven.view(), "1234567");
  EXPECT_EQ(seven.c_str()[7], '\0');

  String eight("12345678");
  EXPECT_FALSE(eight.is_inline());
  EXPECT_EQ(eight.any().type_index, kTVMFFIStr);
  EXPECT_EQ(eight.size(), 8u);
  EXPECT_EQ(eight, "12345678");
  EXPECT_EQ(eight.c_str()[8], '\0');

  Any small_any("abc");  // no allocation: the bytes travel in the Any
  EXPECT_EQ(small_any.type_index(), kTVMFFISmallStr);
  Any long_any(std::string("a longer string"));
  EXPECT_EQ(long_any.type_index(), kTVMFFIStr);
  EXPECT_EQ(long_any.cast<std::string>(), "a longer string");

  EXPECT_TRUE(Any(static_cast<const char*>(nullptr)).is_none());
  String empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_TRUE(empty.is_inline());
}

TEST(StringTest, EmbeddedNulBytesAreKept) {
  std::string with_nul("a\0b", 3);
  String small(with_nul);
  EXPECT_EQ(small.size(), 3u);
  EXPECT_EQ(small.str(), with_nul);
  std::string long_nul("head\0\0tail-and-more", 19);
  String large(long_nul);
  EXPECT_EQ(large.size(), 19u);
  EXPECT_EQ(large.str(), long_nul);
  Bytes bytes(long_nul);
  EXPECT_EQ(bytes.any().type_index, kTVMFFIBytes);
  EXPECT_EQ(Any(bytes).cast<Bytes>().str(), long_nul);
  TVMFFIByteArray array{long_nul.data(), long_nul.size()};
  TVMFFIAny out{};
  ASSERT_EQ(TVMFFIBytesFromByteArray(&array, &out), 0);
  Bytes adopted = Bytes::AdoptAny(out);
  EXPECT_EQ(adopted.str(), long_nul);
}

TEST(StringTest, CopiesShareTheHeapObject) {
  String a("shared heap string");
  String b = a;
  EXPECT_EQ(a.any().v_obj, b.any().v_obj);
  EXPECT_EQ(FFIJITHeaderStrongCount(a.any().v_obj), 2u);
  String c = std::move(b);
  EXPECT_EQ(FFIJITHeaderStrongCount(a.any().v_obj), 2u);
  EXPECT_TRUE(b.empty());
}

TEST(StringTest, AllStrFormsConvert) {
  TVMFFIAny raw{};
  raw.type_index = kTVMFFIRawStr;
  raw.v_c_str = "raw view";
  AnyView view(raw);
  EXPECT_EQ(view.cast<std::string>(), "raw view");
  EXPECT_STREQ(view.cast<const char*>(), "raw view");
  String from_raw = view.cast<String>();
  EXPECT_EQ(from_raw.any().type_index, kTVMFFIStr);  // a copy, not the view
  EXPECT_EQ(from_raw, "raw view");
  Any small("hi");
  EXPECT_STREQ(small.cast<const char*>(), "hi");
  EXPECT_EQ(small.cast<std::string_view>(), "hi");
  // Bytes accept the str forms too, but str does not accept bytes.
  EXPECT_EQ(Any("hi").cast<Bytes>().str(), "hi");
  ExpectError([] { Any(Bytes("xy")).cast<std::string>(); }, "TypeError", {"str", "bytes"});
}

TEST(AnyViewTest, ToOwnedTurnsRawStrIntoString) {
  TVMFFIAny raw{};
  raw.type_index = kTVMFFIRawStr;
  raw.v_c_str = "short";
  Any small = AnyView(raw).ToOwned();
  EXPECT_EQ(small.type_index(), kTVMFFISmallStr);
  EXPECT_EQ(small.cast<std::string>(), "short");
  std::string text = "long enough for the heap";
  raw.v_c_str = text.c_str();
  Any large = AnyView(raw).ToOwned();
  EXPECT_EQ(large.type_index(), kTVMFFIStr);
  text[0] = 'X';  // the owned copy does not alias the source
  EXPECT_EQ(large.cast<std::string>(), "long enough for the heap");

  TVMFFIByteArray bytes{"abcdefghij", 10};
  TVMFFIAny byte_view{};
  byte_view.type_index = kTVMFFIByteArrayPtr;
  byte_view.v_ptr = &bytes;
  EXPECT_EQ(AnyView(byte_view).ToOwned().type_index(), kTVMFFIBytes);
}

TEST(AnyViewTest, ToOwnedIncrementsObjectsAndRejectsBadViews) {
  Array array{1, 2};
  uint64_t before = array.use_count();
  {
    TVMFFIAny raw{};
    raw.type_index = kTVMFFIArray;
    raw.v_obj = array.get();
    Any owned = AnyView(raw).ToOwned();
    EXPECT_EQ(array.use_count(), before + 1);
  }
  EXPECT_EQ(array.use_count(), before);

  TVMFFIAny null_raw{};
  null_raw.type_index = kTVMFFIRawStr;
  ExpectError([&] { AnyView(null_raw).ToOwned(); }, "ValueError", {"NULL"});
  TVMFFIAny bogus{};
  bogus.type_index = 40;
  ExpectError([&] { AnyView(bogus).ToOwned(); }, "TypeError", {"40"});
  TVMFFIAny out{};
  EXPECT_EQ(TVMFFIAnyViewToOwnedAny(nullptr, &out), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
}

TEST(AnyViewTest, ObjectRValueRefMovesTheReference) {
  Array array{1};
  auto* slot =
      static_cast<TVMFFIObject*>(array.release());  // one strong reference, now owned by `slot`
  TVMFFIAny view{};
  view.type_index = kTVMFFIObjectRValueRef;
  view.v_ptr = &slot;
  Any owned = AnyView(view).ToOwned();
  EXPECT_EQ(slot, nullptr);  // moved out of the slot
  EXPECT_EQ(owned.type_index(), kTVMFFIArray);
  EXPECT_EQ(FFIJITHeaderStrongCount(owned.raw().v_obj), 1u);
  ExpectError([&] { AnyView(view).ToOwned(); }, "InternalError", {"RValueRef already moved"});
  view.v_ptr = nullptr;
  ExpectError([&] { AnyView(view).ToOwned(); }, "ValueError", {"NULL slot"});
}

TEST(AnyTest, ObjectsConvertByTypeWithParentChain) {
  Array array{1};
  Any any(array);
  EXPECT_EQ(any.type_index(), kTVMFFIArray);
  EXPECT_EQ(any.cast<Array>(), array);
  EXPECT_TRUE(any.cast<ObjectRef>().defined());
  ExpectError([&] { any.cast<Map>(); }, "TypeError", {"expected `ffi.Map` but got `ffi.Array`"});
  EXPECT_FALSE(Any().cast<Array>().defined());
  ExpectError([] { Any(1).cast<Array>(); }, "TypeError", {"expected `ffi.Array` but got `int`"});
  EXPECT_EQ(Any(Array()).type_index(), kTVMFFINone);
}

TEST(AnyTest, DataTypeAndDeviceAcceptStrings) {
  EXPECT_EQ(Any("float32").cast<DataType>(), DataType::Float(32));
  EXPECT_EQ(Any(DataType::Int(8, 4)).cast<DataType>(), DataType::Int(8, 4));
  EXPECT_EQ(Any("cuda:1").cast<Device>(), Device(kDLCUDA, 1));
  EXPECT_EQ(Any(Device(kDLCPU, 0)).type_index(), kTVMFFIDevice);
  ExpectError([] { Any("flaot32").cast<DataType>(); }, "ValueError", {"\"flaot32\""});
  ExpectError([] { Any(3).cast<Device>(); }, "TypeError", {"expected `Device` but got `int`"});
}

TEST(AnyTest, CopyAndMoveKeepCountsBalanced) {
  Array array{1};
  {
    Any a(array);
    Any b = a;
    EXPECT_EQ(array.use_count(), 3u);
    Any c = std::move(b);
    EXPECT_EQ(array.use_count(), 3u);
    EXPECT_TRUE(b.is_none());
    a = Any(5);
    EXPECT_EQ(array.use_count(), 2u);
  }
  EXPECT_EQ(array.use_count(), 1u);
}

}  // namespace
}  // namespace ffijit
