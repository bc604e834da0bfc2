// Loading, calling and unloading a JIT module 1,000 times leaves the resident set and the number
// of memory mappings flat: the code, the JITDylib and the registrations go with each Unload.
// (Released without Unload, a module's code stays until the process exits: jit_module_test.)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "ffijit/jit/jit_module.h"
#include "ffijit/module.h"

namespace {

// Under AddressSanitizer freed memory sits in its quarantine (up to 256 MiB), so the resident set
// says nothing there; LeakSanitizer checks the same loop instead, and the mapping count still
// holds.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kRssIsMeaningful = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kRssIsMeaningful = false;
#else
constexpr bool kRssIsMeaningful = true;
#endif
#else
constexpr bool kRssIsMeaningful = true;
#endif

// Resident set size in KiB (VmRSS of /proc/self/status).
long ResidentKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// Under a user-mode emulator (the AArch64 lane) the resident set also holds the emulator's
// translation of every JIT-placed copy of the code, so only the mapping count speaks there.
bool RssSpeaks() {
  return kRssIsMeaningful && std::getenv("FFIJIT_TEST_UNDER_EMULATOR") == nullptr;
}

long MappingCount() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  long count = 0;
  while (std::getline(maps, line)) ++count;
  return count;
}

void LoadCallUnload(const std::string& path, int times) {
  for (int i = 0; i < times; ++i) {
    ffijit::JitModule mod = ffijit::JitModule::Load(path);
    ASSERT_EQ((*mod.GetFunction("add"))(int64_t{i}, int64_t{1}).cast<int64_t>(), i + 1);
    mod.Unload();
  }
}

TEST(JitModuleLeakTest, LoadCallUnloadAThousandTimesStaysFlat) {
  const std::string path = std::string(FFIJIT_JIT_FIXTURES) + "/gcc/adder.o";
  LoadCallUnload(path, 100);  // warm up: the JIT itself, allocator pools
  const long rss_before = ResidentKiB();
  const long maps_before = MappingCount();
  LoadCallUnload(path, 1000);
  const long rss_growth = ResidentKiB() - rss_before;
  const long maps_growth = MappingCount() - maps_before;
  RecordProperty("rss_growth_kib", std::to_string(rss_growth));
  RecordProperty("mapping_growth", std::to_string(maps_growth));
  std::printf("1000 load/call/unload: RSS %+ld KiB, mappings %+ld\n", rss_growth, maps_growth);
  // A leaked module costs at least a page of code and data each: 1,000 would be 8 MiB or more.
  if (RssSpeaks()) {
    EXPECT_LT(rss_growth, 2048) << "KiB";
  }
  EXPECT_LT(maps_growth, 16);
}

TEST(JitModuleLeakTest, LoadCallUnloadLlvmIrStaysFlat) {
  const std::string path = std::string(FFIJIT_JIT_FIXTURES) + "/ir/ir_kernel.bc";
  auto once = [&] {
    ffijit::JitModule mod = ffijit::JitModule::Load(path);
    ASSERT_EQ((*mod.GetFunction("square"))(int64_t{3}).cast<int64_t>(), 9);
    mod.Unload();
  };
  for (int i = 0; i < 20; ++i) once();
  const long rss_before = ResidentKiB();
  const long maps_before = MappingCount();
  for (int i = 0; i < 200; ++i) once();
  if (RssSpeaks()) {
    EXPECT_LT(ResidentKiB() - rss_before, 2048) << "KiB";
  }
  EXPECT_LT(MappingCount() - maps_before, 16);
}

}  // namespace
