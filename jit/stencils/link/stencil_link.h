// The copy-and-patch step the stencil tiers share (thunks: stencil_tier.cc; host entries:
// host_stencil_entry.cc): lays out a chain of stencils in one block of code memory, patches their
// holes (the build-time object's relocations), adds veneers for far branches and publishes the
// code W^X.
#ifndef FFIJIT_JIT_STENCILS_LINK_STENCIL_LINK_H_
#define FFIJIT_JIT_STENCILS_LINK_STENCIL_LINK_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "stencils/link/code_memory.h"
#include "stencils/link/stencil_types.h"

namespace ffijit::stencils {

// One copied stencil and the holes it holds itself.
struct Piece {
  const Stencil* stencil;
  int64_t offset = 0;                                      // kOffset
  int64_t object_offset = 0;                               // kObjectOffset
  int64_t type_index = 0;                                  // kTypeIndex
  int64_t slot = 0;                                        // kSlot
  int64_t index = 0;                                       // kIndex
  uint64_t rank_plus_one = 0, check_dtype = 0, dtype = 0;  // a tensor parameter's checks
  // kNext is the piece after it, which follows directly: its trailing jump is dropped.
  bool falls_through = false;
  // Else the index of kNext's piece (kNone: the piece has no kNext), and of kSlow's (the piece's
  // out-of-line rest, placed after the chain).
  size_t next_piece = SIZE_MAX;
  size_t slow_piece = SIZE_MAX;
  // Set by LinkStencils.
  size_t at = 0;    // offset in the code
  size_t size = 0;  // bytes copied (the trailing jump dropped when it is elided)
  size_t next = 0;  // kNext: the offset of its piece
};

// The value of every other hole (the arity, the functions a stencil calls, layout constants): the
// caller's. False: a hole this code has no value for.
using HoleValue = bool (*)(const void* context, Hole hole, uint64_t* value);

struct LinkedCode {
  CodeBlock block;
  size_t code_size = 0;  // the stencils' bytes, without veneers and data
};

// The pieces kFail, kGeneric and kExit name (indices into the pieces; kNone: no such piece).
struct LinkTargets {
  static constexpr size_t kNone = SIZE_MAX;
  size_t fail = kNone;
  size_t generic = kNone;
  size_t exit = kNone;
};

// Links `pieces` in order. `data` (data_size bytes, 8-aligned after the code) is kHostData's.
// `near`: an address the code's rel32 branches should reach. False and *why when memory or a
// patch fails (nothing is left allocated).
bool LinkStencils(std::vector<Piece>& pieces, const LinkTargets& targets, HoleValue hole_value,
                  const void* context, const void* data, size_t data_size, const void* near,
                  LinkedCode* out, std::string* why);

}  // namespace ffijit::stencils

#endif  // FFIJIT_JIT_STENCILS_LINK_STENCIL_LINK_H_
