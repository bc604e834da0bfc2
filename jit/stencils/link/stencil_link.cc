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

// Places the pieces one after another and finds each one's kNext; returns where the code ends.
size_t LayOut(std::vector<Piece>& pieces) {
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
  return at;
}

// The veneers after the code (from `at`), each written when a branch first needs it.
class Veneers {
 public:
  Veneers(uint8_t* base, uint8_t* write, size_t at) : base_(base), write_(write), at_(at) {}

  // The (executable) address of the veneer that jumps to `target`.
  uint64_t For(uint64_t target) {
    for (const Far& f : veneers_) {
      if (f.target == target) return f.veneer;
    }
    const size_t veneer_at = at_ + veneers_.size() * kVeneerSize;
    WriteVeneer(write_ + veneer_at, target);
    veneers_.push_back({target, reinterpret_cast<uint64_t>(base_ + veneer_at)});
    return veneers_.back().veneer;
  }

 private:
  struct Far {
    uint64_t target;
    uint64_t veneer;
  };
  uint8_t* const base_;
  uint8_t* const write_;
  const size_t at_;
  std::vector<Far> veneers_;
};

// A piece's (executable) address, 0 for no piece.
uint64_t AddressOf(const std::vector<Piece>& pieces, const uint8_t* base, size_t index) {
  return index < pieces.size() ? reinterpret_cast<uint64_t>(base + pieces[index].at) : 0;
}

// Where the holes that do not come from the piece itself get their values.
struct HoleSources {
  const std::vector<Piece>& pieces;
  const uint8_t* base;
  uint64_t fail_at;
  uint64_t generic_at;
  uint64_t exit_at;
  size_t data_at;
  size_t data_size;
  HoleValue hole_value;
  const void* context;
};

// False and *why when the code has no value for the hole.
bool HoleValueOf(const HoleSources& sources, const Piece& piece, Hole hole, uint64_t* value,
                 std::string* why) {
  switch (hole) {
    case Hole::kOffset:
      *value = static_cast<uint64_t>(piece.offset);
      return true;
    case Hole::kObjectOffset:
      *value = static_cast<uint64_t>(piece.object_offset);
      return true;
    case Hole::kTypeIndex:
      *value = static_cast<uint64_t>(piece.type_index);
      return true;
    case Hole::kSlot:
      *value = static_cast<uint64_t>(piece.slot);
      return true;
    case Hole::kIndex:
      *value = static_cast<uint64_t>(piece.index);
      return true;
    case Hole::kRankPlusOne:
      *value = piece.rank_plus_one;
      return true;
    case Hole::kCheckDtype:
      *value = piece.check_dtype;
      return true;
    case Hole::kDtype:
      *value = piece.dtype;
      return true;
    case Hole::kNext:
      if (piece.next_piece >= sources.pieces.size()) {
        *why = "a stencil continues to a piece it has not";
        return false;
      }
      *value = reinterpret_cast<uint64_t>(sources.base + piece.next);
      return true;
    case Hole::kSlow:
      if (AddressOf(sources.pieces, sources.base, piece.slow_piece) == 0) {
        *why = "a stencil's out-of-line rest is missing";
        return false;
      }
      *value = AddressOf(sources.pieces, sources.base, piece.slow_piece);
      return true;
    case Hole::kGeneric:
      if (sources.generic_at == 0) {
        *why = "a stencil names a generic path the code has not";
        return false;
      }
      *value = sources.generic_at;
      return true;
    case Hole::kExit:
      if (sources.exit_at == 0) {
        *why = "a stencil names an epilogue the code has not";
        return false;
      }
      *value = sources.exit_at;
      return true;
    case Hole::kFail:
      if (sources.fail_at == 0) {
        *why = "a stencil names a fallback stencil the code has not";
        return false;
      }
      *value = sources.fail_at;
      return true;
    case Hole::kHostData:
      if (sources.data_size == 0) {
        *why = "a stencil reads data the code has not";
        return false;
      }
      *value = reinterpret_cast<uint64_t>(sources.base + sources.data_at);
      return true;
    default:
      if (!sources.hole_value(sources.context, hole, value)) {
        *why = "a stencil hole (" + std::to_string(static_cast<int>(hole)) +
               ") this code has no value for";
        return false;
      }
      return true;
  }
}

// Writes `value` (the hole's value plus the addend) at `place`, whose executable address is `p`,
// as the patch's relocation encodes it. False and *why when it does not fit.
bool Relocate(const Patch& patch, uint8_t* place, uint64_t p, uint64_t value, Veneers& veneers,
              std::string* why) {
  switch (patch.reloc) {
    case Reloc::kAbs32: {
      if (value > UINT32_MAX) {
        *why = "a stencil constant out of 32-bit range";
        return false;
      }
      const uint32_t v = static_cast<uint32_t>(value);
      std::memcpy(place, &v, 4);
      return true;
    }
    case Reloc::kAbs32S: {
      const int64_t s = static_cast<int64_t>(value);
      if (s < INT32_MIN || s > INT32_MAX) {
        *why = "a stencil constant out of range";
        return false;
      }
      const int32_t v = static_cast<int32_t>(s);
      std::memcpy(place, &v, 4);
      return true;
    }
    case Reloc::kPcRel32: {
      int64_t d = static_cast<int64_t>(value - p);
      if ((d < INT32_MIN || d > INT32_MAX) && IsFunctionHole(patch.hole)) {
        // value = target + addend (-4): branch to a veneer instead.
        const uint64_t target = value - static_cast<uint64_t>(patch.addend);
        d = static_cast<int64_t>(veneers.For(target) + static_cast<uint64_t>(patch.addend) - p);
      }
      if (d < INT32_MIN || d > INT32_MAX) {
        *why = "a stencil branch out of range";
        return false;
      }
      const int32_t v = static_cast<int32_t>(d);
      std::memcpy(place, &v, 4);
      return true;
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
      return true;
    }
    case Reloc::kBranch26: {
      int64_t d = static_cast<int64_t>(value - p);
      constexpr int64_t kReach = int64_t{1} << 27;
      if ((d < -kReach || d >= kReach) && IsFunctionHole(patch.hole)) {
        d = static_cast<int64_t>(veneers.For(value) - p);
      }
      if (d < -kReach || d >= kReach || (d & 3) != 0) {
        *why = "a stencil branch out of range";
        return false;
      }
      uint32_t insn;
      std::memcpy(&insn, place, 4);
      insn = (insn & 0xfc000000u) | (static_cast<uint32_t>(d >> 2) & 0x03ffffffu);
      std::memcpy(place, &insn, 4);
      return true;
    }
  }
  return true;
}

}  // namespace

bool LinkStencils(std::vector<Piece>& pieces, const LinkTargets& targets, HoleValue hole_value,
                  const void* context, const void* data, size_t data_size, const void* near,
                  LinkedCode* out, std::string* why) {
  const size_t code_end = (LayOut(pieces) + 15) & ~size_t{15};
  constexpr size_t kMaxVeneers = std::size(kFunctionHoles);  // one per function hole kind
  // The data on a cache line of its own (blocks are 64-byte aligned).
  const size_t data_at = (code_end + kMaxVeneers * kVeneerSize + 63) & ~size_t{63};
  CodeBlock block = AllocateWritable(data_at + data_size, near, why);
  if (block.base == nullptr) return false;
  // Addresses are the executable view's (`base`); bytes go through the writable one (`write`).
  uint8_t* const base = block.base;
  uint8_t* const write = block.write;
  if (data_size != 0) std::memcpy(write + data_at, data, data_size);
  Veneers veneers(base, write, code_end);
  const HoleSources sources{.pieces = pieces,
                            .base = base,
                            .fail_at = AddressOf(pieces, base, targets.fail),
                            .generic_at = AddressOf(pieces, base, targets.generic),
                            .exit_at = AddressOf(pieces, base, targets.exit),
                            .data_at = data_at,
                            .data_size = data_size,
                            .hole_value = hole_value,
                            .context = context};
  auto fail = [&] {  // *why already says why
    Free(block);
    return false;
  };

  for (const Piece& piece : pieces) {
    uint8_t* const code = write + piece.at;
    std::memcpy(code, piece.stencil->code, piece.size);
    for (uint16_t k = 0; k < piece.stencil->num_patches; ++k) {
      const Patch& patch = piece.stencil->patches[k];
      if (patch.offset >= piece.size) continue;  // in the dropped trailing jump
      uint64_t value = 0;
      if (!HoleValueOf(sources, piece, patch.hole, &value, why)) return fail();
      value += static_cast<uint64_t>(patch.addend);
      const uint64_t p = reinterpret_cast<uint64_t>(base + piece.at + patch.offset);
      if (!Relocate(patch, code + patch.offset, p, value, veneers, why)) return fail();
    }
  }
  if (!Seal(block, why)) return fail();
  out->block = block;
  out->code_size = code_end;
  return true;
}

}  // namespace ffijit::stencils
