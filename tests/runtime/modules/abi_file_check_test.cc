// FFIJITCheckModuleAbiFile's reading of the file: symbol tables anywhere in the file (inside the
// first bytes it reads at once, or past them), and damaged or truncated files never read past.
#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "ffijit/c_ext.h"
#include "ffijit/error.h"

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::filesystem::path TempDir() {
  return std::filesystem::temp_directory_path() /
         ("ffijit_abi_file_check_" + std::to_string(getpid()));
}

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  std::filesystem::create_directories(TempDir());
  const std::string path = (TempDir() / name).string();
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

const std::string kOther = std::string(FFIJIT_TEST_MODULE_DIR) + "/other_revision_module.so";

// The other revision's module with its section headers and its dynamic symbol and string tables
// moved past 64 KiB of padding: found only by reads beyond the first bytes.
TEST(AbiFileCheckTest, SymbolTablesPastTheFirstBytesAreRead) {
  std::string bytes = ReadFile(kOther);
  ASSERT_GT(bytes.size(), sizeof(Elf64_Ehdr));
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  ASSERT_EQ(header.e_shentsize, sizeof(Elf64_Shdr));
  std::string sections = bytes.substr(header.e_shoff, header.e_shnum * sizeof(Elf64_Shdr));
  bytes.append(64 * 1024, '\0');
  for (uint16_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section;
    std::memcpy(&section, sections.data() + i * sizeof section, sizeof section);
    if (section.sh_type != SHT_DYNSYM) continue;
    Elf64_Shdr strings;
    std::memcpy(&strings, sections.data() + section.sh_link * sizeof strings, sizeof strings);
    const std::pair<Elf64_Shdr*, uint32_t> tables[] = {{&section, i}, {&strings, section.sh_link}};
    for (auto [shdr, index] : tables) {
      const uint64_t moved = bytes.size();
      bytes.append(ReadFile(kOther).substr(shdr->sh_offset, shdr->sh_size));
      shdr->sh_offset = moved;
      std::memcpy(sections.data() + index * sizeof *shdr, shdr, sizeof *shdr);
    }
  }
  header.e_shoff = bytes.size();
  bytes += sections;
  std::memcpy(bytes.data(), &header, sizeof header);
  ASSERT_GT(bytes.size(), 64u * 1024);

  const std::string path = WriteTemp("moved_tables.so", bytes);
  ASSERT_EQ(FFIJITCheckModuleAbiFile(path.c_str()), -1);
  const ffijit::Error error = ffijit::Error::MoveFromRaised();
  EXPECT_EQ(error.kind(), "RuntimeError");
  EXPECT_NE(error.message().find(path), std::string::npos) << error.message();
  ASSERT_EQ(FFIJITCheckModuleAbiFile(kOther.c_str()), -1) << "the original is refused too";
  ffijit::Error::MoveFromRaised();
  std::filesystem::remove_all(TempDir());
}

// Every prefix of the module: refused when its tables are whole, passed (for the loader to report)
// when they are not; never read past its end.
TEST(AbiFileCheckTest, TruncatedFilesAreNeverReadPast) {
  const std::string bytes = ReadFile(kOther);
  for (size_t size = 0; size < bytes.size(); size += size < 128 ? 1 : 97) {
    const std::string path = WriteTemp("truncated.so", bytes.substr(0, size));
    const int status = FFIJITCheckModuleAbiFile(path.c_str());
    ASSERT_TRUE(status == 0 || status == -1) << size;
    if (status == -1) {
      EXPECT_EQ(ffijit::Error::MoveFromRaised().kind(), "RuntimeError") << size;
    }
  }
  // Section headers claiming more than the file holds.
  std::string damaged = bytes;
  Elf64_Ehdr header;
  std::memcpy(&header, damaged.data(), sizeof header);
  header.e_shnum = 0xffff;
  std::memcpy(damaged.data(), &header, sizeof header);
  const std::string path = WriteTemp("damaged.so", damaged);
  EXPECT_EQ(FFIJITCheckModuleAbiFile(path.c_str()), 0);
  std::filesystem::remove_all(TempDir());
}

}  // namespace
