// The .eh_frame check of CheckObject (object_check.h: the LLVM defect, the versions, when it can
// go): CIE and FDE records in bounds, each FDE pointing back at a CIE, each pointer encoding one
// DWARF defines, so that LLVM's .eh_frame parser (19 and 22) never meets what crashes it.
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_set>

#include "ffijit/error.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LEB128.h"
#include "orc/llvm_patches/object_check.h"

namespace ffijit::orc {
namespace {

// Whether the DWARF pointer encoding `encoding` is one the DWARF specification defines (any
// application; the value format absptr, (u|s)leb128 or (u|s)data2/4/8), or "omitted". LLVM 19's
// .eh_frame parser reports an unsupported valid format as an error but hits unreachable code on
// an undefined one (a fuzzed CIE with FDE pointer encoding 0x1f crashed it).
bool IsDwarfPointerEncoding(uint8_t encoding) {
  if (encoding == 0xff) return true;  // DW_EH_PE_omit
  switch (encoding & 0x0f) {
    case 0x0:  // absptr
    case 0x1:  // uleb128
    case 0x2:  // udata2
    case 0x3:  // udata4
    case 0x4:  // udata8
    case 0x9:  // sleb128
    case 0xa:  // sdata2
    case 0xb:  // sdata4
    case 0xc:  // sdata8
      return true;
    default:
      return false;
  }
}

// The size of a pointer stored with `encoding` at `at` (reading LEB128 values up to `end`), or 0
// when it cannot be told.
uint64_t EncodedPointerSize(uint8_t encoding, const uint8_t* at, const uint8_t* end) {
  switch (encoding & 0x0f) {
    case 0x0:
    case 0x4:
    case 0xc:
      return 8;
    case 0x2:
    case 0xa:
      return 2;
    case 0x3:
    case 0xb:
      return 4;
    case 0x1:
    case 0x9: {
      unsigned length = 0;
      const char* error = nullptr;
      llvm::decodeULEB128(at, &length, end, &error);
      return error == nullptr ? length : 0;
    }
    default:
      return 0;
  }
}

// Throws `fail`'s error unless the pointer encodings in the augmentation data of the CIE whose
// body (after its length and CIE id) is `body` are all defined by DWARF. A CIE that ends early or
// has an augmentation LLVM does not know is left to LLVM, which reports those as errors.
template <typename Fail>
void CheckCIEPointerEncodings(llvm::ArrayRef<uint8_t> body, Fail&& fail) {
  const uint8_t* at = body.begin();
  const uint8_t* const end = body.end();
  auto skip_leb128 = [&] {
    unsigned length = 0;
    const char* error = nullptr;
    llvm::decodeULEB128(at, &length, end, &error);  // an SLEB128 has the same length
    at = error == nullptr ? at + length : end;
  };
  if (at == end) return;
  const uint8_t version = *at++;
  const uint8_t* augmentation = at;
  while (at != end && *at != 0) ++at;
  if (at == end) return;
  const std::string letters(augmentation, at);
  ++at;
  if (letters.empty() || letters[0] != 'z') return;
  skip_leb128();  // code alignment factor
  skip_leb128();  // data alignment factor
  if (version == 1) {
    at = at == end ? end : at + 1;  // return address register
  } else {
    skip_leb128();
  }
  skip_leb128();  // augmentation data length
  for (size_t i = 1; i < letters.size() && at < end; ++i) {
    const char letter = letters[i];
    if (letter != 'P' && letter != 'L' && letter != 'R') return;
    const uint8_t encoding = *at++;
    if (!IsDwarfPointerEncoding(encoding)) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02x", encoding);
      fail(std::string("is a CIE whose ") +
           (letter == 'P'   ? "personality"
            : letter == 'L' ? "LSDA"
                            : "FDE address") +
           " pointer encoding " + hex + " is not a DWARF pointer encoding");
    }
    if (letter == 'P') {
      const uint64_t size = EncodedPointerSize(encoding, at, end);
      if (size == 0 || size > static_cast<uint64_t>(end - at)) return;
      at += size;
    }
  }
}

}  // namespace

// A ValueError unless `contents` (an .eh_frame section) is a sequence of in-bounds CIE and FDE
// records, each FDE pointing back at a CIE, each CIE's pointer encodings defined by DWARF. LLVM
// 19's .eh_frame parser returns an uninitialised llvm::Error for an FDE whose CIE pointer misses
// every CIE (a fuzzed object), so check first.
void CheckEHFrame(llvm::StringRef contents, const std::string& file) {
  auto fail = [&](uint64_t offset, const std::string& what) {
    throw ValueError(file + ": corrupt .eh_frame section: the record at offset " +
                     std::to_string(offset) + " " + what);
  };
  auto read32 = [&](uint64_t at) {
    uint32_t value = 0;
    std::memcpy(&value, contents.data() + at, sizeof(value));
    return value;
  };
  std::unordered_set<uint64_t> cies;
  uint64_t offset = 0;
  while (offset < contents.size()) {
    if (contents.size() - offset < 4) fail(offset, "is truncated");
    const uint32_t length = read32(offset);
    if (length == 0) break;  // the terminator
    if (length == 0xffffffffu) fail(offset, "uses a 64-bit length, which is not supported");
    if (length < 4 || length > contents.size() - offset - 4) {
      fail(offset, "has length " + std::to_string(length) + ", which does not fit the section");
    }
    const uint64_t id_at = offset + 4;
    const uint32_t id = read32(id_at);
    if (id == 0) {
      cies.insert(offset);
      CheckCIEPointerEncodings(
          llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(contents.data()) + id_at + 4,
                                  length - 4),
          [&](const std::string& what) { fail(offset, what); });
    } else if (id > id_at || cies.count(id_at - id) == 0) {
      fail(offset, "is an FDE whose CIE pointer does not point at a CIE");
    }
    offset = id_at + length;
  }
}

}  // namespace ffijit::orc
