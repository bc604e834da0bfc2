// TVM FFI 0.1's mutable containers: List (75) in the sequence-cell layout over a separate buffer
// that header code and ffijit both grow, Dict (76) in the Map layout changed in place, and the
// Array's sequence cell. Only on revisions that have them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "catch_error.h"
#include "ffijit/ffijit.h"

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
namespace ffijit {
namespace {

using ffijit_tests::CatchError;

Function G(const char* name) {
  return GetGlobalFunctionOrThrow(name);
}

TVMFFISeqCell* CellOf(const ObjectRef& ref) {
  return reinterpret_cast<TVMFFISeqCell*>(ref.get() + 1);
}

std::vector<int64_t> Ints(const List& list) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < list.size(); ++i) out.push_back(list[i].cast<int64_t>());
  return out;
}

TEST(SeqCellTest, ArrayPresentsTheSequenceCellWithInlineElements) {
  Array array{1, 2, 3};
  const TVMFFISeqCell* cell = CellOf(array);
  EXPECT_EQ(reinterpret_cast<const char*>(cell), reinterpret_cast<const char*>(array.get()) + 24);
  EXPECT_EQ(static_cast<const char*>(cell->data), reinterpret_cast<const char*>(array.get()) + 56);
  EXPECT_EQ(cell->size, 3);
  EXPECT_EQ(cell->capacity, 3);
  EXPECT_EQ(cell->data_deleter, nullptr);
}

TEST(ListTest, HoldsOwnedCopiesInASeparateBufferWithADeleter) {
  String heap("a string long enough to live on the heap");
  List list{1, heap, 2.5};
  EXPECT_EQ(list.type_index(), kTVMFFIList);
  const TVMFFISeqCell* cell = CellOf(list);
  EXPECT_EQ(cell->size, 3);
  EXPECT_GE(cell->capacity, 3);
  EXPECT_NE(cell->data, nullptr);
  EXPECT_NE(static_cast<const char*>(cell->data), reinterpret_cast<const char*>(list.get()) + 56)
      << "the buffer is separate, so header code can replace it";
  EXPECT_NE(cell->data_deleter, nullptr);
  EXPECT_EQ(FFIJITHeaderStrongCount(heap.any().v_obj), 2u);
  EXPECT_EQ(list[1].cast<std::string>(), "a string long enough to live on the heap");
  list = List();
  EXPECT_EQ(FFIJITHeaderStrongCount(heap.any().v_obj), 1u);

  List empty = G("ffi.List")().cast<List>();
  EXPECT_EQ(empty.size(), 0);
  EXPECT_NE(CellOf(empty)->data_deleter, nullptr) << "header code calls it even on a NULL buffer";
}

// What ListObj::Reserve in TVM FFI's list.h does: a new ::operator new buffer, elements moved, the
// old buffer given to the cell's data_deleter, the deleter kept.
void GrowLikeHeaderCode(TVMFFISeqCell* cell, int64_t capacity) {
  void* fresh = ::operator new(sizeof(TVMFFIAny) * static_cast<size_t>(capacity));
  std::memcpy(fresh, cell->data, sizeof(TVMFFIAny) * static_cast<size_t>(cell->size));
  cell->data_deleter(cell->data);
  cell->data = fresh;
  cell->capacity = capacity;
}

TEST(ListTest, AListHeaderCodeGrewKeepsWorkingAndIsFreed) {
  List list = G("ffi.List")(1, 2).cast<List>();
  GrowLikeHeaderCode(CellOf(list), 64);
  for (int64_t i = 3; i <= 70; ++i) G("ffi.ListAppend")(list, i);  // ffijit grows it past 64
  EXPECT_EQ(list.size(), 70);
  EXPECT_GE(CellOf(list)->capacity, 70);
  EXPECT_EQ(list[69].cast<int64_t>(), 70);
  GrowLikeHeaderCode(CellOf(list), 200);
  EXPECT_EQ(list[0].cast<int64_t>(), 1);
  // Dropping it frees whichever buffer is current through the cell (a leak or double free shows
  // under the sanitizer builds).
}

// A List as header code makes one (make_object + ListObj::Empty(0)): NULL buffer, its own
// ::operator delete deleter, its own object deleter.
int header_buffer_frees = 0;
void HeaderRawDataDeleter(void* data) {
  ++header_buffer_frees;
  ::operator delete(data);
}
struct HeaderList {
  TVMFFIObject header;
  TVMFFISeqCell cell;
};
void HeaderListDeleter(void* self, int flags) {
  auto* obj = static_cast<HeaderList*>(self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    auto* items = static_cast<TVMFFIAny*>(obj->cell.data);
    for (int64_t i = 0; i < obj->cell.size; ++i) details::ReleaseAny(&items[i]);
    obj->cell.data_deleter(obj->cell.data);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) delete obj;
}

TEST(ListTest, ChangesAListHeaderCodeMadeThroughItsOwnDeleter) {
  auto* obj = new HeaderList{};
  FFIJITHeaderInit(&obj->header, kTVMFFIList, HeaderListDeleter);
  obj->cell.data_deleter = HeaderRawDataDeleter;
  List list(ObjectPtr<>::Adopt(&obj->header));
  header_buffer_frees = 0;
  for (int64_t i = 0; i < 10; ++i) G("ffi.ListAppend")(list, i);
  EXPECT_EQ(Ints(list), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_GE(header_buffer_frees, 2) << "ffijit freed each outgrown buffer through the cell";
  EXPECT_EQ(obj->cell.data_deleter, HeaderRawDataDeleter) << "the deleter is kept";
  list = List();
  EXPECT_GE(header_buffer_frees, 3);
}

TEST(ListGlobalsTest, MutateInPlaceLikeTvmFfi) {
  List list = G("ffi.List")(1, 2, 3).cast<List>();
  List alias = list;
  G("ffi.ListAppend")(list, 4);
  G("ffi.ListInsert")(list, 0, 0);
  G("ffi.ListInsert")(list, 5, 5);
  EXPECT_EQ(Ints(alias), (std::vector<int64_t>{0, 1, 2, 3, 4, 5})) << "shared, not copied";
  EXPECT_EQ(G("ffi.ListSize")(list).cast<int64_t>(), 6);
  EXPECT_EQ(G("ffi.ListGetItem")(list, 2).cast<int64_t>(), 2);
  G("ffi.ListSetItem")(list, 2, 20);
  EXPECT_EQ(G("ffi.ListPop")(list, 0).cast<int64_t>(), 0);
  EXPECT_EQ(Ints(list), (std::vector<int64_t>{1, 20, 3, 4, 5}));
  G("ffi.ListErase")(list, 1);
  EXPECT_EQ(Ints(list), (std::vector<int64_t>{1, 3, 4, 5}));
  G("ffi.ListEraseRange")(list, 1, 3);
  EXPECT_EQ(Ints(list), (std::vector<int64_t>{1, 5}));
  G("ffi.ListEraseRange")(list, 9, 9);  // an empty range is no change, as in TVM FFI
  G("ffi.ListReplaceSlice")(list, 1, 2, G("ffi.List")(7, 8, 9));
  EXPECT_EQ(Ints(list), (std::vector<int64_t>{1, 7, 8, 9}));
  G("ffi.ListReplaceSlice")(list, 0, 1, G("ffi.Array")(6));  // an Array replacement too
  EXPECT_EQ(Ints(list), (std::vector<int64_t>{6, 7, 8, 9}));
  G("ffi.ListReplaceSlice")(list, 1, 3, list);  // replacing by itself reads a snapshot
  EXPECT_EQ(Ints(list), (std::vector<int64_t>{6, 6, 7, 8, 9, 9}));
  G("ffi.ListReverse")(list);
  EXPECT_EQ(Ints(list), (std::vector<int64_t>{9, 9, 8, 7, 6, 6}));
  EXPECT_TRUE(G("ffi.ListContains")(list, 8).cast<bool>());
  EXPECT_FALSE(G("ffi.ListContains")(list, 1).cast<bool>());
  EXPECT_FALSE(G("ffi.ListContains")(list, 8.0).cast<bool>()) << "compared as map keys are";
  G("ffi.ListClear")(list);
  EXPECT_EQ(list.size(), 0);
  G("ffi.ListAppend")(list, "after clear");
  EXPECT_EQ(list[0].cast<std::string>(), "after clear");
}

TEST(ListGlobalsTest, StringsCompareByContentAndValuesAreOwned) {
  List list = G("ffi.List")("short", "a long string that is a heap object").cast<List>();
  EXPECT_TRUE(G("ffi.ListContains")(list, "a long string that is a heap object").cast<bool>());
  EXPECT_TRUE(G("ffi.ListContains")(list, String("short")).cast<bool>());
  TVMFFIAny raw{};
  raw.type_index = kTVMFFIRawStr;
  raw.v_c_str = "a raw C string, copied into the list";
  TVMFFIAny args[2] = {Any(list).raw(), raw};
  G("ffi.ListAppend").CallPacked(args, 2);
  EXPECT_EQ(list[2].type_index(), kTVMFFIStr);
  EXPECT_EQ(list[2].cast<std::string>(), "a raw C string, copied into the list");
}

TEST(ListGlobalsTest, BadInputIsAClearError) {
  List list = G("ffi.List")(1, 2).cast<List>();
  Error error = CatchError([&] { G("ffi.ListGetItem")(list, 2); });
  EXPECT_EQ(error.kind(), "IndexError");
  EXPECT_NE(error.message().find("index 2"), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("size 2"), std::string::npos) << error.message();
  EXPECT_EQ(CatchError([&] { G("ffi.ListGetItem")(list, -1); }).kind(), "IndexError");
  EXPECT_EQ(CatchError([&] { G("ffi.ListSetItem")(list, 2, 0); }).kind(), "IndexError");
  EXPECT_EQ(CatchError([&] { G("ffi.ListInsert")(list, 3, 0); }).kind(), "IndexError");
  EXPECT_EQ(CatchError([&] { G("ffi.ListInsert")(list, -1, 0); }).kind(), "IndexError");
  error = CatchError([&] { G("ffi.ListPop")(list, 5); });
  EXPECT_EQ(error.kind(), "IndexError");
  EXPECT_NE(error.message().find("index 5"), std::string::npos) << error.message();
  EXPECT_EQ(CatchError([&] { G("ffi.ListErase")(list, 2); }).kind(), "IndexError");
  EXPECT_EQ(CatchError([&] { G("ffi.ListEraseRange")(list, 1, 3); }).kind(), "IndexError");
  EXPECT_EQ(CatchError([&] { G("ffi.ListEraseRange")(list, 2, 1); }).kind(), "IndexError");
  EXPECT_EQ(CatchError([&] { G("ffi.ListReplaceSlice")(list, 0, 3, list); }).kind(), "IndexError");
  EXPECT_EQ(Ints(list), (std::vector<int64_t>{1, 2})) << "a refused change changes nothing";
  EXPECT_EQ(CatchError([&] { G("ffi.ListReplaceSlice")(list, 0, 1, 5); }).kind(), "TypeError");
  EXPECT_EQ(CatchError([&] { G("ffi.ListSize")(G("ffi.Array")(1)); }).kind(), "TypeError");
  EXPECT_EQ(CatchError([&] { G("ffi.ListAppend")(nullptr, 1); }).kind(), "TypeError");
  EXPECT_EQ(CatchError([&] { G("ffi.ListGetItem")(list, "0"); }).kind(), "TypeError");
}

TEST(DictTest, TheMapLayoutUnderItsOwnTypeWithRoomToGrowInPlace) {
  Dict dict{{"a", 1}, {"b", 2}};
  EXPECT_EQ(dict.type_index(), kTVMFFIDict);
  const auto* words = reinterpret_cast<const uint64_t*>(dict.get());
  EXPECT_EQ(words[4], 2u) << "size@32";
  EXPECT_EQ(words[5], (uint64_t{1} << 63) | 4u) << "small layout with 4 slots@40";
  EXPECT_EQ(dict.at(Any("b")).cast<int64_t>(), 2);
  int64_t size = 0;
  EXPECT_EQ(FFIJITMapSize(dict.get(), &size), 0) << "the Map functions read a Dict";
  EXPECT_EQ(size, 2);
  EXPECT_EQ(CatchError([&] {
              G("ffi.MapSize")
              (dict);
            }).kind(),
            "TypeError")
      << "a Dict is not a Map";
}

// Insertion order as the model: an update keeps the entry's place, an erase removes it.
struct Model {
  std::vector<std::pair<int64_t, int64_t>> entries;
  void Set(int64_t k, int64_t v) {
    for (auto& e : entries) {
      if (e.first == k) {
        e.second = v;
        return;
      }
    }
    entries.emplace_back(k, v);
  }
  bool Erase(int64_t k) {
    for (size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].first == k) {
        entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(i));
        return true;
      }
    }
    return false;
  }
};

void ExpectSame(const Dict& dict, const Model& model, int step) {
  ASSERT_EQ(dict.size(), static_cast<int64_t>(model.entries.size())) << "step " << step;
  for (size_t i = 0; i < model.entries.size(); ++i) {
    auto [key, value] = dict.ItemAt(static_cast<int64_t>(i));
    ASSERT_EQ(key.cast<int64_t>(), model.entries[i].first) << "step " << step << " entry " << i;
    ASSERT_EQ(value.cast<int64_t>(), model.entries[i].second) << "step " << step;
    ASSERT_EQ(dict.at(Any(model.entries[i].first)).cast<int64_t>(), model.entries[i].second)
        << "step " << step << " key " << model.entries[i].first;
  }
}

TEST(DictTest, SetEraseAndClearInPlaceAgreeWithAModel) {
  Dict dict = G("ffi.Dict")().cast<Dict>();
  Dict alias = dict;
  Model model;
  std::mt19937_64 random(12345);  // fixed: the same sequence every run
  for (int step = 0; step < 4000; ++step) {
    const int64_t key = static_cast<int64_t>(random() % 300);
    const uint64_t op = random() % 10;
    if (op < 6) {
      G("ffi.DictSetItem")(dict, key, step);
      model.Set(key, step);
    } else if (op < 9) {
      G("ffi.DictErase")(dict, key);
      model.Erase(key);
    } else if (step % 500 == 0) {
      G("ffi.DictClear")(dict);
      model.entries.clear();
    }
    EXPECT_EQ(G("ffi.DictCount")(dict, key).cast<int64_t>(),
              model.entries.end() != std::find_if(model.entries.begin(), model.entries.end(),
                                                  [&](auto& e) { return e.first == key; })
                  ? 1
                  : 0);
    if (step % 97 == 0) ExpectSame(alias, model, step);
  }
  ExpectSame(alias, model, -1);
  // Everything erased one by one, then refilled: the dense table empties and works again.
  while (!model.entries.empty()) {
    const int64_t key = model.entries.back().first;
    G("ffi.DictErase")(dict, key);
    model.Erase(key);
  }
  ExpectSame(dict, model, -2);
  for (int64_t k = 0; k < 20; ++k) G("ffi.DictSetItem")(dict, k, k * k);
  EXPECT_EQ(dict.at(Any(int64_t{19})).cast<int64_t>(), 361);
}

TEST(DictTest, StringKeysOfEveryFormAndReleasedValues) {
  String heap_value("a value long enough to be an object");
  Dict dict = G("ffi.Dict")("k", heap_value).cast<Dict>();
  EXPECT_EQ(FFIJITHeaderStrongCount(heap_value.any().v_obj), 2u);
  TVMFFIAny raw{};
  raw.type_index = kTVMFFIRawStr;
  raw.v_c_str = "k";
  TVMFFIAny args[3] = {Any(dict).raw(), raw, Any(int64_t{5}).raw()};
  G("ffi.DictSetItem").CallPacked(args, 3);  // a raw string finds the small-string key
  EXPECT_EQ(dict.size(), 1);
  EXPECT_EQ(FFIJITHeaderStrongCount(heap_value.any().v_obj), 1u)
      << "the replaced value was released";
  for (int i = 0; i < 10; ++i) {
    G("ffi.DictSetItem")(dict, "a long key number " + std::to_string(i), heap_value);
  }
  EXPECT_EQ(FFIJITHeaderStrongCount(heap_value.any().v_obj), 11u);
  G("ffi.DictErase")(dict, "a long key number 3");
  EXPECT_EQ(FFIJITHeaderStrongCount(heap_value.any().v_obj), 10u);
  G("ffi.DictClear")(dict);
  EXPECT_EQ(FFIJITHeaderStrongCount(heap_value.any().v_obj), 1u);
  EXPECT_EQ(dict.size(), 0);
}

TEST(DictGlobalsTest, AccessorsIteratorAndMissing) {
  Dict dict = G("ffi.Dict")("a", 1, "b", 2, "a", 3).cast<Dict>();
  EXPECT_EQ(G("ffi.DictSize")(dict).cast<int64_t>(), 2);
  EXPECT_EQ(G("ffi.DictGetItem")(dict, "a").cast<int64_t>(), 3);
  EXPECT_EQ(CatchError([&] { G("ffi.DictGetItem")(dict, "z"); }).kind(), "KeyError");
  ObjectRef missing = G("ffi.GetInvalidObject")().cast<ObjectRef>();
  ASSERT_TRUE(missing.defined());
  EXPECT_EQ(missing.type_index(), kTVMFFIObject);
  EXPECT_EQ(G("ffi.GetInvalidObject")().cast<ObjectRef>(), missing) << "one object per process";
  EXPECT_EQ(G("ffi.DictGetItemOrMissing")(dict, "z").cast<ObjectRef>(), missing);
  EXPECT_EQ(G("ffi.DictGetItemOrMissing")(dict, "b").cast<int64_t>(), 2);
  Map map = G("ffi.Map")("x", 1).cast<Map>();
  EXPECT_EQ(G("ffi.MapGetItemOrMissing")(map, "y").cast<ObjectRef>(), missing);
  EXPECT_EQ(G("ffi.MapGetItemOrMissing")(map, "x").cast<int64_t>(), 1);

  Function it = G("ffi.DictForwardIterFunctor")(dict).cast<Function>();
  std::vector<std::pair<std::string, int64_t>> seen;
  do {
    seen.emplace_back(it(0).cast<std::string>(), it(1).cast<int64_t>());
  } while (it(2).cast<bool>());
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, int64_t>>{{"a", 3}, {"b", 2}}));
  G("ffi.DictClear")(dict);
  EXPECT_EQ(CatchError([&] { it(0); }).kind(), "IndexError") << "the live size is read";

  EXPECT_EQ(CatchError([] { G("ffi.Dict")("a"); }).kind(), "ValueError");
  EXPECT_EQ(CatchError([&] { G("ffi.DictSize")(map); }).kind(), "TypeError");
  EXPECT_EQ(CatchError([] { G("ffi.DictSetItem")(nullptr, 1, 2); }).kind(), "TypeError");
  G("ffi.DictErase")(dict, "absent");  // nothing to erase is no error, as in TVM FFI
}

TEST(ContainerGlobalsTest, ArrayContainsAndFindFirstNonCPUDevice) {
  Array array = G("ffi.Array")(1, "two", 3.5).cast<Array>();
  EXPECT_TRUE(G("ffi.ArrayContains")(array, "two").cast<bool>());
  EXPECT_TRUE(G("ffi.ArrayContains")(array, 3.5).cast<bool>());
  EXPECT_FALSE(G("ffi.ArrayContains")(array, 2).cast<bool>());
  EXPECT_EQ(CatchError([&] { G("ffi.ArrayContains")(5, 1); }).kind(), "TypeError");

  // Tensors are made on the CPU; a copy of one's header with another device stands in for a GPU
  // tensor (only the device is read).
  int64_t shape[1] = {2};
  TVMFFIObjectHandle cpu_handle = nullptr;
  ASSERT_EQ(FFIJITTensorCreateEmpty(shape, 1, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0},
                                    &cpu_handle),
            0);
  Tensor cpu(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(cpu_handle)));
  TVMFFIObjectHandle gpu_handle = nullptr;
  ASSERT_EQ(FFIJITTensorCreateEmpty(shape, 1, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0},
                                    &gpu_handle),
            0);
  Tensor gpu(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(gpu_handle)));
  reinterpret_cast<DLTensor*>(gpu.get() + 1)->device = DLDevice{kDLCUDA, 3};

  auto find = [](const Any& container) {
    return G("ffi.ContainerFindFirstNonCPUDevice")(container).cast<DLDevice>();
  };
  DLDevice none = find(Any(G("ffi.List")(cpu, G("ffi.Array")(cpu))));
  EXPECT_EQ(none.device_type, kDLCPU);
  EXPECT_EQ(none.device_id, 0);
  DLDevice found =
      find(G("ffi.List")(1, G("ffi.Dict")("k", G("ffi.Array")(cpu, gpu)), G("ffi.Map")()));
  EXPECT_EQ(found.device_type, kDLCUDA);
  EXPECT_EQ(found.device_id, 3);
  EXPECT_EQ(find(Any(gpu)).device_type, kDLCUDA);
  EXPECT_EQ(find(Any(int64_t{7})).device_type, kDLCPU);
  // A list that contains itself ends the search rather than the stack.
  List cyclic = G("ffi.List")(cpu).cast<List>();
  G("ffi.ListAppend")(cyclic, cyclic);
  EXPECT_EQ(find(Any(cyclic)).device_type, kDLCPU);
  G("ffi.ListClear")(cyclic);  // break the cycle so it is freed
}

// Structural equality and hashing, and JSON graphs, treat a List like an Array and a Dict like a
// Map, each under its own type: a List never equals an Array with the same items.
TEST(ListDictStructural, EqualityHashAndJsonGraphKeepTheType) {
  Function hash = GetGlobalFunctionOrThrow("ffi.StructuralHash");
  Function mismatch = GetGlobalFunctionOrThrow("ffi.GetFirstStructuralMismatch");
  List list{Any(1), Any("two")}, same{Any(1), Any("two")};
  Array array{Any(1), Any("two")};
  EXPECT_EQ(hash(list).cast<int64_t>(), hash(same).cast<int64_t>());
  EXPECT_NE(hash(list).cast<int64_t>(), hash(array).cast<int64_t>());
  EXPECT_TRUE(mismatch(list, same).is_none());
  EXPECT_FALSE(mismatch(list, array).is_none());
  Dict dict{{Any("k"), Any(1)}};
  Dict dict_same{{Any("k"), Any(1)}};
  Map map{{Any("k"), Any(1)}};
  EXPECT_EQ(hash(dict).cast<int64_t>(), hash(dict_same).cast<int64_t>());
  EXPECT_NE(hash(dict).cast<int64_t>(), hash(map).cast<int64_t>());
  EXPECT_TRUE(mismatch(dict, dict_same).is_none());
  EXPECT_FALSE(mismatch(dict, map).is_none());
  Function to_json = GetGlobalFunctionOrThrow("ffi.ToJSONGraphString");
  Function from_json = GetGlobalFunctionOrThrow("ffi.FromJSONGraphString");
  Any list_back = from_json(to_json(list));
  EXPECT_EQ(list_back.type_index(), kTVMFFIList);
  EXPECT_TRUE(mismatch(list_back, list).is_none());
  Any dict_back = from_json(to_json(dict));
  EXPECT_EQ(dict_back.type_index(), kTVMFFIDict);
  EXPECT_TRUE(mismatch(dict_back, dict).is_none());
}

}  // namespace
}  // namespace ffijit
#endif  // FFIJIT_TVM_FFI_HAS_LIST_DICT
