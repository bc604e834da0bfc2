// Tensors: DLPack import/export round trips (legacy and versioned) with the producer's deleter
// counted, NULL strides, alignment/contiguity checks, CPU allocation.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ffijit/ffijit.h"

namespace ffijit {
namespace {

// A producer-side tensor: owns its buffers and counts deleter calls.
struct Producer {
  std::vector<float> data = std::vector<float>(24, 1.0f);
  std::vector<int64_t> shape = {2, 3, 4};
  std::vector<int64_t> strides;
  int deletes = 0;
  DLManagedTensor managed{};
  DLManagedTensorVersioned versioned{};

  DLTensor View() {
    DLTensor t{};
    t.data = data.data();
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = DLDataType{kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    return t;
  }
  DLManagedTensor* Legacy() {
    managed.dl_tensor = View();
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) {
      ++static_cast<Producer*>(self->manager_ctx)->deletes;
    };
    return &managed;
  }
  DLManagedTensorVersioned* Versioned() {
    versioned.version = DLPackVersion{1, 0};
    versioned.dl_tensor = View();
    versioned.manager_ctx = this;
    versioned.deleter = [](DLManagedTensorVersioned* self) {
      ++static_cast<Producer*>(self->manager_ctx)->deletes;
    };
    return &versioned;
  }
};

TEST(TensorTest, LegacyImportFillsCompactStridesAndDeletesOnce) {
  Producer producer;
  {
    Tensor tensor = Tensor::FromDLPack(producer.Legacy());
    EXPECT_EQ(tensor.ndim(), 3);
    EXPECT_EQ(tensor.shape(), std::vector<int64_t>({2, 3, 4}));
    EXPECT_EQ(tensor.strides(), std::vector<int64_t>({12, 4, 1}));  // NULL strides = compact
    EXPECT_EQ(tensor.dtype(), DataType::Float(32));
    EXPECT_EQ(tensor.data(), producer.data.data());
    EXPECT_EQ(tensor.numel(), 24);
    // The shape is the tensor's own copy: the producer may reuse its array.
    EXPECT_NE(tensor.dl_tensor()->shape, producer.shape.data());
    Tensor copy = tensor;
    EXPECT_EQ(producer.deletes, 0);
  }
  EXPECT_EQ(producer.deletes, 1);
}

TEST(TensorTest, RoundTripThroughBothExportFormsDeletesProducerExactlyOnce) {
  Producer producer;
  DLManagedTensor* legacy_out = nullptr;
  DLManagedTensorVersioned* versioned_out = nullptr;
  {
    Tensor tensor = Tensor::FromDLPackVersioned(producer.Versioned());
    legacy_out = tensor.ToDLPack();
    versioned_out = tensor.ToDLPackVersioned();
  }
  EXPECT_EQ(producer.deletes, 0);  // the exports keep the tensor alive
  EXPECT_EQ(versioned_out->version.major, 1u);
  EXPECT_EQ(versioned_out->dl_tensor.data, producer.data.data());
  EXPECT_EQ(legacy_out->dl_tensor.shape[2], 4);
  EXPECT_EQ(legacy_out->dl_tensor.strides[0], 12);

  // A consumer imports the legacy export: a tensor of a tensor, still one producer delete.
  Tensor reimported = Tensor::FromDLPack(legacy_out);
  EXPECT_EQ(reimported.data(), producer.data.data());
  versioned_out->deleter(versioned_out);
  EXPECT_EQ(producer.deletes, 0);
  reimported = Tensor();
  EXPECT_EQ(producer.deletes, 1);
}

TEST(TensorTest, ContiguityAndAlignmentRequirements) {
  Producer producer;
  producer.strides = {1, 2, 6};  // column-major: not compact
  EXPECT_THROW(Tensor::FromDLPack(producer.Legacy(), 0, true), Error);
  EXPECT_EQ(producer.deletes, 0);  // failure leaves ownership with the producer
  {
    Tensor tensor = Tensor::FromDLPack(producer.Legacy(), 0, false);
    EXPECT_EQ(tensor.strides(), std::vector<int64_t>({1, 2, 6}));
  }
  EXPECT_EQ(producer.deletes, 1);

  Producer misaligned;
  DLManagedTensor* managed = misaligned.Legacy();
  managed->dl_tensor.byte_offset = 2;
  try {
    Tensor::FromDLPack(managed, 4, false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "ValueError");
    EXPECT_NE(e.message().find("aligned to 4"), std::string::npos);
  }
  EXPECT_EQ(misaligned.deletes, 0);

  Producer size_one;
  size_one.shape = {1, 4};
  size_one.strides = {99, 1};  // the stride of a size-1 dimension does not matter
  EXPECT_NO_THROW(Tensor::FromDLPack(size_one.Legacy(), 0, true));
  EXPECT_EQ(size_one.deletes, 1);
}

TEST(TensorTest, BadImportsAreErrors) {
  TVMFFIObjectHandle out = nullptr;
  EXPECT_EQ(TVMFFITensorFromDLPack(nullptr, 0, 0, &out), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  Producer producer;
  DLManagedTensor* managed = producer.Legacy();
  managed->dl_tensor.ndim = -1;
  EXPECT_EQ(TVMFFITensorFromDLPack(managed, 0, 0, &out), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("negative ndim"), std::string::npos);
  managed->dl_tensor.ndim = 2;
  managed->dl_tensor.shape = nullptr;
  EXPECT_EQ(TVMFFITensorFromDLPack(managed, 0, 0, &out), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("shape is NULL"), std::string::npos);
  DLManagedTensorVersioned* versioned = producer.Versioned();
  versioned->version.major = 2;
  EXPECT_EQ(TVMFFITensorFromDLPackVersioned(versioned, 0, 0, &out), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("major version 2"), std::string::npos);
  EXPECT_EQ(producer.deletes, 0);
  Array not_a_tensor{1};
  DLManagedTensor* exported = nullptr;
  EXPECT_EQ(TVMFFITensorToDLPack(not_a_tensor.get(), &exported), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "TypeError");
  EXPECT_EQ(TVMFFITensorToDLPackVersioned(nullptr, nullptr), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
}

TEST(TensorTest, EmptyAllocatesCompactZeroedCpuStorage) {
  Tensor tensor = Tensor::Empty({3, 5}, DataType::Int(32));
  EXPECT_EQ(tensor.shape(), std::vector<int64_t>({3, 5}));
  EXPECT_EQ(tensor.strides(), std::vector<int64_t>({5, 1}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor.data()) % 64, 0u);
  const int32_t* values = static_cast<const int32_t*>(tensor.data());
  for (int i = 0; i < 15; ++i) EXPECT_EQ(values[i], 0);
  Tensor scalar = Tensor::Empty({}, DataType::Float(64));
  EXPECT_EQ(scalar.ndim(), 0);
  Any any(tensor);
  EXPECT_EQ(any.cast<Tensor>().data(), tensor.data());
  try {
    Tensor::Empty({2}, DataType::Float(32), Device(kDLCUDA, 0));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("cuda:0"), std::string::npos);
  }
  EXPECT_THROW(Tensor::Empty({-1}, DataType::Float(32)), Error);
  EXPECT_THROW(Tensor::Empty({int64_t{1} << 40, int64_t{1} << 40}, DataType::Float(32)), Error);
}

}  // namespace
}  // namespace ffijit
