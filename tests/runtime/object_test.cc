// Objects: refcounts, the deleter protocol, weak references, opaque objects, the type registry.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "ffijit/ffijit.h"

namespace ffijit {
namespace {

// Counts how often each deleter flag arrives for opaque objects' handles.
struct Tracked {
  int* destroyed;
};
void DestroyTracked(void* handle) {
  auto* tracked = static_cast<Tracked*>(handle);
  ++*tracked->destroyed;
  delete tracked;
}

ObjectRef MakeOpaque(int* destroyed) {
  TVMFFIObjectHandle handle = nullptr;
  CheckCall(TVMFFIObjectCreateOpaque(new Tracked{destroyed}, kTVMFFIOpaquePyObject, DestroyTracked,
                                     &handle));
  return ObjectRef(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle)));
}

// A hand-made object with a recording deleter, to check the flags the runtime passes.
struct Recorder {
  TVMFFIObject header;
  std::vector<int>* flags;
};
void RecordingDeleter(void* self, int flags) {
  auto* recorder = static_cast<Recorder*>(self);
  recorder->flags->push_back(flags);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) delete recorder;
}
Recorder* NewRecorder(std::vector<int>* flags) {
  auto* recorder = new Recorder{};
  recorder->header.type_index = kTVMFFIObject;
  FFIJITHeaderSetCounts(&recorder->header, 1, 1);
  recorder->header.deleter = RecordingDeleter;
  recorder->flags = flags;
  return recorder;
}

TEST(ObjectTest, NewObjectHasOneStrongAndOneWeakReference) {
  int destroyed = 0;
  ObjectRef ref = MakeOpaque(&destroyed);
  EXPECT_EQ(FFIJITHeaderStrongCount(ref.get()), 1u);
  EXPECT_EQ(FFIJITHeaderWeakCount(ref.get()), 1u);
  EXPECT_EQ(ref.type_index(), kTVMFFIOpaquePyObject);
}

TEST(ObjectTest, CApiIncDecRefDestroysOnceAtZero) {
  int destroyed = 0;
  ObjectRef ref = MakeOpaque(&destroyed);
  TVMFFIObjectHandle handle = ref.get();
  ASSERT_EQ(TVMFFIObjectIncRef(handle), 0);
  EXPECT_EQ(ref.use_count(), 2u);
  ref = ObjectRef();
  EXPECT_EQ(destroyed, 0);
  ASSERT_EQ(TVMFFIObjectDecRef(handle), 0);
  EXPECT_EQ(destroyed, 1);
}

TEST(ObjectTest, LastStrongWithoutWeakPassesBothFlagsAtOnce) {
  std::vector<int> flags;
  Recorder* recorder = NewRecorder(&flags);
  ASSERT_EQ(TVMFFIObjectDecRef(recorder), 0);
  EXPECT_EQ(flags, std::vector<int>({kTVMFFIObjectDeleterFlagBitMaskBoth}));
}

TEST(ObjectTest, WeakReferenceOutlivesStrongOnes) {
  std::vector<int> flags;
  Recorder* recorder = NewRecorder(&flags);
  ObjectRef strong(ObjectPtr<>::Adopt(&recorder->header));
  WeakRef weak(strong);
  WeakRef weak_copy = weak;
  EXPECT_FALSE(weak.expired());
  EXPECT_EQ(weak.Lock(), strong);
  strong = ObjectRef();
  // The value is gone (flag 1) but the memory stays for the weak references.
  EXPECT_EQ(flags, std::vector<int>({kTVMFFIObjectDeleterFlagBitMaskStrong}));
  EXPECT_TRUE(weak.expired());
  EXPECT_FALSE(weak.Lock().defined());
  weak = WeakRef();
  EXPECT_EQ(flags.size(), 1u);
  weak_copy = WeakRef();
  EXPECT_EQ(flags, std::vector<int>({kTVMFFIObjectDeleterFlagBitMaskStrong,
                                     kTVMFFIObjectDeleterFlagBitMaskWeak}));
}

TEST(ObjectTest, NullHandlesAreErrorsNotCrashes) {
  EXPECT_EQ(TVMFFIObjectIncRef(nullptr), -1);
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("TVMFFIObjectIncRef"), std::string::npos);
  // TVMFFIObjectDecRef(NULL) differs by revision: abi_v0_1_test.cc checks it.
  EXPECT_EQ(TVMFFIObjectCreateOpaque(nullptr, kTVMFFIOpaquePyObject, nullptr, nullptr), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("`out`"), std::string::npos);
}

TEST(ObjectTest, OpaqueRejectsNonObjectAndUnknownTypeIndices) {
  TVMFFIObjectHandle handle = nullptr;
  EXPECT_EQ(FFIJITObjectCreateOpaqueOfType(nullptr, kTVMFFIInt, nullptr, &handle), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  EXPECT_EQ(FFIJITObjectCreateOpaqueOfType(nullptr, 100000, nullptr, &handle), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "KeyError");
  EXPECT_EQ(handle, nullptr);
}

TEST(ObjectTest, TvmFfiOpaqueTakesOnlyTheOpaquePyObjectIndex) {
  TVMFFIObjectHandle handle = nullptr;
  for (int32_t index :
       {int32_t{kTVMFFIObject}, int32_t{kTVMFFIInt}, int32_t{kTVMFFIFunction}, int32_t{100000}}) {
    int destroyed = 0;
    auto* tracked = new Tracked{&destroyed};
    EXPECT_EQ(TVMFFIObjectCreateOpaque(tracked, index, DestroyTracked, &handle), -1);
    Error error = Error::MoveFromRaised();
    EXPECT_EQ(error.kind(), "RuntimeError");
    EXPECT_EQ(error.message(), "Only kTVMFFIOpaquePyObject is supported for now");
    EXPECT_EQ(handle, nullptr);
    EXPECT_EQ(destroyed, 0);  // the caller still owns the handle
    delete tracked;
  }
  int destroyed = 0;
  ASSERT_EQ(TVMFFIObjectCreateOpaque(new Tracked{&destroyed}, kTVMFFIOpaquePyObject, DestroyTracked,
                                     &handle),
            0);
  EXPECT_EQ(static_cast<TVMFFIObject*>(handle)->type_index, kTVMFFIOpaquePyObject);
  EXPECT_EQ(TVMFFIObjectDecRef(handle), 0);
  EXPECT_EQ(destroyed, 1);
}

TEST(ObjectTest, MultithreadedRefcountStressDestroysExactlyOnce) {
  int destroyed = 0;
  ObjectRef shared = MakeOpaque(&destroyed);
  WeakRef weak(shared);
  constexpr int kThreads = 4;
  constexpr int kIterations = 100000;
  std::vector<std::thread> threads;
  std::atomic<int> promoted{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, copy = shared] {
      for (int i = 0; i < kIterations; ++i) {
        ObjectRef local = copy;
        WeakRef local_weak(local);
        if (local_weak.Lock().defined()) promoted.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  shared = ObjectRef();
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(promoted.load(), kThreads * kIterations);
  EXPECT_EQ(destroyed, 1);
  EXPECT_TRUE(weak.expired());
}

TEST(ObjectTest, ConcurrentLastReleaseAndWeakLockAgree) {
  // Races the final strong release against weak promotion: either the lock wins (and then owns
  // the value) or it sees the object dead; the value is destroyed exactly once either way.
  for (int round = 0; round < 200; ++round) {
    int destroyed = 0;
    ObjectRef strong = MakeOpaque(&destroyed);
    WeakRef weak(strong);
    std::thread releaser([&] { strong = ObjectRef(); });
    std::thread locker([&] { ObjectRef maybe = weak.Lock(); });
    releaser.join();
    locker.join();
    EXPECT_EQ(destroyed, 1);
  }
}

TEST(TypeRegistryTest, StaticKeysHaveTvmFfiIndices) {
  EXPECT_EQ(TypeKeyToIndex("ffi.Object"), kTVMFFIObject);
  EXPECT_EQ(TypeKeyToIndex("ffi.String"), kTVMFFIStr);
  EXPECT_EQ(TypeKeyToIndex("ffi.Bytes"), kTVMFFIBytes);
  EXPECT_EQ(TypeKeyToIndex("ffi.Error"), kTVMFFIError);
  EXPECT_EQ(TypeKeyToIndex("ffi.Function"), kTVMFFIFunction);
  EXPECT_EQ(TypeKeyToIndex("ffi.Shape"), kTVMFFIShape);
  EXPECT_EQ(TypeKeyToIndex("ffi.Tensor"), kTVMFFITensor);
  EXPECT_EQ(TypeKeyToIndex("ffi.Array"), kTVMFFIArray);
  EXPECT_EQ(TypeKeyToIndex("ffi.Map"), kTVMFFIMap);
  EXPECT_EQ(TypeKeyToIndex("ffi.Module"), kTVMFFIModule);
  EXPECT_EQ(TypeIndexToKey(kTVMFFIArray), "ffi.Array");
  TVMFFIAny key{};
  ASSERT_EQ(FFIJITTypeIndexToKey(kTVMFFITensor, &key), 0);
  EXPECT_EQ(Any::Adopt(key).cast<std::string>(), "ffi.Tensor");
  EXPECT_EQ(FFIJITTypeIndexToKey(5000, &key), -1);
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "KeyError");
  EXPECT_NE(error.message().find("5000"), std::string::npos);
}

TEST(TypeRegistryTest, DynamicTypesFollowTheParentChain) {
  int32_t base = RegisterType("test.Base");
  int32_t derived = RegisterType("test.Derived", base);
  int32_t other = RegisterType("test.Other");
  EXPECT_GE(base, kTVMFFIDynObjectBegin);
  EXPECT_NE(base, derived);
  EXPECT_EQ(RegisterType("test.Base"), base);  // idempotent
  EXPECT_TRUE(IsInstance(derived, base));
  EXPECT_TRUE(IsInstance(derived, kTVMFFIObject));
  EXPECT_FALSE(IsInstance(base, derived));
  EXPECT_FALSE(IsInstance(other, base));
  EXPECT_FALSE(IsInstance(kTVMFFIStr, kTVMFFIArray));
  EXPECT_EQ(FFIJITObjectIsInstance(derived, base), 1);
  EXPECT_EQ(FFIJITObjectIsInstance(-5, base), 0);

  // An object of the derived type converts to the base reference type check.
  int destroyed = 0;
  TVMFFIObjectHandle handle = nullptr;
  ASSERT_EQ(
      FFIJITObjectCreateOpaqueOfType(new Tracked{&destroyed}, derived, DestroyTracked, &handle), 0);
  ObjectRef object(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle)));
  EXPECT_EQ(object.type_index(), derived);
  object = ObjectRef();
  EXPECT_EQ(destroyed, 1);
}

TEST(TypeRegistryTest, CApiAllocatesAndLooksUp) {
  std::string key = "test.CApiType";
  TVMFFIByteArray bytes{key.data(), key.size()};
  int32_t index = TVMFFITypeGetOrAllocIndex(&bytes, -1, 1, 0, 0, kTVMFFIObject);
  ASSERT_GE(index, kTVMFFIDynObjectBegin);
  EXPECT_EQ(TVMFFITypeGetOrAllocIndex(&bytes, -1, 1, 0, 0, kTVMFFIObject), index);
  int32_t found = -1;
  ASSERT_EQ(TVMFFITypeKeyToIndex(&bytes, &found), 0);
  EXPECT_EQ(found, index);
}

TEST(TypeRegistryTest, BadRegistrationsAreErrors) {
  EXPECT_THROW(RegisterType(""), Error);
  EXPECT_THROW(RegisterType("test.BadParent", kTVMFFIInt), Error);
  EXPECT_THROW(RegisterType("test.UnknownParent", 100000), Error);
  int32_t a = RegisterType("test.A");
  RegisterType("test.B", a);
  try {
    RegisterType("test.B", kTVMFFIObject);  // same key, different parent
    FAIL() << "expected a ValueError";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "ValueError");
    EXPECT_NE(e.message().find("test.B"), std::string::npos);
  }
  std::string missing = "test.Missing";
  TVMFFIByteArray bytes{missing.data(), missing.size()};
  int32_t out = 0;
  EXPECT_EQ(TVMFFITypeKeyToIndex(&bytes, &out), -1);
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "InternalError");  // TVM FFI's kind and text
  EXPECT_EQ(error.message(), "Cannot find type `test.Missing`");
  EXPECT_EQ(out, 0);  // untouched
  EXPECT_EQ(TVMFFITypeKeyToIndex(nullptr, &out), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  EXPECT_EQ(TVMFFITypeGetOrAllocIndex(nullptr, -1, 0, 0, 0, -1), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  std::string taken = "test.Taken";
  TVMFFIByteArray taken_bytes{taken.data(), taken.size()};
  EXPECT_EQ(TVMFFITypeGetOrAllocIndex(&taken_bytes, kTVMFFIStr, 1, 0, 0, kTVMFFIObject), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("ffi.String"), std::string::npos);
  EXPECT_THROW(TypeIndexToKey(99999), Error);
}

}  // namespace
}  // namespace ffijit
