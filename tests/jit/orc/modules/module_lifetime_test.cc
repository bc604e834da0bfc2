// What a JIT module's code leaves behind: values it made (a string, array, map, error and
// function whose deleters are its code) used and released after every handle on the module is
// gone; thread-local variables in all the forms gcc and clang emit for -fPIC objects (initial
// values, several threads, thread-exit destructors, debug information), the exec models of -fpie
// refused with the fix; Unload's refusals. Thread-locals in section groups and unloading modules
// with thread-locals: thread_locals_test.cc.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "catch_error.h"
#include "ffijit/container.h"
#include "ffijit/jit/jit_module.h"
#include "ffijit/module.h"

namespace {

using ffijit::Any;
using ffijit::Function;
using ffijit::JitModule;
using ffijit::Module;
using ffijit_tests::CatchError;

std::string Fixture(const std::string& compiler, const std::string& file) {
  return std::string(FFIJIT_JIT_FIXTURES) + "/" + compiler + "/" + file;
}

Function Get(const Module& mod, const std::string& name) {
  std::optional<Function> func = mod.GetFunction(name);
  if (!func) throw ffijit::KeyError("no function " + name);
  return *func;
}

std::string ErrorMessage(const Any& error) {
  const auto* cell = reinterpret_cast<const TVMFFIErrorCell*>(error.raw().v_obj + 1);
  return std::string(cell->message.data, cell->message.size);
}

// gcc and clang, each -fPIC and -fpie.
class MadeValuesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MadeValuesTest, ValuesOutliveEveryHandleOnTheModule) {
  Any text, array, map, error, function;
  Function deleted;
  {
    Module mod = Module::Load(Fixture(GetParam(), "made_values.o"));
    text = Get(mod, "make_string")();
    array = Get(mod, "make_array")();
    map = Get(mod, "make_map")();
    error = Get(mod, "make_error")();
    function = Get(mod, "make_function")();
    deleted = Get(mod, "deleted");
    EXPECT_EQ(deleted().cast<int64_t>(), 0);
  }
  // The module and its functions are released; what it made still reads.
  EXPECT_EQ(text.cast<std::string>(), "a string made by the module's own code");
  {
    ffijit::Array items = array.cast<ffijit::Array>();
    ASSERT_EQ(items.size(), 3);
    EXPECT_EQ(items[2].cast<int64_t>(), 3);
    ffijit::Map pairs = map.cast<ffijit::Map>();
    ASSERT_EQ(pairs.size(), 2);
    EXPECT_EQ(pairs.Get(int64_t{2})->cast<int64_t>(), 20);
  }
  ASSERT_EQ(error.type_index(), kTVMFFIError);
  EXPECT_EQ(ErrorMessage(error), "an error made by the module");
  Function counter = function.cast<Function>();
  EXPECT_EQ(counter().cast<int64_t>(), 1);
  EXPECT_EQ(counter().cast<int64_t>(), 2);
  // Releasing each runs the module's deleter: its code is still there.
  text = Any();
  array = Any();
  map = Any();
  error = Any();
  function = Any();
  counter = Function();
  EXPECT_EQ(deleted().cast<int64_t>(), 5);
}

INSTANTIATE_TEST_SUITE_P(Compilers, MadeValuesTest, ::testing::Values("gcc", "clang"),
                         [](const auto& info) { return info.param; });

TEST(MadeValuesPieTest, PieObjectsWithoutThreadLocalsLoad) {
  for (const char* compiler : {"gcc", "clang"}) {
    SCOPED_TRACE(compiler);
    Module mod = Module::Load(Fixture(compiler, "made_values_pie.o"));
    Any text = Get(mod, "make_string")();
    mod = Module();
    EXPECT_EQ(text.cast<std::string>(), "a string made by the module's own code");
  }
}

using IntFn = int64_t (*)();

struct ThreadLocalFns {
  IntFn bump, bump_hidden, tracked_append, destroyed;
};

ThreadLocalFns Resolve(const JitModule& mod) {
  ThreadLocalFns fns;
  fns.bump = reinterpret_cast<IntFn>(mod.Lookup("tl_bump"));
  fns.bump_hidden = reinterpret_cast<IntFn>(mod.Lookup("tl_bump_hidden"));
  fns.tracked_append = reinterpret_cast<IntFn>(mod.Lookup("tl_tracked_append"));
  fns.destroyed = reinterpret_cast<IntFn>(mod.Lookup("tl_destroyed_count"));
  return fns;
}

// Both compilers, -fPIC, without and with -g.
class ThreadLocalTest : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(ThreadLocalTest, InitialValuesPerThreadAndThreadExitDestructors) {
  ThreadLocalFns fns;
  {
    JitModule mod = JitModule::Create("thread-locals");
    mod.AddFile(Fixture(GetParam().first, GetParam().second));
    fns = Resolve(mod);
    ASSERT_NE(fns.bump, nullptr);
    ASSERT_NE(fns.bump_hidden, nullptr);
    ASSERT_NE(fns.tracked_append, nullptr);
    ASSERT_NE(fns.destroyed, nullptr);
  }
  // The module handle is gone; its code (and the destructors below) stays.
  EXPECT_EQ(fns.bump(), 6);  // the initial value 5, then ++
  EXPECT_EQ(fns.bump(), 7);
  EXPECT_EQ(fns.bump_hidden(), 12 * 1000 + 101);  // local-dynamic: 10 + 2, 100 + 1
  EXPECT_EQ(fns.bump_hidden(), 14 * 1000 + 102);
  EXPECT_EQ(fns.tracked_append(), 7);  // "thread" + "+"
  const int64_t destroyed_before = fns.destroyed();
  constexpr int kThreads = 4;
  std::vector<int64_t> seen(kThreads * 3);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      fns.bump();
      seen[t * 3] = fns.bump();                // each thread starts from the initial value
      seen[t * 3 + 1] = fns.bump_hidden();     // and so does the local-dynamic block
      seen[t * 3 + 2] = fns.tracked_append();  // constructed afresh on this thread
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(seen[t * 3], 7);
    EXPECT_EQ(seen[t * 3 + 1], 12 * 1000 + 101);
    EXPECT_EQ(seen[t * 3 + 2], 7);
  }
  // Each thread's Tracked was destroyed when it exited, by the module's code.
  EXPECT_EQ(fns.destroyed() - destroyed_before, kThreads);
  // The main thread's copy is untouched by the others.
  EXPECT_EQ(fns.bump(), 8);
}

INSTANTIATE_TEST_SUITE_P(
    Objects, ThreadLocalTest,
    ::testing::Values(std::pair<std::string, std::string>{"gcc", "thread_locals.o"},
                      std::pair<std::string, std::string>{"clang", "thread_locals.o"},
                      std::pair<std::string, std::string>{"gcc", "thread_locals_debug.o"},
                      std::pair<std::string, std::string>{"clang", "thread_locals_debug.o"}),
    [](const auto& info) {
      return info.param.first + "_" +
             (info.param.second == "thread_locals.o" ? std::string("plain") : "debug");
    });

TEST(ThreadLocalPieTest, ExecModelsAreRefusedWithTheFix) {
  for (const char* compiler : {"gcc", "clang"}) {
    SCOPED_TRACE(compiler);
    const std::string path = Fixture(compiler, "thread_locals_pie.o");
    ffijit::Error refused = CatchError([&] { JitModule::Create("pie").AddFile(path); });
    EXPECT_EQ(refused.kind(), "ValueError");
    EXPECT_NE(refused.message().find(path), std::string::npos) << refused.message();
#if defined(__x86_64__)
    EXPECT_NE(refused.message().find("R_X86_64_TPOFF32"), std::string::npos) << refused.message();
#else
    EXPECT_NE(refused.message().find("R_AARCH64_TLSLE_"), std::string::npos) << refused.message();
#endif
    EXPECT_NE(refused.message().find("-fPIC"), std::string::npos) << refused.message();
  }
}

TEST(UnloadTest, RefusedWhileAFunctionHoldsTheModuleThenFreesIt) {
  JitModule mod = JitModule::Load(Fixture("gcc", "adder.o"));
  {
    Function add = Get(mod, "add");
    ffijit::Error refused = CatchError([&] { mod.Unload(); });
    EXPECT_EQ(refused.kind(), "RuntimeError");
    EXPECT_NE(refused.message().find("other reference"), std::string::npos) << refused.message();
    EXPECT_EQ(add(int64_t{2}, int64_t{3}).cast<int64_t>(), 5);  // refused: still loaded
  }
  mod.Unload();
  ffijit::Error gone = CatchError([&] { mod.Lookup("__tvm_ffi_add"); });
  EXPECT_EQ(gone.kind(), "RuntimeError");
  EXPECT_NE(gone.message().find("unloaded"), std::string::npos) << gone.message();
  ffijit::Error again = CatchError([&] { mod.Unload(); });
  EXPECT_NE(again.message().find("unloaded already"), std::string::npos) << again.message();
}

}  // namespace
