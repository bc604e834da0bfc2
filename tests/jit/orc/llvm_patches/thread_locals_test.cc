// C++ thread-locals in COMDAT section groups (fixtures/grouped_thread_locals.cc, gcc and clang,
// plain and -g): right values on the main thread and on others, each thread its own copy, the
// destructors run at thread exit; a thread-local aligned beyond the runtime's copies refused at
// load; the main thread's destructors at process exit; unloading a module whose thread-locals
// were used on several threads (its destructors run, refused while another live thread holds
// some, then loaded again afresh); an initialiser that made one and threw.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "catch_error.h"
#include "ffijit/jit/jit_module.h"
#include "ffijit/module.h"
#include "ffijit/registry.h"

namespace {

using ffijit::Function;
using ffijit::JitModule;
using ffijit_tests::CatchError;

std::string Fixture(const std::string& compiler, const std::string& file) {
  return std::string(FFIJIT_JIT_FIXTURES) + "/" + compiler + "/" + file;
}

using IntFn = int64_t (*)();
using WhatFn = const char* (*)(int64_t);
using TextFn = const char* (*)();

struct GroupedFns {
  WhatFn what;
  TextFn inline_pointer;
  IntFn template_bump, holder_append, inline_bump, inline_tracked_append, local_tracked_append,
      zeroed_bump, destroyed;
};

GroupedFns Resolve(const JitModule& mod) {
  GroupedFns fns{};
  fns.what = reinterpret_cast<WhatFn>(mod.Lookup("tlg_what"));
  fns.inline_pointer = reinterpret_cast<TextFn>(mod.Lookup("tlg_inline_pointer"));
  fns.template_bump = reinterpret_cast<IntFn>(mod.Lookup("tlg_template_bump"));
  fns.holder_append = reinterpret_cast<IntFn>(mod.Lookup("tlg_holder_append"));
  fns.inline_bump = reinterpret_cast<IntFn>(mod.Lookup("tlg_inline_bump"));
  fns.inline_tracked_append = reinterpret_cast<IntFn>(mod.Lookup("tlg_inline_tracked_append"));
  fns.local_tracked_append = reinterpret_cast<IntFn>(mod.Lookup("tlg_local_tracked_append"));
  fns.zeroed_bump = reinterpret_cast<IntFn>(mod.Lookup("tlg_zeroed_bump"));
  fns.destroyed = reinterpret_cast<IntFn>(mod.Lookup("tlg_destroyed_count"));
  for (void* fn :
       {reinterpret_cast<void*>(fns.what), reinterpret_cast<void*>(fns.template_bump),
        reinterpret_cast<void*>(fns.holder_append), reinterpret_cast<void*>(fns.inline_bump),
        reinterpret_cast<void*>(fns.inline_tracked_append),
        reinterpret_cast<void*>(fns.local_tracked_append), reinterpret_cast<void*>(fns.zeroed_bump),
        reinterpret_cast<void*>(fns.destroyed)}) {
    if (fn == nullptr) throw ffijit::KeyError("a tlg_ function is missing");
  }
  return fns;
}

// What one thread's first use of every variable returns: each starts from its initial value.
struct FirstUse {
  std::string what, what_again, pointer;
  int64_t template_bump = 0, holder = 0, inline_bump = 0, inline_tracked = 0, local_tracked = 0,
          zeroed = 0;
};

FirstUse UseAll(const GroupedFns& fns, int64_t n) {
  FirstUse use;
  use.what = fns.what(n);
  use.what_again = fns.what(n + 10);
  use.pointer = fns.inline_pointer();
  use.template_bump = fns.template_bump();
  use.holder = fns.holder_append();
  use.inline_bump = fns.inline_bump();
  use.inline_tracked = fns.inline_tracked_append();
  use.local_tracked = fns.local_tracked_append();
  use.zeroed = fns.zeroed_bump();
  return use;
}

void ExpectFirstUse(const FirstUse& use, int64_t n) {
  EXPECT_EQ(use.what, "x" + std::to_string(n));
  EXPECT_EQ(use.what_again, "x" + std::to_string(n + 10));
  EXPECT_EQ(use.pointer, "pointed");  // the initial image's relocated address
  EXPECT_EQ(use.template_bump, 8);    // 7, then ++
  EXPECT_EQ(use.holder, 8);           // "tracked" + "+"
  EXPECT_EQ(use.inline_bump, 43);     // 42, then ++
  EXPECT_EQ(use.inline_tracked, 9);   // "tracked" + "++"
  EXPECT_EQ(use.local_tracked, 10);   // "tracked" + "+++"
  EXPECT_EQ(use.zeroed, 1);           // 0, then ++
}

// Each use of the fixture makes three Tracked objects on the thread: Holder<3>::tracked,
// inline_tracked and LocalTracked()'s.
constexpr int64_t kTrackedPerThread = 3;

// gcc and clang, without and with -g.
class GroupedThreadLocalTest
    : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(GroupedThreadLocalTest, PerThreadValuesAndThreadExitDestructors) {
  const std::string path = Fixture(GetParam().first, GetParam().second);
  // Loaded as a TVM FFI module: its function reaches the inline function's thread_local too.
  JitModule mod = JitModule::Load(path);
  std::optional<Function> what_length = mod.GetFunction("what_length");
  ASSERT_TRUE(what_length.has_value());
  EXPECT_EQ((*what_length)(int64_t{123}).cast<int64_t>(), 4);  // "x123"
  const GroupedFns fns = Resolve(mod);
  const FirstUse main_use = UseAll(fns, 1);
  ExpectFirstUse(main_use, 1);
  const char* main_what = fns.what(99);  // the main thread's copy, kept across the others' calls
  const int64_t destroyed_before = fns.destroyed();

  constexpr int kThreads = 3;
  std::vector<FirstUse> uses(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      uses[t] = UseAll(fns, 100 + t);
      fns.template_bump();  // a second use sees this thread's own value
      uses[t].template_bump = fns.template_bump();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    SCOPED_TRACE("thread " + std::to_string(t));
    FirstUse expected_shape = uses[t];
    EXPECT_EQ(uses[t].template_bump, 10);
    expected_shape.template_bump = 8;
    ExpectFirstUse(expected_shape, 100 + t);
  }
  // Every thread's three Tracked objects were destroyed when it exited.
  EXPECT_EQ(fns.destroyed() - destroyed_before, kThreads * kTrackedPerThread);
  // The main thread's copies are untouched by the others.
  EXPECT_STREQ(main_what, "x99");
  EXPECT_EQ(fns.template_bump(), 9);
  EXPECT_EQ(fns.inline_bump(), 44);
  EXPECT_EQ(fns.zeroed_bump(), 2);
  EXPECT_EQ(fns.holder_append(), 9);
  EXPECT_STREQ(fns.inline_pointer(), "moved");
}

INSTANTIATE_TEST_SUITE_P(
    Objects, GroupedThreadLocalTest,
    ::testing::Values(std::pair<std::string, std::string>{"gcc", "grouped_thread_locals.o"},
                      std::pair<std::string, std::string>{"clang", "grouped_thread_locals.o"},
                      std::pair<std::string, std::string>{"gcc", "grouped_thread_locals_debug.o"},
                      std::pair<std::string, std::string>{"clang",
                                                          "grouped_thread_locals_debug.o"}),
    [](const auto& info) {
      return info.param.first + "_" +
             (info.param.second == "grouped_thread_locals.o" ? std::string("plain") : "debug");
    });

TEST(OveralignedThreadLocalTest, RefusedAtLoadNamingTheVariable) {
  for (const char* compiler : {"gcc", "clang"}) {
    SCOPED_TRACE(compiler);
    const std::string path = Fixture(compiler, "overaligned_thread_local.o");
    ffijit::Error refused = CatchError([&] { JitModule::Create("overaligned").AddFile(path); });
    EXPECT_EQ(refused.kind(), "RuntimeError");
    EXPECT_NE(refused.message().find(path), std::string::npos) << refused.message();
    EXPECT_NE(refused.message().find("tlo_line"), std::string::npos) << refused.message();
    EXPECT_NE(refused.message().find("aligned to 64 bytes"), std::string::npos)
        << refused.message();
  }
}

// Counts the fixture's Tracked destructors from the host: readable after the module is gone.
std::atomic<int64_t> g_host_destroyed{0};

class UnloadThreadLocalsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ffijit::SetGlobalFunction("tlg.on_destroy", Function::FromTyped([] { ++g_host_destroyed; }),
                              true);
  }
  void TearDown() override { ffijit::RemoveGlobalFunction("tlg.on_destroy"); }
};

TEST_P(UnloadThreadLocalsTest, DestructorsRunAndTheModuleLoadsAgainAfresh) {
  const std::string path = Fixture(GetParam(), "grouped_thread_locals.o");
  JitModule mod = JitModule::Load(path);
  GroupedFns fns = Resolve(mod);
  ExpectFirstUse(UseAll(fns, 1), 1);
  fns.template_bump();  // the main thread's value moves on: 9
  const int64_t start = g_host_destroyed.load();
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) threads.emplace_back([&, t] { ExpectFirstUse(UseAll(fns, t), t); });
    for (std::thread& thread : threads) thread.join();
  }
  EXPECT_EQ(g_host_destroyed.load() - start, 3 * kTrackedPerThread);

  // A live thread holding the module's thread_locals: the unload is refused, nothing runs.
  std::promise<void> used, release;
  std::thread holder([&] {
    ExpectFirstUse(UseAll(fns, 7), 7);
    used.set_value();
    release.get_future().wait();
  });
  used.get_future().wait();
  ffijit::Error refused = CatchError([&] { mod.Unload(); });
  EXPECT_EQ(refused.kind(), "RuntimeError");
  EXPECT_NE(refused.message().find("1 other thread(s) hold its thread_local objects"),
            std::string::npos)
      << refused.message();
  EXPECT_EQ(g_host_destroyed.load() - start, 3 * kTrackedPerThread);
  EXPECT_EQ(fns.template_bump(), 10);  // still loaded, the main thread's value kept
  release.set_value();
  holder.join();
  EXPECT_EQ(g_host_destroyed.load() - start, 4 * kTrackedPerThread);

  // The unload runs the main thread's destructors, then frees the code.
  mod.Unload();
  EXPECT_EQ(g_host_destroyed.load() - start, 5 * kTrackedPerThread);
  ffijit::Error gone = CatchError([&] { mod.Lookup("tlg_what"); });
  EXPECT_NE(gone.message().find("unloaded"), std::string::npos) << gone.message();

  // Loaded again (likely where the first one was): every thread-local starts afresh, on this
  // thread and on others, and the main thread's destructors run again at the next unload.
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    JitModule again = JitModule::Load(path);
    fns = Resolve(again);
    ExpectFirstUse(UseAll(fns, 2), 2);
    std::thread other([&] { ExpectFirstUse(UseAll(fns, 3), 3); });
    other.join();
    const int64_t before_unload = g_host_destroyed.load();
    again.Unload();
    EXPECT_EQ(g_host_destroyed.load() - before_unload, kTrackedPerThread);
  }
}

INSTANTIATE_TEST_SUITE_P(Compilers, UnloadThreadLocalsTest, ::testing::Values("gcc", "clang"),
                         [](const auto& info) { return info.param; });

// The main thread's thread_local objects are destroyed at process exit, by the module's code,
// before the modules' static destructors (in a child process, which exits). A user-mode emulator
// (the AArch64 lane's qemu) cannot re-run a foreign binary, so there the lane's
// FFIJIT_TEST_FORK_DEATH_TESTS makes the child a fork: ctest runs each test in its own process, so
// nothing has loaded a module or started a thread before it.
TEST(ThreadLocalExitTest, MainThreadDestructorsRunAtProcessExit) {
  GTEST_FLAG_SET(death_test_style,
                 std::getenv("FFIJIT_TEST_FORK_DEATH_TESTS") != nullptr ? "fast" : "threadsafe");
  const std::string path = Fixture("clang", "grouped_thread_locals.o");
  EXPECT_EXIT(
      {
        static int destroyed = 0;
        ffijit::SetGlobalFunction("tlg.on_destroy", Function::FromTyped([] {
                                    std::fprintf(stderr, "tlg destroyed %d\n", ++destroyed);
                                  }),
                                  true);
        JitModule mod = JitModule::Load(path);
        const GroupedFns fns = Resolve(mod);
        UseAll(fns, 1);
        std::exit(fns.destroyed() == 0 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "tlg destroyed 3");
}

// An initialiser that made a thread_local on the loading thread and threw: the object goes, and
// the thread_local's destructor runs first, not at this thread's exit after the code is freed.
TEST_P(UnloadThreadLocalsTest, AFailedInitialiserDestroysItsThreadLocalsAtOnce) {
  const std::string path = Fixture(GetParam(), "throwing_thread_local_init.o");
  const int64_t start = g_host_destroyed.load();
  ffijit::Error refused = CatchError([&] { JitModule::Create("throws").AddFile(path); });
  EXPECT_EQ(refused.kind(), "RuntimeError");
  EXPECT_NE(refused.message().find("the initialiser gives up"), std::string::npos)
      << refused.message();
  EXPECT_EQ(g_host_destroyed.load() - start, 1);
}

// A thread-local defined by one object of a module and used by another: both reach the same
// per-thread copy.
TEST(CrossObjectThreadLocalTest, AnotherObjectsThreadLocalIsTheSameVariable) {
  for (const char* compiler : {"gcc", "clang"}) {
    SCOPED_TRACE(compiler);
    JitModule mod = JitModule::Create("cross-object");
    mod.AddFile(Fixture(compiler, "tls_defining.o"));
    mod.AddFile(Fixture(compiler, "tls_using.o"));
    auto bump = reinterpret_cast<IntFn>(mod.Lookup("tls_defining_bump"));
    auto read = reinterpret_cast<IntFn>(mod.Lookup("tls_using_read"));
    ASSERT_NE(bump, nullptr);
    ASSERT_NE(read, nullptr);
    EXPECT_EQ(read(), 5);
    EXPECT_EQ(bump(), 6);
    EXPECT_EQ(read(), 6);
    int64_t other_read = 0, other_bump = 0;
    std::thread other([&] {
      other_read = read();
      other_bump = bump();
    });
    other.join();
    EXPECT_EQ(other_read, 5);
    EXPECT_EQ(other_bump, 6);
    EXPECT_EQ(read(), 6);
    mod.Unload();
  }
}

// The module tests' own fixture (thread_locals.cc: __thread, static, a C++ thread_local with a
// destructor) unloads too once its threads are done.
TEST(UngroupedThreadLocalsTest, UnloadAfterUseOnTwoThreads) {
  JitModule mod = JitModule::Create("ungrouped");
  mod.AddFile(Fixture("gcc", "thread_locals.o"));
  auto bump = reinterpret_cast<IntFn>(mod.Lookup("tl_bump"));
  auto append = reinterpret_cast<IntFn>(mod.Lookup("tl_tracked_append"));
  ASSERT_NE(bump, nullptr);
  ASSERT_NE(append, nullptr);
  EXPECT_EQ(bump(), 6);
  EXPECT_EQ(append(), 7);
  std::thread other([&] {
    EXPECT_EQ(bump(), 6);
    EXPECT_EQ(append(), 7);
  });
  other.join();
  mod.Unload();
  JitModule again = JitModule::Create("ungrouped-again");
  again.AddFile(Fixture("gcc", "thread_locals.o"));
  bump = reinterpret_cast<IntFn>(again.Lookup("tl_bump"));
  EXPECT_EQ(bump(), 6);
  again.Unload();
}

}  // namespace
