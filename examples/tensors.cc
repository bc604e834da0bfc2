// DLPack tensors into native code. A producer (here: this file, standing in for a framework) hands
// over a DLManagedTensor; ffijit::Tensor::FromDLPack adopts it, and native functions taking
// DLTensor* receive it after ffijit checked the element type, rank and static dims their ndarray
// signature declares. A tensor of the wrong shape is a ValueError, never a wild read.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "ffijit/ffijit.h"
#include "ffijit/jit/register.h"

namespace {

// ---- The producer side: a row-major float32 matrix in a DLManagedTensor. ----

struct Matrix {
  std::vector<float> values;
  int64_t shape[2];
  DLManagedTensor managed;
  int* deleted;  // counts deleter runs, to show the hand-over
};

DLManagedTensor* MakeMatrix(int64_t rows, int64_t cols, int* deleted) {
  auto* m =
      new Matrix{std::vector<float>(static_cast<size_t>(rows * cols)), {rows, cols}, {}, deleted};
  for (size_t i = 0; i < m->values.size(); ++i) m->values[i] = static_cast<float>(i + 1);
  DLTensor& t = m->managed.dl_tensor;
  t.data = m->values.data();
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = 2;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = m->shape;
  t.strides = nullptr;  // compact, row-major
  t.byte_offset = 0;
  m->managed.manager_ctx = m;
  m->managed.deleter = [](DLManagedTensor* self) {
    auto* owner = static_cast<Matrix*>(self->manager_ctx);
    ++*owner->deleted;
    delete owner;
  };
  return &m->managed;
}

// ---- The native side: plain C functions over DLTensor*. ----

// Sum of an (n, 3) float32 matrix, honouring strides (a Tensor always carries them).
double SumRowsOf3(DLTensor* t) {
  const float* data = static_cast<const float*>(t->data);
  double sum = 0;
  for (int64_t r = 0; r < t->shape[0]; ++r) {
    for (int64_t c = 0; c < 3; ++c) {
      sum += data[t->strides ? r * t->strides[0] + c * t->strides[1] : r * 3 + c];
    }
  }
  return sum;
}

// Scales a compact float32 tensor of any rank in place.
void ScaleInPlace(DLTensor* t, float k) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  float* data = static_cast<float*>(t->data);
  for (int64_t i = 0; i < n; ++i) data[i] *= k;
}

int failures = 0;

void Expect(bool ok, const char* what) {
  std::printf("  %s %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) ++failures;
}

template <typename F>
void ExpectValueError(F call) {
  try {
    call();
    Expect(false, "a ValueError was expected");
  } catch (const ffijit::Error& e) {
    std::printf("  -> %s: %s\n", e.kind().c_str(), e.message().c_str());
    if (e.kind() != "ValueError") ++failures;
  }
}

}  // namespace

int main() {
  using ffijit::DataType;
  using ffijit::Tensor;

  // ndarray<f32,[?,3]>: rank 2, any number of rows, exactly 3 columns. ["ndarray", f32, 1, null]
  // would be a vector of any length; a null element type would accept any dtype.
  ffijit::Function sum_rows = ffijit::MakeFunction(
      "sum_rows", reinterpret_cast<void*>(&SumRowsOf3),
      R"({"a":[["ndarray","f32",2,null,3]],"r":["f64"]})", ffijit::MetadataFormat::kJson);
  ffijit::Function scale = ffijit::MakeFunction(
      "scale", reinterpret_cast<void*>(&ScaleInPlace),
      R"({"a":[["ndarray","f32",2,null,null],"f32"],"r":[]})", ffijit::MetadataFormat::kJson);

  int deleted = 0;
  Tensor matrix = Tensor::FromDLPack(MakeMatrix(2, 3, &deleted));
  std::printf("imported a %s tensor of shape (%lld, %lld), strides (%lld, %lld)\n",
              matrix.dtype().ToString().c_str(), static_cast<long long>(matrix.shape()[0]),
              static_cast<long long>(matrix.shape()[1]),
              static_cast<long long>(matrix.strides()[0]),
              static_cast<long long>(matrix.strides()[1]));

  std::printf("calls:\n");
  Expect(sum_rows(matrix).cast<double>() == 21.0, "sum_rows(matrix 1..6) == 21");
  Expect(scale(matrix, 2.0).is_none(), "scale(matrix, 2.0) returns None");
  Expect(static_cast<const float*>(matrix.data())[5] == 12.0f, "the native wrote into the buffer");
  Expect(sum_rows(matrix).cast<double>() == 42.0, "sum_rows after scaling == 42");

  // A borrowed DLTensor* (type index DLTensorPtr) works too: no Tensor object needed.
  TVMFFIAny view{};
  view.type_index = kTVMFFIDLTensorPtr;
  view.v_ptr = const_cast<DLTensor*>(matrix.dl_tensor());
  Expect(sum_rows.CallPacked(&view, 1).cast<double>() == 42.0, "sum_rows(<DLTensor* view>) == 42");

  std::printf("mismatches are ValueErrors naming what came:\n");
  ExpectValueError([&] { sum_rows(Tensor::Empty({3, 2}, DataType::Float(32))); });  // 2 columns
  ExpectValueError([&] { sum_rows(Tensor::Empty({2, 3}, DataType::Float(64))); });  // float64
  ExpectValueError([&] { sum_rows(Tensor::Empty({6}, DataType::Float(32))); });     // rank 1

  // Ownership: the producer's deleter runs once, when the last reference is gone. An export to
  // another DLPack consumer is such a reference.
  std::printf("lifetime:\n");
  DLManagedTensor* exported = matrix.ToDLPack();
  matrix = Tensor();
  Expect(deleted == 0, "still alive while the exported DLManagedTensor is");
  exported->deleter(exported);
  Expect(deleted == 1, "the producer's deleter ran exactly once");

  std::printf(failures == 0 ? "done\n" : "FAILED\n");
  return failures == 0 ? 0 : 1;
}
