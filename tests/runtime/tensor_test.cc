// Tensors: DLPack import/export round trips (legacy and versioned) with the producer's deleter
// counted, NULL strides, alignment/contiguity checks, CPU allocation, unsafe views (v0.1.13).
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

// Versioned exports carry the revision's DLPack version; on v0.1.13 every call makes a fresh
// struct (the tensor has no cache), on e98b94e1 every call returns the one cached at +88.
TEST(TensorTest, VersionedExportsCarryTheRevisionsDlpackVersion) {
  Tensor tensor = Tensor::Empty({2}, DataType::Float(32));
  DLManagedTensorVersioned* first = tensor.ToDLPackVersioned();
  DLManagedTensorVersioned* second = tensor.ToDLPackVersioned();
  EXPECT_EQ(first->version.major, uint32_t{FFIJIT_DLPACK_MAJOR});
  EXPECT_EQ(first->version.minor, uint32_t{FFIJIT_DLPACK_MINOR});
  EXPECT_EQ(first->flags, 0u);
  EXPECT_EQ(first->manager_ctx, tensor.get());
  EXPECT_EQ(first->dl_tensor.data, tensor.data());
  EXPECT_EQ(FFIJITHeaderStrongCount(tensor.get()), 3u) << "one reference per export";
#if FFIJIT_TVM_FFI_TENSOR_OBJECT_SIZE == 72
  EXPECT_NE(first, second) << "no export cache on v0.1.13";
#else
  EXPECT_EQ(first, second) << "the export cached at +88";
#endif
  first->deleter(first);
  second->deleter(second);
  EXPECT_EQ(FFIJITHeaderStrongCount(tensor.get()), 1u);
}

// Whatever the producer gave, a tensor always has explicit strides (v0.1.13's header code
// requires them whenever ndim > 0), and 0-d tensors have non-NULL arrays too.
TEST(TensorTest, StridesAreNeverNull) {
  Producer producer;
  Tensor tensor = Tensor::FromDLPackVersioned(producer.Versioned());
  ASSERT_NE(tensor.dl_tensor()->strides, nullptr);
  EXPECT_EQ(tensor.strides(), std::vector<int64_t>({12, 4, 1}));
  Producer scalar_producer;
  scalar_producer.shape = {};
  Tensor scalar = Tensor::FromDLPack(scalar_producer.Legacy());
  EXPECT_EQ(scalar.ndim(), 0);
  EXPECT_NE(scalar.dl_tensor()->shape, nullptr);
  EXPECT_NE(scalar.dl_tensor()->strides, nullptr);
  EXPECT_EQ(scalar.numel(), 1);
}

#if FFIJIT_TVM_FFI_TENSOR_OBJECT_SIZE == 72
// v0.1.13's TensorObj is the header and the DLTensor (+24..+72) only: ffijit keeps shape and
// strides as one inline array after its object, and header code reads them through the DLTensor.
TEST(TensorLayoutTest, DLTensorAt24WithShapeAndStridesInline) {
  Tensor tensor = Tensor::Empty({2, 3}, DataType::Float(32));
  auto* dl = reinterpret_cast<DLTensor*>(reinterpret_cast<char*>(tensor.get()) + 24);
  EXPECT_EQ(dl, tensor.dl_tensor());
  EXPECT_EQ(dl->ndim, 2);
  EXPECT_EQ(dl->strides, dl->shape + 2) << "strides follow shape";
  EXPECT_GT(reinterpret_cast<char*>(dl->shape), reinterpret_cast<char*>(tensor.get()) + 72);
  EXPECT_EQ(dl->shape[1], 3);
  EXPECT_EQ(dl->strides[0], 3);
}

// A tensor made by header code (TensorObjFromNDAlloc-style: a 72-byte object of its own with
// shape and strides after it) exported through ffijit: each export is a fresh struct holding one
// reference, and nothing is written into the object past its DLTensor.
struct HeaderStyleTensor {
  TVMFFIObject header;
  DLTensor tensor;
  int64_t dims[4];  // shape[2] then strides[2]
  uint64_t after_end = 0xA5A5A5A5A5A5A5A5u;
};

TEST(TensorLayoutTest, TensorsMadeByHeaderCodeExportThroughFfijit) {
  float values[] = {1, 2, 3, 4};
  HeaderStyleTensor t{};
  FFIJITHeaderInit(&t.header, kTVMFFITensor, nullptr);
  FFIJITHeaderIncStrong(&t.header);  // lives on this frame: never released to zero
  t.dims[0] = 2;
  t.dims[1] = 2;
  t.dims[2] = 2;
  t.dims[3] = 1;
  t.tensor.data = values;
  t.tensor.device = DLDevice{kDLCPU, 0};
  t.tensor.ndim = 2;
  t.tensor.dtype = DLDataType{kDLFloat, 32, 1};
  t.tensor.shape = t.dims;
  t.tensor.strides = t.dims + 2;
  Tensor view(ObjectPtr<>::Adopt(&t.header));
  EXPECT_EQ(view.shape(), std::vector<int64_t>({2, 2}));
  EXPECT_EQ(view.strides(), std::vector<int64_t>({2, 1}));
  DLManagedTensor* legacy = view.ToDLPack();
  EXPECT_EQ(legacy->dl_tensor.data, values);
  DLManagedTensorVersioned* first = view.ToDLPackVersioned();
  DLManagedTensorVersioned* second = view.ToDLPackVersioned();
  EXPECT_NE(first, second);
  EXPECT_EQ(first->version.minor, uint32_t{FFIJIT_DLPACK_MINOR});
  EXPECT_EQ(first->dl_tensor.strides, t.dims + 2);
  EXPECT_EQ(FFIJITHeaderStrongCount(&t.header), 5u);
  legacy->deleter(legacy);
  first->deleter(first);
  second->deleter(second);
  EXPECT_EQ(FFIJITHeaderStrongCount(&t.header), 2u);
  EXPECT_EQ(t.after_end, 0xA5A5A5A5A5A5A5A5u);
  view = Tensor();
}
#endif

#if FFIJIT_TVM_FFI_HAS_TENSOR_UNSAFE_VIEW
// A view of the second row of a 2x3x4 producer tensor, as a 3x4 tensor.
DLTensor SecondRow(Producer& producer, bool with_strides) {
  static int64_t row_shape[] = {3, 4};
  static int64_t row_strides[] = {4, 1};
  DLTensor row = producer.View();
  row.data = producer.data.data() + 12;
  row.ndim = 2;
  row.shape = row_shape;
  row.strides = with_strides ? row_strides : nullptr;
  return row;
}

TEST(TensorUnsafeViewTest, CopiesTheMetadataAndKeepsTheSourceAlive) {
  Producer producer;
  producer.data[12] = 7.0f;
  TVMFFIObjectHandle view_handle = nullptr;
  {
    Tensor source = Tensor::FromDLPack(producer.Legacy());
    DLTensor row = SecondRow(producer, /*with_strides=*/true);
    row.byte_offset = 0;
    ASSERT_EQ(TVMFFITensorCreateUnsafeView(source.get(), &row, &view_handle), 0);
    EXPECT_EQ(FFIJITHeaderStrongCount(source.get()), 2u) << "the view holds one reference";
  }
  EXPECT_EQ(producer.deletes, 0) << "the source lives as long as its view";
  Tensor view(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(view_handle)));
  EXPECT_EQ(view.get()->type_index, kTVMFFITensor);
  EXPECT_EQ(view.ndim(), 2);
  EXPECT_EQ(view.shape(), std::vector<int64_t>({3, 4}));
  EXPECT_EQ(view.strides(), std::vector<int64_t>({4, 1}));
  EXPECT_EQ(view.data(), producer.data.data() + 12);
  EXPECT_EQ(static_cast<const float*>(view.data())[0], 7.0f);
  EXPECT_EQ(view.dtype(), DataType::Float(32));
  EXPECT_EQ(view.device(), Device(kDLCPU, 0));
  // Shape and strides are the view's own copies, not the prototype's arrays.
  DLTensor row = SecondRow(producer, true);
  EXPECT_NE(view.dl_tensor()->shape, row.shape);
  EXPECT_NE(view.dl_tensor()->strides, row.strides);
  view = Tensor();
  EXPECT_EQ(producer.deletes, 1) << "released with the view";
}

TEST(TensorUnsafeViewTest, NullPrototypeStridesBecomeCompactAndAnyObjectCanBeTheSource) {
  Producer producer;
  Array owner{1, 2};  // the source need not be a tensor
  DLTensor row = SecondRow(producer, /*with_strides=*/false);
  row.byte_offset = 8;
  TVMFFIObjectHandle handle = nullptr;
  ASSERT_EQ(TVMFFITensorCreateUnsafeView(owner.get(), &row, &handle), 0);
  Tensor view(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle)));
  ASSERT_NE(view.dl_tensor()->strides, nullptr);
  EXPECT_EQ(view.strides(), std::vector<int64_t>({4, 1}));
  EXPECT_EQ(view.dl_tensor()->byte_offset, 8u);
  EXPECT_EQ(FFIJITHeaderStrongCount(owner.get()), 2u);
  view = Tensor();
  EXPECT_EQ(FFIJITHeaderStrongCount(owner.get()), 1u);
}

TEST(TensorUnsafeViewTest, NullArgumentsAndBadPrototypesAreValueErrors) {
  Producer producer;
  Tensor source = Tensor::FromDLPack(producer.Legacy());
  DLTensor row = SecondRow(producer, true);
  TVMFFIObjectHandle out = nullptr;
  EXPECT_EQ(TVMFFITensorCreateUnsafeView(nullptr, &row, &out), -1);
  Error no_source = Error::MoveFromRaised();
  EXPECT_EQ(no_source.kind(), "ValueError");
  EXPECT_NE(no_source.message().find("source"), std::string::npos) << no_source.message();
  EXPECT_EQ(TVMFFITensorCreateUnsafeView(source.get(), nullptr, &out), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("prototype"), std::string::npos);
  EXPECT_EQ(TVMFFITensorCreateUnsafeView(source.get(), &row, nullptr), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  row.ndim = -2;
  EXPECT_EQ(TVMFFITensorCreateUnsafeView(source.get(), &row, &out), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("negative ndim"), std::string::npos);
  row.ndim = 2;
  row.shape = nullptr;
  EXPECT_EQ(TVMFFITensorCreateUnsafeView(source.get(), &row, &out), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("shape is NULL"), std::string::npos);
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(FFIJITHeaderStrongCount(source.get()), 1u) << "failures take no reference";
}
#endif

}  // namespace
}  // namespace ffijit
