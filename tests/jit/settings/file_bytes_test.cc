// ReadFileBytes, the one whole-file reader (the jit library, the tool and the Python extension):
// a file's exact bytes, the reason a file cannot be read, and the size limit that keeps a device
// such as /dev/zero from exhausting memory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/file_bytes.h"

namespace ffijit::testing {
namespace {

TEST(FileBytes, ReadsEveryByteOrSaysWhy) {
  char path[] = "/tmp/ffijit_file_bytes_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::string written(200000, '\0');
  for (size_t i = 0; i < written.size(); ++i) written[i] = static_cast<char>(i * 7);
  ASSERT_EQ(write(fd, written.data(), written.size()), static_cast<ssize_t>(written.size()));
  close(fd);

  std::string bytes = "stale", why;
  ASSERT_TRUE(ReadFileBytes(path, &bytes, &why)) << why;
  EXPECT_EQ(bytes, written);
  // Over the limit: refused with the limit in the reason, *out left alone.
  std::string untouched = "kept";
  EXPECT_FALSE(ReadFileBytes(path, &untouched, &why, 100000));
  EXPECT_EQ(why, "larger than 0 MiB");
  EXPECT_EQ(untouched, "kept");
  std::remove(path);

  EXPECT_FALSE(ReadFileBytes(path, &bytes, &why));
  EXPECT_EQ(why, "No such file or directory");
  EXPECT_FALSE(ReadFileBytes(path, &bytes));  // without a reason wanted
  // A directory opens but cannot be read.
  EXPECT_FALSE(ReadFileBytes("/tmp", &bytes, &why));
  EXPECT_EQ(why, "Is a directory");
}

TEST(FileBytes, EndlessDeviceStopsAtTheLimit) {
  std::string bytes, why;
  EXPECT_FALSE(ReadFileBytes("/dev/zero", &bytes, &why, uint64_t{1} << 20));
  EXPECT_EQ(why, "larger than 1 MiB");
}

}  // namespace
}  // namespace ffijit::testing
