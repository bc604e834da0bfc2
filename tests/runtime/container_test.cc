// Containers: Array, Map (content-compared string keys, insertion order), Shape, and bad input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ffijit/ffijit.h"

namespace ffijit {
namespace {

TEST(ArrayTest, HoldsOwnedCopiesInTheDocumentedLayout) {
  String heap("a string long enough");
  Array array{1, 2.5, heap, Any()};
  ASSERT_EQ(array.size(), 4);
  EXPECT_EQ(array[0].cast<int>(), 1);
  EXPECT_EQ(array[1].cast<double>(), 2.5);
  EXPECT_EQ(array[2].cast<std::string>(), "a string long enough");
  EXPECT_TRUE(array[3].is_none());
  EXPECT_EQ(FFIJITHeaderStrongCount(heap.any().v_obj), 2u);  // the array holds a reference
  const FFIJITArrayCell* cell = array.cell();
  EXPECT_EQ(cell->size, 4);
  EXPECT_GE(cell->capacity, 4);
  EXPECT_EQ(cell->data[0].v_int64, 1);
  int count = 0;
  for (AnyView item : array) count += item.type_index() >= 0 ? 1 : 0;
  EXPECT_EQ(count, 4);
  array = Array();
  EXPECT_EQ(FFIJITHeaderStrongCount(heap.any().v_obj), 1u);
}

TEST(ArrayTest, EmptyNullAndOutOfRange) {
  Array empty(std::vector<Any>{});
  EXPECT_TRUE(empty.defined());
  EXPECT_EQ(empty.size(), 0);
  Array null_array;
  EXPECT_EQ(null_array.size(), 0);
  EXPECT_EQ(null_array.begin(), null_array.end());
  Array one{1};
  try {
    one[1];
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "IndexError");
    EXPECT_NE(e.message().find("index 1"), std::string::npos);
  }
  EXPECT_THROW(one[-1], Error);
  TVMFFIObjectHandle out = nullptr;
  EXPECT_EQ(FFIJITArrayCreate(nullptr, -1, &out), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("negative"), std::string::npos);
  EXPECT_EQ(FFIJITArrayCreate(nullptr, 2, &out), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("items"), std::string::npos);
  // A bad element midway: the partial array is released, nothing leaks.
  TVMFFIAny items[2] = {};
  items[0] = Any(String("heap string number one")).release();
  items[1].type_index = kTVMFFIRawStr;  // NULL RawStr
  EXPECT_EQ(FFIJITArrayCreate(items, 2, &out), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  Any::Adopt(items[0]);
}

TEST(MapTest, LooksUpStringKeysByContentInAnyForm) {
  Map map{{"short", 1}, {std::string("a long key on the heap"), 2}, {3, "three"}};
  EXPECT_EQ(map.size(), 3);
  EXPECT_EQ(map.at("short").cast<int>(), 1);
  TVMFFIAny raw{};
  raw.type_index = kTVMFFIRawStr;
  raw.v_c_str = "a long key on the heap";
  EXPECT_EQ(map.at(AnyView(raw)).cast<int>(), 2);
  raw.v_c_str = "short";
  EXPECT_EQ(map.at(AnyView(raw)).cast<int>(), 1);
  EXPECT_EQ(map.at(Any(3)).cast<std::string>(), "three");
  EXPECT_FALSE(map.Get(Any("missing")).has_value());
  EXPECT_FALSE(map.Get(Any(Bytes("short"))).has_value());  // bytes are not str
  EXPECT_FALSE(map.Get(Any(3.0)).has_value());             // a float is not an int
  try {
    map.at(Any("missing"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "KeyError");
  }
}

TEST(MapTest, KeepsInsertionOrderAndLastValueForRepeatedKeys) {
  Map map{{"b", 1}, {"a", 2}, {"b", 3}};
  ASSERT_EQ(map.size(), 2);
  auto [k0, v0] = map.ItemAt(0);
  auto [k1, v1] = map.ItemAt(1);
  EXPECT_EQ(k0.cast<std::string>(), "b");
  EXPECT_EQ(v0.cast<int>(), 3);
  EXPECT_EQ(k1.cast<std::string>(), "a");
  EXPECT_EQ(v1.cast<int>(), 2);
  try {
    map.ItemAt(2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "IndexError");
  }
}

TEST(MapTest, RepeatedKeysAreFoundByContentWithFewAndManyKeys) {
  // Up to 8 keys are compared by a scan, more through a hash table: both keep a repeated key's
  // first position and last value, and compare strings by content whatever their form.
  for (int distinct : {3, 7, 12}) {
    std::vector<TVMFFIAny> keys, values;
    std::vector<std::string> texts;
    for (int i = 0; i < distinct; ++i) texts.push_back("key number " + std::to_string(i));
    std::vector<Any> owned;  // the String forms of the repeats
    for (int i = 0; i < distinct; ++i) {
      TVMFFIAny key{};
      key.type_index = kTVMFFIRawStr;
      key.v_c_str = texts[i].c_str();
      keys.push_back(key);
      values.push_back(Any(int64_t{i}).raw());
    }
    for (int i = 0; i < distinct; i += 2) {
      owned.emplace_back(texts[i]);
      keys.push_back(owned.back().raw());
      values.push_back(Any(int64_t{100 + i}).raw());
    }
    TVMFFIObjectHandle out = nullptr;
    ASSERT_EQ(FFIJITMapCreate(keys.data(), values.data(), static_cast<int64_t>(keys.size()), &out),
              0);
    Map map(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(out)));
    ASSERT_EQ(map.size(), distinct);
    for (int i = 0; i < distinct; ++i) {
      auto [key, value] = map.ItemAt(i);
      EXPECT_EQ(key.cast<std::string>(), texts[i]);
      EXPECT_EQ(value.cast<int64_t>(), i % 2 == 0 ? 100 + i : i) << distinct << " keys, " << i;
    }
  }
}

TEST(MapTest, BadInputIsAnError) {
  TVMFFIObjectHandle out = nullptr;
  EXPECT_EQ(FFIJITMapCreate(nullptr, nullptr, -3, &out), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  int64_t size = 0;
  EXPECT_EQ(FFIJITMapSize(nullptr, &size), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  Array array{1};
  EXPECT_EQ(FFIJITMapSize(array.get(), &size), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("ffi.Array"), std::string::npos);
  Map map{{"k", 1}};
  EXPECT_EQ(FFIJITMapGet(map.get(), nullptr, nullptr), -1);
  Error::MoveFromRaised();
}

TEST(ShapeTest, StoresDimensions) {
  Shape shape{2, 3, 4};
  EXPECT_EQ(shape.size(), 3u);
  EXPECT_EQ(shape[1], 3);
  EXPECT_EQ(shape.ToVector(), std::vector<int64_t>({2, 3, 4}));
  EXPECT_EQ(shape.type_index(), kTVMFFIShape);
  EXPECT_THROW(shape[3], Error);
  Shape scalar(std::vector<int64_t>{});
  EXPECT_EQ(scalar.size(), 0u);
  Any any(shape);
  EXPECT_EQ(any.cast<Shape>().ToVector(), shape.ToVector());
  TVMFFIObjectHandle out = nullptr;
  EXPECT_EQ(FFIJITShapeCreate(nullptr, 2, &out), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("dims"), std::string::npos);
}

}  // namespace
}  // namespace ffijit
