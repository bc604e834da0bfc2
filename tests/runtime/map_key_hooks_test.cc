// Map and Dict keys through their type's `__any_hash__` / `__any_equal__` hooks (v0.1.13): maps
// built by ffijit (FFIJITMapCreate, the ffi.Map and ffi.Dict globals) treat keys the hooks call
// equal as one key, as maps built by header code do, in both the small and the dense layout; and a
// hook that raises mid-insert or mid-rehash leaves the map as it was and its error reaches the
// caller.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ffijit/ffijit.h"
#include "reflected_types.h"

namespace ffijit {
namespace {

#if FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT

Function Global(const char* name) {
  TVMFFIByteArray key{name, std::strlen(name)};
  TVMFFIObjectHandle func = nullptr;
  CheckCall(TVMFFIFunctionGetGlobal(&key, &func));
  if (func == nullptr) throw Error("KeyError", std::string("no global ") + name);
  return Function(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(func)));
}

Any StructuralKey(const Any& value) {
  static Function make = Global("ffi.StructuralKey");
  return make(value);
}

// A map of keys[i] -> i through the C API.
Map MakeMap(const std::vector<Any>& keys) {
  std::vector<TVMFFIAny> k, v;
  for (size_t i = 0; i < keys.size(); ++i) {
    k.push_back(keys[i].raw());
    TVMFFIAny value{};
    value.type_index = kTVMFFIInt;
    value.v_int64 = static_cast<int64_t>(i);
    v.push_back(value);
  }
  TVMFFIObjectHandle out = nullptr;
  CheckCall(FFIJITMapCreate(k.data(), v.data(), static_cast<int64_t>(k.size()), &out));
  return Map(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(out)));
}

int64_t ValueAt(const Map& map, const Any& key) {
  std::optional<AnyView> value = map.Get(key);
  if (!value) return -1;
  return value->cast<int64_t>();
}

TEST(MapKeyHooksTest, StructurallyEqualKeysAreOneKeyInMapsFfijitBuilds) {
  // Small (at most 4 entries) and dense layouts.
  for (int extra : {0, 20}) {
    SCOPED_TRACE("extra keys: " + std::to_string(extra));
    Any first = StructuralKey(Array{Any(1), Any(2)});
    Any second = StructuralKey(Array{Any(1), Any(2)});  // equal, not identical
    ASSERT_NE(first.raw().v_obj, second.raw().v_obj);
    std::vector<Any> keys = {first};
    for (int i = 0; i < extra; ++i) keys.push_back(Any(int64_t{1000 + i}));
    keys.push_back(second);
    Map map = MakeMap(keys);
    EXPECT_EQ(map.size(), static_cast<int64_t>(extra + 1)) << "the key is present once";
    // First position, last value.
    const int64_t last = static_cast<int64_t>(keys.size() - 1);
    EXPECT_EQ(ValueAt(map, first), last);
    Any third = StructuralKey(Array{Any(1), Any(2)});
    EXPECT_EQ(ValueAt(map, third), last) << "found by an equal but not identical key";
    EXPECT_EQ(ValueAt(map, StructuralKey(Array{Any(1), Any(3)})), -1);
  }
}

TEST(MapKeyHooksTest, TheMapAndDictGlobalsUseTheHooksToo) {
  Any a = StructuralKey(Array{Any("x")});
  Any b = StructuralKey(Array{Any("x")});
  Map map = Global("ffi.Map")(a, 1, b, 2).cast<Map>();
  EXPECT_EQ(map.size(), 1);
  EXPECT_EQ(Global("ffi.MapGetItem")(map, StructuralKey(Array{Any("x")})).cast<int64_t>(), 2);
  EXPECT_EQ(Global("ffi.MapCount")(map, b).cast<int64_t>(), 1);

  Any dict = Global("ffi.Dict")(a, 1);
  Global("ffi.DictSetItem")(dict, b, 5);
  EXPECT_EQ(Global("ffi.DictSize")(dict).cast<int64_t>(), 1);
  EXPECT_EQ(Global("ffi.DictGetItem")(dict, StructuralKey(Array{Any("x")})).cast<int64_t>(), 5);
  // Grown past the small layout, then erased through an equal key.
  for (int i = 0; i < 40; ++i) Global("ffi.DictSetItem")(dict, StructuralKey(Array{Any(i)}), i);
  EXPECT_EQ(Global("ffi.DictSize")(dict).cast<int64_t>(), 41);
  for (int i = 0; i < 40; ++i) {
    Global("ffi.DictSetItem")(dict, StructuralKey(Array{Any(i)}), i + 100);
  }
  EXPECT_EQ(Global("ffi.DictSize")(dict).cast<int64_t>(), 41);
  EXPECT_EQ(Global("ffi.DictGetItem")(dict, StructuralKey(Array{Any(7)})).cast<int64_t>(), 107);
  Global("ffi.DictErase")(dict, StructuralKey(Array{Any(7)}));
  EXPECT_EQ(Global("ffi.DictSize")(dict).cast<int64_t>(), 40);
  EXPECT_EQ(Global("ffi.DictCount")(dict, StructuralKey(Array{Any(7)})).cast<int64_t>(), 0);
  EXPECT_EQ(Global("ffi.DictCount")(dict, StructuralKey(Array{Any(8)})).cast<int64_t>(), 1);
}

// ---- A key type whose hooks are Functions that raise on demand ----

// Keys of type hk.Key compare by slot 0 (an int) and hash by it modulo 4 (so dense tables get long
// same-home lists and relocations); every hook call counts down `calls_left` and raises a
// ValueError when it reaches zero (never, while negative).
int64_t calls_left = -1;

void CountDown() {
  if (calls_left < 0) return;
  if (calls_left-- == 0) throw Error("ValueError", "hook raised on purpose");
}

int64_t IdOf(const AnyView& key) {
  return reinterpret_cast<const reflected_test::SlotObj*>(key.raw().v_obj)->slots[0].v_int64;
}

int32_t KeyType() {
  static const int32_t type = [] {
    int32_t index = reflected_test::RegisterSlotType("hk.Key", -1, {{"id"}});
    reflected_test::SetTypeAttr(
        index, "__any_hash__",
        Any(Function::FromPacked([](const AnyView* args, int32_t, Any* result) {
          CountDown();
          *result = IdOf(args[0]) % 4;
        })));
    reflected_test::SetTypeAttr(
        index, "__any_equal__",
        Any(Function::FromPacked([](const AnyView* args, int32_t, Any* result) {
          CountDown();
          *result = IdOf(args[0]) == IdOf(args[1]);
        })));
    return index;
  }();
  return type;
}

Any Key(int64_t id) {
  return reflected_test::MakeSlotObj(KeyType(), {Any(id)});
}

// The dict's entries as (id, value) pairs in iteration order.
std::vector<std::pair<int64_t, int64_t>> Snapshot(const Any& dict) {
  std::vector<std::pair<int64_t, int64_t>> entries;
  int64_t size = 0;
  CheckCall(FFIJITMapSize(dict.raw().v_obj, &size));
  for (int64_t i = 0; i < size; ++i) {
    const TVMFFIAny* key = nullptr;
    const TVMFFIAny* value = nullptr;
    CheckCall(FFIJITMapItemAt(dict.raw().v_obj, i, &key, &value));
    entries.emplace_back(IdOf(AnyView(*key)), value->v_int64);
  }
  return entries;
}

// The value under `key` in a map or dict, -1 when absent.
int64_t Lookup(const Any& map, const Any& key) {
  const TVMFFIAny* value = nullptr;
  CheckCall(FFIJITMapGet(map.raw().v_obj, &key.raw(), &value));
  return value == nullptr ? -1 : value->v_int64;
}

TEST(MapKeyHooksTest, FunctionHooksDecideEqualityInBothLayouts) {
  calls_left = -1;
  for (int n : {3, 30}) {
    std::vector<Any> keys;
    for (int i = 0; i < n; ++i) keys.push_back(Key(i));
    keys.push_back(Key(1));  // a second key with id 1
    Map map = MakeMap(keys);
    EXPECT_EQ(map.size(), n);
    EXPECT_EQ(ValueAt(map, Key(1)), n);
    EXPECT_EQ(ValueAt(map, Key(n + 5)), -1);
  }
}

TEST(MapKeyHooksTest, AHookRaisingMidInsertOrRehashLeavesTheDictUnchanged) {
  calls_left = -1;
  Function set = Global("ffi.DictSetItem");
  Function erase = Global("ffi.DictErase");
  // 24 entries: a new key goes in place (dense, maybe relocating another list); 31: the next key
  // makes the dict rehash into a bigger table (header code's load limit, 0.99 of 32 slots).
  for (int size : {24, 31}) {
    SCOPED_TRACE("entries: " + std::to_string(size));
    Any dict = Global("ffi.Dict")();
    for (int i = 0; i < size; ++i) set(dict, Key(i), i);
    const auto before = Snapshot(dict);
    ASSERT_EQ(before.size(), static_cast<size_t>(size));
    // Raise at each hook call an insertion makes, one after the other (hashing the new key,
    // comparing it along its list, hashing keys a relocation or the rehash moves), until the
    // insertion makes fewer calls than that. Every failure leaves the dict as it was.
    int failures = 0;
    for (int64_t fail_at = 0; fail_at < 400; ++fail_at) {
      calls_left = fail_at;
      try {
        set(dict, Key(1000), 77);
      } catch (const Error& error) {
        ++failures;
        calls_left = -1;
        EXPECT_EQ(error.kind(), "ValueError");
        EXPECT_NE(error.message().find("hook raised on purpose"), std::string::npos)
            << error.message();
        ASSERT_EQ(Snapshot(dict), before) << "after a failure at hook call " << fail_at;
        for (int i = 0; i < size; ++i) ASSERT_EQ(Lookup(dict, Key(i)), i) << "key " << i;
        ASSERT_EQ(Lookup(dict, Key(1000)), -1);
        continue;
      }
      calls_left = -1;
      EXPECT_EQ(Lookup(dict, Key(1000)), 77);
      EXPECT_EQ(Snapshot(dict).size(), static_cast<size_t>(size + 1));
      break;  // past the last hook call the insertion makes
    }
    EXPECT_EQ(calls_left, -1);
    // The rehash hashes every key: many more calls than an in-place insertion.
    EXPECT_GT(failures, size == 31 ? size : 1);
    erase(dict, Key(1000));
    EXPECT_EQ(Snapshot(dict), before);
  }
  // A raising hook during a map's construction: an error, no map.
  calls_left = 5;
  std::vector<TVMFFIAny> k, v;
  std::vector<Any> keys;
  for (int i = 0; i < 10; ++i) keys.push_back(Key(i));
  for (const Any& key : keys) {
    k.push_back(key.raw());
    v.push_back(key.raw());
  }
  TVMFFIObjectHandle out = nullptr;
  EXPECT_EQ(FFIJITMapCreate(k.data(), v.data(), 10, &out), -1);
  calls_left = -1;
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(out, nullptr);
  // Lookups report the error too.
  Map map = MakeMap(keys);
  calls_left = 0;
  const TVMFFIAny* found = nullptr;
  EXPECT_EQ(FFIJITMapGet(map.get(), &keys[3].raw(), &found), -1);
  calls_left = -1;
  EXPECT_EQ(Error::MoveFromRaised().message(), "hook raised on purpose");
}

TEST(MapKeyHooksTest, HooksOfTheWrongKindAreTypeErrors) {
  calls_left = -1;
  int32_t index = reflected_test::RegisterSlotType("hk.BadKey", -1, {{"id"}});
  reflected_test::SetTypeAttr(index, "__any_hash__", Any(int64_t{7}));
  Any a = reflected_test::MakeSlotObj(index, {Any(1)});
  std::vector<TVMFFIAny> k = {a.raw()}, v = {a.raw()};
  TVMFFIObjectHandle out = nullptr;
  EXPECT_EQ(FFIJITMapCreate(k.data(), v.data(), 1, &out), -1);
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "TypeError");
  EXPECT_NE(error.message().find("__any_hash__"), std::string::npos) << error.message();
}

// A hook as header code compiles one: a function pointer taking `const Any&` that reports failure
// by throwing tvm::ffi::Error. For key 13 it lets through what ffi.StructuralKey's own hash hook
// (a runtime function that throws tvm::ffi::Error the way header code does) throws for a key that
// is not a StructuralKey; the map turns it back into the same error (kind and message).
int64_t ThrowingHash(const TVMFFIAny* key) {
  if (IdOf(AnyView(*key)) == 13) {
    const TVMFFIByteArray name{"__any_hash__", 12};
    const TVMFFIAny* hook = FFIJITTypeAttrColumnEntry(TVMFFIGetTypeAttrColumn(&name),
                                                      StructuralKey(Any(1)).raw().type_index);
    return reinterpret_cast<int64_t (*)(const TVMFFIAny*)>(hook->v_ptr)(key);
  }
  return IdOf(AnyView(*key));
}

TEST(MapKeyHooksTest, AFunctionPointerHookThrowingTvmErrorsIsAnError) {
  calls_left = -1;
  int32_t index = reflected_test::RegisterSlotType("hk.ThrowingKey", -1, {{"id"}});
  TVMFFIAny pointer{};
  pointer.type_index = kTVMFFIOpaquePtr;
  pointer.v_ptr = reinterpret_cast<void*>(&ThrowingHash);
  reflected_test::SetTypeAttr(index, "__any_hash__", Any(AnyView(pointer)));
  std::vector<Any> keys;
  for (int64_t id : {1, 2, 3, 4, 5, 6, 13}) {
    keys.push_back(reflected_test::MakeSlotObj(index, {Any(id)}));
  }
  // Without 13 the map builds (dense: the hook hashes every key) and finds its keys.
  Map fine = MakeMap(std::vector<Any>(keys.begin(), keys.end() - 1));
  EXPECT_EQ(ValueAt(fine, keys[1]), 1);
  std::vector<TVMFFIAny> k, v;
  for (const Any& key : keys) {
    k.push_back(key.raw());
    v.push_back(key.raw());
  }
  TVMFFIObjectHandle out = nullptr;
  ASSERT_EQ(FFIJITMapCreate(k.data(), v.data(), static_cast<int64_t>(k.size()), &out), -1);
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "TypeError");
  EXPECT_EQ(error.message(), "the map key must be an `ffi.StructuralKey`, not `hk.ThrowingKey`");
  EXPECT_EQ(out, nullptr);
  // A dense map hashes the key it looks up.
  const TVMFFIAny* found = nullptr;
  EXPECT_EQ(FFIJITMapGet(fine.get(), &keys.back().raw(), &found), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "TypeError");
}

#endif  // FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT

}  // namespace
}  // namespace ffijit
