// The object layouts that code compiled from TVM FFI's C++ headers reads and writes inline
// (docs/guide/13-header-compiled-objects.md, "Objects that header-compiled code reads"): each test
// reads or calls an ffijit object only through the documented offsets, the way such code does.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ffijit/ffijit.h"
#include "tvm_header_style.h"

namespace ffijit {
namespace {

using ffijit_test::CallAt32;

TVMFFIAny IntArg(int64_t v) {
  TVMFFIAny any{};
  any.type_index = kTVMFFIInt;
  any.v_int64 = v;
  return any;
}

// ---- Function: the C++ `call` entry at +32 ----

TEST(HeaderLayoutFunction, CallEntryAt32RunsTypedFunction) {
  Function add = Function::FromTyped([](int64_t a, int64_t b) { return a + b; }, "add");
  TVMFFIAny args[] = {IntArg(40), IntArg(2)};
  TVMFFIAny result{};
  CallAt32(add.get(), args, 2, &result);
  EXPECT_EQ(result.type_index, kTVMFFIInt);
  EXPECT_EQ(result.v_int64, 42);
}

TEST(HeaderLayoutFunction, FailureIsThrownAsTvmFfiError) {
  Function add = Function::FromTyped([](int64_t a, int64_t b) { return a + b; }, "add");
  TVMFFIAny args[] = {IntArg(1)};
  TVMFFIAny result{};
  try {
    CallAt32(add.get(), args, 1, &result);
    FAIL() << "expected tvm::ffi::Error";
  } catch (const tvm::ffi::Error& err) {
    ASSERT_NE(err.get(), nullptr);
    EXPECT_EQ(err.get()->type_index, kTVMFFIError);
    EXPECT_EQ(err.kind(), "TypeError");
    EXPECT_NE(err.message().find("expected 2 but got 1"), std::string::npos) << err.message();
  }
  EXPECT_EQ(result.type_index, kTVMFFINone) << "a failed call leaves the result untouched";
  TVMFFIObjectHandle leftover = nullptr;
  TVMFFIErrorMoveFromRaised(&leftover);
  EXPECT_EQ(leftover, nullptr) << "the thrown error was moved out of the slot";
}

TEST(HeaderLayoutFunction, ThrownErrorIsAStdExceptionWithHeaderWhatText) {
  Function fail = Function::FromPacked(
      [](const AnyView*, int32_t, Any*) { throw Error("ValueError", "bad value", "tb-line\n"); });
  TVMFFIAny result{};
  try {
    CallAt32(fail.get(), nullptr, 0, &result);
    FAIL() << "expected an exception";
  } catch (const std::exception& e) {
#if FFIJIT_TVM_FFI_ERROR_WHAT_IS_MESSAGE
    EXPECT_EQ(std::string(e.what()), "bad value");  // v0.1: the full text is FullMessage()
#else
    EXPECT_EQ(std::string(e.what()),
              "Traceback (most recent call last):\ntb-line\nValueError: bad value\n");
#endif
  }
}

int ReturnMinus2(void*, const TVMFFIAny*, int32_t, TVMFFIAny*) {
  return -2;
}
int ReturnMinus1WithoutError(void*, const TVMFFIAny*, int32_t, TVMFFIAny*) {
  return -1;
}

TEST(HeaderLayoutFunction, StatusMinus2IsThrownAsEnvErrorAlreadySet) {
  Function f = Function::FromSafeCall(nullptr, ReturnMinus2, nullptr);
  TVMFFIAny result{};
  EXPECT_THROW(CallAt32(f.get(), nullptr, 0, &result), tvm::ffi::EnvErrorAlreadySet);
}

TEST(HeaderLayoutFunction, NonzeroStatusWithoutRaisedErrorStillThrowsARealError) {
  Function f = Function::FromSafeCall(nullptr, ReturnMinus1WithoutError, nullptr);
  TVMFFIAny result{};
  try {
    CallAt32(f.get(), nullptr, 0, &result);
    FAIL() << "expected tvm::ffi::Error";
  } catch (const tvm::ffi::Error& err) {
    EXPECT_EQ(err.kind(), "RuntimeError");
    EXPECT_NE(err.message().find("returned -1 without raising"), std::string::npos);
  }
}

// A Function made the way header code makes one: its own object, its own `call` at +32, and a
// safe_call at +24 that catches what `call` throws. ffijit calls it through safe_call.
struct HeaderStyleFunction {
  TVMFFIObject header;
  TVMFFISafeCallType safe_call;
  ffijit_test::HeaderCall call;
  int64_t bias;
};

void HeaderStyleCall(const void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) throw std::runtime_error("want one int");
  result->type_index = kTVMFFIInt;
  result->v_int64 = args[0].v_int64 + static_cast<const HeaderStyleFunction*>(self)->bias;
}

int HeaderStyleSafeCall(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  try {
    static_cast<HeaderStyleFunction*>(self)->call(self, args, num_args, result);
    return 0;
  } catch (const std::exception& e) {
    TVMFFIErrorSetRaisedFromCStr("InternalError", e.what());
    return -1;
  }
}

TEST(HeaderLayoutFunction, FunctionsMadeByHeaderCodeWorkThroughSafeCall) {
  HeaderStyleFunction fn{};
  fn.header.type_index = kTVMFFIFunction;
  FFIJITHeaderSetCounts(&fn.header, 2, 1);  // never freed: it lives on this stack frame
  fn.safe_call = HeaderStyleSafeCall;
  fn.call = HeaderStyleCall;
  fn.bias = 100;
  Function f(ObjectPtr<>::Adopt(&fn.header));
  EXPECT_EQ(f(int64_t{5}).cast<int64_t>(), 105);
  try {
    f("x");
    FAIL() << "expected ffijit::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "InternalError");
    EXPECT_EQ(e.message(), "want one int");
  }
}

// ---- Array: data_@24, size_@32, capacity_@40, data_deleter_@48, elements inline at +56 ----

template <typename T>
T At(const void* obj, size_t offset) {
  T value;
  std::memcpy(&value, static_cast<const char*>(obj) + offset, sizeof(T));
  return value;
}
template <typename T>
void Put(void* obj, size_t offset, T value) {
  std::memcpy(static_cast<char*>(obj) + offset, &value, sizeof(T));
}

TEST(HeaderLayoutArray, FfijitArraysHaveTheInlineLayout) {
  Array array{int64_t{7}, "a string longer than seven", 2.5};
  TVMFFIObject* obj = array.get();
  auto* data = At<TVMFFIAny*>(obj, 24);
  EXPECT_EQ(reinterpret_cast<char*>(data), reinterpret_cast<char*>(obj) + 56);
  EXPECT_EQ(At<int64_t>(obj, 32), 3);
  EXPECT_EQ(At<int64_t>(obj, 40), 3);
  EXPECT_EQ(At<void*>(obj, 48), nullptr);
  EXPECT_EQ(data[0].type_index, kTVMFFIInt);
  EXPECT_EQ(data[0].v_int64, 7);
  EXPECT_EQ(data[1].type_index, kTVMFFIStr);
  EXPECT_EQ(data[2].v_float64, 2.5);
  Array empty(std::vector<Any>{});
  EXPECT_EQ(At<int64_t>(empty.get(), 32), 0);
  EXPECT_EQ(At<char*>(empty.get(), 24), reinterpret_cast<char*>(empty.get()) + 56);
}

// Header code on a uniquely owned array overwrites elements in place, shrinks it, or moves the
// elements out to a bigger array and zeroes `size_` before dropping this one; ffijit's deleter
// must then release exactly what is left (leaks and double frees show under ASan/LSan).
TEST(HeaderLayoutArray, InPlaceEditsByHeaderCodeAreReleasedCorrectly) {
  Array array{"first string of many chars", "second string of many chars", int64_t{3}};
  TVMFFIObject* obj = array.get();
  auto* data = At<TVMFFIAny*>(obj, 24);
  // SetItem(0, 5): the old element is released by the writer, the new one stored.
  TVMFFIObjectDecRef(data[0].v_obj);
  data[0] = TVMFFIAny{};
  data[0].type_index = kTVMFFIInt;
  data[0].v_int64 = 5;
  // pop_back(): destroys the last element and shrinks size_.
  data[2] = TVMFFIAny{};
  Put<int64_t>(obj, 32, 2);
  EXPECT_EQ(array.size(), 2);
  EXPECT_EQ(array[0].raw().v_int64, 5);
  // MoveFrom: the new owner takes element 1; this array keeps size_ = 0.
  TVMFFIAny moved = data[1];
  Put<int64_t>(obj, 32, 0);
  EXPECT_TRUE(array.empty());
  array = Array();
  TVMFFIObjectDecRef(moved.v_obj);
}

int g_data_deleter_calls = 0;
void CountingDataDeleter(void* data) {
  ++g_data_deleter_calls;
  std::free(data);
}

TEST(HeaderLayoutArray, ExternalStorageWithDataDeleterIsFreedAfterItsElements) {
  Array array{int64_t{1}};
  TVMFFIObject* obj = array.get();
  auto* storage = static_cast<TVMFFIAny*>(std::calloc(2, sizeof(TVMFFIAny)));
  const TVMFFIByteArray text{"an element in external storage", 30};
  ASSERT_EQ(TVMFFIStringFromByteArray(&text, &storage[0]), 0);
  storage[1].type_index = kTVMFFIInt;
  storage[1].v_int64 = 9;
  Put<TVMFFIAny*>(obj, 24, storage);
  Put<int64_t>(obj, 32, 2);
  Put<int64_t>(obj, 40, 2);
  Put<void (*)(void*)>(obj, 48, CountingDataDeleter);
  EXPECT_EQ(array[1].raw().v_int64, 9);
  g_data_deleter_calls = 0;
  array = Array();
  EXPECT_EQ(g_data_deleter_calls, 1);
}

// An array made by header code (its own allocation and deleter) read through ffijit's API.
struct HeaderStyleArray {
  TVMFFIObject header;
  void* data;
  int64_t size;
  int64_t capacity;
  void (*data_deleter)(void*);
  TVMFFIAny items[4];
};

TEST(HeaderLayoutArray, ArraysMadeByHeaderCodeReadThroughFfijit) {
  HeaderStyleArray arr{};
  arr.header.type_index = kTVMFFIArray;
  FFIJITHeaderSetCounts(&arr.header, 2,
                        1);  // lives on this frame; never reaches its (absent) deleter
  arr.data = arr.items;
  arr.size = 2;
  arr.capacity = 4;
  arr.items[0].type_index = kTVMFFIInt;
  arr.items[0].v_int64 = 11;
  arr.items[1].type_index = kTVMFFIBool;
  arr.items[1].v_int64 = 1;
  Array view(ObjectPtr<>::Adopt(&arr.header));
  ASSERT_EQ(view.size(), 2);
  EXPECT_EQ(view[0].raw().v_int64, 11);
  EXPECT_EQ(view[1].raw().type_index, kTVMFFIBool);
  EXPECT_THROW(view[2], Error);
}

// ---- Tensor (e98b94e1): DLTensor@24, shape_data_@72, strides_data_@80, export cache@88 ----
// v0.1.13's 72-byte Tensor (header + DLTensor) is covered in tensor_test.cc.
#if FFIJIT_TVM_FFI_TENSOR_OBJECT_SIZE == 96

TEST(HeaderLayoutTensor, FfijitTensorsHoldShapeObjectsTheDLTensorPointsInto) {
  Tensor tensor = Tensor::Empty({2, 3}, DataType(kDLFloat, 32, 1));
  TVMFFIObject* obj = tensor.get();
  auto* dl = reinterpret_cast<DLTensor*>(reinterpret_cast<char*>(obj) + 24);
  auto* shape = At<TVMFFIObject*>(obj, 72);
  auto* strides = At<TVMFFIObject*>(obj, 80);
  ASSERT_NE(shape, nullptr);
  ASSERT_NE(strides, nullptr);
  EXPECT_EQ(shape->type_index, kTVMFFIShape);
  EXPECT_EQ(strides->type_index, kTVMFFIShape);
  const auto* shape_cell = reinterpret_cast<const TVMFFIShapeCell*>(shape + 1);
  const auto* strides_cell = reinterpret_cast<const TVMFFIShapeCell*>(strides + 1);
  EXPECT_EQ(shape_cell->size, 2u);
  EXPECT_EQ(shape_cell->data, dl->shape);
  EXPECT_EQ(strides_cell->data, dl->strides);
  EXPECT_EQ(dl->shape[1], 3);
  EXPECT_EQ(dl->strides[0], 3);
  EXPECT_EQ(At<void*>(obj, 88), nullptr) << "no export yet";
}

TEST(HeaderLayoutTensor, VersionedExportIsCachedAt88AndSharedByEveryCall) {
  Tensor tensor = Tensor::Empty({4}, DataType(kDLInt, 8, 1));
  DLManagedTensorVersioned* first = tensor.ToDLPackVersioned();
  DLManagedTensorVersioned* second = tensor.ToDLPackVersioned();
  EXPECT_EQ(first, second);
  EXPECT_EQ(At<DLManagedTensorVersioned*>(tensor.get(), 88), first);
  EXPECT_EQ(first->manager_ctx, tensor.get());
  EXPECT_EQ(FFIJITHeaderStrongCount(tensor.get()), 3u);
  first->deleter(first);
  second->deleter(second);
  EXPECT_EQ(FFIJITHeaderStrongCount(tensor.get()), 1u);
}

// Header code's Tensor::shape() fills a NULL shape_data_ with a Shape of its own and its
// ToDLPackVersioned fills the cache with a `new`ed struct: ffijit's deleter releases both.
TEST(HeaderLayoutTensor, FieldsHeaderCodeFillsInAreReleasedByFfijit) {
  Tensor tensor = Tensor::Empty({5}, DataType(kDLFloat, 64, 1));
  TVMFFIObject* obj = tensor.get();
  TVMFFIObjectDecRef(At<TVMFFIObject*>(obj, 72));
  Put<TVMFFIObject*>(obj, 72, nullptr);
  Shape replacement{5};
  TVMFFIObjectIncRef(replacement.get());
  Put<TVMFFIObject*>(obj, 72, replacement.get());
  auto* cached = new DLManagedTensorVersioned();
  cached->manager_ctx = obj;
  Put<DLManagedTensorVersioned*>(obj, 88, cached);
  EXPECT_EQ(tensor.ToDLPackVersioned(), cached) << "ffijit uses the cache header code filled";
  TVMFFIObjectDecRef(obj);  // the reference that export took
  EXPECT_EQ(FFIJITHeaderStrongCount(replacement.get()), 2u);
  tensor = Tensor();
  EXPECT_EQ(FFIJITHeaderStrongCount(replacement.get()), 1u);
}

// A tensor made by header code (TensorObjFromNDAlloc-style: its own object and deleter, empty
// optional fields) exported and read through ffijit.
struct HeaderStyleTensor {
  TVMFFIObject header;
  DLTensor tensor;
  TVMFFIObject* shape_data;
  TVMFFIObject* strides_data;
  DLManagedTensorVersioned* cached;
};

TEST(HeaderLayoutTensor, TensorsMadeByHeaderCodeExportThroughFfijit) {
  int64_t dims[] = {2, 2};
  float values[] = {1, 2, 3, 4};
  HeaderStyleTensor t{};
  t.header.type_index = kTVMFFITensor;
  FFIJITHeaderSetCounts(&t.header, 2, 1);  // lives on this frame
  t.tensor.data = values;
  t.tensor.device = DLDevice{kDLCPU, 0};
  t.tensor.ndim = 2;
  t.tensor.dtype = DLDataType{kDLFloat, 32, 1};
  t.tensor.shape = dims;
  Tensor view(ObjectPtr<>::Adopt(&t.header));
  EXPECT_EQ(view.shape(), std::vector<int64_t>({2, 2}));
  DLManagedTensor* legacy = view.ToDLPack();
  EXPECT_EQ(legacy->dl_tensor.data, values);
  legacy->deleter(legacy);
  DLManagedTensorVersioned* versioned = view.ToDLPackVersioned();
  EXPECT_EQ(t.cached, versioned);
  versioned->deleter(versioned);
  EXPECT_EQ(FFIJITHeaderStrongCount(&t.header), 2u);
  view = Tensor();
  delete t.cached;  // what the header-side destructor does
}
#endif  // FFIJIT_TVM_FFI_TENSOR_OBJECT_SIZE == 96

// ---- Map: data_@24, size_@32, slots_@40 (bit 63: small), data_deleter_@48 ----

constexpr uint64_t kSmallBit = uint64_t{1} << 63;

struct KV {
  TVMFFIAny key, value;
};

TEST(HeaderLayoutMap, UpToFourEntriesUseTheSmallLayoutInInsertionOrder) {
  Map map{{"b", int64_t{1}}, {int64_t{5}, "five"}, {"a key longer than eight bytes", 2.0}};
  TVMFFIObject* obj = map.get();
  EXPECT_EQ(At<uint64_t>(obj, 32), 3u);
  uint64_t slots = At<uint64_t>(obj, 40);
  EXPECT_NE(slots & kSmallBit, 0u);
  EXPECT_LE(slots & ~kSmallBit, 4u);
  EXPECT_GE(slots & ~kSmallBit, 3u);
  auto* entries = At<KV*>(obj, 24);
  EXPECT_EQ(reinterpret_cast<char*>(entries), reinterpret_cast<char*>(obj) + 56);
  EXPECT_EQ(entries[0].key.type_index, kTVMFFISmallStr);
  EXPECT_EQ(entries[0].value.v_int64, 1);
  EXPECT_EQ(entries[1].key.type_index, kTVMFFIInt);
  EXPECT_EQ(entries[2].key.type_index, kTVMFFIStr);
  EXPECT_EQ(entries[2].value.v_float64, 2.0);
}

// Header code on a small map it owns alone erases in place: destroys the pair, moves the later
// pairs down (raw bytes) and decrements size_.
TEST(HeaderLayoutMap, InPlaceEraseByHeaderCodeIsReleasedCorrectly) {
  Map map{{"first key, heap allocated", int64_t{1}}, {"second key, heap allocated", int64_t{2}}};
  TVMFFIObject* obj = map.get();
  auto* entries = At<KV*>(obj, 24);
  TVMFFIObjectDecRef(entries[0].key.v_obj);
  std::memmove(&entries[0], &entries[1], sizeof(KV));
  Put<uint64_t>(obj, 32, 1);
  EXPECT_EQ(map.size(), 1);
  EXPECT_EQ(map.Get(Any("second key, heap allocated"))->raw().v_int64, 2);
  EXPECT_FALSE(map.Get(Any("first key, heap allocated")).has_value());
}

// TVM FFI's AnyHash values, computed by that version's headers (facts, not derived here).
constexpr uint64_t kAnyHashInt1 = 2654435835u;
constexpr uint64_t kAnyHashAbc = 2660953131u;
constexpr uint64_t kAnyHashLongKey = 3201291742u;  // "a key longer than eight bytes"

uint64_t AnyHashOfInt(int64_t v) {  // StableHashCombine(kTVMFFIInt, v)
  uint64_t key = kTVMFFIInt, value = static_cast<uint64_t>(v);
  return key ^ (value + 0x9e3779b9 + (key << 6) + (key >> 2));
}

// Probe distance by jump index, as far as a table of this size ever needs (0..15, then the
// triangular numbers 21..2628).
uint64_t ProbeDistance(int jump) {
  if (jump < 16) return static_cast<uint64_t>(jump);
  if (jump <= 82) {
    uint64_t n = static_cast<uint64_t>(jump) - 10;
    return n * (n + 1) / 2;
  }
  ADD_FAILURE() << "jump index " << jump << " beyond this test's table";
  return 0;
}

// A header-style dense lookup: the home slot by Fibonacci hashing, then the same-home list.
const KV* DenseFind(TVMFFIObject* obj, uint64_t hash, const TVMFFIAny& key) {
  const auto* blocks = At<const uint8_t*>(obj, 24);
  uint64_t slots = At<uint64_t>(obj, 40);
  uint32_t fib_shift = At<uint32_t>(obj, 56);
  auto meta = [&](uint64_t i) { return blocks[(i / 16) * 784 + i % 16]; };
  auto kv = [&](uint64_t i) {
    return reinterpret_cast<const KV*>(blocks + (i / 16) * 784 + 16 + (i % 16) * 48);
  };
  uint64_t slot = (hash * 11400714819323198485ull) >> fib_shift;
  if (meta(slot) & 0x80) return nullptr;  // no list starts here
  for (;;) {
    const KV* entry = kv(slot);
    bool same = entry->key.type_index == key.type_index && entry->key.v_int64 == key.v_int64;
    if (key.type_index == kTVMFFIStr && entry->key.type_index == kTVMFFIStr) {
      const auto* a = reinterpret_cast<const TVMFFIByteArray*>(entry->key.v_obj + 1);
      const auto* b = reinterpret_cast<const TVMFFIByteArray*>(key.v_obj + 1);
      same = a->size == b->size && std::memcmp(a->data, b->data, a->size) == 0;
    }
    if (key.type_index == kTVMFFISmallStr && entry->key.type_index == kTVMFFISmallStr) {
      same = entry->key.small_str_len == key.small_str_len && entry->key.v_int64 == key.v_int64;
    }
    if (same) return entry;
    int jump = meta(slot) & 0x7F;
    if (jump == 0) return nullptr;
    slot = (slot + ProbeDistance(jump)) % slots;
  }
}

TEST(HeaderLayoutMap, LargerMapsUseTheDenseLayoutHeaderCodeSearches) {
  ASSERT_EQ(AnyHashOfInt(1), kAnyHashInt1);
  std::vector<std::pair<Any, Any>> items;
  for (int64_t i = 0; i < 200; ++i) items.emplace_back(Any(i * 7), Any(i));
  items.emplace_back(Any("abc"), Any(int64_t{-1}));
  items.emplace_back(Any("a key longer than eight bytes"), Any(int64_t{-2}));
  Map map(items);
  TVMFFIObject* obj = map.get();
  EXPECT_EQ(At<uint64_t>(obj, 32), 202u);
  uint64_t slots = At<uint64_t>(obj, 40);
  EXPECT_EQ(slots & kSmallBit, 0u);
  EXPECT_EQ(slots, 512u);  // the power of two above 202, doubled for load <= 1/2
  EXPECT_EQ(At<uint32_t>(obj, 56), 64u - 9u);  // fib_shift = 64 - log2(slots)
  EXPECT_NE(At<void*>(obj, 48), nullptr) << "dense storage has a data_deleter";

  for (int64_t i = 0; i < 200; ++i) {
    Any key(i * 7);
    const KV* entry = DenseFind(obj, AnyHashOfInt(i * 7), key.raw());
    ASSERT_NE(entry, nullptr) << "key " << i * 7;
    EXPECT_EQ(entry->value.v_int64, i);
  }
  const KV* abc = DenseFind(obj, kAnyHashAbc, Any("abc").raw());
  ASSERT_NE(abc, nullptr);
  EXPECT_EQ(abc->value.v_int64, -1);
  const KV* long_key = DenseFind(obj, kAnyHashLongKey, Any("a key longer than eight bytes").raw());
  ASSERT_NE(long_key, nullptr);
  EXPECT_EQ(long_key->value.v_int64, -2);
  EXPECT_EQ(DenseFind(obj, AnyHashOfInt(3), Any(int64_t{3}).raw()), nullptr);

  // The iteration list (head@64, tail@72, prev/next after each pair) is the insertion order.
  const auto* blocks = At<const uint8_t*>(obj, 24);
  auto item_word = [&](uint64_t i, size_t offset) {
    return At<uint64_t>(blocks + (i / 16) * 784 + 16 + (i % 16) * 48, offset);
  };
  uint64_t slot = At<uint64_t>(obj, 64);
  uint64_t prev = ~uint64_t{0};
  for (int64_t i = 0; i < 202; ++i) {
    ASSERT_NE(slot, ~uint64_t{0});
    EXPECT_EQ(item_word(slot, 32), prev);
    if (i < 200) {
      EXPECT_EQ(item_word(slot, 8), static_cast<uint64_t>(i * 7));
    }
    prev = slot;
    slot = item_word(slot, 40);
  }
  EXPECT_EQ(slot, ~uint64_t{0});
  EXPECT_EQ(At<uint64_t>(obj, 72), prev);

  // ffijit's own API reads the same structure.
  EXPECT_EQ(map.size(), 202);
  EXPECT_EQ(map.Get(Any(int64_t{7 * 150}))->raw().v_int64, 150);
  EXPECT_EQ(map.Get(Any("abc"))->raw().v_int64, -1);
  EXPECT_FALSE(map.Get(Any(int64_t{3})).has_value());
}

TEST(HeaderLayoutMap, RepeatedKeysKeepFirstPositionAndLastValueInBothLayouts) {
  for (int64_t extra : {int64_t{0}, int64_t{10}}) {
    std::vector<std::pair<Any, Any>> items{{"k", int64_t{1}}, {int64_t{2}, int64_t{2}}};
    for (int64_t i = 0; i < extra; ++i) items.emplace_back(Any(100 + i), Any(i));
    items.emplace_back(Any(String("k")), Any(int64_t{3}));
    Map map(items);
    EXPECT_EQ(map.size(), static_cast<int64_t>(2 + extra));
    EXPECT_EQ(map.Get(Any("k"))->raw().v_int64, 3);
    auto [key, value] = map.ItemAt(0);
    EXPECT_EQ(key.raw().type_index, kTVMFFISmallStr);
    EXPECT_EQ(value.raw().v_int64, 3);
  }
}

// ---- Optional<T>: its size is the revision's, for values and for objects ----
// Header code sees an Optional<ObjectRef> member or return value as one TVMFFIAny or as one
// nullable pointer (FFIJIT_TVM_FFI_OPTIONAL_OBJECT_IS_ANY); these read the runtime's objects that
// way, at the offsets the revision's header code uses.

constexpr size_t kOptionalObjectSize = FFIJIT_TVM_FFI_OPTIONAL_OBJECT_IS_ANY ? 16 : 8;

// The object an Optional<ObjectRef> slot at `offset` holds, or NULL when empty.
TVMFFIObject* OptionalObjectAt(const void* obj, size_t offset) {
#if FFIJIT_TVM_FFI_OPTIONAL_OBJECT_IS_ANY
  const auto slot = At<TVMFFIAny>(obj, offset);
  if (slot.type_index == kTVMFFINone) return nullptr;
  EXPECT_GE(slot.type_index, kTVMFFIStaticObjectBegin);
  EXPECT_EQ(slot.type_index, slot.v_obj->type_index);
  return slot.v_obj;
#else
  return At<TVMFFIObject*>(obj, offset);
#endif
}

const TVMFFIFieldInfo& FieldOf(const TVMFFITypeInfo* info, const std::string& name) {
  for (int32_t i = 0; i < info->num_fields; ++i) {
    if (std::string(info->fields[i].name.data, info->fields[i].name.size) == name) {
      return info->fields[i];
    }
  }
  throw Error("KeyError", "no field " + name);
}

const TVMFFITypeInfo* InfoOf(const std::string& key) {
  TVMFFIByteArray bytes{key.data(), key.size()};
  int32_t index = -1;
  CheckCall(TVMFFITypeKeyToIndex(&bytes, &index));
  return TVMFFIGetTypeInfo(index);
}

TEST(HeaderLayoutOptional, OptionalSizesAreTheRevisions) {
  EXPECT_EQ(sizeof(tvm::ffi::Optional<int>), FFIJIT_TVM_FFI_OPTIONAL_VALUE_IS_ANY ? 16u : 8u);
  EXPECT_EQ(sizeof(tvm::ffi::MismatchResult), kOptionalObjectSize);
  // GetFirstMismatch returns its Optional through a hidden pointer of that size: equal values give
  // the empty one, different ones the two paths.
  Any a = Array{1, 2}, b = Array{1, 3};
  auto hold = [](const Any& value) {
    TVMFFIAny owned{};
    TVMFFIAnyViewToOwnedAny(&value.raw(), &owned);
    return tvm::ffi::Any(owned);
  };
  EXPECT_EQ(tvm::ffi::StructuralEqual::GetFirstMismatch(hold(a), hold(a), false, false).get(),
            nullptr);
  tvm::ffi::MismatchResult pair =
      tvm::ffi::StructuralEqual::GetFirstMismatch(hold(a), hold(b), false, false);
  ASSERT_NE(pair.get(), nullptr);
  EXPECT_EQ(Array(ObjectPtr<>::Borrow(pair.get())).size(), 2);
}

// AccessPathObj: parent@24, step@24+S, depth@24+2S (S the Optional<ObjectRef> size): 48 bytes with
// pointer Optionals, 64 with Any ones; its reflected Optional fields are S bytes too.
TEST(HeaderLayoutOptional, AccessPathsHaveTheRevisionsLayout) {
  const size_t slot = kOptionalObjectSize;
  const TVMFFITypeInfo* info = InfoOf("ffi.reflection.AccessPath");
  ASSERT_NE(info->metadata, nullptr);
  EXPECT_EQ(static_cast<size_t>(info->metadata->total_size), 24 + 2 * slot + 8);
  for (const char* name : {"parent", "step"}) {
    const TVMFFIFieldInfo& field = FieldOf(info, name);
    EXPECT_EQ(field.offset, name == std::string("parent") ? 24 : 24 + static_cast<int64_t>(slot));
    EXPECT_EQ(static_cast<size_t>(field.size), slot) << name;
    EXPECT_EQ(field.alignment, 8) << name;
    EXPECT_EQ(field.field_static_type_index, kTVMFFIAny) << name;
  }
  EXPECT_EQ(FieldOf(info, "depth").offset, static_cast<int64_t>(24 + 2 * slot));

  // [1, 2] against [1, 3]: both paths are <root>[1], read the way header code reads them.
  Array paths = GetGlobalFunctionOrThrow("ffi.GetFirstStructuralMismatch")(Array{1, 2}, Array{1, 3})
                    .cast<Array>();
  ASSERT_EQ(paths.size(), 2);
  const TVMFFIObject* path = paths[0].raw().v_obj;
  EXPECT_EQ(At<int32_t>(path, 24 + 2 * slot), 1);  // depth
  const TVMFFIObject* parent = OptionalObjectAt(path, 24);
  const TVMFFIObject* step = OptionalObjectAt(path, 24 + slot);
  ASSERT_NE(parent, nullptr);
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(parent->type_index, path->type_index);
  EXPECT_EQ(At<int32_t>(parent, 24 + 2 * slot), 0);  // the root: no parent, no step
  EXPECT_EQ(OptionalObjectAt(parent, 24), nullptr);
  EXPECT_EQ(OptionalObjectAt(parent, 24 + slot), nullptr);
  EXPECT_EQ(At<int32_t>(step, 24), 1);  // AccessStep: kind@24 (array item), key@32
  EXPECT_EQ(At<TVMFFIAny>(step, 32).v_int64, 1);
}

#if FFIJIT_TVM_FFI_HAS_DATACLASS_API
// VisitErrorContextObj: reverse_visit_pattern@24, prev_error_context (an Optional<ObjectRef>)@32:
// 48 bytes with Any Optionals, 40 with pointer ones.
TEST(HeaderLayoutOptional, VisitErrorContextsHaveTheRevisionsLayout) {
  const TVMFFITypeInfo* info = InfoOf("ffi.VisitErrorContext");
  ASSERT_NE(info->metadata, nullptr);
  EXPECT_EQ(static_cast<size_t>(info->metadata->total_size), 32 + kOptionalObjectSize);
  const TVMFFIFieldInfo& prev = FieldOf(info, "prev_error_context");
  EXPECT_EQ(prev.offset, 32);
  EXPECT_EQ(static_cast<size_t>(prev.size), kOptionalObjectSize);
  EXPECT_EQ(FieldOf(info, "reverse_visit_pattern").offset, 24);
  // A fresh context (as the creator makes it) holds an empty Optional there.
  TVMFFIObjectHandle made = nullptr;
  ASSERT_EQ(info->metadata->creator(&made), 0);
  EXPECT_EQ(OptionalObjectAt(made, 32), nullptr);
  TVMFFIAny read{};
  ASSERT_EQ(prev.getter(static_cast<char*>(made) + 32, &read), 0);
  EXPECT_EQ(read.type_index, kTVMFFINone);
  TVMFFIObjectDecRef(made);
}
#endif

}  // namespace
}  // namespace ffijit
