// Host entries (ffijit/jit/host_entry.h) against a toy object model: the inline conversions, the
// result boxing, every way out to the host's fallback, errors raised as the packed call raises
// them, the lock released around the call, and the work left for a call holding it. No Python: the
// entry knows only what the model tells it.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>

#include "ffijit/error.h"
#include "ffijit/jit/bridge.h"
#include "ffijit/jit/host_entry.h"
#include "register_canaries.h"
#if FFIJIT_HAVE_STENCILS
#include "stencils/link/code_memory.h"
#endif

namespace ffijit::testing {
namespace {

extern "C" {
int64_t toy_add3(int64_t a, int64_t b, int64_t c) {
  return a + 10 * b + 100 * c;
}
double toy_mix(int32_t a, double b, bool c, DLDevice d) {
  return a + b + (c ? 1000 : 0) + d.device_id * 10000;
}
bool toy_is_negative(int64_t x) {
  return x < 0;
}
int64_t toy_length(const char* s, void* p) {
  return static_cast<int64_t>(std::strlen(s)) + (p == nullptr ? 0 : 100);
}
void toy_nothing() {}
int64_t toy_sub3(int64_t a, int64_t b, int64_t c) {
  return a - b - c;
}
int64_t toy_first_byte(const char* s) {
  return static_cast<unsigned char>(s[0]) + 1000 * static_cast<int64_t>(std::strlen(s));
}
// What the model's lock_holder and lock_calls say while the native runs.
const void* g_lock_holder = nullptr;
uint64_t g_lock_calls = 0;
const void* g_holder_seen = nullptr;
uint64_t g_calls_seen = 0;
int64_t toy_watch_holder(int64_t x) {
  g_holder_seen = g_lock_holder;
  g_calls_seen = g_lock_calls;
  return x;
}
// The model's held_work: what a thread that could not wait for the lock leaves the call to do.
int g_work_item = 0;
void* g_held_work = nullptr;
int g_work_runs = 0;
const void* g_holder_at_work = nullptr;
int64_t toy_leave_work(int64_t x) {
  g_held_work = &g_work_item;
  return x;
}
void toy_leave_work_no_result(int64_t) {
  g_held_work = &g_work_item;
}
void toy_run_held_work() {
  ++g_work_runs;
  g_holder_at_work = g_lock_holder;
  g_held_work = nullptr;
}
}

// A toy object: a refcount word, a type pointer, a value.
struct ToyObject {
  intptr_t refcount;
  const void* type;
  union {
    int64_t i;
    double d;
    const char* s;
    DLDevice device;
  };
};
char kIntType, kFloatType, kStrType, kDeviceType, kOtherType, kNoneType, kBoolType;
// An int of this value "does not fit" (as a host's big int would not).
constexpr int64_t kTooBig = INT64_MIN;

struct Toy {
  ToyObject none{1, &kNoneType, {0}};
  ToyObject yes{1, &kBoolType, {1}};
  ToyObject no{1, &kBoolType, {0}};
  std::deque<ToyObject> made;
  bool error = false;
  int str_data_calls = 0;
  int fallbacks = 0, raised = 0, releases = 0, acquires = 0, last_rc = 0;
  ToyObject fallback_result{1, &kOtherType, {0}};

  ToyObject* Int(int64_t v) { return &made.emplace_back(ToyObject{1, &kIntType, {v}}); }
  ToyObject* Float(double v) {
    ToyObject* o = &made.emplace_back(ToyObject{1, &kFloatType, {0}});
    o->d = v;
    return o;
  }
  ToyObject* Str(const char* v) {
    ToyObject* o = &made.emplace_back(ToyObject{1, &kStrType, {0}});
    o->s = v;
    return o;
  }
  ToyObject* Device(int32_t id) {
    ToyObject* o = &made.emplace_back(ToyObject{1, &kDeviceType, {0}});
    o->device = DLDevice{kDLCPU, id};
    return o;
  }
};
Toy* g_toy = nullptr;

FFIJITHostModel ToyModel() {
  FFIJITHostModel m{};
  m.type_offset = offsetof(ToyObject, type);
  m.float_value_offset = offsetof(ToyObject, d);
  m.device_value_offset = offsetof(ToyObject, device);
  m.dtype_value_offset = offsetof(ToyObject, i);
  m.plain_refcount = 1;
  m.tensor_slot_size = 8;
  m.self_function_offset = -1;  // one function's code (SharedBySignature tests the other form)
  m.str_flags_offset = -1;      // every str through str_data (StrBytesReadInPlace: the other)
  m.int_type = &kIntType;
  m.float_type = &kFloatType;
  m.str_type = &kStrType;
  m.device_type = &kDeviceType;
  m.dtype_type = &kOtherType;
  m.none = &g_toy->none;
  m.true_value = &g_toy->yes;
  m.false_value = &g_toy->no;
  m.int_value = [](void* o) -> int64_t {
    int64_t v = static_cast<ToyObject*>(o)->i;
    if (v == kTooBig) {
      g_toy->error = true;
      return -1;
    }
    return v;
  };
  m.error_occurred = []() -> void* { return g_toy->error ? g_toy : nullptr; };
  m.clear_error = [] { g_toy->error = false; };
  m.str_data = [](void* o) -> const char* {
    ++g_toy->str_data_calls;
    const char* s = static_cast<ToyObject*>(o)->s;
    return std::strcmp(s, "decline") == 0 ? nullptr : s;
  };
  m.pointer_to_any = [](void*, TVMFFIAny*) { return 0; };
  m.borrow_tensor = [](void*, void*) -> DLTensor* { return nullptr; };
  m.release_tensor = [](void*) {};
  m.new_int = [](int64_t v) -> void* { return g_toy->Int(v); };
  m.new_float = [](double v) -> void* { return g_toy->Float(v); };
  m.new_ref = [](void* o) -> void* {
    ++static_cast<ToyObject*>(o)->refcount;
    return o;
  };
  m.box_result = [](TVMFFIAny*) -> void* { return nullptr; };
  m.raise_error = [](int rc) -> void* {
    ++g_toy->raised;
    g_toy->last_rc = rc;
    return nullptr;
  };
  m.release_lock = []() -> void* {
    ++g_toy->releases;
    return g_toy;
  };
  m.acquire_lock = [](void* state) {
    EXPECT_EQ(state, g_toy);
    ++g_toy->acquires;
  };
  m.fallback = [](void*, void* const*, intptr_t, void*) -> void* {
    ++g_toy->fallbacks;
    return &g_toy->fallback_result;
  };
  return m;
}

using Entry = void* (*)(void* self, void* const* args, intptr_t nargs, void* kwnames);

// The toy's functions and entries, released after each test. `tier_`: 0 (LLVM) or
// kFFIJITHostEntryStencil, added to every compile's flags.
class ToyEntries {
 protected:
  void Start(int tier) {
    tier_ = tier;
    g_toy = &toy_;
  }
  void Finish() {
    for (FFIJITHostEntry* e : entries_) FFIJITHostEntryRelease(e);
    for (TVMFFIObjectHandle f : functions_) TVMFFIObjectDecRef(f);
    g_toy = nullptr;
  }
  TVMFFIObjectHandle Make(void* native, const char* metadata, int flags = 0) {
    TVMFFIObjectHandle f = nullptr;
    EXPECT_EQ(FFIJITMakeFunction(native, metadata, kFFIJITFormatJson, flags, "toy", &f), 0);
    functions_.push_back(f);
    return f;
  }
  Entry Compile(TVMFFIObjectHandle f, int flags = 0) { return Compile(f, ToyModel(), flags); }
  Entry Compile(TVMFFIObjectHandle f, FFIJITHostModel model, int flags = 0) {
    FFIJITHostEntry* entry = nullptr;
    if (FFIJITHostEntryCompile(f, &model, flags | tier_, &entry) != 0) {
      ADD_FAILURE() << Error::MoveFromRaised().what();
      return nullptr;
    }
    entries_.push_back(entry);
    EXPECT_GT(FFIJITHostEntryCompileNanos(entry), 0);
    return reinterpret_cast<Entry>(FFIJITHostEntryAddress(entry));
  }
  template <typename... Objects>
  ToyObject* Call(Entry entry, Objects*... objects) {
    void* args[] = {objects..., nullptr};
    return static_cast<ToyObject*>(entry(nullptr, args, sizeof...(objects), nullptr));
  }

  int tier_ = 0;
  Toy toy_;
  std::vector<TVMFFIObjectHandle> functions_;
  std::vector<FFIJITHostEntry*> entries_;
};

// Every test on both tiers.
class HostEntry : public ToyEntries, public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { Start(GetParam()); }
  void TearDown() override { Finish(); }
};

TEST_P(HostEntry, ConvertsCallsAndBoxes) {
  Entry add3 = Compile(
      Make(reinterpret_cast<void*>(&toy_add3), R"({"a":["i64","i64","i64"],"r":["i64"],"v":1})"));
  ASSERT_NE(add3, nullptr);
  ToyObject* r = Call(add3, toy_.Int(1), toy_.Int(2), toy_.Int(3));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->type, &kIntType);
  EXPECT_EQ(r->i, 321);
  EXPECT_EQ(toy_.fallbacks, 0);

  Entry mix = Compile(Make(reinterpret_cast<void*>(&toy_mix),
                           R"({"a":["i32","f64","i1","Device"],"r":["f64"],"v":1})"));
  r = Call(mix, toy_.Int(2), toy_.Float(0.5), &toy_.yes, toy_.Device(3));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->type, &kFloatType);
  EXPECT_EQ(r->d, 31002.5);
  r = Call(mix, toy_.Int(2), toy_.Int(4), &toy_.no, toy_.Device(0));  // an int for a float
  EXPECT_EQ(r->d, 6.0);

  Entry length = Compile(
      Make(reinterpret_cast<void*>(&toy_length), R"({"a":["str","ptr"],"r":["i64"],"v":1})"));
  EXPECT_EQ(Call(length, toy_.Str("four"), &toy_.none)->i, 4);
  EXPECT_EQ(toy_.fallbacks, 0);
}

// A u64 result: an Int where it fits int64 (boxed from the packed result), the packed call's
// error where it does not.
extern "C" uint64_t toy_twice_u64(uint64_t x) {
  return 2 * x;
}

TEST_P(HostEntry, ResultsBoxedFromThePackedResult) {
  Entry twice =
      Compile(Make(reinterpret_cast<void*>(&toy_twice_u64), R"({"a":["u64"],"r":["u64"],"v":1})"));
  ASSERT_NE(twice, nullptr);
  ToyObject* r = Call(twice, toy_.Int(21));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->type, &kIntType);
  EXPECT_EQ(r->i, 42);
  EXPECT_EQ(Call(twice, toy_.Int(int64_t{1} << 62)), nullptr);  // 2**63 has no Int
  EXPECT_EQ(toy_.raised, 1);
  EXPECT_NE(std::string(Error::MoveFromRaised().what()).find("u64"), std::string::npos);
  EXPECT_EQ(toy_.fallbacks, 0);
}

TEST_P(HostEntry, BoolAndNoneResultsAreNewReferences) {
  Entry negative =
      Compile(Make(reinterpret_cast<void*>(&toy_is_negative), R"({"a":["i64"],"r":["i1"],"v":1})"));
  EXPECT_EQ(Call(negative, toy_.Int(-5)), &toy_.yes);
  EXPECT_EQ(Call(negative, toy_.Int(5)), &toy_.no);
  EXPECT_EQ(toy_.yes.refcount, 2);
  EXPECT_EQ(toy_.no.refcount, 2);
  Entry nothing = Compile(Make(reinterpret_cast<void*>(&toy_nothing), R"({"a":[],"r":[],"v":1})"));
  EXPECT_EQ(Call(nothing), &toy_.none);
  EXPECT_EQ(toy_.none.refcount, 2);
  // A host whose references are not a plain count: through new_ref.
  static int new_refs = 0;
  new_refs = 0;
  FFIJITHostModel model = ToyModel();
  model.plain_refcount = 0;
  model.new_ref = [](void* o) -> void* {
    ++new_refs;
    static_cast<ToyObject*>(o)->refcount += 10;
    return o;
  };
  Entry negative_ref = Compile(functions_[0], model);
  EXPECT_EQ(Call(negative_ref, toy_.Int(-1)), &toy_.yes);
  EXPECT_EQ(toy_.yes.refcount, 12);
  Entry nothing_ref = Compile(functions_[1], model);
  EXPECT_EQ(Call(nothing_ref), &toy_.none);
  EXPECT_EQ(toy_.none.refcount, 12);
  EXPECT_EQ(new_refs, 2);
}

TEST_P(HostEntry, AnythingElseGoesToTheFallbackUntouched) {
  TVMFFIObjectHandle f =
      Make(reinterpret_cast<void*>(&toy_add3), R"({"a":["i64","i64","i64"],"r":["i64"],"v":1})");
  Entry add3 = Compile(f);
  ToyObject other{1, &kOtherType, {0}};
  EXPECT_EQ(Call(add3, toy_.Int(1), &other, toy_.Int(3)), &toy_.fallback_result);
  EXPECT_EQ(Call(add3, toy_.Int(1), toy_.Int(2)), &toy_.fallback_result);  // the count
  EXPECT_EQ(Call(add3, toy_.Int(1), toy_.Int(2), toy_.Float(3)), &toy_.fallback_result);
  // A value that does not fit: the host's error is cleared before the fallback sees the call.
  EXPECT_EQ(Call(add3, toy_.Int(1), toy_.Int(2), toy_.Int(kTooBig)), &toy_.fallback_result);
  EXPECT_FALSE(toy_.error);
  // Keywords.
  void* args[] = {toy_.Int(1), toy_.Int(2), toy_.Int(3)};
  EXPECT_EQ(add3(nullptr, args, 3, &other), &toy_.fallback_result);
  EXPECT_EQ(toy_.fallbacks, 5);
  Entry length = Compile(
      Make(reinterpret_cast<void*>(&toy_length), R"({"a":["str","ptr"],"r":["i64"],"v":1})"));
  EXPECT_EQ(Call(length, toy_.Str("decline"), &toy_.none), &toy_.fallback_result);
  EXPECT_EQ(Call(length, toy_.Str("x"), toy_.Int(7)), &toy_.fallback_result);  // declined
  EXPECT_EQ(toy_.fallbacks, 7);
  EXPECT_EQ(toy_.raised, 0);
}

TEST_P(HostEntry, ConversionErrorsAreThePackedCallsErrors) {
  TVMFFIObjectHandle f = Make(reinterpret_cast<void*>(&toy_mix),
                              R"({"a":["i32","f64","i1","Device"],"r":["f64"],"v":1})");
  Entry mix = Compile(f);
  // 2**40 is an Int, so the entry passes it on; the call refuses it for the i32.
  EXPECT_EQ(Call(mix, toy_.Int(int64_t{1} << 40), toy_.Float(1), &toy_.yes, toy_.Device(0)),
            nullptr);
  EXPECT_EQ(toy_.raised, 1);
  EXPECT_NE(toy_.last_rc, 0);
  Error from_entry = Error::MoveFromRaised();
  TVMFFIAny args[4] = {};
  args[0].type_index = kTVMFFIInt;
  args[0].v_int64 = int64_t{1} << 40;
  args[1].type_index = kTVMFFIFloat;
  args[1].v_float64 = 1;
  args[2].type_index = kTVMFFIBool;
  args[2].v_int64 = 1;
  args[3].type_index = kTVMFFIDevice;
  args[3].v_device = DLDevice{kDLCPU, 0};
  TVMFFIAny result{};
  ASSERT_NE(TVMFFIFunctionCall(f, args, 4, &result), 0);
  Error from_call = Error::MoveFromRaised();
  EXPECT_EQ(from_entry.kind(), from_call.kind());
  EXPECT_EQ(from_entry.message(), from_call.message());
}

TEST_P(HostEntry, ReleasesTheLockAroundTheCall) {
  Entry add3 = Compile(
      Make(reinterpret_cast<void*>(&toy_add3), R"({"a":["i64","i64","i64"],"r":["i64"],"v":1})"),
      kFFIJITHostEntryReleaseLock);
  EXPECT_EQ(Call(add3, toy_.Int(1), toy_.Int(1), toy_.Int(1))->i, 111);
  EXPECT_EQ(toy_.releases, 1);
  EXPECT_EQ(toy_.acquires, 1);
  ToyObject other{1, &kOtherType, {0}};
  Call(add3, &other, toy_.Int(1), toy_.Int(1));  // never reaches the call
  EXPECT_EQ(toy_.releases, 1);
}

// A call that keeps the lock records, while it runs, the name `self` holds and one more call;
// the previous holder comes back after it. A call that releases the lock records nothing.
TEST_P(HostEntry, RecordsWhichCallHoldsTheLock) {
  struct NamedSelf {
    intptr_t refcount;
    const char* name;
  } self{1, "toy.watch"};
  FFIJITHostModel model = ToyModel();
  model.lock_holder = &g_lock_holder;
  model.lock_calls = &g_lock_calls;
  model.self_name_offset = offsetof(NamedSelf, name);
  TVMFFIObjectHandle f =
      Make(reinterpret_cast<void*>(&toy_watch_holder), R"({"a":["i64"],"r":["i64"],"v":1})");
  Entry watch = Compile(f, model);
  ASSERT_NE(watch, nullptr);
  const char* outer = "outer";
  g_lock_holder = outer;
  g_lock_calls = 7;
  void* args[] = {toy_.Int(5)};
  auto* r = static_cast<ToyObject*>(watch(&self, args, 1, nullptr));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->i, 5);
  EXPECT_EQ(g_holder_seen, static_cast<const void*>(self.name));
  EXPECT_EQ(g_calls_seen, 8u);
  EXPECT_EQ(g_lock_holder, static_cast<const void*>(outer));
  EXPECT_EQ(g_lock_calls, 8u);

  Entry released = Compile(f, model, kFFIJITHostEntryReleaseLock);
  ASSERT_NE(released, nullptr);
  g_holder_seen = nullptr;
  static_cast<void>(released(&self, args, 1, nullptr));
  EXPECT_EQ(g_holder_seen, static_cast<const void*>(outer));
  EXPECT_EQ(g_lock_calls, 8u);
  g_lock_holder = nullptr;

  model.lock_calls = nullptr;  // lock_holder without lock_calls
  FFIJITHostEntry* entry = nullptr;
  EXPECT_NE(FFIJITHostEntryCompile(f, &model, tier_, &entry), 0);
  EXPECT_NE(std::string(Error::MoveFromRaised().what()).find("lock_calls is NULL"),
            std::string::npos);
}

// After a call that recorded itself as the lock's holder, work left in held_work runs, the
// previous holder back; never after a call that released the lock, nor when none is left.
TEST_P(HostEntry, RunsTheWorkThreadsLeftTheCallHoldingTheLock) {
  struct NamedSelf {
    intptr_t refcount;
    const char* name;
  } self{1, "toy.work"};
  FFIJITHostModel model = ToyModel();
  model.lock_holder = &g_lock_holder;
  model.lock_calls = &g_lock_calls;
  model.self_name_offset = offsetof(NamedSelf, name);
  model.held_work = &g_held_work;
  model.run_held_work = toy_run_held_work;
  const char* outer = "outer";
  g_lock_holder = outer;
  g_work_runs = 0;
  void* args[] = {toy_.Int(5), nullptr};
  Entry leave = Compile(
      Make(reinterpret_cast<void*>(&toy_leave_work), R"({"a":["i64"],"r":["i64"],"v":1})"), model);
  ASSERT_NE(leave, nullptr);
  auto* r = static_cast<ToyObject*>(leave(&self, args, 1, nullptr));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->i, 5);
  EXPECT_EQ(g_work_runs, 1);
  EXPECT_EQ(g_holder_at_work, static_cast<const void*>(outer));
  EXPECT_EQ(g_held_work, nullptr);
  Entry no_result = Compile(
      Make(reinterpret_cast<void*>(&toy_leave_work_no_result), R"({"a":["i64"],"r":[],"v":1})"),
      model);
  ASSERT_NE(no_result, nullptr);
  EXPECT_EQ(no_result(&self, args, 1, nullptr), &toy_.none);
  EXPECT_EQ(g_work_runs, 2);
  Entry watch = Compile(
      Make(reinterpret_cast<void*>(&toy_watch_holder), R"({"a":["i64"],"r":["i64"],"v":1})"),
      model);
  ASSERT_NE(watch, nullptr);
  static_cast<void>(watch(&self, args, 1, nullptr));
  EXPECT_EQ(g_work_runs, 2);  // none left
  Entry released =
      Compile(Make(reinterpret_cast<void*>(&toy_leave_work), R"({"a":["i64"],"r":["i64"],"v":1})"),
              model, kFFIJITHostEntryReleaseLock);
  ASSERT_NE(released, nullptr);
  static_cast<void>(released(&self, args, 1, nullptr));
  EXPECT_EQ(g_work_runs, 2);
  EXPECT_EQ(g_held_work, static_cast<void*>(&g_work_item));
  g_held_work = nullptr;
  g_lock_holder = nullptr;

  TVMFFIObjectHandle f = functions_.front();
  FFIJITHostEntry* entry = nullptr;
  model.run_held_work = nullptr;
  EXPECT_NE(FFIJITHostEntryCompile(f, &model, tier_, &entry), 0);
  EXPECT_NE(std::string(Error::MoveFromRaised().what())
                .find("run_held_work is NULL while held_work is given"),
            std::string::npos);
  model.run_held_work = toy_run_held_work;
  model.lock_holder = nullptr;
  EXPECT_NE(FFIJITHostEntryCompile(f, &model, tier_, &entry), 0);
  EXPECT_NE(std::string(Error::MoveFromRaised().what())
                .find("lock_holder is NULL while held_work is given"),
            std::string::npos);
}

// The host object an entry is called with, holding its function.
struct ToySelf {
  intptr_t refcount;
  TVMFFIObjectHandle function;
};

TEST_P(HostEntry, SharedBySignature) {
  FFIJITHostModel model = ToyModel();
  model.self_function_offset = offsetof(ToySelf, function);
  const char* three_ints = R"({"a":["i64","i64","i64"],"r":["i64"],"v":1})";
  ToySelf add{1, Make(reinterpret_cast<void*>(&toy_add3), three_ints)};
  ToySelf sub{1, Make(reinterpret_cast<void*>(&toy_sub3), three_ints)};
  FFIJITHostEntry* add_entry = nullptr;
  FFIJITHostEntry* sub_entry = nullptr;
  ASSERT_EQ(FFIJITHostEntryCompile(add.function, &model, tier_, &add_entry), 0);
  ASSERT_EQ(FFIJITHostEntryCompile(sub.function, &model, tier_, &sub_entry), 0);
  void* args[] = {toy_.Int(100), toy_.Int(20), toy_.Int(3)};
  if (tier_ == kFFIJITHostEntryStencil) {
    // A stencil entry's code is its own: each calls its function, whatever self holds.
    auto add_code = reinterpret_cast<Entry>(FFIJITHostEntryAddress(add_entry));
    auto sub_code = reinterpret_cast<Entry>(FFIJITHostEntryAddress(sub_entry));
    EXPECT_NE(add_code, sub_code);
    EXPECT_EQ(static_cast<ToyObject*>(add_code(&sub, args, 3, nullptr))->i, 100 + 200 + 300);
    EXPECT_EQ(static_cast<ToyObject*>(sub_code(&add, args, 3, nullptr))->i, 100 - 20 - 3);
    FFIJITHostEntryRelease(add_entry);
    EXPECT_EQ(static_cast<ToyObject*>(sub_code(&sub, args, 3, nullptr))->i, 77);
    FFIJITHostEntryRelease(sub_entry);
    return;
  }
  // One code; each call reaches the native of the function its self holds.
  auto code = reinterpret_cast<Entry>(FFIJITHostEntryAddress(add_entry));
  EXPECT_EQ(FFIJITHostEntryAddress(sub_entry), FFIJITHostEntryAddress(add_entry));
  EXPECT_EQ(static_cast<ToyObject*>(code(&add, args, 3, nullptr))->i, 100 + 200 + 300);
  EXPECT_EQ(static_cast<ToyObject*>(code(&sub, args, 3, nullptr))->i, 100 - 20 - 3);
  // Another signature, other flags or another model: other code.
  ToySelf mix{1, Make(reinterpret_cast<void*>(&toy_mix),
                      R"({"a":["i32","f64","i1","Device"],"r":["f64"],"v":1})")};
  EXPECT_NE(Compile(mix.function, model), code);
  EXPECT_NE(Compile(add.function, model, kFFIJITHostEntryReleaseLock), code);
  FFIJITHostModel other_model = model;
  other_model.dtype_value_offset = offsetof(ToyObject, type);
  EXPECT_NE(Compile(add.function, other_model), code);
  // The code lives while an entry does.
  FFIJITHostEntryRelease(add_entry);
  EXPECT_EQ(static_cast<ToyObject*>(code(&sub, args, 3, nullptr))->i, 77);
  FFIJITHostEntryRelease(sub_entry);
  Entry again = Compile(add.function, model);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(static_cast<ToyObject*>(again(&add, args, 3, nullptr))->i, 600);
  EXPECT_EQ(toy_.fallbacks, 0);
}

// A str holding its bytes: `flags` says whether they are in `bytes` (from `skip` on); str_data
// reads `s`.
struct ToyStr {
  intptr_t refcount;
  const void* type;
  const char* s;
  uint32_t flags;
  int64_t length;
  alignas(8) char bytes[40];
};
constexpr uint32_t kBytesInObject = 0x30;

ToyStr InObject(const std::string& text, size_t skip = 0) {
  ToyStr str{1, &kStrType, "unused", kBytesInObject | 0x1, static_cast<int64_t>(text.size()), {}};
  std::memset(str.bytes, 'z', sizeof str.bytes);  // past the terminator: not NUL
  std::memcpy(str.bytes + skip, text.data(), text.size());
  str.bytes[skip + text.size()] = '\0';
  return str;
}

TEST_P(HostEntry, StrBytesReadInPlace) {
  // Bytes 8-aligned in the object (scanned a word at a time), and unaligned (scanned by memchr).
  for (size_t skip : {0, 3}) {
    FFIJITHostModel model = ToyModel();
    model.str_flags_offset = offsetof(ToyStr, flags);
    model.str_inline_mask = kBytesInObject;
    model.str_length_offset = offsetof(ToyStr, length);
    model.str_inline_data_offset = static_cast<int32_t>(offsetof(ToyStr, bytes) + skip);
    Entry first = Compile(
        Make(reinterpret_cast<void*>(&toy_first_byte), R"({"a":["str"],"r":["i64"],"v":1})"),
        model);
    ASSERT_NE(first, nullptr);
    auto call = [&](ToyStr str) {
      void* args[] = {&str};
      return static_cast<ToyObject*>(first(nullptr, args, 1, nullptr));
    };
    toy_.str_data_calls = toy_.fallbacks = 0;
    // Every length around a word and around the scan's switch to memchr, without a NUL: read in
    // place.
    for (size_t n = 1; n < sizeof(ToyStr::bytes) - skip; ++n) {
      EXPECT_EQ(call(InObject(std::string(n, 'a'), skip))->i, 'a' + 1000 * static_cast<int64_t>(n))
          << "skip " << skip << " length " << n;
    }
    EXPECT_EQ(call(InObject("", skip))->i, 0);
    EXPECT_EQ(toy_.str_data_calls, 0);
    EXPECT_EQ(toy_.fallbacks, 0);
    // A NUL at any place inside: the native would see a shorter string, so the generic path
    // decides.
    int expected_fallbacks = 0;
    for (size_t n : {1, 7, 8, 9, 16, 23, 31, 32, 33, 36}) {
      for (size_t at = 0; at < n; ++at) {
        std::string text(n, 'b');
        text[at] = '\0';
        EXPECT_EQ(call(InObject(text, skip)), &toy_.fallback_result)
            << "skip " << skip << " length " << n << " NUL at " << at;
        ++expected_fallbacks;
      }
    }
    EXPECT_EQ(toy_.fallbacks, expected_fallbacks);
    // One flag of two: the host's str_data reads it.
    ToyStr elsewhere{1, &kStrType, "xyz!", 0x10, 0, ""};
    EXPECT_EQ(call(elsewhere)->i, 'x' + 4000);
    EXPECT_EQ(toy_.str_data_calls, 1);
  }
}

TEST_P(HostEntry, InterpretOnlyFunctionsGetNone) {
  FFIJITHostModel model = ToyModel();
  FFIJITHostEntry* entry = nullptr;
  TVMFFIObjectHandle f =
      Make(reinterpret_cast<void*>(&toy_add3), R"({"a":["i64","i64","i64"],"r":["i64"],"v":1})",
           kFFIJITInterpretOnly);
  ASSERT_NE(FFIJITHostEntryCompile(f, &model, tier_, &entry), 0);
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "RuntimeError");
  EXPECT_NE(error.message().find("interpret-only"), std::string::npos) << error.message();
}

TEST_P(HostEntry, RefusedWithTheReason) {
  FFIJITHostModel model = ToyModel();
  FFIJITHostEntry* entry = nullptr;
  TVMFFIObjectHandle structure =
      Make(reinterpret_cast<void*>(&toy_add3),
           R"({"a":[["sdict",["a","i64"]],"i64","i64"],"r":["i64"],"v":1})");
  ASSERT_NE(FFIJITHostEntryCompile(structure, &model, tier_, &entry), 0);
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "RuntimeError");
  EXPECT_NE(error.message().find("argument #0"), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("structure"), std::string::npos) << error.message();
  EXPECT_EQ(entry, nullptr);
}

#if FFIJIT_HAVE_STENCILS
INSTANTIATE_TEST_SUITE_P(Tiers, HostEntry, ::testing::Values(0, kFFIJITHostEntryStencil),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == 0 ? std::string("Llvm") : std::string("Stencil");
                         });
#else
INSTANTIATE_TEST_SUITE_P(Tiers, HostEntry, ::testing::Values(0),
                         [](const ::testing::TestParamInfo<int>&) { return std::string("Llvm"); });
#endif

#if FFIJIT_HAVE_STENCILS
// ---- what only stencil entries do ----

class StencilHostEntry : public ToyEntries, public ::testing::Test {
 protected:
  void SetUp() override { Start(kFFIJITHostEntryStencil); }
  void TearDown() override { Finish(); }
};

// An int as CPython lays it out: a size or tag word, then 30-bit digits.
struct ToyLong {
  intptr_t refcount;
  const void* type;
  int64_t size;
  uint32_t digits[2];
};

TEST_F(StencilHostEntry, ReadsSmallIntsInPlace) {
  int int_value_calls = 0;
  static int* calls = nullptr;
  calls = &int_value_calls;
  const char* one_int = R"({"a":["i64"],"r":["i64"],"v":1})";
  auto identity = +[](int64_t x) { return x; };
  TVMFFIObjectHandle f = Make(reinterpret_cast<void*>(identity), one_int);
  auto half_of = +[](double x) { return x / 2; };
  TVMFFIObjectHandle halve =
      Make(reinterpret_cast<void*>(half_of), R"({"a":["f64"],"r":["f64"],"v":1})");
  for (int layout : {kFFIJITHostIntSizedDigits, kFFIJITHostIntTaggedDigits}) {
    FFIJITHostModel model = ToyModel();
    model.int_layout = layout;
    model.int_size_offset = offsetof(ToyLong, size);
    model.int_digits_offset = offsetof(ToyLong, digits);
    // Every int the host reads itself: two digits, value = digit0 + digit1 * 2**30, sign from the
    // size word.
    model.int_value = [](void* o) -> int64_t {
      ++*calls;
      auto* l = static_cast<ToyLong*>(o);
      return int64_t{l->digits[0]} + (int64_t{l->digits[1]} << 30);
    };
    Entry entry = Compile(f, model);
    ASSERT_NE(entry, nullptr);
    auto call = [&](int64_t size, uint32_t digit0, uint32_t digit1 = 0) {
      ToyLong value{1, &kIntType, size, {digit0, digit1}};
      void* args[] = {&value};
      return static_cast<ToyObject*>(entry(nullptr, args, 1, nullptr))->i;
    };
    int_value_calls = 0;
    if (layout == kFFIJITHostIntSizedDigits) {
      EXPECT_EQ(call(1, 12345), 12345);
      EXPECT_EQ(call(-1, 77), -77);
      EXPECT_EQ(call(0, 0), 0);
      EXPECT_EQ(call(1, (1u << 30) - 1), (1 << 30) - 1);
      EXPECT_EQ(int_value_calls, 0);
      EXPECT_EQ(call(2, 5, 1), 5 + (int64_t{1} << 30));  // two digits: the host's
    } else {
      EXPECT_EQ(call(0 | (1 << 3), 12345), 12345);  // positive, one digit
      EXPECT_EQ(call(2 | (1 << 3), 77), -77);       // negative
      EXPECT_EQ(call(1, 0), 0);                     // zero
      EXPECT_EQ(int_value_calls, 0);
      EXPECT_EQ(call(0 | (2 << 3), 5, 1), 5 + (int64_t{1} << 30));
    }
    EXPECT_EQ(int_value_calls, 1);
    // An int for a float parameter: read in place when small too (its stencil's out-of-line part).
    Entry half = Compile(halve, model);
    ASSERT_NE(half, nullptr);
    auto call_half = [&](void* arg) {
      void* args[] = {arg};
      return static_cast<ToyObject*>(half(nullptr, args, 1, nullptr));
    };
    const int64_t small_size = layout == kFFIJITHostIntSizedDigits ? -1 : 2 | (1 << 3);
    const int64_t large_size = layout == kFFIJITHostIntSizedDigits ? 2 : 0 | (2 << 3);
    ToyLong minus_seven{1, &kIntType, small_size, {7, 0}};
    ToyLong large{1, &kIntType, large_size, {0, 1}};
    EXPECT_EQ(call_half(toy_.Float(5.0))->d, 2.5);
    EXPECT_EQ(call_half(&minus_seven)->d, -3.5);
    EXPECT_EQ(int_value_calls, 1);
    EXPECT_EQ(call_half(&large)->d, static_cast<double>(int64_t{1} << 29));
    EXPECT_EQ(int_value_calls, 2);
    ToyObject other{1, &kOtherType, {0}};
    EXPECT_EQ(call_half(&other), &toy_.fallback_result);
  }
  FFIJITHostModel bad = ToyModel();
  bad.int_layout = 7;
  FFIJITHostEntry* entry = nullptr;
  EXPECT_NE(FFIJITHostEntryCompile(f, &bad, kFFIJITHostEntryStencil, &entry), 0);
  EXPECT_NE(std::string(Error::MoveFromRaised().what()).find("int_layout 7"), std::string::npos);
  bad.int_layout = kFFIJITHostIntSizedDigits;
  bad.int_size_offset = 5000;
  EXPECT_NE(FFIJITHostEntryCompile(f, &bad, kFFIJITHostEntryStencil, &entry), 0);
  EXPECT_NE(std::string(Error::MoveFromRaised().what()).find("int_size_offset 5000"),
            std::string::npos);
}

// The count of calls in `self`: the call that brings it to zero goes to count_reached.
struct CountingSelf {
  intptr_t refcount;
  int64_t count;
};

TEST_F(StencilHostEntry, CountsCallsDownToTheHost) {
  static int reached = 0;
  reached = 0;
  FFIJITHostModel model = ToyModel();
  model.self_count_offset = offsetof(CountingSelf, count);
  model.count_reached = [](void*, void* const*, intptr_t nargs, void*) -> void* {
    ++reached;
    EXPECT_EQ(nargs, 3);
    return &g_toy->fallback_result;
  };
  Entry add3 = Compile(
      Make(reinterpret_cast<void*>(&toy_add3), R"({"a":["i64","i64","i64"],"r":["i64"],"v":1})"),
      model);
  CountingSelf self{1, 3};
  void* args[] = {toy_.Int(1), toy_.Int(2), toy_.Int(3)};
  EXPECT_EQ(static_cast<ToyObject*>(add3(&self, args, 3, nullptr))->i, 321);
  EXPECT_EQ(static_cast<ToyObject*>(add3(&self, args, 3, nullptr))->i, 321);
  EXPECT_EQ(add3(&self, args, 3, nullptr), &toy_.fallback_result);
  EXPECT_EQ(reached, 1);
  EXPECT_EQ(self.count, 0);
  // Below zero it never reaches zero again.
  EXPECT_EQ(static_cast<ToyObject*>(add3(&self, args, 3, nullptr))->i, 321);
  EXPECT_EQ(reached, 1);
  // A wrong count or keywords go to the fallback before anything is counted.
  EXPECT_EQ(add3(&self, args, 2, nullptr), &toy_.fallback_result);
  EXPECT_EQ(self.count, -1);
  model.self_count_offset = -1;
  FFIJITHostEntry* entry = nullptr;
  EXPECT_NE(FFIJITHostEntryCompile(functions_.back(), &model, kFFIJITHostEntryStencil, &entry), 0);
  EXPECT_NE(std::string(Error::MoveFromRaised().what()).find("self_count_offset -1"),
            std::string::npos);
}

// A tensor: a DLTensor inside the host's object.
char kTensorType;
struct ToyTensor {
  intptr_t refcount = 1;
  const void* type = &kTensorType;
  DLTensor tensor{};
  int64_t shape[1] = {4};
  float data[4] = {1, 2, 3, 4};
  ToyTensor() {
    tensor.data = data;
    tensor.device = DLDevice{kDLCPU, 0};
    tensor.ndim = 1;
    tensor.dtype = DLDataType{kDLFloat, 32, 1};
    tensor.shape = shape;
  }
  ToyTensor(const ToyTensor&) = delete;
  ToyTensor& operator=(const ToyTensor&) = delete;
};
extern "C" double toy_sum4(DLTensor* t, int64_t scale) {
  double total = 0;
  for (int64_t i = 0; i < t->shape[0]; ++i) total += static_cast<const float*>(t->data)[i];
  return total * static_cast<double>(scale);
}

TEST_F(StencilHostEntry, BorrowsTensorsAndReleasesThem) {
  static int borrowed = 0, released = 0;
  borrowed = released = 0;
  FFIJITHostModel model = ToyModel();
  model.tensor_slot_size = 16;
  model.borrow_tensor = [](void* obj, void* slot) -> DLTensor* {
    auto* t = static_cast<ToyTensor*>(obj);
    if (t->type != &kTensorType) return nullptr;
    ++borrowed;
    *static_cast<void**>(slot) = obj;  // the slot holds what release_tensor gets back
    return &t->tensor;
  };
  model.release_tensor = [](void* slot) {
    EXPECT_EQ(static_cast<ToyTensor*>(*static_cast<void**>(slot))->type, &kTensorType);
    ++released;
  };
  ToyTensor t;
  // Any length (the stencil thunk's chain is entered) and length 4 only (a static dim: the
  // stencil thunks do not check those, so the entry calls the function's packed entry).
  for (const char* sig : {R"({"a":[["ndarray","f32",1,null],"i64"],"r":["f64"],"v":1})",
                          R"({"a":[["ndarray","f32",1,4],"i64"],"r":["f64"],"v":1})"}) {
    Entry sum = Compile(Make(reinterpret_cast<void*>(&toy_sum4), sig), model);
    ASSERT_NE(sum, nullptr) << sig;
    EXPECT_EQ(Call(sum, &t, toy_.Int(2))->d, 20.0) << sig;
    ToyObject other{1, &kOtherType, {0}};
    EXPECT_EQ(Call(sum, &other, toy_.Int(2)), &toy_.fallback_result) << sig;  // not a tensor
    EXPECT_EQ(Call(sum, &t, &other), &toy_.fallback_result) << sig;  // checked before borrowing
  }
  EXPECT_EQ(borrowed, 2);
  EXPECT_EQ(released, 2);
  // Wrong shape: the thunk's error, with the tensor released.
  int64_t five[1] = {5};
  t.tensor.shape = five;
  Entry sum = Compile(Make(reinterpret_cast<void*>(&toy_sum4),
                           R"({"a":[["ndarray","f32",1,4],"i64"],"r":["f64"],"v":1})"),
                      model);
  EXPECT_EQ(Call(sum, &t, toy_.Int(1)), nullptr);
  EXPECT_EQ(toy_.raised, 1);
  EXPECT_EQ(borrowed, released);
  // Slots beyond the entry's frame: refused.
  model.tensor_slot_size = 4096;
  FFIJITHostEntry* entry = nullptr;
  EXPECT_NE(FFIJITHostEntryCompile(functions_.back(), &model, kFFIJITHostEntryStencil, &entry), 0);
  EXPECT_NE(std::string(Error::MoveFromRaised().what()).find("slots need 4096 bytes"),
            std::string::npos);
}

TEST_F(StencilHostEntry, RefusesMoreArgumentsThanItCovers) {
  std::string sig = R"({"a":[)";
  for (int i = 0; i < 17; ++i) sig += i == 0 ? R"("i64")" : R"(,"i64")";
  sig += R"(],"r":["i64"],"v":1})";
  TVMFFIObjectHandle f = Make(reinterpret_cast<void*>(&toy_add3), sig.c_str());
  FFIJITHostModel model = ToyModel();
  FFIJITHostEntry* entry = nullptr;
  EXPECT_NE(FFIJITHostEntryCompile(f, &model, kFFIJITHostEntryStencil, &entry), 0);
  Error error = Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "RuntimeError");
  EXPECT_NE(error.message().find("more than 16 arguments"), std::string::npos) << error.message();
}

TEST_F(StencilHostEntry, CodeIsFreedWithTheEntry) {
  TVMFFIObjectHandle f =
      Make(reinterpret_cast<void*>(&toy_add3), R"({"a":["i64","i64","i64"],"r":["i64"],"v":1})");
  FFIJITHostModel model = ToyModel();
  const int64_t before = stencils::LiveCodeBlocks();
  FFIJITHostEntry* entry = nullptr;
  ASSERT_EQ(FFIJITHostEntryCompile(f, &model, kFFIJITHostEntryStencil, &entry), 0);
  EXPECT_EQ(stencils::LiveCodeBlocks(), before + 1);
  auto code = reinterpret_cast<Entry>(FFIJITHostEntryAddress(entry));
  void* args[] = {toy_.Int(1), toy_.Int(2), toy_.Int(3)};
  EXPECT_EQ(static_cast<ToyObject*>(code(nullptr, args, 3, nullptr))->i, 321);
  FFIJITHostEntryRelease(entry);
  EXPECT_EQ(stencils::LiveCodeBlocks(), before);
}

#if defined(__x86_64__)
// Every way out of an x86-64 stencil entry (a host call stencil, the thunk's call and the return
// stencil, the packed entry, the interpreter on a value the thunk refuses, the generic path from an
// argument stencil or its out-of-line part, a tensor miss, the count reached, a wrong count or
// keywords; recording the lock holder or releasing the lock) leaves the registers the C ABI keeps
// as they were, gives what the same call gives without the harness, and puts the lock holder back.
TEST_F(StencilHostEntry, EveryWayOutKeepsTheCallersRegisters) {
  static int reached = 0;
  reached = 0;
  struct Self {
    intptr_t refcount;
    const char* name;
    int64_t count;
  } self{1, "toy.kept", INT64_MAX};
  FFIJITHostModel model = ToyModel();
  model.lock_holder = &g_lock_holder;
  model.lock_calls = &g_lock_calls;
  model.self_name_offset = offsetof(Self, name);
  model.self_count_offset = offsetof(Self, count);
  model.count_reached = [](void*, void* const*, intptr_t, void*) -> void* {
    ++reached;
    return &g_toy->fallback_result;
  };
  model.tensor_slot_size = 8;
  model.borrow_tensor = [](void* obj, void* slot) -> DLTensor* {
    auto* t = static_cast<ToyTensor*>(obj);
    if (t->type != &kTensorType) return nullptr;
    *static_cast<void**>(slot) = obj;
    return &t->tensor;
  };
  model.held_work = &g_held_work;
  model.run_held_work = toy_run_held_work;
  const char* outer = "outer";
  g_lock_holder = outer;
  auto expect_kept = [&](Entry entry, std::vector<void*> args, const std::string& what,
                         void* kwnames = nullptr, int64_t count = INT64_MAX) {
    const auto nargs = static_cast<intptr_t>(args.size());
    args.push_back(nullptr);
    uint64_t out[6] = {};
    self.count = count;
    void* kept = reinterpret_cast<void*>(ffijit_tests::CallWithCanaries(
        reinterpret_cast<const void*>(entry), reinterpret_cast<uint64_t>(&self),
        reinterpret_cast<uint64_t>(args.data()), static_cast<uint64_t>(nargs),
        reinterpret_cast<uint64_t>(kwnames), out));
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(out[i], ffijit_tests::kRegisterCanaries[i]) << what << ": register " << i;
    EXPECT_EQ(g_lock_holder, static_cast<const void*>(outer)) << what;
    const bool raised = toy_.raised != 0;
    toy_.raised = 0;
    self.count = count;
    void* plain = entry(&self, args.data(), nargs, kwnames);
    EXPECT_EQ(raised, toy_.raised != 0) << what;
    toy_.raised = 0;
    if (kept == nullptr || plain == nullptr) {
      EXPECT_EQ(kept, plain) << what;
      if (raised) Error::MoveFromRaised();
      return;
    }
    auto* a = static_cast<ToyObject*>(kept);
    auto* b = static_cast<ToyObject*>(plain);
    EXPECT_EQ(a->type, b->type) << what;
    EXPECT_EQ(a->i, b->i) << what;
  };
  const char* three_ints = R"({"a":["i64","i64","i64"],"r":["i64"],"v":1})";
  TVMFFIObjectHandle add3 = Make(reinterpret_cast<void*>(&toy_add3), three_ints);
  for (int flags : {0, int{kFFIJITHostEntryReleaseLock}}) {
    const std::string lock = flags == 0 ? "" : " (the lock released)";
    Entry add = Compile(add3, model, flags);
    ASSERT_NE(add, nullptr);
    ToyObject other{1, &kOtherType, {0}};
    expect_kept(add, {toy_.Int(1), toy_.Int(2), toy_.Int(3)}, "a host call stencil" + lock);
    expect_kept(add, {toy_.Int(1), &other, toy_.Int(3)}, "an argument's miss" + lock);
    expect_kept(add, {toy_.Int(1), toy_.Int(2), toy_.Int(kTooBig)}, "the host's int" + lock);
    expect_kept(add, {toy_.Int(1), toy_.Int(2)}, "a wrong count" + lock);
    expect_kept(add, {toy_.Int(1), toy_.Int(2), toy_.Int(3)}, "keywords" + lock, &other);
    expect_kept(add, {toy_.Int(1), toy_.Int(2), toy_.Int(3)}, "the count reached" + lock, nullptr,
                1);
  }
  EXPECT_EQ(reached, 4);
  Entry twice = Compile(
      Make(reinterpret_cast<void*>(&toy_twice_u64), R"({"a":["u64"],"r":["u64"],"v":1})"), model);
  expect_kept(twice, {toy_.Int(21)}, "the thunk's call and the return stencil");
  expect_kept(twice, {toy_.Int(int64_t{1} << 62)}, "the return stencil raising");
  Entry mix = Compile(Make(reinterpret_cast<void*>(&toy_mix),
                           R"({"a":["i32","f64","i1","Device"],"r":["f64"],"v":1})"),
                      model);
  expect_kept(mix, {toy_.Int(int64_t{1} << 40), toy_.Float(1), &toy_.yes, toy_.Device(0)},
              "the interpreter, from the thunk's stencils");
  Entry length = Compile(
      Make(reinterpret_cast<void*>(&toy_length), R"({"a":["str","ptr"],"r":["i64"],"v":1})"),
      model);
  expect_kept(length, {toy_.Str("four"), &toy_.none}, "str and ptr");
  expect_kept(length, {toy_.Str("decline"), &toy_.none}, "an out-of-line part's miss");
  Entry nothing =
      Compile(Make(reinterpret_cast<void*>(&toy_nothing), R"({"a":[],"r":[],"v":1})"), model);
  expect_kept(nothing, {}, "no arguments, no result");
  Entry leave = Compile(
      Make(reinterpret_cast<void*>(&toy_leave_work), R"({"a":["i64"],"r":["i64"],"v":1})"), model);
  g_work_runs = 0;
  expect_kept(leave, {toy_.Int(3)}, "the held work's call");
  EXPECT_EQ(g_work_runs, 2);
  ToyTensor t;
  for (const char* sig : {R"({"a":[["ndarray","f32",1,null],"i64"],"r":["f64"],"v":1})",
                          R"({"a":[["ndarray","f32",1,4],"i64"],"r":["f64"],"v":1})"}) {
    Entry sum = Compile(Make(reinterpret_cast<void*>(&toy_sum4), sig), model);
    ToyObject other{1, &kOtherType, {0}};
    expect_kept(sum, {&t, toy_.Int(2)}, std::string("a tensor: ") + sig);
    expect_kept(sum, {&other, toy_.Int(2)}, std::string("a tensor's miss: ") + sig);
  }
  g_lock_holder = nullptr;
  g_lock_calls = 0;
}
#endif  // __x86_64__
#endif  // FFIJIT_HAVE_STENCILS

}  // namespace
}  // namespace ffijit::testing
