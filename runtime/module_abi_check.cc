// Refuses modules built for the other TVM FFI ABI revision, told by the C functions they import
// (FFIJITCheckModuleAbiSymbols, FFIJITCheckModuleAbiFile). Both revisions export a function named
// TVMFFIErrorCreate with different prototypes and lay out objects differently, so such a module
// would not fail to load: it would corrupt memory at its first object or error.
#include <elf.h>

#include <cstring>
#include <fstream>
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
                  "` was built for TVM FFI " FFIJIT_TVM_FFI_OTHER_ABI_NAME " (it needs " + list +
                  ", which only that revision has), but this ffijit implements "
                  "the TVM FFI " FFIJIT_TVM_FFI_ABI_NAME
                  " ABI: run it on an ffijit built with "
                  "-DFFIJIT_TVM_FFI_ABI=" FFIJIT_TVM_FFI_OTHER_ABI_NAME
                  ", or rebuild the module against "
                  "TVM FFI " FFIJIT_TVM_FFI_ABI_NAME);
}

// A byte range of the file, checked against its size before every read.
class FileBytes {
 public:
  explicit FileBytes(std::string bytes) : bytes_(std::move(bytes)) {}
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

 private:
  std::string bytes_;
};

// The other revision's functions among the undefined symbols of every symbol table of an ELF64
// file (SHT_DYNSYM of a shared library, SHT_SYMTAB of a relocatable object).
std::vector<std::string> TellingUndefinedSymbols(const FileBytes& file) {
  std::vector<std::string> telling;
  Elf64_Ehdr header;
  if (!file.Read(0, &header) || header.e_shentsize != sizeof(Elf64_Shdr)) return telling;
  for (uint16_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section;
    if (!file.Read(header.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr), &section)) break;
    if (section.sh_type != SHT_DYNSYM && section.sh_type != SHT_SYMTAB) continue;
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

bool IsElf64(const std::string& bytes) {
  return bytes.size() >= sizeof(Elf64_Ehdr) && std::memcmp(bytes.data(), ELFMAG, SELFMAG) == 0 &&
         bytes[EI_CLASS] == ELFCLASS64;
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
    std::ifstream in(path, std::ios::binary);
    if (!in) return;
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!internal::IsElf64(bytes)) return;
    internal::RefuseIfOtherRevision(
        path, internal::TellingUndefinedSymbols(internal::FileBytes(std::move(bytes))));
  });
}
