// Refuses modules built for a TVM FFI ABI revision of another C function set, told by the C
// functions they import (FFIJITCheckModuleAbiSymbols, FFIJITCheckModuleAbiFile). Such revisions
// export a function named TVMFFIErrorCreate with different prototypes and lay out objects
// differently, so such a module would not fail to load: it would corrupt memory at its first
// object or error. Revisions of the same C function set (FFIJIT_TVM_FFI_C_API_<set>_REVISIONS in
// the generated config) cannot be told apart this way.
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ffijit/c_ext.h"
#include "ffijit/error.h"

namespace ffijit::portable {
namespace {

#define FFIJIT_OTHER_REVISION_NAME(name) #name,
constexpr const char* kOtherRevisionFunctions[] = {
    FFIJIT_TVM_FFI_REMOVED_FUNCTIONS(FFIJIT_OTHER_REVISION_NAME)};
#undef FFIJIT_OTHER_REVISION_NAME

bool IsOtherRevisionFunction(std::string_view name) {
  for (const char* other : kOtherRevisionFunctions) {
    if (name == other) return true;
  }
  return false;
}

void RefuseIfOtherRevision(const std::string& module_name,
                           const std::vector<std::string>& telling) {
  if (telling.empty()) return;
  std::string list;
  for (const std::string& name : telling) list += (list.empty() ? "" : ", ") + name;
  throw Error("RuntimeError",
              "module `" + module_name +
                  "` was built for TVM FFI " FFIJIT_TVM_FFI_REMOVED_FUNCTIONS_REVISIONS
                  " (it needs " +
                  list +
                  ", which only TVM FFI " FFIJIT_TVM_FFI_REMOVED_FUNCTIONS_REVISIONS
                  " exports), but this ffijit implements the TVM FFI " FFIJIT_TVM_FFI_ABI_NAME
                  " ABI: run it on an ffijit built with "
                  "-DFFIJIT_TVM_FFI_ABI=" FFIJIT_TVM_FFI_REMOVED_FUNCTIONS_REVISIONS
                  ", or rebuild the module against TVM FFI " FFIJIT_TVM_FFI_ABI_NAME);
}

// A file's first bytes read at once (for a small module they hold the ELF header and its dynamic
// symbol and string tables), the rest with pread at the offsets asked for: the section headers and
// symbol tables, never the rest of the file (no mapping, so no page faults or unmapping). Each read
// is checked against the file's size. Empty when the file cannot be opened or is not a regular
// file (dlopen or the object loader then reports why).
class ElfFileReader {
 public:
  explicit ElfFileReader(const char* path) : fd_(open(path, O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) return;
    const ssize_t got = pread(fd_, head_, sizeof head_, 0);
    if (got < 0) return;
    head_size_ = static_cast<uint64_t>(got);
    if (head_size_ < sizeof head_) {
      size_ = head_size_;  // all of it (a directory or a pipe fails the read above)
      return;
    }
    struct stat info {};
    if (fstat(fd_, &info) == 0 && S_ISREG(info.st_mode))
      size_ = static_cast<uint64_t>(info.st_size);
  }
  ~ElfFileReader() {
    if (fd_ >= 0) close(fd_);
  }
  ElfFileReader(const ElfFileReader&) = delete;
  ElfFileReader& operator=(const ElfFileReader&) = delete;

  // The `count` bytes at `offset` into `out`; false when they are not all in the file.
  bool Read(uint64_t offset, uint64_t count, void* out) const {
    if (offset > size_ || size_ - offset < count) return false;
    if (offset <= head_size_ && head_size_ - offset >= count) {
      if (count != 0) std::memcpy(out, head_ + offset, count);
      return true;
    }
    auto* bytes = static_cast<char*>(out);
    while (count > 0) {
      const ssize_t got = pread(fd_, bytes, count, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      bytes += got;
      offset += static_cast<uint64_t>(got);
      count -= static_cast<uint64_t>(got);
    }
    return true;
  }
  template <typename T>
  bool Read(uint64_t offset, T* out) const {
    return Read(offset, sizeof(T), out);
  }
  // The bytes [offset, offset + count) as a string; false when they are not all in the file.
  bool ReadBytes(uint64_t offset, uint64_t count, std::string* out) const {
    if (offset > size_ || size_ - offset < count) return false;
    out->resize(count);
    return Read(offset, count, out->data());
  }
  uint64_t size() const { return size_; }
  bool IsElf64() const {
    return size_ >= sizeof(Elf64_Ehdr) && head_size_ >= EI_NIDENT &&
           std::memcmp(head_, ELFMAG, SELFMAG) == 0 && head_[EI_CLASS] == ELFCLASS64;
  }

 private:
  int fd_;
  uint64_t size_ = 0;
  char head_[16384];
  uint64_t head_size_ = 0;
};

// The NUL-terminated name at `offset` in a string table, or nothing.
std::string_view NameAt(const std::string& table, uint64_t offset) {
  if (offset >= table.size()) return {};
  const char* begin = table.data() + offset;
  const void* end = std::memchr(begin, '\0', table.size() - offset);
  if (end == nullptr) return {};
  return std::string_view(begin, static_cast<const char*>(end) - begin);
}

// The other revision's functions among the undefined symbols of an ELF64 file: those of SHT_DYNSYM
// in a shared library (its SHT_SYMTAB, when not stripped, only repeats them), SHT_SYMTAB in a
// relocatable object.
std::vector<std::string> TellingUndefinedSymbols(const ElfFileReader& file) {
  std::vector<std::string> telling;
  Elf64_Ehdr header;
  if (!file.Read(0, &header) || header.e_shentsize != sizeof(Elf64_Shdr)) return telling;
  const uint64_t section_bytes = uint64_t{header.e_shnum} * sizeof(Elf64_Shdr);
  if (header.e_shoff > file.size() || file.size() - header.e_shoff < section_bytes) return telling;
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  if (!file.Read(header.e_shoff, section_bytes, sections.data())) return telling;
  const uint32_t wanted = header.e_type == ET_REL ? SHT_SYMTAB : SHT_DYNSYM;
  std::string symbols;
  std::string strings;
  for (const Elf64_Shdr& section : sections) {
    if (section.sh_type != wanted) continue;
    if (section.sh_link >= sections.size() || section.sh_entsize != sizeof(Elf64_Sym)) continue;
    const Elf64_Shdr& string_section = sections[section.sh_link];
    // A table running past the end of the file is read as far as the file goes.
    if (section.sh_offset > file.size()) continue;
    const uint64_t count =
        std::min(section.sh_size, file.size() - section.sh_offset) / sizeof(Elf64_Sym);
    if (!file.ReadBytes(section.sh_offset, count * sizeof(Elf64_Sym), &symbols) ||
        !file.ReadBytes(string_section.sh_offset, string_section.sh_size, &strings)) {
      continue;
    }
    for (uint64_t s = 1; s < count; ++s) {
      Elf64_Sym symbol;
      std::memcpy(&symbol, symbols.data() + s * sizeof(Elf64_Sym), sizeof symbol);
      if (symbol.st_shndx != SHN_UNDEF) continue;
      const std::string_view name = NameAt(strings, symbol.st_name);
      if (!IsOtherRevisionFunction(name)) continue;
      bool seen = false;
      for (const std::string& t : telling) seen = seen || t == name;
      if (!seen) telling.emplace_back(name);
    }
  }
  return telling;
}

}  // namespace
}  // namespace ffijit::portable

using namespace ffijit;

extern "C" int FFIJITCheckModuleAbiSymbols(const char* module_name, const TVMFFIByteArray* names,
                                           int32_t n) {
  return ffijit::GuardCBoundary([&] {
    if (n < 0) {
      throw Error("ValueError", "FFIJITCheckModuleAbiSymbols: negative count " + std::to_string(n));
    }
    if (n > 0) ffijit::details::RequireNonNull(names, "FFIJITCheckModuleAbiSymbols", "names");
    std::vector<std::string> telling;
    for (int32_t i = 0; i < n; ++i) {
      if (names[i].data == nullptr) continue;
      const std::string_view name(names[i].data, names[i].size);
      if (portable::IsOtherRevisionFunction(name)) telling.emplace_back(name);
    }
    portable::RefuseIfOtherRevision(module_name != nullptr ? module_name : "<unnamed>", telling);
  });
}

extern "C" int FFIJITCheckModuleAbiFile(const char* path) {
  return ffijit::GuardCBoundary([&] {
    ffijit::details::RequireNonNull(path, "FFIJITCheckModuleAbiFile", "path");
    const portable::ElfFileReader file(path);
    if (!file.IsElf64()) return;
    portable::RefuseIfOtherRevision(path, portable::TellingUndefinedSymbols(file));
  });
}
