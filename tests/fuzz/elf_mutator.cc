// The structure-aware ELF mutation of fuzz_object (see elf_mutator.h).
#include "elf_mutator.h"

#include <elf.h>

#include <cstring>
#include <vector>

namespace ffijit_fuzz {
namespace {

struct Field {
  size_t at;     // file offset
  size_t width;  // 1, 2, 4 or 8 bytes
};

uint64_t ReadField(const uint8_t* data, Field field) {
  uint64_t value = 0;
  std::memcpy(&value, data + field.at, field.width);  // little-endian host and file
  return value;
}

void WriteField(uint8_t* data, Field field, uint64_t value) {
  std::memcpy(data + field.at, &value, field.width);
}

// The section headers that lie within the file.
std::vector<Elf64_Shdr> Sections(const uint8_t* data, size_t size, const Elf64_Ehdr& ehdr) {
  std::vector<Elf64_Shdr> sections;
  if (ehdr.e_shentsize != sizeof(Elf64_Shdr) || ehdr.e_shoff > size) return sections;
  const size_t fit = (size - ehdr.e_shoff) / sizeof(Elf64_Shdr);
  const size_t count = ehdr.e_shnum < fit ? ehdr.e_shnum : fit;
  sections.resize(count);
  if (count != 0) std::memcpy(sections.data(), data + ehdr.e_shoff, count * sizeof(Elf64_Shdr));
  return sections;
}

// A value for `field` meant to break an assumption: a boundary, a neighbour of the old value,
// another section's index or size, a flipped bit, or noise.
uint64_t BreakingValue(uint64_t old, size_t width, const std::vector<Elf64_Shdr>& sections,
                       std::minstd_rand& rng) {
  static const uint64_t kBoundaries[] = {0,
                                         1,
                                         2,
                                         3,
                                         4,
                                         7,
                                         8,
                                         15,
                                         16,
                                         24,
                                         64,
                                         0x7f,
                                         0x80,
                                         0xff,
                                         0x100,
                                         0x7fff,
                                         0xffff,
                                         0xff00,
                                         0xfff1,  // SHN_ABS
                                         0xfff2,  // SHN_COMMON
                                         0x7fffffff,
                                         0x80000000,
                                         0xffffffff,
                                         uint64_t{1} << 32,
                                         uint64_t{1} << 40,
                                         uint64_t{1} << 62,
                                         uint64_t{1} << 63,
                                         ~uint64_t{0},
                                         ~uint64_t{0} - 1};
  uint64_t value = 0;
  switch (rng() % 6) {
    case 0:
      value = kBoundaries[rng() % (sizeof(kBoundaries) / sizeof(kBoundaries[0]))];
      break;
    case 1:
      value = old + (rng() % 33) - 16;
      break;
    case 2:
      value = sections.empty() ? rng() % 16 : rng() % (sections.size() + 2);
      break;
    case 3:
      value = sections.empty() ? 0 : sections[rng() % sections.size()].sh_size + (rng() % 9) - 4;
      break;
    case 4:
      value = old ^ (uint64_t{1} << (rng() % (width * 8)));
      break;
    default:
      value = (uint64_t{rng()} << 32) ^ rng();
      break;
  }
  return value;
}

// Whether `shdr` is the .eh_frame section (by its name in the section name table).
bool IsEHFrame(const uint8_t* data, size_t size, const Elf64_Ehdr& ehdr,
               const std::vector<Elf64_Shdr>& sections, const Elf64_Shdr& shdr) {
  if (ehdr.e_shstrndx >= sections.size()) return false;
  const Elf64_Shdr& names = sections[ehdr.e_shstrndx];
  static constexpr char kName[] = ".eh_frame";
  if (names.sh_offset > size || shdr.sh_name > size - names.sh_offset ||
      size - names.sh_offset - shdr.sh_name < sizeof(kName)) {
    return false;
  }
  return std::memcmp(data + names.sh_offset + shdr.sh_name, kName, sizeof(kName)) == 0;
}

}  // namespace

bool MutateElfFields(uint8_t* data, size_t size, std::minstd_rand& rng) {
  if (size < sizeof(Elf64_Ehdr) || std::memcmp(data, ELFMAG, SELFMAG) != 0 ||
      data[EI_CLASS] != ELFCLASS64 || data[EI_DATA] != ELFDATA2LSB) {
    return false;
  }
  Elf64_Ehdr ehdr;
  std::memcpy(&ehdr, data, sizeof(ehdr));
  const std::vector<Elf64_Shdr> sections = Sections(data, size, ehdr);

  // Every field a linker reads: the file header's section table, each section header, each
  // symbol, each relocation (offset, symbol index, type, addend), the .eh_frame records.
  std::vector<Field> fields = {{offsetof(Elf64_Ehdr, e_shoff), 8},
                               {offsetof(Elf64_Ehdr, e_shnum), 2},
                               {offsetof(Elf64_Ehdr, e_shstrndx), 2},
                               {offsetof(Elf64_Ehdr, e_shentsize), 2}};
  for (size_t i = 0; i < sections.size(); ++i) {
    const size_t header = ehdr.e_shoff + i * sizeof(Elf64_Shdr);
    for (Field field :
         {Field{offsetof(Elf64_Shdr, sh_name), 4}, Field{offsetof(Elf64_Shdr, sh_type), 4},
          Field{offsetof(Elf64_Shdr, sh_flags), 8}, Field{offsetof(Elf64_Shdr, sh_addr), 8},
          Field{offsetof(Elf64_Shdr, sh_offset), 8}, Field{offsetof(Elf64_Shdr, sh_size), 8},
          Field{offsetof(Elf64_Shdr, sh_link), 4}, Field{offsetof(Elf64_Shdr, sh_info), 4},
          Field{offsetof(Elf64_Shdr, sh_addralign), 8},
          Field{offsetof(Elf64_Shdr, sh_entsize), 8}}) {
      fields.push_back({header + field.at, field.width});
    }
    const Elf64_Shdr& shdr = sections[i];
    if (shdr.sh_offset > size || shdr.sh_size > size - shdr.sh_offset) continue;
    if (shdr.sh_type == SHT_SYMTAB) {
      for (size_t at = shdr.sh_offset; at + sizeof(Elf64_Sym) <= shdr.sh_offset + shdr.sh_size;
           at += sizeof(Elf64_Sym)) {
        for (Field field :
             {Field{offsetof(Elf64_Sym, st_name), 4}, Field{offsetof(Elf64_Sym, st_info), 1},
              Field{offsetof(Elf64_Sym, st_other), 1}, Field{offsetof(Elf64_Sym, st_shndx), 2},
              Field{offsetof(Elf64_Sym, st_value), 8}, Field{offsetof(Elf64_Sym, st_size), 8}}) {
          fields.push_back({at + field.at, field.width});
        }
      }
    } else if (IsEHFrame(data, size, ehdr, sections, shdr)) {
      // Each record's length and CIE pointer, and the bytes after them (a CIE's version,
      // augmentation string and pointer encodings; an FDE's address range).
      size_t at = shdr.sh_offset;
      while (at + 8 <= shdr.sh_offset + shdr.sh_size) {
        uint32_t length = 0;
        std::memcpy(&length, data + at, sizeof(length));
        fields.push_back({at, 4});
        fields.push_back({at + 4, 4});
        for (size_t byte = at + 8; byte < at + 24 && byte < shdr.sh_offset + shdr.sh_size; ++byte) {
          fields.push_back({byte, 1});
        }
        if (length == 0 || length > shdr.sh_offset + shdr.sh_size - at - 4) break;
        at += 4 + length;
      }
    } else if (shdr.sh_type == SHT_RELA) {
      for (size_t at = shdr.sh_offset; at + sizeof(Elf64_Rela) <= shdr.sh_offset + shdr.sh_size;
           at += sizeof(Elf64_Rela)) {
        fields.push_back({at + offsetof(Elf64_Rela, r_offset), 8});
        fields.push_back({at + offsetof(Elf64_Rela, r_info), 4});      // the type
        fields.push_back({at + offsetof(Elf64_Rela, r_info) + 4, 4});  // the symbol index
        fields.push_back({at + offsetof(Elf64_Rela, r_addend), 8});
      }
    }
  }
  const int rounds = 1 + static_cast<int>(rng() % 3);
  for (int round = 0; round < rounds; ++round) {
    const Field field = fields[rng() % fields.size()];
    if (field.at + field.width > size) continue;
    WriteField(data, field, BreakingValue(ReadField(data, field), field.width, sections, rng));
  }
  return true;
}

}  // namespace ffijit_fuzz
