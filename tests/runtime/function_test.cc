// Functions: packed and typed C++ callables, C safe_calls, error propagation, the global registry.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "catch_error.h"
#include "ffijit/ffijit.h"
#include "finishes_in_time.h"

namespace ffijit {
namespace {

using ffijit_tests::CatchError;

int64_t Add3(int64_t a, int64_t b, int64_t c) {
  return a + b + c;
}

TEST(FunctionTest, TypedFunctionConvertsArgumentsAndResult) {
  Function add = Function::FromTyped(Add3, "add3");
  EXPECT_EQ(add(1, 2, 3).cast<int64_t>(), 6);
  EXPECT_EQ(add(true, 2, int8_t{3}).cast<int64_t>(), 6);
  Function concat = Function::FromTyped(
      [](const std::string& a, String b) { return a + std::string(b.view()); }, "concat");
  EXPECT_EQ(concat("abc", "defghijk").cast<std::string>(), "abcdefghijk");
  Function none = Function::FromTyped([]() {}, "none");
  EXPECT_TRUE(none().is_none());
  Function scale = Function::FromTyped([](float x, double k) { return x * k; }, "scale");
  EXPECT_DOUBLE_EQ(scale(2, 1.5).cast<double>(), 3.0);
}

TEST(FunctionTest, TypedFunctionReportsArgumentPositionAndName) {
  Function add = Function::FromTyped(Add3, "add3");
  Error wrong_type = CatchError([&] { add(1, "two", 3); });
  EXPECT_EQ(wrong_type.kind(), "TypeError");
  EXPECT_NE(wrong_type.message().find("argument #1"), std::string::npos) << wrong_type.what();
  EXPECT_NE(wrong_type.message().find("`add3`"), std::string::npos);
  EXPECT_NE(wrong_type.message().find("expected `i64` but got `str`"), std::string::npos);

  Error arity = CatchError([&] { add(1, 2); });
  EXPECT_EQ(arity.kind(), "TypeError");
  EXPECT_NE(arity.message().find("expected 3 but got 2"), std::string::npos) << arity.what();

  Function narrow = Function::FromTyped([](int8_t x) { return x; }, "narrow");
  Error range = CatchError([&] { narrow(300); });
  EXPECT_EQ(range.kind(), "ValueError");
  EXPECT_NE(range.message().find("value 300 is out of range for `i8`"), std::string::npos)
      << range.what();
}

// A `const char*` parameter of a typed C++ callable takes a string only whole: one with a NUL
// inside (a SmallStr or a Str) is a ValueError, never the part before the NUL.
TEST(FunctionTest, TypedCStringParameterRefusesANulInside) {
  Function length = Function::FromTyped(
      [](const char* s) { return static_cast<int64_t>(std::strlen(s)); }, "length");
  EXPECT_EQ(length("abc").cast<int64_t>(), 3);
  EXPECT_EQ(length(std::string("a longer string object")).cast<int64_t>(), 22);
  for (const std::string& text : {std::string("ab\0cd", 5), std::string("\0", 1),
                                  std::string("a longer string object\0", 23)}) {
    Error e = CatchError([&] { length(text); });
    EXPECT_EQ(e.kind(), "ValueError");
    EXPECT_EQ(e.message(),
              "Mismatched type on argument #0 when calling `length`: the str contains "
              "a NUL character (at byte " +
                  std::to_string(text.find('\0')) + " of " + std::to_string(text.size()) +
                  "), which a C string would cut short; take it as a std::string or "
                  "pass bytes instead");
  }
  EXPECT_EQ(CatchError([] { Any(std::string("x\0y", 3)).cast<const char*>(); }).kind(),
            "ValueError");
}

TEST(FunctionTest, CppExceptionsBecomeErrorsAtTheBoundary) {
  Function throws_std = Function::FromTyped([]() -> int { throw std::out_of_range("boom"); });
  Error error = CatchError([&] { throws_std(); });
  EXPECT_EQ(error.kind(), "RuntimeError");
  EXPECT_EQ(error.message(), "boom");

  Function throws_ffi = Function::FromPacked([](const AnyView*, int32_t, Any*) {
    throw Error("KeyError", "missing thing", "  File \"x.cc\", line 1, in f\n");
  });
  // Through the C entry point: -1 and a raised error, never an exception.
  TVMFFIAny result{};
  EXPECT_EQ(TVMFFIFunctionCall(throws_ffi.get(), nullptr, 0, &result), -1);
  Error raised = Error::MoveFromRaised();
  EXPECT_EQ(raised.kind(), "KeyError");
  EXPECT_EQ(raised.message(), "missing thing");
  EXPECT_EQ(raised.traceback(), "  File \"x.cc\", line 1, in f\n");
}

TEST(FunctionTest, CalleeErrorsReachTheCallerIntact) {
  Function inner = Function::FromPacked([](const AnyView*, int32_t, Any*) {
    throw Error("ValueError", "bad shape", "inner traceback\n");
  });
  Function outer = Function::FromTyped([inner](int x) { return inner(x); }, "outer");
  Error error = CatchError([&] { outer(1); });
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "bad shape");
  EXPECT_EQ(error.traceback(), "inner traceback\n");
  EXPECT_EQ(std::string(error.what()), "ValueError: bad shape");
}

TEST(FunctionTest, PackedFunctionSeesArgumentsAsViews) {
  Function count = Function::FromPacked([](const AnyView* args, int32_t n, Any* result) {
    int64_t total = 0;
    for (int32_t i = 0; i < n; ++i) total += args[i].cast<int64_t>();
    *result = total;
  });
  EXPECT_EQ(count().cast<int64_t>(), 0);
  EXPECT_EQ(count(1, 2, 3, 4).cast<int64_t>(), 10);
  Function echo = Function::FromPacked(
      [](const AnyView* args, int32_t, Any* result) { *result = args[0].ToOwned(); });
  Any echoed = echo(std::string("a string that lives on the heap"));
  EXPECT_EQ(echoed.cast<std::string>(), "a string that lives on the heap");
  Any function_result = Function::FromTyped([echo]() { return echo; })();
  EXPECT_EQ(function_result.type_index(), kTVMFFIFunction);
}

// What a callee saw of each argument, recorded during the call.
struct SeenArg {
  int32_t type_index = -1;
  const void* pointer = nullptr;  // the object, or a RawStr's characters
  uint64_t strong_refs = 0;       // of an object argument
  std::string chars;              // of a str argument, whatever its form
};

Function Recorder(std::vector<SeenArg>* seen) {
  return Function::FromPacked([seen](const AnyView* args, int32_t n, Any*) {
    for (int32_t i = 0; i < n; ++i) {
      const TVMFFIAny& raw = args[i].raw();
      SeenArg arg;
      arg.type_index = raw.type_index;
      if (raw.type_index >= kTVMFFIStaticObjectBegin) {
        arg.pointer = raw.v_obj;
        arg.strong_refs = FFIJITHeaderStrongCount(raw.v_obj);
      }
      if (raw.type_index == kTVMFFIRawStr) arg.pointer = raw.v_c_str;
      if (details::IsStrForm(raw.type_index)) arg.chars = args[i].cast<std::string>();
      seen->push_back(arg);
    }
  });
}

TEST(FunctionTest, CppCallsLendObjectsWithoutCountingReferences) {
  std::vector<SeenArg> seen;
  Function record = Recorder(&seen);
  Tensor tensor = Tensor::Empty({2}, DataType("float32"));
  String text("a heap string, longer than seven bytes");
  Function other = Function::FromTyped([] { return 1; });
  Array array{1, 2};
  Tensor null_tensor;
  std::optional<Tensor> maybe_tensor(tensor);  // a second reference, taken before counting
  ASSERT_FALSE(text.is_inline());
  const uint64_t tensor_refs = FFIJITHeaderStrongCount(tensor.get());
  const uint64_t text_refs = FFIJITHeaderStrongCount(text.any().v_obj);
  const uint64_t other_refs = FFIJITHeaderStrongCount(other.get());
  const uint64_t array_refs = FFIJITHeaderStrongCount(array.get());

  record(tensor, text, other, array, null_tensor, maybe_tensor);
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[0].type_index, kTVMFFITensor);
  EXPECT_EQ(seen[0].pointer, tensor.get());
  EXPECT_EQ(seen[0].strong_refs, tensor_refs);
  EXPECT_EQ(seen[1].type_index, kTVMFFIStr);
  EXPECT_EQ(seen[1].pointer, text.any().v_obj);
  EXPECT_EQ(seen[1].strong_refs, text_refs);
  EXPECT_EQ(seen[1].chars, text.str());
  EXPECT_EQ(seen[2].type_index, kTVMFFIFunction);
  EXPECT_EQ(seen[2].strong_refs, other_refs);
  EXPECT_EQ(seen[3].type_index, kTVMFFIArray);
  EXPECT_EQ(seen[3].strong_refs, array_refs);
  EXPECT_EQ(seen[4].type_index, kTVMFFINone);
  EXPECT_EQ(seen[5].pointer, tensor.get());
  EXPECT_EQ(seen[5].strong_refs, tensor_refs);
  // Nothing was taken or left behind either.
  EXPECT_EQ(FFIJITHeaderStrongCount(tensor.get()), tensor_refs);
  EXPECT_EQ(FFIJITHeaderStrongCount(text.any().v_obj), text_refs);
}

TEST(FunctionTest, CppCallsLendStringsWithoutCopying) {
  std::vector<SeenArg> seen;
  Function record = Recorder(&seen);
  std::string long_text = "a std::string well over seven bytes";
  const char* c_text = "a C string";
  char buffer[] = "a mutable C string";
  record(long_text, c_text, buffer, "a literal", static_cast<const char*>(nullptr));
  ASSERT_EQ(seen.size(), 5u);
  // RawStr over the caller's own characters: no allocation, no copy.
  EXPECT_EQ(seen[0].type_index, kTVMFFIRawStr);
  EXPECT_EQ(seen[0].pointer, long_text.c_str());
  EXPECT_EQ(seen[0].chars, long_text);
  EXPECT_EQ(seen[1].type_index, kTVMFFIRawStr);
  EXPECT_EQ(seen[1].pointer, c_text);
  EXPECT_EQ(seen[2].type_index, kTVMFFIRawStr);
  EXPECT_EQ(seen[2].pointer, buffer);
  EXPECT_EQ(seen[3].type_index, kTVMFFIRawStr);
  EXPECT_EQ(seen[3].chars, "a literal");
  EXPECT_EQ(seen[4].type_index, kTVMFFINone);  // a NULL C string, as TypeTraits converts it
}

// Characters a RawStr would cut short (an embedded NUL) or cannot carry (a view has no
// terminator) arrive whole: inline up to 7 bytes, else as a String made for the call.
TEST(FunctionTest, CppCallsNeverTruncateStrings) {
  std::vector<SeenArg> seen;
  Function record = Recorder(&seen);
  const std::string with_nul("long head\0and the tail after it", 32);
  const std::string short_with_nul("a\0b", 3);
  const std::string short_text = "seven!!";
  const std::string backing = "0123456789abcdefghij";
  std::string_view long_view = std::string_view(backing).substr(2, 12);  // no NUL at its end
  std::string_view short_view = std::string_view(backing).substr(0, 4);
  record(with_nul, short_with_nul, short_text, long_view, short_view);
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0].type_index, kTVMFFIStr);
  EXPECT_EQ(seen[0].chars, with_nul);
  EXPECT_EQ(seen[0].chars.size(), 32u);
  EXPECT_EQ(seen[1].type_index, kTVMFFISmallStr);
  EXPECT_EQ(seen[1].chars, short_with_nul);
  EXPECT_EQ(seen[2].type_index, kTVMFFISmallStr);
  EXPECT_EQ(seen[2].chars, "seven!!");
  EXPECT_EQ(seen[3].type_index, kTVMFFIStr);
  EXPECT_EQ(seen[3].chars, "23456789abcd");
  EXPECT_EQ(seen[4].type_index, kTVMFFISmallStr);
  EXPECT_EQ(seen[4].chars, "0123");
}

TEST(FunctionTest, CppCallsConvertScalarsAndOtherValues) {
  Function describe = Function::FromPacked([](const AnyView* args, int32_t n, Any* result) {
    std::string text;
    for (int32_t i = 0; i < n; ++i) text += args[i].type_name() + ";";
    *result = text;
  });
  Any boxed = 5;
  EXPECT_EQ(describe(1, 2.5, true, nullptr, DataType("int8"), Device(kDLCPU, 0), boxed,
                     std::optional<int>(), std::optional<std::string>("an optional string"))
                .cast<std::string>(),
            "int;float;bool;None;DataType;Device;int;None;str;");
  Error too_big = CatchError([&] { describe(uint64_t{1} << 63); });
  EXPECT_EQ(too_big.kind(), "ValueError");
}

TEST(FunctionTest, CapturedStateIsReleasedWithTheFunction) {
  auto token = std::make_shared<int>(7);
  {
    Function f = Function::FromTyped([token]() { return *token; });
    EXPECT_EQ(token.use_count(), 2);
    Function copy = f;
    EXPECT_EQ(copy().cast<int>(), 7);
  }
  EXPECT_EQ(token.use_count(), 1);
}

struct CState {
  int calls = 0;
  int deleted = 0;
};
int CSafeCall(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  auto* state = static_cast<CState*>(self);
  ++state->calls;
  result->type_index = kTVMFFIInt;
  result->v_int64 = num_args == 1 ? args[0].v_int64 * 10 : -1;
  return 0;
}
void CDeleter(void* self) {
  ++static_cast<CState*>(self)->deleted;
}

TEST(FunctionTest, CSafeCallGetsItsHandleAndDeleterRunsOnce) {
  CState state;
  {
    Function f = Function::FromSafeCall(&state, CSafeCall, CDeleter);
    EXPECT_EQ(f(4).cast<int>(), 40);
    // The payload layout the JIT relies on: self at a fixed offset after the cell.
    auto* cell = reinterpret_cast<FFIJITFunctionCell*>(f.get() + 1);
    EXPECT_EQ(cell->self, &state);
    Function copy = f;
  }
  EXPECT_EQ(state.calls, 1);
  EXPECT_EQ(state.deleted, 1);
}

TEST(FunctionTest, SafeCallPointerCanBeSwappedAtRunTime) {
  CState state;
  Function f = Function::FromSafeCall(&state, CSafeCall, CDeleter);
  auto* cell = reinterpret_cast<TVMFFIFunctionCell*>(f.get() + 1);
  TVMFFISafeCallType always_seven = [](void*, const TVMFFIAny*, int32_t, TVMFFIAny* result) {
    result->type_index = kTVMFFIInt;
    result->v_int64 = 7;
    return 0;
  };
  __atomic_store_n(&cell->safe_call, always_seven, __ATOMIC_RELAXED);
  EXPECT_EQ(f(4).cast<int>(), 7);
  EXPECT_EQ(state.calls, 0);
}

int ReturnsSeven(void*, const TVMFFIAny*, int32_t, TVMFFIAny* result) {
  result->type_index = kTVMFFIInt;
  result->v_int64 = 7;
  return 0;
}

// TVMFFIFunctionCall takes NULL args with no arguments, and objects of a type derived from
// Function (the out-of-line path), as well as Functions themselves.
TEST(FunctionTest, CallAcceptsNoArgumentsAndFunctionSubtypes) {
  struct {
    TVMFFIObject header;
    TVMFFIFunctionCell cell;
  } func{};
  FFIJITHeaderSetCounts(&func.header, 1, 1);
  func.cell.safe_call = &ReturnsSeven;
  TVMFFIAny result{};
  for (int32_t type_index :
       {int32_t{kTVMFFIFunction}, RegisterType("test.FunctionSubtype", kTVMFFIFunction)}) {
    func.header.type_index = type_index;
    result = TVMFFIAny{};
    EXPECT_EQ(TVMFFIFunctionCall(&func, nullptr, 0, &result), 0);
    EXPECT_EQ(result.type_index, kTVMFFIInt);
    EXPECT_EQ(result.v_int64, 7);
  }
}

TEST(FunctionTest, BadCallsAreErrorsNotCrashes) {
  Function f = Function::FromTyped([](int x) { return x; });
  TVMFFIAny arg{};
  arg.type_index = kTVMFFIInt;
  TVMFFIAny result{};
  EXPECT_EQ(TVMFFIFunctionCall(f.get(), &arg, -1, &result), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("num_args"), std::string::npos);
  EXPECT_EQ(TVMFFIFunctionCall(f.get(), nullptr, 1, &result), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("args"), std::string::npos);
  EXPECT_EQ(TVMFFIFunctionCall(f.get(), &arg, 1, nullptr), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("result"), std::string::npos);
  EXPECT_EQ(TVMFFIFunctionCall(nullptr, &arg, 1, &result), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  Array not_a_function{1};
  EXPECT_EQ(TVMFFIFunctionCall(not_a_function.get(), &arg, 1, &result), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "TypeError");
  Function null_function;
  Error null_call = CatchError([&] { null_function(1); });
  EXPECT_EQ(null_call.kind(), "ValueError");
  EXPECT_EQ(null_call.message(), "cannot call a null Function");
  TVMFFIObjectHandle out = nullptr;
  EXPECT_EQ(TVMFFIFunctionCreate(nullptr, nullptr, nullptr, &out), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("safe_call"), std::string::npos);
  CState state;
  EXPECT_EQ(TVMFFIFunctionCreate(&state, CSafeCall, CDeleter, nullptr), -1);
  EXPECT_EQ(state.deleted, 1);  // ownership of self was handed over, so it is released
  Error::MoveFromRaised();
}

TEST(FunctionTest, NullDeleterMeansNothingRunsAtDestruction) {
  // TVM FFI crashes destroying such a function; ffijit accepts it and releases nothing.
  CState state;
  TVMFFIObjectHandle out = nullptr;
  ASSERT_EQ(TVMFFIFunctionCreate(&state, CSafeCall, nullptr, &out), 0);
  Function f = Function::Adopt(out);
  EXPECT_EQ(f(4).cast<int64_t>(), 40);
  f = Function();  // the last reference: destroyed without a deleter call
  EXPECT_EQ(state.calls, 1);
  EXPECT_EQ(state.deleted, 0);
}

// Listings hand out the registry's own name Strings: two listings, and the functor TVM FFI's
// Python package lists through, share one object per name instead of copying it.
TEST(RegistryTest, ListingsShareTheRegistrysNameObjects) {
  const std::string name = "registry_test.a_name_longer_than_a_small_string";
  SetGlobalFunction(name, Function::FromTyped([](int x) { return x; }));
  auto name_object = [&](const ffijit::Array& names) -> const TVMFFIObject* {
    for (int64_t i = 0; i < names.size(); ++i) {
      const ffijit::AnyView item = names[i];
      if (item.raw().type_index == kTVMFFIStr && item.cast<std::string>() == name) {
        return item.raw().v_obj;
      }
    }
    return nullptr;
  };
  auto list = [] {
    TVMFFIObjectHandle handle = nullptr;
    EXPECT_EQ(FFIJITFunctionListGlobals(&handle), 0);
    return ffijit::Array(ffijit::ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle)));
  };
  const ffijit::Array first = list();
  const ffijit::Array second = list();
  const TVMFFIObject* shared = name_object(first);
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(name_object(second), shared);

  Function functor =
      GetGlobalFunctionOrThrow("ffi.FunctionListGlobalNamesFunctor")().cast<Function>();
  const int64_t count = functor(-1).cast<int64_t>();
  EXPECT_EQ(count, first.size());
  bool found = false;
  for (int64_t i = 0; i < count; ++i) {
    Any item = functor(i);
    if (item.raw().type_index == kTVMFFIStr && item.raw().v_obj == shared) found = true;
  }
  EXPECT_TRUE(found);
  RemoveGlobalFunction(name);
  // A listing taken before the removal keeps its names alive (ASan would see a freed String).
  EXPECT_EQ(name_object(first), shared);
}

TEST(RegistryTest, SetGetListRemove) {
  Function f = Function::FromTyped([](int x) { return x + 1; });
  SetGlobalFunction("registry_test.inc", f);
  std::optional<Function> found = GetGlobalFunction("registry_test.inc");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, f);
  EXPECT_EQ((*found)(1).cast<int>(), 2);
  std::vector<std::string> names = ListGlobalFunctions();
  EXPECT_NE(std::find(names.begin(), names.end(), "registry_test.inc"), names.end());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));

  Error taken = CatchError([&] { SetGlobalFunction("registry_test.inc", f); });
  EXPECT_EQ(taken.kind(), "RuntimeError");
  EXPECT_NE(taken.message().find("registry_test.inc"), std::string::npos);
  Function g = Function::FromTyped([](int x) { return x + 2; });
  SetGlobalFunction("registry_test.inc", g, /*allow_override=*/true);
  EXPECT_EQ(GetGlobalFunctionOrThrow("registry_test.inc")(1).cast<int>(), 3);

  RemoveGlobalFunction("registry_test.inc");
  EXPECT_FALSE(GetGlobalFunction("registry_test.inc").has_value());
  Error unknown = CatchError([] { GetGlobalFunctionOrThrow("registry_test.nope"); });
  EXPECT_EQ(unknown.kind(), "KeyError");
  EXPECT_NE(unknown.message().find("registry_test.nope"), std::string::npos);
  Error remove_unknown = CatchError([] { RemoveGlobalFunction("registry_test.nope"); });
  EXPECT_EQ(remove_unknown.kind(), "KeyError");
}

TEST(RegistryTest, RejectsBadInput) {
  Array not_a_function{1};
  std::string name = "registry_test.bad";
  TVMFFIByteArray key{name.data(), name.size()};
  EXPECT_EQ(TVMFFIFunctionSetGlobal(&key, not_a_function.get(), 0), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "TypeError");
  EXPECT_EQ(TVMFFIFunctionSetGlobal(&key, nullptr, 0), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  EXPECT_EQ(TVMFFIFunctionSetGlobal(nullptr, nullptr, 0), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "ValueError");
  TVMFFIByteArray empty{"", 0};
  TVMFFIObjectHandle out = nullptr;
  EXPECT_EQ(TVMFFIFunctionGetGlobal(&empty, &out), -1);
  EXPECT_NE(Error::MoveFromRaised().message().find("empty"), std::string::npos);
  EXPECT_EQ(TVMFFIFunctionGetGlobal(&key, nullptr), -1);
  Error::MoveFromRaised();
}

// Overriding or removing a function releases it outside the registry's lock: its deleter may
// call into the registry (here: lists it) without deadlocking.
std::atomic<int> registry_deleter_calls{0};

Function FunctionWhoseDeleterUsesTheRegistry() {
  return Function::FromSafeCall(
      nullptr,
      [](void*, const TVMFFIAny*, int32_t, TVMFFIAny* result) {
        *result = TVMFFIAny{};
        return 0;
      },
      [](void*) {
        ListGlobalFunctions();
        registry_deleter_calls.fetch_add(1);
      });
}

TEST(RegistryTest, ReleasesReplacedFunctionsOutsideItsLock) {
  const std::string name = "registry_test.deleter_uses_registry";
  registry_deleter_calls = 0;
  SetGlobalFunction(name, FunctionWhoseDeleterUsesTheRegistry());
  ASSERT_TRUE(ffijit_tests::FinishesInTime([&] {
    SetGlobalFunction(name, FunctionWhoseDeleterUsesTheRegistry(), /*allow_override=*/true);
  })) << "overriding deadlocked in the released function's deleter";
  EXPECT_EQ(registry_deleter_calls.load(), 1);
  ASSERT_TRUE(ffijit_tests::FinishesInTime([&] { RemoveGlobalFunction(name); }))
      << "removing deadlocked in the released function's deleter";
  EXPECT_EQ(registry_deleter_calls.load(), 2);
}

TEST(RegistryTest, ConcurrentSetGetAndCall) {
  constexpr int kThreads = 4;
  std::atomic<int> sum{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &sum] {
      std::string name = "registry_test.thread" + std::to_string(t);
      for (int i = 0; i < 200; ++i) {
        SetGlobalFunction(name, Function::FromTyped([i]() { return i; }), true);
        sum += GetGlobalFunctionOrThrow(name)().cast<int>() == i ? 1 : 0;
      }
      RemoveGlobalFunction(name);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(sum.load(), kThreads * 200);
}

}  // namespace
}  // namespace ffijit
