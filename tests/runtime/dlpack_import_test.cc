// DLPack imports from hostile producers: hand-made DLManagedTensor / DLManagedTensorVersioned
// structs whose ndim, shape, data, strides, dtype, flags or version lie. Each is a ValueError
// naming what is wrong, the producer keeps its struct (no deleter call), and the arrays are never
// read beyond what the struct may honestly offer.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ffijit/ffijit.h"

namespace ffijit {
namespace {

// A producer whose struct the test then corrupts; counts deleter calls.
struct Producer {
  std::vector<float> data = std::vector<float>(8, 1.0f);
  std::vector<int64_t> shape = {2, 4};
  std::vector<int64_t> strides = {4, 1};
  int deletes = 0;
  DLManagedTensor legacy{};
  DLManagedTensorVersioned versioned{};

  Producer() {
    DLTensor t{};
    t.data = data.data();
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = 2;
    t.dtype = DLDataType{kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = strides.data();
    legacy.dl_tensor = t;
    legacy.manager_ctx = this;
    legacy.deleter = [](DLManagedTensor* self) {
      ++static_cast<Producer*>(self->manager_ctx)->deletes;
    };
    versioned.version = DLPackVersion{1, 0};
    versioned.dl_tensor = t;
    versioned.manager_ctx = this;
    versioned.deleter = [](DLManagedTensorVersioned* self) {
      ++static_cast<Producer*>(self->manager_ctx)->deletes;
    };
  }
};

// Both import entries on the same corruption of the DLTensor: each must fail with a ValueError
// whose message contains `expected`, leave `out` untouched and not call the deleter.
template <typename Corrupt>
void ExpectBothRefused(Corrupt corrupt, const std::string& expected) {
  for (bool use_versioned : {false, true}) {
    SCOPED_TRACE(use_versioned ? "versioned" : "legacy");
    Producer producer;
    corrupt(use_versioned ? producer.versioned.dl_tensor : producer.legacy.dl_tensor);
    TVMFFIObjectHandle out = nullptr;
    const int rc = use_versioned ? TVMFFITensorFromDLPackVersioned(&producer.versioned, 0, 0, &out)
                                 : TVMFFITensorFromDLPack(&producer.legacy, 0, 0, &out);
    if (rc == 0) {
      ADD_FAILURE() << "accepted; expected an error containing: " << expected;
      TVMFFIObjectDecRef(out);
      continue;
    }
    Error error = Error::MoveFromRaised();
    EXPECT_EQ(error.kind(), "ValueError");
    EXPECT_NE(error.message().find(expected), std::string::npos) << error.message();
    EXPECT_EQ(out, nullptr);
    EXPECT_EQ(producer.deletes, 0) << "a refused producer keeps its struct";
  }
}

TEST(DLPackImportTest, HugeNdimIsRefusedBeforeTheShapeIsRead) {
  // 2**30 dimensions over a 2-entry shape array: copying them would read 8 GiB past it.
  ExpectBothRefused([](DLTensor& t) { t.ndim = 1 << 30; },
                    "ndim 1073741824 is more than the 64 dimensions ffijit accepts");
  ExpectBothRefused([](DLTensor& t) { t.ndim = INT32_MAX; }, "more than the 64 dimensions");
}

TEST(DLPackImportTest, NdimAboveTheBoundIsRefusedEvenWithHonestArrays) {
  std::vector<int64_t> ones(100, 1), unit(100, 1);
  ExpectBothRefused(
      [&](DLTensor& t) {
        t.ndim = 100;
        t.shape = ones.data();
        t.strides = unit.data();
      },
      "ndim 100 is more than the 64 dimensions");
  // 64 is accepted.
  Producer producer;
  std::vector<int64_t> shape(64, 1), strides(64, 1);
  producer.legacy.dl_tensor.ndim = 64;
  producer.legacy.dl_tensor.shape = shape.data();
  producer.legacy.dl_tensor.strides = strides.data();
  Tensor tensor = Tensor::FromDLPack(&producer.legacy);
  EXPECT_EQ(tensor.ndim(), 64);
  EXPECT_EQ(tensor.numel(), 1);
}

TEST(DLPackImportTest, NegativeNdimAndNullShapeAreRefused) {
  ExpectBothRefused([](DLTensor& t) { t.ndim = -1; }, "negative ndim -1");
  ExpectBothRefused([](DLTensor& t) { t.shape = nullptr; }, "shape is NULL but ndim is 2");
}

TEST(DLPackImportTest, NegativeDimensionsAreRefused) {
  std::vector<int64_t> shape = {2, -4};
  ExpectBothRefused([&](DLTensor& t) { t.shape = shape.data(); },
                    "negative dimension -4 at axis 1");
}

TEST(DLPackImportTest, NullDataIsRefusedUnlessTheTensorIsEmpty) {
  ExpectBothRefused([](DLTensor& t) { t.data = nullptr; },
                    "data is NULL but the tensor has 8 elements");
  // DLPack allows NULL data for a tensor with no elements.
  Producer producer;
  std::vector<int64_t> shape = {0, 4};
  producer.versioned.dl_tensor.data = nullptr;
  producer.versioned.dl_tensor.shape = shape.data();
  Tensor tensor = Tensor::FromDLPackVersioned(&producer.versioned);
  EXPECT_EQ(tensor.numel(), 0);
  EXPECT_EQ(tensor.data(), nullptr);
}

TEST(DLPackImportTest, StridesWhoseByteExtentOverflowsAreRefused) {
  std::vector<int64_t> huge = {int64_t{1} << 62, 1};
  ExpectBothRefused([&](DLTensor& t) { t.strides = huge.data(); }, "byte extent overflows");
  std::vector<int64_t> most = {INT64_MAX, 1};
  ExpectBothRefused([&](DLTensor& t) { t.strides = most.data(); }, "byte extent overflows");
  std::vector<int64_t> least = {INT64_MIN, 1};
  ExpectBothRefused([&](DLTensor& t) { t.strides = least.data(); }, "byte extent overflows");
  // In int64 elements but not in bytes (x4 for float32).
  std::vector<int64_t> bytes = {int64_t{1} << 61, 1};
  ExpectBothRefused([&](DLTensor& t) { t.strides = bytes.data(); }, "byte extent overflows");
  // A shape whose element count overflows int64, with compact strides; and the same with a zero
  // dimension (empty, but a reader multiplying the other dimensions first would overflow).
  std::vector<int64_t> shape = {int64_t{1} << 40, int64_t{1} << 40};
  ExpectBothRefused(
      [&](DLTensor& t) {
        t.shape = shape.data();
        t.strides = nullptr;
      },
      "the shape's element count overflows (dimension 1099511627776 at axis 1)");
  std::vector<int64_t> empty = {int64_t{1} << 40, int64_t{1} << 40, 0};
  ExpectBothRefused(
      [&](DLTensor& t) {
        t.ndim = 3;
        t.shape = empty.data();
        t.strides = nullptr;
      },
      "the shape's element count overflows");
  // In bytes only: 2**61 float32s.
  std::vector<int64_t> big = {int64_t{1} << 61, 1};
  ExpectBothRefused(
      [&](DLTensor& t) {
        t.shape = big.data();
        t.strides = nullptr;
      },
      "byte extent overflows");
  ExpectBothRefused([](DLTensor& t) { t.byte_offset = uint64_t{1} << 63; }, "byte_offset");
  // A negative stride that reaches below address 0.
  std::vector<int64_t> backwards = {-(int64_t{1} << 60), 1};
  ExpectBothRefused([&](DLTensor& t) { t.strides = backwards.data(); }, "byte extent overflows");
}

TEST(DLPackImportTest, HonestNegativeStridesAreAccepted) {
  Producer producer;
  std::vector<int64_t> reversed = {-4, 1};
  producer.legacy.dl_tensor.data = producer.data.data() + 4;  // the last row first
  producer.legacy.dl_tensor.strides = reversed.data();
  Tensor tensor = Tensor::FromDLPack(&producer.legacy);
  EXPECT_EQ(tensor.strides(), std::vector<int64_t>({-4, 1}));
}

TEST(DLPackImportTest, DataTypesWithoutStorageAreRefused) {
  ExpectBothRefused([](DLTensor& t) { t.dtype.bits = 0; }, "data type with no storage (bits 0");
  ExpectBothRefused([](DLTensor& t) { t.dtype.lanes = 0; }, "lanes 0");
}

TEST(DLPackImportTest, TheVersionIsCheckedBeforeAnythingElse) {
  Producer producer;
  producer.versioned.version = DLPackVersion{0, 8};
  producer.versioned.dl_tensor.ndim = 1 << 30;  // would be refused too, but later
  producer.versioned.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  TVMFFIObjectHandle out = nullptr;
  ASSERT_EQ(TVMFFITensorFromDLPackVersioned(&producer.versioned, 0, 0, &out), -1);
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("unsupported DLPack major version 0"), std::string::npos)
      << error.message();
  producer.versioned.version = DLPackVersion{2, 0};
  ASSERT_EQ(TVMFFITensorFromDLPackVersioned(&producer.versioned, 0, 0, &out), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("major version 2"), std::string::npos);
  EXPECT_EQ(producer.deletes, 0);
}

TEST(DLPackImportTest, ReadOnlyTensorsAreRefused) {
  Producer producer;
  producer.versioned.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  TVMFFIObjectHandle out = nullptr;
  ASSERT_EQ(TVMFFITensorFromDLPackVersioned(&producer.versioned, 0, 0, &out), -1);
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("read-only"), std::string::npos) << error.message();
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(producer.deletes, 0);
  // The C++ API goes through the same check.
  EXPECT_THROW(Tensor::FromDLPackVersioned(&producer.versioned), Error);
  EXPECT_EQ(producer.deletes, 0);
  // Other flags (a copy) are fine.
  producer.versioned.flags = DLPACK_FLAG_BITMASK_IS_COPIED;
  Tensor tensor = Tensor::FromDLPackVersioned(&producer.versioned);
  EXPECT_EQ(tensor.numel(), 8);
  tensor = Tensor();
  EXPECT_EQ(producer.deletes, 1);
}

TEST(DLPackImportTest, EmptyRefusesHugeNdimBeforeReadingTheShape) {
  int64_t shape[2] = {2, 3};
  TVMFFIObjectHandle out = nullptr;
  ASSERT_EQ(FFIJITTensorCreateEmpty(shape, 1 << 30, DLDataType{kDLFloat, 32, 1},
                                    DLDevice{kDLCPU, 0}, &out),
            -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("more than the 64 dimensions"),
            std::string::npos);
}

}  // namespace
}  // namespace ffijit
