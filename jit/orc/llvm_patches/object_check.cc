// Validation of ELF relocatable objects before LLVM's JITLink links them (see object_check.h:
// the trigger, the symptom, when a check can go).
// Each check says what JITLink does with such an object: most are crashes that fuzz_object found,
// the rest (relocation widths, relaxable GOT loads, wrapping symbol extents) reads and writes
// outside a block that reading JITLink's code showed.
#include "orc/llvm_patches/object_check.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <unordered_set>

#include "ffijit/error.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/LEB128.h"
#include "llvm/Support/MathExtras.h"
#include "orc/llvm/session.h"

namespace ffijit {
namespace orc {
namespace {

using ElfFile = llvm::object::ELFFile<llvm::object::ELF64LE>;
using Shdr = ElfFile::Elf_Shdr;

std::string Describe(llvm::Error error) {
  return LoaderExcerpt(ErrorText(std::move(error)));
}

// "section #3 `.text`" (the name when the section name table yields one).
std::string SectionLabel(const ElfFile& elf, const Shdr& section, uint64_t index) {
  std::string label = "section #" + std::to_string(index);
  auto name = elf.getSectionName(section);
  if (!name) {
    llvm::consumeError(name.takeError());
    return label;
  }
  return label + " " + Quote(name->str());
}

// The relocation types a relocatable object of `arch` may hold (the ELF numbers of its psABI):
// JITLink trusts them, so anything else is refused first. Unknown architectures were refused
// before this is asked.
bool IsStaticRelocationType(llvm::Triple::ArchType arch, uint32_t type) {
  switch (arch) {
    case llvm::Triple::x86_64:
      return type >= 1 && type <= 42;  // R_X86_64_64 .. R_X86_64_REX_GOTPCRELX
    case llvm::Triple::aarch64:
      return type >= 257 && type <= 580;  // R_AARCH64_ABS64 .. the TLS descriptor relocations
    default:
      return false;
  }
}

// How many bytes at its offset a relocation of `type` rewrites (its psABI field width): JITLink
// writes them without checking that they lie inside the section.
uint64_t RelocationWidth(llvm::Triple::ArchType arch, uint32_t type) {
  if (arch == llvm::Triple::x86_64) {
    switch (type) {
      case llvm::ELF::R_X86_64_64:
      case llvm::ELF::R_X86_64_DTPMOD64:
      case llvm::ELF::R_X86_64_DTPOFF64:
      case llvm::ELF::R_X86_64_TPOFF64:
      case llvm::ELF::R_X86_64_PC64:
      case llvm::ELF::R_X86_64_GOTOFF64:
      case llvm::ELF::R_X86_64_GOT64:
      case llvm::ELF::R_X86_64_GOTPCREL64:
      case llvm::ELF::R_X86_64_GOTPC64:
      case llvm::ELF::R_X86_64_GOTPLT64:
      case llvm::ELF::R_X86_64_PLTOFF64:
      case llvm::ELF::R_X86_64_SIZE64:
      case llvm::ELF::R_X86_64_IRELATIVE:
        return 8;
      case llvm::ELF::R_X86_64_16:
      case llvm::ELF::R_X86_64_PC16:
        return 2;
      case llvm::ELF::R_X86_64_8:
      case llvm::ELF::R_X86_64_PC8:
        return 1;
      default:
        return 4;
    }
  }
  switch (type) {  // AArch64: data relocations by width, every instruction relocation is 4 bytes
    case llvm::ELF::R_AARCH64_ABS64:
    case llvm::ELF::R_AARCH64_PREL64:
      return 8;
    case llvm::ELF::R_AARCH64_ABS16:
    case llvm::ELF::R_AARCH64_PREL16:
      return 2;
    default:
      return 4;
  }
}

// How many bytes before its offset a relocation of `type` reads and may rewrite: JITLink relaxes
// a GOT load by reading and replacing the opcode and ModRM bytes (and the REX prefix) in front
// of the field, wherever the offset is.
uint64_t RelocationLeadingBytes(llvm::Triple::ArchType arch, uint32_t type) {
  if (arch != llvm::Triple::x86_64) return 0;
  if (type == llvm::ELF::R_X86_64_GOTPCRELX) return 2;
  if (type == llvm::ELF::R_X86_64_REX_GOTPCRELX) return 3;
  return 0;
}

void CheckHeader(const llvm::object::ObjectFile& obj, const std::string& file,
                 const llvm::Triple& host) {
  if (!obj.isELF()) {
    throw ValueError(file + ": not an ELF object (this machine links ELF relocatable objects, " +
                     host.str() + ")");
  }
  if (obj.getArch() != host.getArch()) {
    throw ValueError(file + ": an object for " +
                     std::string(llvm::Triple::getArchTypeName(obj.getArch())) +
                     ", but this machine is " + host.str());
  }
  if (!obj.isRelocatableObject()) {
    throw ValueError(file +
                     ": not a relocatable object (ET_REL); shared libraries and executables "
                     "load with Module::Load(\"*.so\")");
  }
  if (llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(&obj) == nullptr) {
    throw ValueError(file + ": not a little-endian 64-bit ELF object");
  }
}

// Every section's contents lie within the file, and its address range stays clear of the top of
// the address space.
void CheckSections(const ElfFile& elf, llvm::ArrayRef<Shdr> sections, const std::string& file) {
  for (uint64_t index = 0; index < sections.size(); ++index) {
    const Shdr& section = sections[index];
    if (section.sh_type != llvm::ELF::SHT_NOBITS) {
      if (auto contents = elf.getSectionContents(section); !contents) {
        throw ValueError(file + ": truncated or corrupt object: " + Describe(contents.takeError()));
      }
    }
    // JITLink gives each section's block the section's address (sh_addr; 0 in what compilers
    // emit) and keys maps of blocks and symbols by address, in which the two highest addresses
    // are reserved: a block reaching them (a fuzzed `.rodata` at address 2^64-1) crashed its
    // .eh_frame pass.
    constexpr uint64_t kHighestAddress = std::numeric_limits<uint64_t>::max() - 2;
    if (section.sh_addr > kHighestAddress || section.sh_size > kHighestAddress - section.sh_addr) {
      throw ValueError(file + ": corrupt object: " + SectionLabel(elf, section, index) +
                       " has address " + std::to_string(section.sh_addr) + " and size " +
                       std::to_string(section.sh_size) +
                       ", which run past the end of the address space");
    }
  }
}

// The section table as the ELF specification lays it out and every compiler writes it: entry #0
// is the null section (all zero, but for the extended section count and name table index it may
// carry) and no other entry is SHT_NULL; each alignment is 0 or a power of two and divides the
// section's address; a section without SHF_ALLOC has address 0. JITLink skips SHT_NULL sections
// but not the symbols and relocations naming them, and trusts alignments and addresses (a fuzzed
// object with flagged SHT_NULL sections, alignments that were not powers of two and a symbol
// table with an address crashed it after allocating the link's memory).
void CheckSectionTable(const ElfFile& elf, llvm::ArrayRef<Shdr> sections, const std::string& file) {
  if (sections.empty()) return;
  const auto& header = elf.getHeader();
  const Shdr& null = sections[0];
  const bool size_is_count = header.e_shnum == 0;
  const bool link_is_names = header.e_shstrndx == llvm::ELF::SHN_XINDEX;
  if (null.sh_type != llvm::ELF::SHT_NULL || null.sh_name != 0 || null.sh_flags != 0 ||
      null.sh_addr != 0 || null.sh_offset != 0 || (null.sh_size != 0 && !size_is_count) ||
      (null.sh_link != 0 && !link_is_names) || null.sh_info != 0 || null.sh_addralign != 0 ||
      null.sh_entsize != 0) {
    throw ValueError(file +
                     ": corrupt object: section #0 is not the null section (the ELF "
                     "specification requires its header to be all zero)");
  }
  for (uint64_t index = 1; index < sections.size(); ++index) {
    const Shdr& section = sections[index];
    if (section.sh_type == llvm::ELF::SHT_NULL) {
      throw ValueError(file + ": corrupt object: " + SectionLabel(elf, section, index) +
                       " has type SHT_NULL, which only section #0 may have");
    }
    const uint64_t align = section.sh_addralign;
    if (!llvm::isPowerOf2_64(align) && align != 0) {
      throw ValueError(file + ": corrupt object: " + SectionLabel(elf, section, index) +
                       " has alignment " + std::to_string(align) +
                       ", which is neither 0 nor a power of two");
    }
    if (align > 1 && section.sh_addr % align != 0) {
      throw ValueError(file + ": corrupt object: " + SectionLabel(elf, section, index) +
                       " has address " + std::to_string(section.sh_addr) +
                       ", which is not a multiple of its alignment " + std::to_string(align));
    }
    if ((section.sh_flags & llvm::ELF::SHF_ALLOC) == 0 && section.sh_addr != 0) {
      throw ValueError(file + ": corrupt object: " + SectionLabel(elf, section, index) +
                       " is not allocated (SHF_ALLOC is missing) but has address " +
                       std::to_string(section.sh_addr) + " (it must be 0)");
    }
    // Index 0 of a string table is the empty name every unnamed symbol and section uses: JITLink
    // makes the null symbol of relocations only when entry #0's name is empty, and read the
    // missing symbol through a null pointer otherwise (a fuzzed `.strtab` starting with 'Z').
    if (section.sh_type == llvm::ELF::SHT_STRTAB && section.sh_size != 0 &&
        elf.base()[section.sh_offset] != '\0') {
      throw ValueError(file + ": corrupt object: string table " +
                       SectionLabel(elf, section, index) +
                       " does not start with a null character (index 0 is the empty name)");
    }
  }
}

// Whether `type` is a symbol type that the ELF specification or the GNU ABI defines and that
// gcc or clang emit: JITLink decides what to make of a symbol by its type.
bool IsDefinedSymbolType(uint8_t type) {
  switch (type) {
    case llvm::ELF::STT_NOTYPE:
    case llvm::ELF::STT_OBJECT:
    case llvm::ELF::STT_FUNC:
    case llvm::ELF::STT_SECTION:
    case llvm::ELF::STT_FILE:
    case llvm::ELF::STT_COMMON:
    case llvm::ELF::STT_TLS:
    case llvm::ELF::STT_GNU_IFUNC:
      return true;
    default:
      return false;
  }
}

bool IsDefinedSymbolBinding(uint8_t binding) {
  return binding == llvm::ELF::STB_LOCAL || binding == llvm::ELF::STB_GLOBAL ||
         binding == llvm::ELF::STB_WEAK || binding == llvm::ELF::STB_GNU_UNIQUE;
}

// The symbol table as the ELF specification requires it: entry #0 all zero; every type and
// binding one that ELF or the GNU ABI defines; section and file symbols local.
void CheckSymbolTable(const ElfFile& elf, llvm::ArrayRef<Shdr> sections, const std::string& file) {
  for (uint64_t index = 0; index < sections.size(); ++index) {
    const Shdr& section = sections[index];
    if (section.sh_type != llvm::ELF::SHT_SYMTAB) continue;
    auto symbols = elf.symbols(&section);
    if (!symbols) {
      throw ValueError(file +
                       ": truncated or corrupt symbol table: " + Describe(symbols.takeError()));
    }
    if (symbols->empty()) continue;
    static const uint8_t kZeros[sizeof(ElfFile::Elf_Sym)] = {};
    if (std::memcmp(&(*symbols)[0], kZeros, sizeof(kZeros)) != 0) {
      throw ValueError(file +
                       ": corrupt symbol table: entry #0 is not the null symbol (the ELF "
                       "specification requires it to be all zero)");
    }
    auto names = elf.getStringTableForSymtab(section, sections);
    for (uint64_t number = 1; number < symbols->size(); ++number) {
      const ElfFile::Elf_Sym& symbol = (*symbols)[number];
      std::string label = "symbol #" + std::to_string(number);
      if (names) {
        if (auto name = symbol.getName(*names)) {
          if (!name->empty()) label += " " + Quote(name->str());
        } else {
          llvm::consumeError(name.takeError());
        }
      }
      const uint8_t type = symbol.getType();
      const uint8_t binding = symbol.getBinding();
      if (!IsDefinedSymbolType(type)) {
        throw ValueError(file + ": corrupt symbol table: " + label + " has type " +
                         std::to_string(type) + ", which ELF does not define");
      }
      if (!IsDefinedSymbolBinding(binding)) {
        throw ValueError(file + ": corrupt symbol table: " + label + " has binding " +
                         std::to_string(binding) + ", which ELF does not define");
      }
      if ((type == llvm::ELF::STT_SECTION || type == llvm::ELF::STT_FILE) &&
          binding != llvm::ELF::STB_LOCAL) {
        throw ValueError(file + ": corrupt symbol table: " + label + " is a " +
                         (type == llvm::ELF::STT_SECTION ? "section" : "file") +
                         " symbol but not local");
      }
    }
    if (!names) llvm::consumeError(names.takeError());
  }
}

// JITLink gives a zero-fill section without SHF_ALLOC no memory, then fixes up references to its
// symbols through a null pointer (a fuzzed object): such a section is meaningless anyway. It also
// allocates and clears every zero-fill byte up front, so a header claiming gigabytes (a fuzzed
// `.bss` of 4 GiB took seconds and a gigabyte of memory) is refused over a cap; common symbols
// are zero-fill blocks too and count towards it.
void CheckZeroFill(const ElfFile& elf, llvm::ArrayRef<Shdr> sections,
                   const llvm::object::ELF64LEObjectFile& obj, const std::string& file) {
  uint64_t zero_fill_bytes = 0;
  auto reserve = [&](uint64_t bytes) {
    zero_fill_bytes += std::min<uint64_t>(bytes, kMaxZeroFillBytes + 1);
    if (zero_fill_bytes > kMaxZeroFillBytes) {
      throw ValueError(file + ": zero-filled sections (.bss) claim more than " +
                       std::to_string(kMaxZeroFillBytes >> 20) +
                       " MiB, the most an object module may reserve");
    }
  };
  for (uint64_t index = 0; index < sections.size(); ++index) {
    const Shdr& section = sections[index];
    if (section.sh_type != llvm::ELF::SHT_NOBITS) continue;
    reserve(section.sh_size);
    if (section.sh_size != 0 && (section.sh_flags & llvm::ELF::SHF_ALLOC) == 0) {
      throw ValueError(file + ": corrupt object: zero-filled " + SectionLabel(elf, section, index) +
                       " is not allocated (SHF_ALLOC is missing)");
    }
  }
  for (const llvm::object::ELFSymbolRef symbol : obj.symbols()) {
    auto section_index = obj.getSymbol(symbol.getRawDataRefImpl());
    if (section_index && (*section_index)->st_shndx == llvm::ELF::SHN_COMMON) {
      reserve(symbol.getSize());
    } else if (!section_index) {
      llvm::consumeError(section_index.takeError());
    }
  }
}

void CheckRelocations(const ElfFile& elf, llvm::ArrayRef<Shdr> sections,
                      llvm::Triple::ArchType arch, const std::string& file) {
  for (uint64_t index = 0; index < sections.size(); ++index) {
    const Shdr& section = sections[index];
    if (section.sh_type != llvm::ELF::SHT_RELA && section.sh_type != llvm::ELF::SHT_REL) continue;
    const std::string label = SectionLabel(elf, section, index);
    // LLVM's relocation iterator aborts the process on a table that does not fit the file.
    if (section.sh_type != llvm::ELF::SHT_RELA) {
      throw ValueError(file + ": unsupported relocation " + label + " of type SHT_REL" +
                       " (x86-64 and AArch64 objects use SHT_RELA)");
    }
    if (section.sh_info >= sections.size()) {
      throw ValueError(file + ": corrupt relocation " + label + ": it applies to section #" +
                       std::to_string(section.sh_info) + " of " + std::to_string(sections.size()));
    }
    const Shdr& target = sections[section.sh_info];
    const std::string target_label = SectionLabel(elf, target, section.sh_info);
    auto symtab = elf.getSection(section.sh_link);
    if (!symtab || (*symtab)->sh_type != llvm::ELF::SHT_SYMTAB) {
      if (!symtab) llvm::consumeError(symtab.takeError());
      throw ValueError(file + ": truncated or corrupt relocation " + label +
                       ": its symbol table link (" + std::to_string(section.sh_link) +
                       ") does not name the symbol table");
    }
    auto symbols = elf.symbols(*symtab);
    if (!symbols) {
      throw ValueError(file +
                       ": truncated or corrupt symbol table: " + Describe(symbols.takeError()));
    }
    auto relas = elf.relas(section);
    if (!relas) {
      throw ValueError(file + ": truncated or corrupt relocation " + label + ": " +
                       Describe(relas.takeError()));
    }
    for (const ElfFile::Elf_Rela& rela : *relas) {
      const uint32_t symbol_index = rela.getSymbol(false);
      const uint32_t type = rela.getType(false);
      const uint64_t offset = rela.r_offset;
      if (arch == llvm::Triple::x86_64 && type == llvm::ELF::R_X86_64_NONE) continue;  // ignored
      const std::string where = "a relocation of " + target_label + " at offset " +
                                std::to_string(offset) + " (in " + label + ")";
      if (symbol_index >= symbols->size()) {
        throw ValueError(file + ": truncated or corrupt object: " + where + " names symbol #" +
                         std::to_string(symbol_index) + " of " + std::to_string(symbols->size()));
      }
      // Symbol #0 is the null symbol (CheckSymbolTable), which JITLink links as address 0.
      if (!IsStaticRelocationType(arch, type)) {
        throw ValueError(file + ": unsupported relocation type " + std::to_string(type) + " in " +
                         where);
      }
      // JITLink gives a zero-filled block no contents and fixes it up through a null pointer
      // (a fuzzed `.init_array` retyped SHT_NOBITS kept its relocations).
      if (target.sh_type == llvm::ELF::SHT_NOBITS) {
        throw ValueError(file + ": corrupt object: " + where +
                         " applies to a zero-filled section (SHT_NOBITS), which has no contents");
      }
      // JITLink neither loads nor keeps alive a section without SHF_ALLOC; loaded code or data
      // that refers into one (compilers only ever refer the other way, from debug information)
      // made it dereference a null pointer after allocating the link's memory (a fuzzed object).
      const ElfFile::Elf_Sym& symbol = (*symbols)[symbol_index];
      if ((target.sh_flags & llvm::ELF::SHF_ALLOC) != 0 &&
          symbol.st_shndx != llvm::ELF::SHN_UNDEF && symbol.st_shndx < sections.size() &&
          (sections[symbol.st_shndx].sh_flags & llvm::ELF::SHF_ALLOC) == 0) {
        throw ValueError(file + ": corrupt object: " + where + " refers to symbol #" +
                         std::to_string(symbol_index) + " in " +
                         SectionLabel(elf, sections[symbol.st_shndx], symbol.st_shndx) +
                         ", which is not allocated (SHF_ALLOC is missing)");
      }
      const uint64_t width = RelocationWidth(arch, type);
      if (offset > target.sh_size || target.sh_size - offset < width) {
        throw ValueError(file + ": truncated or corrupt object: " + where + " writes " +
                         std::to_string(width) + " bytes past the end of its section (" +
                         std::to_string(target.sh_size) + " bytes)");
      }
      const uint64_t leading = RelocationLeadingBytes(arch, type);
      if (offset < leading) {
        throw ValueError(file + ": truncated or corrupt object: " + where +
                         " is a relaxable GOT load whose instruction would start " +
                         std::to_string(leading - offset) + " bytes before its section");
      }
    }
  }
}

// JITLink checks that a defined symbol's offset plus its size lies within its section, but the
// sum can wrap; the symbols it adds to its graph are checked here without the wrap. The runtime
// writes the module's handle into the library context when it binds the module: in a section
// JITLink maps read-only that write would fault (a fuzzed object).
void CheckSymbols(const ElfFile& elf, llvm::ArrayRef<Shdr> sections,
                  const llvm::object::ELF64LEObjectFile& obj, const std::string& file) {
  for (const llvm::object::ELFSymbolRef symbol : obj.symbols()) {
    auto name = symbol.getName();
    if (!name) {
      throw ValueError(file + ": truncated or corrupt symbol table: " + Describe(name.takeError()));
    }
    auto section = symbol.getSection();
    if (!section) {
      throw ValueError(file + ": symbol " + Quote(name->str()) +
                       " has a bad section index: " + Describe(section.takeError()));
    }
    if (*section == obj.section_end()) continue;
    const uint64_t section_index = (*section)->getIndex();
    const Shdr& holder = sections[section_index];
    auto raw = obj.getSymbol(symbol.getRawDataRefImpl());
    if (!raw) {
      throw ValueError(file + ": truncated or corrupt symbol table: " + Describe(raw.takeError()));
    }
    const uint8_t type = (*raw)->getType();
    const bool in_graph = type == llvm::ELF::STT_NOTYPE || type == llvm::ELF::STT_FUNC ||
                          type == llvm::ELF::STT_OBJECT || type == llvm::ELF::STT_SECTION ||
                          type == llvm::ELF::STT_TLS;
    const uint64_t offset = (*raw)->st_value;
    const uint64_t size = (*raw)->st_size;
    if (in_graph && (offset > holder.sh_size || size > holder.sh_size - offset)) {
      throw ValueError(file + ": corrupt object: symbol " + Quote(name->str()) + " (offset " +
                       std::to_string(offset) + ", size " + std::to_string(size) +
                       ") lies outside its " + SectionLabel(elf, holder, section_index) + " (" +
                       std::to_string(holder.sh_size) + " bytes)");
    }
    // JITLink makes no block for a section without SHF_ALLOC, so a symbol other modules could
    // name there has nothing to stand for; compilers put only local labels in such sections
    // (debug information). A fuzzed object with a global function in an unallocated .text
    // crashed JITLink after allocation.
    const uint8_t binding = (*raw)->getBinding();
    if (in_graph && type != llvm::ELF::STT_SECTION && binding != llvm::ELF::STB_LOCAL &&
        (holder.sh_flags & llvm::ELF::SHF_ALLOC) == 0) {
      throw ValueError(file + ": corrupt object: symbol " + Quote(name->str()) + " is defined in " +
                       SectionLabel(elf, holder, section_index) +
                       ", which is not allocated (SHF_ALLOC is missing)");
    }
    if (*name == "__tvm_ffi__library_ctx") {
      const uint64_t needed = llvm::ELF::SHF_ALLOC | llvm::ELF::SHF_WRITE;
      if ((holder.sh_flags & needed) != needed) {
        throw ValueError(file +
                         ": `__tvm_ffi__library_ctx` must be writable data, but its "
                         "section is not allocated and writable");
      }
      // Binding the module stores a pointer there: 8 bytes, which must be the variable's own.
      if ((size != 0 && size < sizeof(void*)) || holder.sh_size < sizeof(void*) ||
          offset > holder.sh_size - sizeof(void*)) {
        throw ValueError(file +
                         ": `__tvm_ffi__library_ctx` must be a pointer variable, but it is " +
                         std::to_string(size) + " bytes at offset " + std::to_string(offset) +
                         " of its " + std::to_string(holder.sh_size) + "-byte section");
      }
    }
  }
}

}  // namespace

void CheckObject(llvm::MemoryBufferRef buffer, const std::string& file, const llvm::Triple& host) {
  auto object = llvm::object::ObjectFile::createObjectFile(buffer);
  if (!object) {
    throw ValueError(file + ": not an object file: " + Describe(object.takeError()));
  }
  CheckHeader(**object, file, host);
  const auto& obj = *llvm::cast<llvm::object::ELF64LEObjectFile>(object->get());
  const ElfFile& elf = obj.getELFFile();
  auto sections = elf.sections();
  if (!sections) {
    throw ValueError(file + ": truncated or corrupt object: " + Describe(sections.takeError()));
  }
  CheckSections(elf, *sections, file);
  CheckSectionTable(elf, *sections, file);
  CheckSymbolTable(elf, *sections, file);
  CheckZeroFill(elf, *sections, obj, file);
  // JITLink merges sections of one name into one graph section, which takes the first one's
  // memory lifetime: an allocated section after an unallocated one of its name went unallocated,
  // and its symbols to address 0 (a fuzzed object, two `.comment`s, crashed it after allocation).
  std::map<llvm::StringRef, uint64_t> first_of_name;
  for (uint64_t index = 0; index < sections->size(); ++index) {
    const Shdr& section = (*sections)[index];
    auto name = elf.getSectionName(section);
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    auto [first, inserted] = first_of_name.emplace(*name, index);
    if (!inserted &&
        (((*sections)[first->second].sh_flags ^ section.sh_flags) & llvm::ELF::SHF_ALLOC) != 0) {
      throw ValueError(file + ": corrupt object: " + SectionLabel(elf, section, index) + " and " +
                       SectionLabel(elf, (*sections)[first->second], first->second) +
                       " share a name but only one of them is allocated (SHF_ALLOC)");
    }
  }
  for (const Shdr& section : *sections) {
    auto name = elf.getSectionName(section);
    if (!name) {
      llvm::consumeError(name.takeError());
    } else if (*name == ".eh_frame" && (section.sh_flags & llvm::ELF::SHF_ALLOC) == 0) {
      // JITLink hands the linked .eh_frame to the unwinder (libgcc's __register_frame), which
      // read a fuzzed one that was not loaded through a wild pointer.
      throw ValueError(file + ": corrupt object: the .eh_frame section is not allocated " +
                       "(SHF_ALLOC is missing), but the unwinder must read it");
    } else if (*name == ".eh_frame" && section.sh_type != llvm::ELF::SHT_NOBITS) {
      auto contents = elf.getSectionContents(section);
      CheckEHFrame(llvm::toStringRef(llvm::cantFail(std::move(contents))), file);
    }
  }
  CheckRelocations(elf, *sections, host.getArch(), file);
  CheckSymbols(elf, *sections, obj, file);
}

}  // namespace orc
}  // namespace ffijit
