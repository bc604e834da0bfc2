// Caller-provided output storage (IREE's `iree.abi.output`): the native gets the storage as a
// tensor argument and writes the result into it; the packed result is the storage the caller
// passed, on every executor (interpreter stub and libffi, stencil, cold and hot thunks); the
// entries that cannot hand an argument back refuse such functions by name.
#include <string>
#include <vector>

#include "catch_error.h"
#include "ffijit/container.h"
#include "ffijit/reflect/metadata.h"
#include "ffijit/tensor.h"
#include "jit/interp_test_util.h"
#include "plan/call_plan.h"
#include "plan/host_forms.h"
#include "stencils/thunks/stencil_tier.h"

namespace ffijit::testing {
namespace {

using ffijit_tests::CatchError;

// IREE's own declaration (its WrapEntryPoints lit test): result 1 is written into argument 1.
constexpr const char* kIree =
    "sync func @outputStorage(%input0: tensor<?x8x8x3xf32>, %input1: !hal.buffer "
    "{iree.abi.output = 1 : index}) -> (%output0: tensor<?x8x8x3xf32>, %output1: "
    "tensor<?x8x8x3xf32>)";
// One result, written into a keyword argument's storage.
constexpr const char* kFill =
    "sync func @fill(%input0: f32, %dst: !hal.buffer {iree.abi.output = 0 : index}) -> "
    "(%output0: tensor<?xf32>)";

// Result 0 of output_storage: the tensor the native hands over.
Tensor g_sum;

int64_t Numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

extern "C" {
// IREE's test function: result 0 = input + input (returned), result 1 = result 0 + input (into
// the storage).
TVMFFIObject* output_storage(DLTensor* input, DLTensor* storage) {
  const auto* in = static_cast<const float*>(input->data);
  auto* sum = static_cast<float*>(g_sum.data());
  auto* out = static_cast<float*>(storage->data);
  for (int64_t i = 0; i < Numel(input); ++i) {
    sum[i] = in[i] + in[i];
    out[i] = sum[i] + in[i];
  }
  details::IncRef(g_sum.get());
  return g_sum.get();
}
void fill(float value, DLTensor* dst) {
  auto* out = static_cast<float*>(dst->data);
  for (int64_t i = 0; i < Numel(dst); ++i) out[i] = value;
}
}

Tensor Filled(std::vector<int64_t> shape, DLDataType dtype, float value) {
  Tensor t = Tensor::Empty(shape, dtype);
  if (dtype.code == kDLFloat) {
    auto* data = static_cast<float*>(t.data());
    for (int64_t i = 0; i < t.numel(); ++i) data[i] = value + static_cast<float>(i);
  }
  return t;
}

TVMFFIAny Float(double v) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIFloat;
  a.v_float64 = v;
  return a;
}

class OutputStorageTest : public ::testing::TestWithParam<CallPath> {
 protected:
  void SetUp() override { g_sum = Tensor::Empty({2, 8, 8, 3}, DataType::Float(32)); }
  void TearDown() override { g_sum = Tensor(); }
};

TEST_P(OutputStorageTest, IreeDeclarationWritesIntoTheCallersStorage) {
  Function f = Bind("outputStorage", output_storage, ParseDeclaration(kIree), GetParam());
  Tensor input = Filled({2, 8, 8, 3}, DataType::Float(32), 1);
  Tensor storage = Filled({2, 8, 8, 3}, DataType::Float(32), -100);
  {
    Array r = Call(f, {input, storage}).cast<Array>();
    ASSERT_EQ(r.size(), 2);
    // Result 1 is the storage itself (one more reference, the Array's); result 0 the native's.
    EXPECT_EQ(r[1].cast<Tensor>().get(), storage.get());
    EXPECT_EQ(r[0].cast<Tensor>().get(), g_sum.get());
    EXPECT_EQ(storage.use_count(), 2);
    EXPECT_EQ(g_sum.use_count(), 2);
    const auto* out = static_cast<const float*>(storage.data());
    for (int64_t i = 0; i < storage.numel(); ++i) {
      ASSERT_EQ(out[i], 3.0f * (1.0f + static_cast<float>(i))) << i;
    }
  }
  EXPECT_EQ(storage.use_count(), 1);
  EXPECT_EQ(g_sum.use_count(), 1);
  EXPECT_EQ(input.use_count(), 1);
}

TEST_P(OutputStorageTest, TheOneResultIsTheStorageAsPassed) {
  Function f = Bind("fill", fill, ParseDeclaration(kFill), GetParam());
  Tensor dst = Filled({5}, DataType::Float(32), 0);
  {
    Any r = Call(f, {2.5, dst});
    ASSERT_EQ(r.type_index(), kTVMFFITensor);
    EXPECT_EQ(r.cast<Tensor>().get(), dst.get());
    EXPECT_EQ(static_cast<const float*>(dst.data())[4], 2.5f);
    EXPECT_EQ(dst.use_count(), 2);
  }
  EXPECT_EQ(dst.use_count(), 1);
  // By keyword, the same.
  Any by_keyword = CallWithKeywords(f, {AnyView(-4.0)}, {{"dst", AnyView(dst)}});
  EXPECT_EQ(by_keyword.cast<Tensor>().get(), dst.get());
  EXPECT_EQ(static_cast<const float*>(dst.data())[0], -4.0f);
}

TEST_P(OutputStorageTest, ADLTensorPtrComesBackAsTheSamePointer) {
  Function f = Bind("fill", fill, ParseDeclaration(kFill), GetParam());
  float data[3] = {0, 0, 0};
  int64_t shape[1] = {3};
  DLTensor dl{};
  dl.data = data;
  dl.device = DLDevice{kDLCPU, 0};
  dl.ndim = 1;
  dl.dtype = DLDataType{kDLFloat, 32, 1};
  dl.shape = shape;
  Any r = CallRaw(f, {Float(-1.5), RawPtr(kTVMFFIDLTensorPtr, &dl)});
  ASSERT_EQ(r.type_index(), kTVMFFIDLTensorPtr);
  EXPECT_EQ(r.raw().v_ptr, &dl);
  EXPECT_EQ(data[2], -1.5f);
}

TEST_P(OutputStorageTest, TheStorageIsCheckedAsResultNsType) {
  Function f = Bind("outputStorage", output_storage, ParseDeclaration(kIree), GetParam());
  Tensor input = Filled({2, 8, 8, 3}, DataType::Float(32), 1);
  const std::string decl =
      "`outputStorage(ndarray<f32,[?,8,8,3]>, ndarray<f32,[?,8,8,3]>) -> (ndarray<f32,[?,8,8,3]>, "
      "ndarray<f32,[?,8,8,3]>)`";
  Error e = CallError(f, {input, Filled({2, 8, 8, 3}, DataType::Int(32), 0)});
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(), "Mismatched tensor on argument #1 when calling: " + decl +
                             ". Expected `ndarray<f32,[?,8,8,3]>` but got an ndarray of int32 "
                             "with shape (2, 8, 8, 3)");
  e = CallError(f, {input, Filled({2, 8, 8}, DataType::Float(32), 0)});
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(), "Mismatched tensor on argument #1 when calling: " + decl +
                             ". Expected `ndarray<f32,[?,8,8,3]>` but got an ndarray of float32 "
                             "with ndim 3");
  e = CallError(f, {input, Any()});
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(), "Mismatched type on argument #1 when calling: " + decl +
                             ". Expected `ndarray<f32,[?,8,8,3]>` but got `None`");
  // Nothing was handed over by a call that never ran.
  EXPECT_EQ(g_sum.use_count(), 1);
}

INSTANTIATE_TEST_SUITE_P(Paths, OutputStorageTest, AllCallPaths(), PathName);

TEST(OutputStorage, DescribeNamesTheStorage) {
  Function f = Bind("outputStorage", output_storage, ParseDeclaration(kIree));
  EXPECT_EQ(DescribeFunction(f),
            "outputStorage(ndarray<f32,[?,8,8,3]>, ndarray<f32,[?,8,8,3]>) -> "
            "(ndarray<f32,[?,8,8,3]>, ndarray<f32,[?,8,8,3]>)\n"
            "  convention: plain, returns: gpr, registers: 2 gpr + 0 sse, stack slots: 0\n"
            "  arg #0 ndarray<f32,[?,8,8,3]>\n"
            "    param 0: DLTensor* <- #0 ndarray<f32,[?,8,8,3]> @ gpr[0]\n"
            "  arg #1 ndarray<f32,[?,8,8,3]>\n"
            "    param 1: DLTensor* <- #1 ndarray<f32,[?,8,8,3]> @ gpr[1]\n"
            "  result #0: DLTensor* ndarray<f32,[?,8,8,3]> (returned)\n"
            "  result #1: the output storage of arg #1\n");
}

TEST(OutputStorage, AMalformedSignatureIsRefusedAtRegistration) {
  Signature sig = ParseDeclaration(kFill);
  sig.output_storage = {-1, 1};
  Error e = CatchError([&] { Bind("fill", fill, sig); });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(),
            "malformed signature: argument #1 is the output storage of result 1, but there are 1 "
            "results");
  sig.output_storage = {0, -1};
  e = CatchError([&] { Bind("fill", fill, sig); });
  EXPECT_EQ(e.message(),
            "malformed signature: argument #0 `f32` is output storage but not an ndarray");
}

#if FFIJIT_HAVE_STENCILS
// The stencil tier calls a storage function as the interpreter does; IREE's function, whose
// tensors have static dims, is the interpreter's (as every such plan is).
TEST(OutputStorage, StencilTier) {
  ASSERT_TRUE(stencils::StencilsAvailable());
  // The stencils take positional arguments only.
  Function f =
      Bind("fill", fill,
           ParseDeclaration("sync func @fill(%input0: f32, %input1: !hal.buffer "
                            "{iree.abi.output = 0 : index}) -> (%output0: tensor<?xf32>)"));
  auto* bound = reinterpret_cast<BoundFunction*>(f.get());
  std::string why;
  stencils::StencilThunk* thunk = stencils::MakeStencilThunk(bound, false, &why);
  ASSERT_NE(thunk, nullptr) << why;
  Tensor dst = Filled({4}, DataType::Float(32), 0);
  std::vector<TVMFFIAny> args = {Float(7), TVMFFIAny{}};
  args[1].type_index = kTVMFFITensor;
  args[1].v_obj = dst.get();
  TVMFFIAny result{};
  ASSERT_EQ(stencils::StencilThunkEntry(thunk)(bound, args.data(), 2, &result), 0);
  EXPECT_EQ(result.type_index, kTVMFFITensor);
  EXPECT_EQ(result.v_obj, dst.get());
  EXPECT_EQ(static_cast<const float*>(dst.data())[3], 7.0f);
  EXPECT_EQ(dst.use_count(), 2);
  details::ReleaseAny(&result);
  EXPECT_EQ(dst.use_count(), 1);
  // A wrong storage: the interpreter's error, through the thunk's fallback.
  std::vector<TVMFFIAny> bad = {Float(1), TVMFFIAny{}};
  EXPECT_EQ(stencils::StencilThunkEntry(thunk)(bound, bad.data(), 2, &result), -1);
  const Error e = Error::MoveFromRaised();
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(),
            "Mismatched type on argument #1 when calling: `fill(f32, ndarray<f32,1>) -> "
            "ndarray<f32,1>`. Expected `ndarray<f32,1>` but got `None`");
  stencils::ReleaseStencilThunk(thunk);

  Function iree = Bind("outputStorage", output_storage, ParseDeclaration(kIree));
  EXPECT_EQ(stencils::StencilUnsupportedReason(*reinterpret_cast<BoundFunction*>(iree.get())->plan),
            "a tensor parameter with a static dim");
}
#endif  // FFIJIT_HAVE_STENCILS

// Entries that cannot hand a packed argument back refuse storage functions by name: host
// entries (Python's fast path, which then calls the packed function) and native callbacks.
TEST(OutputStorage, HostEntriesAndCallbacksRefuse) {
  const CallPlan plan = Lower(ParseDeclaration(kIree), "outputStorage");
  EXPECT_EQ(HostEntryUnsupportedReason(plan),
            "a result is written into argument #1's output storage (host entries box native "
            "results only)");
#if FFIJIT_HAVE_LLVM
  Function packed = Function::FromTyped([](int64_t x) { return x; });
  Error e =
      CatchError([&] { NativeCallback cb(packed, ParseDeclaration(kFill), JitEngine::Default()); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(),
            "Cannot make a native callback `callback(f32, dst: ndarray<f32,1>) -> ndarray<f32,1>`: "
            "a result is written into argument #1's output storage; callbacks return their "
            "results");
#endif
}

}  // namespace
}  // namespace ffijit::testing
