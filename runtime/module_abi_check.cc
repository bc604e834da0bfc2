// Refuses modules built for a TVM FFI ABI revision of another C function set, told by the C
// functions they import (FFIJITCheckModuleAbiSymbols, FFIJITCheckModuleAbiFile). Such revisions
// export a function named TVMFFIErrorCreate with different prototypes and lay out objects
// differently, so such a module would not fail to load: it would corrupt memory at its first
// object or error. Revisions of the same C function set (FFIJIT_TVM_FFI_C_API_<set>_REVISIONS in
// the generated config) cannot be told apart this way.
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ffijit/c_ext.h"
#include "internal.h"

namespace ffijit::internal {
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

// The file mapped read-only (only the pages the symbol tables sit on are ever touched), each
// read checked against its size.
class FileBytes {
 public:
  explicit FileBytes(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  bool Read(uint64_t offset, T* out) const {
    if (offset > bytes_.size() || bytes_.size() - offset < sizeof(T)) return false;
    std::memcpy(out, bytes_.data() + offset, sizeof(T));
    return true;
  }
  // The NUL-terminated name at `offset` inside [table, table + table_size), or nothing.
  std::string_view Name(uint64_t table, uint64_t table_size, uint64_t offset) const {
    if (table > bytes_.size() || table_size > bytes_.size() - table || offset >= table_size) {
      return {};
    }
    const char* begin = bytes_.data() + table + offset;
    const void* end = std::memchr(begin, '\0', table_size - offset);
    if (end == nullptr) return {};
    return std::string_view(begin, static_cast<const char*>(end) - begin);
  }
  bool IsElf64() const {
    return bytes_.size() >= sizeof(Elf64_Ehdr) &&
           std::memcmp(bytes_.data(), ELFMAG, SELFMAG) == 0 && bytes_[EI_CLASS] == ELFCLASS64;
  }

 private:
  std::string_view bytes_;
};

// A regular file mapped read-only for the scan; empty when it cannot be opened or mapped (dlopen
// or the object loader then reports why).
class MappedFile {
 public:
  explicit MappedFile(const char* path) {
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat info {};
    if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
      void* data = mmap(nullptr, static_cast<size_t>(info.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (data != MAP_FAILED) {
        data_ = data;
        size_ = static_cast<size_t>(info.st_size);
      }
    }
    close(fd);
  }
  ~MappedFile() {
    if (data_ != nullptr) munmap(data_, size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// The other revision's functions among the undefined symbols of an ELF64 file: those of SHT_DYNSYM
// in a shared library (its SHT_SYMTAB, when not stripped, only repeats them), SHT_SYMTAB in a
// relocatable object.
std::vector<std::string> TellingUndefinedSymbols(const FileBytes& file) {
  std::vector<std::string> telling;
  Elf64_Ehdr header;
  if (!file.Read(0, &header) || header.e_shentsize != sizeof(Elf64_Shdr)) return telling;
  const uint32_t wanted = header.e_type == ET_REL ? SHT_SYMTAB : SHT_DYNSYM;
  for (uint16_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section;
    if (!file.Read(header.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr), &section)) break;
    if (section.sh_type != wanted) continue;
    Elf64_Shdr strings;
    if (section.sh_link >= header.e_shnum || section.sh_entsize != sizeof(Elf64_Sym) ||
        !file.Read(header.e_shoff + uint64_t{section.sh_link} * sizeof(Elf64_Shdr), &strings)) {
      continue;
    }
    const uint64_t count = section.sh_size / sizeof(Elf64_Sym);
    for (uint64_t s = 1; s < count; ++s) {
      Elf64_Sym symbol;
      if (!file.Read(section.sh_offset + s * sizeof(Elf64_Sym), &symbol)) break;
      if (symbol.st_shndx != SHN_UNDEF) continue;
      const std::string_view name = file.Name(strings.sh_offset, strings.sh_size, symbol.st_name);
      if (!IsOtherRevisionFunction(name)) continue;
      bool seen = false;
      for (const std::string& t : telling) seen = seen || t == name;
      if (!seen) telling.emplace_back(name);
    }
  }
  return telling;
}

}  // namespace
}  // namespace ffijit::internal

using namespace ffijit;

extern "C" int FFIJITCheckModuleAbiSymbols(const char* module_name, const TVMFFIByteArray* names,
                                           int32_t n) {
  return internal::GuardCBoundary([&] {
    if (n < 0) {
      throw Error("ValueError", "FFIJITCheckModuleAbiSymbols: negative count " + std::to_string(n));
    }
    if (n > 0) internal::RequireNonNull(names, "FFIJITCheckModuleAbiSymbols", "names");
    std::vector<std::string> telling;
    for (int32_t i = 0; i < n; ++i) {
      if (names[i].data == nullptr) continue;
      const std::string_view name(names[i].data, names[i].size);
      if (internal::IsOtherRevisionFunction(name)) telling.emplace_back(name);
    }
    internal::RefuseIfOtherRevision(module_name != nullptr ? module_name : "<unnamed>", telling);
  });
}

extern "C" int FFIJITCheckModuleAbiFile(const char* path) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(path, "FFIJITCheckModuleAbiFile", "path");
    const internal::MappedFile mapped(path);
    const internal::FileBytes file(mapped.bytes());
    if (!file.IsElf64()) return;
    internal::RefuseIfOtherRevision(path, internal::TellingUndefinedSymbols(file));
  });
}
