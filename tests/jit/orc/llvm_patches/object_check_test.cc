// The object loader's checks before JITLink (jit/orc/llvm_patches/object_check.cc): each test takes
// an intact fixture object from gcc or clang-19, breaks the one field in it that made LLVM 19's
// JITLink crash under fuzzing, and expects a ValueError naming the file and the section, symbol or
// relocation at fault; the intact object then still loads into the same module.
#include <gtest/gtest.h>

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "catch_error.h"
#include "ffijit/jit/jit_module.h"

namespace {

using ffijit::JitModule;
using ffijit_tests::CatchError;

#if defined(__x86_64__)
constexpr uint32_t kAbs64 = R_X86_64_64;
#elif defined(__aarch64__)
constexpr uint32_t kAbs64 = R_AARCH64_ABS64;
#endif

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// An ELF64 relocatable object in memory whose section headers, symbols and relocations the
// tests rewrite in place.
class ElfImage {
 public:
  explicit ElfImage(std::string bytes) : bytes_(std::move(bytes)) {
    std::memcpy(&header_, bytes_.data(), sizeof(header_));
  }
  const std::string& bytes() const { return bytes_; }

  template <typename T>
  T Read(size_t at) const {
    T value;
    std::memcpy(&value, bytes_.data() + at, sizeof(value));
    return value;
  }
  template <typename T>
  void Write(size_t at, const T& value) {
    std::memcpy(bytes_.data() + at, &value, sizeof(value));
  }

  size_t SectionCount() const { return header_.e_shnum; }
  size_t HeaderAt(size_t index) const { return header_.e_shoff + index * sizeof(Elf64_Shdr); }
  Elf64_Shdr Section(size_t index) const { return Read<Elf64_Shdr>(HeaderAt(index)); }
  std::string SectionName(size_t index) const {
    return bytes_.c_str() + Section(header_.e_shstrndx).sh_offset + Section(index).sh_name;
  }
  // The index of the section called `name`, or 0 (the null section) when there is none.
  size_t SectionIndex(const std::string& name) const {
    for (size_t i = 1; i < header_.e_shnum; ++i) {
      if (SectionName(i) == name) return i;
    }
    return 0;
  }
  size_t SymbolTable() const {
    for (size_t i = 1; i < header_.e_shnum; ++i) {
      if (Section(i).sh_type == SHT_SYMTAB) return i;
    }
    return 0;
  }
  size_t SymbolAt(size_t index) const {
    return Section(SymbolTable()).sh_offset + index * sizeof(Elf64_Sym);
  }
  // The index of the symbol called `name`, or 0 when there is none.
  size_t SymbolIndex(const std::string& name) const {
    const Elf64_Shdr symtab = Section(SymbolTable());
    const Elf64_Shdr strtab = Section(symtab.sh_link);
    for (size_t i = 1; i < symtab.sh_size / sizeof(Elf64_Sym); ++i) {
      if (bytes_.c_str() + strtab.sh_offset + Read<Elf64_Sym>(SymbolAt(i)).st_name == name) {
        return i;
      }
    }
    return 0;
  }
  // The file offsets of the relocation records that apply to section `target`.
  std::vector<size_t> RelocationsOf(size_t target) const {
    std::vector<size_t> records;
    for (size_t i = 1; i < header_.e_shnum; ++i) {
      const Elf64_Shdr shdr = Section(i);
      if (shdr.sh_type != SHT_RELA || shdr.sh_info != target) continue;
      for (size_t at = 0; at + sizeof(Elf64_Rela) <= shdr.sh_size; at += sizeof(Elf64_Rela)) {
        records.push_back(shdr.sh_offset + at);
      }
    }
    return records;
  }

 private:
  std::string bytes_;
  Elf64_Ehdr header_;
};

class ObjectCheckTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string Adder() const {
    return ReadBytes(std::string(FFIJIT_JIT_FIXTURES) + "/" + GetParam() + "/adder.o");
  }
  // Adds the broken object `image` as `file` to a new module and returns the error; the intact
  // fixture then loads into the same module.
  ffijit::Error LoadBroken(const ElfImage& image, const std::string& file) const {
    JitModule mod = JitModule::Create("broken");
    ffijit::Error error = CatchError([&] { mod.AddObject(image.bytes(), file); });
    mod.AddObject(Adder(), "adder.o");
    return error;
  }
};

INSTANTIATE_TEST_SUITE_P(Compilers, ObjectCheckTest, ::testing::Values("gcc", "clang"));

TEST_P(ObjectCheckTest, TheFixtureItselfLoads) {
  JitModule mod = JitModule::Create("intact");
  mod.AddObject(Adder(), "adder.o");
  EXPECT_EQ(mod.GetFunction("add").value()(1, 2).cast<int64_t>(), 3);
}

// JITLink keys blocks and symbols by address and reserves the top two: a fuzzed `.rodata` at
// address 2^64-1 crashed its .eh_frame pass.
TEST_P(ObjectCheckTest, RefusesASectionThatReachesTheTopOfTheAddressSpace) {
  ElfImage image(Adder());
  const size_t rodata = image.SectionIndex(".rodata");
  ASSERT_NE(rodata, 0u) << "the adder fixture has a .rodata section";
  image.Write<uint64_t>(image.HeaderAt(rodata) + offsetof(Elf64_Shdr, sh_addr), ~uint64_t{0});
  const ffijit::Error error = LoadBroken(image, "top.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "top.o: corrupt object: section #" + std::to_string(rodata) +
                                 " `.rodata` has address 18446744073709551615 and size " +
                                 std::to_string(image.Section(rodata).sh_size) +
                                 ", which run past the end of the address space");
}

// A section just below the reserved addresses is no problem for the check (JITLink links or
// refuses it itself).
TEST_P(ObjectCheckTest, AcceptsASectionAddressBelowTheReservedOnes) {
  ElfImage image(Adder());
  const size_t rodata = image.SectionIndex(".rodata");
  ASSERT_NE(rodata, 0u);
  const uint64_t below = ~uint64_t{0} - 2 - image.Section(rodata).sh_size;
  image.Write<uint64_t>(image.HeaderAt(rodata) + offsetof(Elf64_Shdr, sh_addr), below);
  JitModule mod = JitModule::Create("below");
  try {
    mod.AddObject(image.bytes(), "below.o");
  } catch (const ffijit::Error& e) {
    EXPECT_EQ(e.message().find("run past the end of the address space"), std::string::npos)
        << e.message();
  }
}

// A relocation of symbol #0 whose entry is not the null symbol: JITLink read the missing symbol
// through a null pointer while building its error message. The ELF specification requires entry
// #0 to be all zero, so the loader refuses any other entry #0, named by a relocation or not.
TEST_P(ObjectCheckTest, RefusesASymbolTableWhoseEntryZeroIsNotTheNullSymbol) {
  ElfImage image(Adder());
  const size_t text = image.SectionIndex(".text");
  const std::vector<size_t> relocations = image.RelocationsOf(text);
  ASSERT_FALSE(relocations.empty());
  image.Write<uint64_t>(image.SymbolAt(0) + offsetof(Elf64_Sym, st_value), 0x1000);
  auto rela = image.Read<Elf64_Rela>(relocations[0]);
  rela.r_info = ELF64_R_INFO(0, ELF64_R_TYPE(rela.r_info));
  image.Write(relocations[0], rela);
  const std::string expected =
      "null_symbol.o: corrupt symbol table: entry #0 is not the null symbol (the ELF "
      "specification requires it to be all zero)";
  const ffijit::Error error = LoadBroken(image, "null_symbol.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), expected);
  ElfImage named(Adder());  // a name alone, no relocation of symbol #0
  named.Write<uint32_t>(named.SymbolAt(0) + offsetof(Elf64_Sym, st_name), 1);
  EXPECT_EQ(LoadBroken(named, "null_symbol.o").message(), expected);
}

// The relocation's field is 8 bytes wide: 4 bytes before the end of its section it writes past
// it (the loader checked 4 bytes for every type before).
TEST_P(ObjectCheckTest, RefusesAnEightByteRelocationThatEndsPastItsSection) {
  ElfImage image(Adder());
  const size_t text = image.SectionIndex(".text");
  const std::vector<size_t> relocations = image.RelocationsOf(text);
  ASSERT_FALSE(relocations.empty());
  auto rela = image.Read<Elf64_Rela>(relocations[0]);
  rela.r_info = ELF64_R_INFO(ELF64_R_SYM(rela.r_info), kAbs64);
  rela.r_offset = image.Section(text).sh_size - 4;
  image.Write(relocations[0], rela);
  const ffijit::Error error = LoadBroken(image, "wide.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("wide.o: truncated or corrupt object: a relocation of section #" +
                                 std::to_string(text) + " `.text` at offset " +
                                 std::to_string(rela.r_offset)),
            std::string::npos)
      << error.message();
  EXPECT_NE(error.message().find("writes 8 bytes past the end of its section (" +
                                 std::to_string(image.Section(text).sh_size) + " bytes)"),
            std::string::npos)
      << error.message();
}

// JITLink does not skip relocations of a section flagged SHF_COMPRESSED: they are checked like
// any other (a fuzzed `.text` with the flag and a relocation far outside it crashed the link).
TEST_P(ObjectCheckTest, ChecksTheRelocationsOfACompressedSection) {
  ElfImage image(Adder());
  const size_t text = image.SectionIndex(".text");
  const std::vector<size_t> relocations = image.RelocationsOf(text);
  ASSERT_FALSE(relocations.empty());
  const uint64_t flags = image.Section(text).sh_flags | SHF_COMPRESSED;
  image.Write<uint64_t>(image.HeaderAt(text) + offsetof(Elf64_Shdr, sh_flags), flags);
  auto rela = image.Read<Elf64_Rela>(relocations[0]);
  rela.r_offset = 0x40000;
  image.Write(relocations[0], rela);
  const ffijit::Error error = LoadBroken(image, "compressed.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("at offset 262144"), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("past the end of its section"), std::string::npos)
      << error.message();
}

#if defined(__x86_64__)
// JITLink relaxes a GOT load by rewriting the opcode, ModRM and REX bytes in front of the
// relocated field: at offset 1 of its section that is before the section.
TEST_P(ObjectCheckTest, RefusesARelaxableGotLoadThatStartsBeforeItsSection) {
  ElfImage image(Adder());
  const size_t text = image.SectionIndex(".text");
  const std::vector<size_t> relocations = image.RelocationsOf(text);
  ASSERT_FALSE(relocations.empty());
  auto rela = image.Read<Elf64_Rela>(relocations[0]);
  rela.r_info = ELF64_R_INFO(ELF64_R_SYM(rela.r_info), R_X86_64_REX_GOTPCRELX);
  rela.r_offset = 1;
  image.Write(relocations[0], rela);
  const ffijit::Error error = LoadBroken(image, "gotpcrelx.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("gotpcrelx.o: truncated or corrupt object: a relocation of "
                                 "section #" +
                                 std::to_string(text) + " `.text` at offset 1"),
            std::string::npos)
      << error.message();
  EXPECT_NE(error.message().find("is a relaxable GOT load whose instruction would start 2 bytes "
                                 "before its section"),
            std::string::npos)
      << error.message();
}
#endif

// Common symbols are zero-fill blocks that JITLink allocates and clears up front, like .bss: a
// 512 MiB one is over the loader's cap.
TEST_P(ObjectCheckTest, CountsCommonSymbolsTowardsTheZeroFillCap) {
  ElfImage image(Adder());
  const size_t symbol = image.SymbolIndex("ffijit_test_context");
  ASSERT_NE(symbol, 0u);
  auto sym = image.Read<Elf64_Sym>(image.SymbolAt(symbol));
  sym.st_shndx = SHN_COMMON;
  sym.st_value = 8;  // a common symbol's value is its alignment
  sym.st_size = uint64_t{512} << 20;
  image.Write(image.SymbolAt(symbol), sym);
  const ffijit::Error error = LoadBroken(image, "common.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(),
            "common.o: zero-filled sections (.bss) claim more than 256 MiB, the most an object "
            "module may reserve");
}

// JITLink tests `offset + size > section size`, which wraps: offset 2^64-1 with size 1 passed.
TEST_P(ObjectCheckTest, RefusesASymbolWhoseExtentWrapsAround) {
  ElfImage image(Adder());
  const size_t symbol = image.SymbolIndex("__tvm_ffi_add");
  ASSERT_NE(symbol, 0u);
  auto sym = image.Read<Elf64_Sym>(image.SymbolAt(symbol));
  sym.st_value = ~uint64_t{0};
  sym.st_size = 1;
  image.Write(image.SymbolAt(symbol), sym);
  const ffijit::Error error = LoadBroken(image, "wrap.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(),
            "wrap.o: corrupt object: symbol `__tvm_ffi_add` (offset "
            "18446744073709551615, size 1) lies outside its section #" +
                std::to_string(sym.st_shndx) + " `.text` (" +
                std::to_string(image.Section(sym.st_shndx).sh_size) + " bytes)");
}

// The file offset of the pointer encoding for augmentation `letter` ('P', 'L' or 'R') in the
// first CIE of `image`'s .eh_frame that has one, or 0. Compilers write the CIE's LEB128 fields
// (code and data alignment, return address register, augmentation length) in one byte each.
size_t CIEPointerEncodingAt(const ElfImage& image, char letter) {
  const Elf64_Shdr eh_frame = image.Section(image.SectionIndex(".eh_frame"));
  for (size_t record = eh_frame.sh_offset; record + 8 < eh_frame.sh_offset + eh_frame.sh_size;
       record += 4 + image.Read<uint32_t>(record)) {
    if (image.Read<uint32_t>(record) == 0) break;
    if (image.Read<uint32_t>(record + 4) != 0) continue;  // an FDE
    const std::string augmentation = image.bytes().c_str() + record + 9;
    size_t at = record + 9 + augmentation.size() + 1 + 4;  // the first augmentation datum
    for (size_t i = 1; i < augmentation.size(); ++i) {
      if (augmentation[i] == letter) return at;
      const uint8_t encoding = image.Read<uint8_t>(at);
      at += 1;
      if (augmentation[i] == 'P') at += (encoding & 0x7) == 2 ? 2 : (encoding & 0x7) == 3 ? 4 : 8;
    }
  }
  return 0;
}

// LLVM 19's .eh_frame parser reports a valid but unsupported pointer encoding as an error and
// runs into unreachable code on one DWARF does not define (a fuzzed CIE with 0x1f crashed it).
TEST_P(ObjectCheckTest, RefusesACIEWhoseFDEPointerEncodingIsNotDWARF) {
  ElfImage image(Adder());
  const size_t at = CIEPointerEncodingAt(image, 'R');
  ASSERT_NE(at, 0u) << "the adder fixture's CIE has a 'zR' augmentation";
  image.Write<uint8_t>(at, 0x1f);
  const ffijit::Error error = LoadBroken(image, "encoding.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("encoding.o: corrupt .eh_frame section: the record at offset "),
            std::string::npos)
      << error.message();
  EXPECT_NE(error.message().find(" is a CIE whose FDE address pointer encoding 0x1f is not a "
                                 "DWARF pointer encoding"),
            std::string::npos)
      << error.message();
}

// The same for the personality and LSDA encodings of a C++ object's "zPLR" CIE.
TEST_P(ObjectCheckTest, RefusesACIEWhosePersonalityOrLSDAEncodingIsNotDWARF) {
  const std::string object =
      ReadBytes(std::string(FFIJIT_JIT_FIXTURES) + "/" + GetParam() + "/lifecycle.o");
  for (const auto& [letter, what] : {std::pair<char, std::string>{'P', "personality"},
                                     std::pair<char, std::string>{'L', "LSDA"}}) {
    ElfImage image(object);
    const size_t at = CIEPointerEncodingAt(image, letter);
    ASSERT_NE(at, 0u) << "the lifecycle fixture has a CIE with a " << letter << " augmentation";
    image.Write<uint8_t>(at, 0x07);
    JitModule mod = JitModule::Create("cxx");
    const ffijit::Error error = CatchError([&] { mod.AddObject(image.bytes(), "cxx.o"); });
    EXPECT_EQ(error.kind(), "ValueError");
    EXPECT_NE(error.message().find(" is a CIE whose " + what +
                                   " pointer encoding 0x07 is not a DWARF pointer encoding"),
              std::string::npos)
        << error.message();
  }
}

// JITLink gives a zero-filled block no contents: a relocation of one wrote through a null
// pointer (a fuzzed `.init_array` retyped SHT_NOBITS that kept its relocation section).
TEST_P(ObjectCheckTest, RefusesRelocationsOfAZeroFilledSection) {
  ElfImage image(Adder());
  const size_t text = image.SectionIndex(".text");
  const std::vector<size_t> relocations = image.RelocationsOf(text);
  ASSERT_FALSE(relocations.empty());
  image.Write<uint32_t>(image.HeaderAt(text) + offsetof(Elf64_Shdr, sh_type), SHT_NOBITS);
  const ffijit::Error error = LoadBroken(image, "nobits.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_NE(error.message().find("nobits.o: corrupt object: a relocation of section #" +
                                 std::to_string(text) + " `.text` at offset "),
            std::string::npos)
      << error.message();
  EXPECT_NE(
      error.message().find("applies to a zero-filled section (SHT_NOBITS), which has no contents"),
      std::string::npos)
      << error.message();
}

// JITLink neither loads nor keeps alive a section without SHF_ALLOC: code that referred into one
// made it dereference a null pointer after allocating the link's memory (a fuzzed object).
TEST_P(ObjectCheckTest, RefusesLoadedCodeThatRefersIntoASectionThatIsNotLoaded) {
  ElfImage image(Adder());
  const size_t text = image.SectionIndex(".text");
  const std::vector<size_t> relocations = image.RelocationsOf(text);
  ASSERT_FALSE(relocations.empty());
  const auto rela = image.Read<Elf64_Rela>(relocations[0]);
  const size_t symbol = ELF64_R_SYM(rela.r_info);
  const size_t strings = image.Read<Elf64_Sym>(image.SymbolAt(symbol)).st_shndx;
  ASSERT_NE(strings, text) << "the first relocation of .text refers to a string constant";
  const uint64_t flags = image.Section(strings).sh_flags & ~uint64_t{SHF_ALLOC};
  image.Write<uint64_t>(image.HeaderAt(strings) + offsetof(Elf64_Shdr, sh_flags), flags);
  const ffijit::Error error = LoadBroken(image, "not_loaded.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(),
            "not_loaded.o: corrupt object: a relocation of section #" + std::to_string(text) +
                " `.text` at offset " + std::to_string(rela.r_offset) + " (in section #" +
                std::to_string(image.SectionIndex(".rela.text")) +
                " `.rela.text`) refers to symbol #" + std::to_string(symbol) + " in section #" +
                std::to_string(strings) + " `" + image.SectionName(strings) +
                "`, which is not allocated (SHF_ALLOC is missing)");
}

// JITLink registers .eh_frame with the unwinder, which read one that was not loaded (and whose
// relocations were ignored) through a wild pointer (a fuzzed object).
TEST_P(ObjectCheckTest, RefusesAnEHFrameSectionThatIsNotAllocated) {
  ElfImage image(Adder());
  const size_t eh_frame = image.SectionIndex(".eh_frame");
  ASSERT_NE(eh_frame, 0u);
  const uint64_t flags = image.Section(eh_frame).sh_flags & ~uint64_t{SHF_ALLOC};
  image.Write<uint64_t>(image.HeaderAt(eh_frame) + offsetof(Elf64_Shdr, sh_flags), flags);
  const ffijit::Error error = LoadBroken(image, "eh_not_loaded.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(),
            "eh_not_loaded.o: corrupt object: the .eh_frame section is not allocated (SHF_ALLOC is "
            "missing), but the unwinder must read it");
}

// JITLink merges same-named sections into one graph section with the first one's memory lifetime:
// an allocated section sharing its name with an unallocated one lost its memory and crashed it (a
// fuzzed object with two `.comment`s). Here `.comment` takes the name of `.text`.
TEST_P(ObjectCheckTest, RefusesSectionsOfOneNameThatDisagreeOnAllocation) {
  ElfImage image(Adder());
  const size_t text = image.SectionIndex(".text");
  const size_t comment = image.SectionIndex(".comment");
  ASSERT_NE(comment, 0u);
  ASSERT_LT(text, comment);
  image.Write<uint32_t>(image.HeaderAt(comment) + offsetof(Elf64_Shdr, sh_name),
                        image.Section(text).sh_name);
  const ffijit::Error error = LoadBroken(image, "two_texts.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "two_texts.o: corrupt object: section #" + std::to_string(comment) +
                                 " `.text` and section #" + std::to_string(text) +
                                 " `.text` share a name but only one of them is allocated "
                                 "(SHF_ALLOC)");
}

// Binding a module stores a pointer into `__tvm_ffi__library_ctx`: a fuzzed object gave it one
// byte (the store reached past it) at an odd address (the store was misaligned).
TEST_P(ObjectCheckTest, RefusesALibraryContextThatCannotHoldAPointer) {
  ElfImage image(Adder());
  const size_t ctx = image.SymbolIndex("__tvm_ffi__library_ctx");
  ASSERT_NE(ctx, 0u);
  image.Write<uint64_t>(image.SymbolAt(ctx) + offsetof(Elf64_Sym, st_size), 1);
  const ffijit::Error error = LoadBroken(image, "tiny_ctx.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message().rfind("tiny_ctx.o: `__tvm_ffi__library_ctx` must be a pointer "
                                  "variable, but it is 1 bytes at offset ",
                                  0),
            0u)
      << error.message();
}

#if defined(__x86_64__)
// JITLink makes no block for a section without SHF_ALLOC: a global function defined in such a
// .text crashed it after allocation (a fuzzed object whose relocations were all R_X86_64_NONE,
// which the loader, like JITLink, ignores; the test does the same so that no relocation check
// answers first). x86-64 only: type 0 is not ignored on AArch64.
TEST_P(ObjectCheckTest, RefusesAGlobalSymbolInASectionThatIsNotAllocated) {
  ElfImage image(Adder());
  const size_t text = image.SectionIndex(".text");
  for (size_t target = 1; target < image.SectionCount(); ++target) {
    for (size_t at : image.RelocationsOf(target)) {
      auto rela = image.Read<Elf64_Rela>(at);
      rela.r_info = ELF64_R_INFO(ELF64_R_SYM(rela.r_info), R_X86_64_NONE);
      image.Write(at, rela);
    }
  }
  const uint64_t flags = image.Section(text).sh_flags & ~uint64_t{SHF_ALLOC};
  image.Write<uint64_t>(image.HeaderAt(text) + offsetof(Elf64_Shdr, sh_flags), flags);
  const ffijit::Error error = LoadBroken(image, "text_not_loaded.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message().rfind("text_not_loaded.o: corrupt object: symbol ", 0), 0u)
      << error.message();
  EXPECT_NE(error.message().find(" is defined in section #" + std::to_string(text) +
                                 " `.text`, which is not allocated (SHF_ALLOC is missing)"),
            std::string::npos)
      << error.message();
}
#endif

// The section header table's entry #0 is the all-zero null section (ELF): a fuzzed object with
// flags on it, and on other SHT_NULL sections, crashed JITLink after allocation.
TEST_P(ObjectCheckTest, RefusesASectionZeroThatIsNotTheNullSection) {
  ElfImage image(Adder());
  image.Write<uint64_t>(image.HeaderAt(0) + offsetof(Elf64_Shdr, sh_flags), SHF_ALLOC);
  const ffijit::Error error = LoadBroken(image, "zero.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(),
            "zero.o: corrupt object: section #0 is not the null section (the ELF specification "
            "requires its header to be all zero)");
}

// JITLink skips an SHT_NULL section but not the symbols and relocations that name it; compilers
// write no such section besides #0.
TEST_P(ObjectCheckTest, RefusesAnotherSectionOfTypeNull) {
  ElfImage image(Adder());
  const size_t comment = image.SectionIndex(".comment");
  ASSERT_NE(comment, 0u);
  image.Write<uint32_t>(image.HeaderAt(comment) + offsetof(Elf64_Shdr, sh_type), SHT_NULL);
  const ffijit::Error error = LoadBroken(image, "null_type.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "null_type.o: corrupt object: section #" + std::to_string(comment) +
                                 " `.comment` has type SHT_NULL, which only section #0 may have");
}

// ELF allows alignments of 0 and powers of two; JITLink stores an alignment as its number of
// trailing zero bits, so 24 would silently become 8.
TEST_P(ObjectCheckTest, RefusesAnAlignmentThatIsNotAPowerOfTwo) {
  ElfImage image(Adder());
  const size_t text = image.SectionIndex(".text");
  image.Write<uint64_t>(image.HeaderAt(text) + offsetof(Elf64_Shdr, sh_addralign), 24);
  const ffijit::Error error = LoadBroken(image, "align.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "align.o: corrupt object: section #" + std::to_string(text) +
                                 " `.text` has alignment 24, which is neither 0 nor a power of "
                                 "two");
}

// ELF requires a section's address to be a multiple of its alignment.
TEST_P(ObjectCheckTest, RefusesASectionAddressThatIsNotAMultipleOfItsAlignment) {
  ElfImage image(Adder());
  const size_t text = image.SectionIndex(".text");
  image.Write<uint64_t>(image.HeaderAt(text) + offsetof(Elf64_Shdr, sh_addralign), 16);
  image.Write<uint64_t>(image.HeaderAt(text) + offsetof(Elf64_Shdr, sh_addr), 0x1004);
  const ffijit::Error error = LoadBroken(image, "misaligned.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "misaligned.o: corrupt object: section #" + std::to_string(text) +
                                 " `.text` has address 4100, which is not a multiple of its "
                                 "alignment 16");
}

// A section that is not loaded has address 0 (ELF); the fuzzed crash had a symbol table with one.
TEST_P(ObjectCheckTest, RefusesAnUnallocatedSectionWithAnAddress) {
  ElfImage image(Adder());
  const size_t symtab = image.SymbolTable();
  ASSERT_NE(symtab, 0u);
  image.Write<uint64_t>(image.HeaderAt(symtab) + offsetof(Elf64_Shdr, sh_addr), 0x1000);
  const ffijit::Error error = LoadBroken(image, "symtab_address.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "symtab_address.o: corrupt object: section #" +
                                 std::to_string(symtab) +
                                 " `.symtab` is not allocated (SHF_ALLOC is missing) but has "
                                 "address 4096 (it must be 0)");
}

// Index 0 of a string table is the empty name (ELF): a fuzzed `.strtab` beginning with 'Z' gave
// symbol #0 a name, JITLink made no null symbol, and a relocation of symbol #0 crashed it.
TEST_P(ObjectCheckTest, RefusesAStringTableThatDoesNotStartWithANullCharacter) {
  ElfImage image(Adder());
  const size_t strtab = image.Section(image.SymbolTable()).sh_link;
  ASSERT_NE(strtab, 0u);
  image.Write<char>(image.Section(strtab).sh_offset, 'Z');
  const ffijit::Error error = LoadBroken(image, "strtab.o");
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "strtab.o: corrupt object: string table section #" +
                                 std::to_string(strtab) +
                                 " `.strtab` does not start with a null character (index 0 is "
                                 "the empty name)");
}

// Symbol types and bindings are the ones ELF and the GNU ABI define (the fuzzed crash had a
// symbol of type 12); section and file symbols are local.
TEST_P(ObjectCheckTest, RefusesSymbolTypesAndBindingsThatELFDoesNotDefine) {
  const struct {
    uint8_t info;
    std::string what;
  } cases[] = {{ELF64_ST_INFO(STB_GLOBAL, 12), "has type 12, which ELF does not define"},
               {ELF64_ST_INFO(STB_GLOBAL, 7), "has type 7, which ELF does not define"},
               {ELF64_ST_INFO(5, STT_FUNC), "has binding 5, which ELF does not define"},
               {ELF64_ST_INFO(STB_GLOBAL, STT_SECTION), "is a section symbol but not local"},
               {ELF64_ST_INFO(STB_WEAK, STT_FILE), "is a file symbol but not local"}};
  for (const auto& broken : cases) {
    ElfImage image(Adder());
    const size_t symbol = image.SymbolIndex("__tvm_ffi_add");
    ASSERT_NE(symbol, 0u);
    image.Write<uint8_t>(image.SymbolAt(symbol) + offsetof(Elf64_Sym, st_info), broken.info);
    const ffijit::Error error = LoadBroken(image, "symbol_type.o");
    EXPECT_EQ(error.kind(), "ValueError");
    EXPECT_EQ(error.message(), "symbol_type.o: corrupt symbol table: symbol #" +
                                   std::to_string(symbol) + " `__tvm_ffi_add` " + broken.what);
  }
}

// The structural checks accept what gcc and clang emit at -O2 -g: debug sections, COMDAT groups,
// STB_GNU_UNIQUE (gcc), SHT_LLVM_ADDRSIG and SHT_X86_64_UNWIND (clang), priority
// constructors and exceptions. The fixtures are checked to contain them, then loaded and called.
TEST_P(ObjectCheckTest, LoadsWhatCompilersEmitWithDebugInformation) {
  const std::string fixtures = std::string(FFIJIT_JIT_FIXTURES) + "/" + GetParam();
  const ElfImage features(ReadBytes(fixtures + "/compiler_features.o"));
  bool debug_info = false, group = false, addrsig = false, unwind = false;
  for (size_t i = 1; i < features.SectionCount(); ++i) {
    debug_info |= features.SectionName(i) == ".debug_info";
    group |= features.Section(i).sh_type == SHT_GROUP;
    addrsig |= features.Section(i).sh_type == 0x6fff4c03;  // SHT_LLVM_ADDRSIG
    unwind |= features.Section(i).sh_type == 0x70000001;   // SHT_X86_64_UNWIND
  }
  bool unique = false;
  const Elf64_Shdr symtab = features.Section(features.SymbolTable());
  for (size_t i = 1; i < symtab.sh_size / sizeof(Elf64_Sym); ++i) {
    const auto symbol = features.Read<Elf64_Sym>(features.SymbolAt(i));
    unique |= ELF64_ST_BIND(symbol.st_info) == STB_GNU_UNIQUE;
  }
  EXPECT_TRUE(debug_info && group);
  if (GetParam() == "gcc") {
    EXPECT_TRUE(unique) << "gcc marks inline variables STB_GNU_UNIQUE";
  }
#if defined(__x86_64__)
  if (GetParam() == "clang") {
    EXPECT_TRUE(addrsig && unwind) << "clang's x86-64 sections";
  }
#endif

  JitModule mod = JitModule::Create("features");
  mod.AddObject(features.bytes(), "compiler_features.o");
  EXPECT_EQ(mod.GetFunction("sum").value()(int64_t{4}).cast<int64_t>(), 10);
  const ffijit::Error error = CatchError([&] { mod.GetFunction("sum").value()(int64_t{-1}); });
  EXPECT_EQ(error.kind(), "ValueError");
  EXPECT_EQ(error.message(), "sum expects n >= 0");

  JitModule adder = JitModule::Create("adder_debug");
  adder.AddObject(ReadBytes(fixtures + "/adder_debug.o"), "adder_debug.o");
  EXPECT_EQ(adder.GetFunction("add").value()(1, 2).cast<int64_t>(), 3);
}

// An indirect function (STT_GNU_IFUNC) passes the checks, whose symbol types are the ones ELF and
// the GNU ABI define; LLVM 19's JITLink itself links no such definition, and says so.
TEST_P(ObjectCheckTest, LeavesIndirectFunctionsToJITLink) {
  const ElfImage object(
      ReadBytes(std::string(FFIJIT_JIT_FIXTURES) + "/" + GetParam() + "/ifunc.o"));
  const size_t symbol = object.SymbolIndex("ffijit_fixture_plain");
  ASSERT_NE(symbol, 0u);
  ASSERT_EQ(ELF64_ST_TYPE(object.Read<Elf64_Sym>(object.SymbolAt(symbol)).st_info), STT_GNU_IFUNC);
  JitModule mod = JitModule::Create("ifunc");
  const ffijit::Error error = CatchError([&] { mod.AddObject(object.bytes(), "ifunc.o"); });
  EXPECT_EQ(error.kind(), "RuntimeError");
  EXPECT_EQ(
      error.message(),
      "ifunc.o: cannot link: Missing definitions in module ifunc.o: [ ffijit_fixture_plain ]");
  mod.AddObject(Adder(), "adder.o");  // the module goes on working
  EXPECT_EQ(mod.GetFunction("add").value()(1, 2).cast<int64_t>(), 3);
}

}  // namespace
