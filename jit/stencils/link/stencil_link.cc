// The copy-and-patch step of the stencil tiers: layout, hole patching, veneers, publication.
#include "stencils/link/stencil_link.h"

#include <cstring>
#include <iterator>

#include "stencils_generated.h"  // written by extract_stencils.py at build time

namespace ffijit::stencils {
namespace gen = generated;
namespace {

// Veneers: an absolute jump to a far function, for a branch whose displacement does not reach it.
constexpr size_t kVeneerSize = gen::kMachine == Machine::kX86_64 ? 14 : 16;
void WriteVeneer(uint8_t* at, uint64_t target) {
  if constexpr (gen::kMachine == Machine::kX86_64) {
    const uint8_t jmp[6] = {0xff, 0x25, 0, 0, 0, 0};  // jmp *0(%rip)
    std::memcpy(at, jmp, 6);
    std::memcpy(at + 6, &target, 8);
  } else {
    const uint32_t insns[2] = {0x58000050u, 0xd61f0200u};  // ldr x16, #8; br x16
    std::memcpy(at, insns, 8);
    std::memcpy(at + 8, &target, 8);
  }
}

// Holes naming a C function, each of which may need a veneer.
constexpr Hole kFunctionHoles[] = {
    Hole::kFallback,    Hole::kBoxResult,       Hole::kBoxResults, Hole::kResolvePath,
    Hole::kAnyDefect,   Hole::kF16FromDouble,   Hole::kF16FromInt, Hole::kBF16FromDouble,
    Hole::kBF16FromInt, Hole::kPropagateStatus, Hole::kMemchr,     Hole::kHostFallback,
    Hole::kCountReached};
bool IsFunctionHole(Hole h) {
  for (Hole f : kFunctionHoles) {
    if (f == h) return true;
  }
  return false;
}

}  // namespace

bool LinkStencils(std::vector<Piece>& pieces, const LinkTargets& targets, HoleValue hole_value,
                  const void* context, const void* data, size_t data_size, const void* near,
                  LinkedCode* out, std::string* why) {
  size_t at = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    Piece& piece = pieces[i];
    piece.at = at;
    piece.size = piece.stencil->size;
    // The chain's next stencil follows directly: its trailing jump falls through instead.
    if (piece.falls_through) piece.size -= piece.stencil->tail_jump;
    at += piece.size;
    if (gen::kMachine == Machine::kAArch64) at = (at + 3) & ~size_t{3};
  }
  for (size_t i = 0; i < pieces.size(); ++i) {
    Piece& piece = pieces[i];
    if (piece.falls_through && i + 1 < pieces.size()) {
      piece.next = pieces[i + 1].at;
      piece.next_piece = i + 1;
    } else if (piece.next_piece < pieces.size()) {
      piece.next = pieces[piece.next_piece].at;
    }
  }
  const size_t code_end = (at + 15) & ~size_t{15};
  constexpr size_t kMaxVeneers = std::size(kFunctionHoles);  // one per function hole kind
  // The data on a cache line of its own (blocks are 64-byte aligned).
  const size_t data_at = (code_end + kMaxVeneers * kVeneerSize + 63) & ~size_t{63};
  CodeBlock block = AllocateWritable(data_at + data_size, near, why);
  if (block.base == nullptr) return false;
  // Addresses are the executable view's (`base`); bytes go through the writable one (`write`).
  uint8_t* const base = block.base;
  uint8_t* const write = block.write;
  if (data_size != 0) std::memcpy(write + data_at, data, data_size);
  size_t veneers_used = 0;
  struct Far {
    uint64_t target;
    uint64_t veneer;
  };
  std::vector<Far> veneers;
  auto veneer_for = [&](uint64_t target) -> uint64_t {
    for (const Far& f : veneers) {
      if (f.target == target) return f.veneer;
    }
    const size_t veneer_at = code_end + veneers_used++ * kVeneerSize;
    WriteVeneer(write + veneer_at, target);
    veneers.push_back({target, reinterpret_cast<uint64_t>(base + veneer_at)});
    return veneers.back().veneer;
  };
  auto fail = [&](const std::string& reason) {
    Free(block);
    *why = reason;
    return false;
  };

  auto address_of = [&](size_t index) -> uint64_t {
    return index < pieces.size() ? reinterpret_cast<uint64_t>(base + pieces[index].at) : 0;
  };
  const uint64_t fail_at = address_of(targets.fail);
  const uint64_t generic_at = address_of(targets.generic);
  const uint64_t exit_at = address_of(targets.exit);
  for (const Piece& piece : pieces) {
    uint8_t* const code = write + piece.at;
    std::memcpy(code, piece.stencil->code, piece.size);
    for (uint16_t k = 0; k < piece.stencil->num_patches; ++k) {
      const Patch& patch = piece.stencil->patches[k];
      if (patch.offset >= piece.size) continue;  // in the dropped trailing jump
      uint64_t value = 0;
      switch (patch.hole) {
        case Hole::kOffset:
          value = static_cast<uint64_t>(piece.offset);
          break;
        case Hole::kObjectOffset:
          value = static_cast<uint64_t>(piece.object_offset);
          break;
        case Hole::kTypeIndex:
          value = static_cast<uint64_t>(piece.type_index);
          break;
        case Hole::kSlot:
          value = static_cast<uint64_t>(piece.slot);
          break;
        case Hole::kIndex:
          value = static_cast<uint64_t>(piece.index);
          break;
        case Hole::kRankPlusOne:
          value = piece.rank_plus_one;
          break;
        case Hole::kCheckDtype:
          value = piece.check_dtype;
          break;
        case Hole::kDtype:
          value = piece.dtype;
          break;
        case Hole::kNext:
          if (piece.next_piece >= pieces.size()) {
            return fail("a stencil continues to a piece it has not");
          }
          value = reinterpret_cast<uint64_t>(base + piece.next);
          break;
        case Hole::kSlow:
          if (address_of(piece.slow_piece) == 0) {
            return fail("a stencil's out-of-line rest is missing");
          }
          value = address_of(piece.slow_piece);
          break;
        case Hole::kGeneric:
          if (generic_at == 0) return fail("a stencil names a generic path the code has not");
          value = generic_at;
          break;
        case Hole::kExit:
          if (exit_at == 0) return fail("a stencil names an epilogue the code has not");
          value = exit_at;
          break;
        case Hole::kFail:
          if (fail_at == 0) return fail("a stencil names a fallback stencil the code has not");
          value = fail_at;
          break;
        case Hole::kHostData:
          if (data_size == 0) return fail("a stencil reads data the code has not");
          value = reinterpret_cast<uint64_t>(base + data_at);
          break;
        default:
          if (!hole_value(context, patch.hole, &value)) {
            return fail("a stencil hole (" + std::to_string(static_cast<int>(patch.hole)) +
                        ") this code has no value for");
          }
          break;
      }
      value += static_cast<uint64_t>(patch.addend);
      uint8_t* const place = code + patch.offset;
      const uint64_t p = reinterpret_cast<uint64_t>(base + piece.at + patch.offset);
      switch (patch.reloc) {
        case Reloc::kAbs32: {
          if (value > UINT32_MAX) return fail("a stencil constant out of 32-bit range");
          const uint32_t v = static_cast<uint32_t>(value);
          std::memcpy(place, &v, 4);
          break;
        }
        case Reloc::kAbs32S: {
          const int64_t s = static_cast<int64_t>(value);
          if (s < INT32_MIN || s > INT32_MAX) return fail("a stencil constant out of range");
          const int32_t v = static_cast<int32_t>(s);
          std::memcpy(place, &v, 4);
          break;
        }
        case Reloc::kPcRel32: {
          int64_t d = static_cast<int64_t>(value - p);
          if ((d < INT32_MIN || d > INT32_MAX) && IsFunctionHole(patch.hole)) {
            // value = target + addend (-4): branch to a veneer instead.
            const uint64_t target = value - static_cast<uint64_t>(patch.addend);
            d = static_cast<int64_t>(veneer_for(target) + static_cast<uint64_t>(patch.addend) - p);
          }
          if (d < INT32_MIN || d > INT32_MAX) return fail("a stencil branch out of range");
          const int32_t v = static_cast<int32_t>(d);
          std::memcpy(place, &v, 4);
          break;
        }
        case Reloc::kMovwG0:
        case Reloc::kMovwG1:
        case Reloc::kMovwG2:
        case Reloc::kMovwG3: {
          const int shift = 16 * (static_cast<int>(patch.reloc) - static_cast<int>(Reloc::kMovwG0));
          uint32_t insn;
          std::memcpy(&insn, place, 4);
          insn = (insn & ~(0xffffu << 5)) | static_cast<uint32_t>((value >> shift) & 0xffff) << 5;
          std::memcpy(place, &insn, 4);
          break;
        }
        case Reloc::kBranch26: {
          int64_t d = static_cast<int64_t>(value - p);
          constexpr int64_t kReach = int64_t{1} << 27;
          if ((d < -kReach || d >= kReach) && IsFunctionHole(patch.hole)) {
            d = static_cast<int64_t>(veneer_for(value) - p);
          }
          if (d < -kReach || d >= kReach || (d & 3) != 0) {
            return fail("a stencil branch out of range");
          }
          uint32_t insn;
          std::memcpy(&insn, place, 4);
          insn = (insn & 0xfc000000u) | (static_cast<uint32_t>(d >> 2) & 0x03ffffffu);
          std::memcpy(place, &insn, 4);
          break;
        }
      }
    }
  }
  if (!Seal(block, why)) return fail(*why);
  out->block = block;
  out->code_size = code_end;
  return true;
}

}  // namespace ffijit::stencils
