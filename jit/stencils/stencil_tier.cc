// The copy-and-patch thunk tier: chooses the stencils of a plan, lays them out, patches their
// holes (relocations of the build-time object) and publishes the code W^X.
#include "stencils/stencil_tier.h"

#include <atomic>
#include <cstddef>
#include <cstring>
#include <vector>

#include "ffijit/any.h"
#include "interpreter/bound_function.h"
#include "interpreter/float16.h"
#include "stencils/code_memory.h"
#include "stencils/stencil_types.h"
#include "stencils_generated.h"  // written by extract_stencils.py at build time

namespace ffijit::stencils {
namespace gen = generated;

struct StencilThunk {
  CodeBlock block;
  size_t code_size = 0;
};

namespace {

std::atomic<HotCountHook> hot_count_hook{nullptr};
std::atomic<int64_t> made{0}, live{0}, fallbacks{0};

// The stencils' way out for every error and every form they do not convert: the interpreter, whose
// behaviour they must match anyway.
int StencilFallback(void* handle, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  fallbacks.fetch_add(1, std::memory_order_relaxed);
  return InterpreterSafeCall(handle, args, num_args, result);
}

// The same for a counting thunk, whose call that ran the count out lands here too: reported
// (`<= 0`: a concurrent call that counted on below zero cannot swallow the report; the tiering
// asks only once). Only a counting thunk reports: an uncounted one (a function that never goes
// hot, or a thunk a test made) leaves the count alone, whatever it holds.
int StencilFallbackCounted(void* handle, const TVMFFIAny* args, int32_t num_args,
                           TVMFFIAny* result) {
  auto* fn = static_cast<BoundFunction*>(handle);
  if (fn->calls_until_hot.load(std::memory_order_relaxed) <= 0) {
    if (HotCountHook hook = hot_count_hook.load(std::memory_order_acquire)) hook(handle);
  }
  return StencilFallback(handle, args, num_args, result);
}

// Stack slots a thunk fills (MAX_STACK in stencils.c; more take the LLVM tiers).
constexpr int32_t kMaxStack = sizeof(gen::k_call_void_s) / sizeof(gen::k_call_void_s[0]) - 1;

// details::FindAnyDefect for the stencils: 0 for a well-formed value.
int32_t AnyDefectCode(const TVMFFIAny* v) {
  return static_cast<int32_t>(details::FindAnyDefect(*v));
}

// The argument stencil of a conversion for one location, or nullptr.
const Stencil* ArgStencil(Conversion c, AbiLocation abi) {
#define FAMILY(name)                                                                              \
  return static_cast<size_t>(abi.slot) < sizeof(gen::k_arg_##name) / sizeof(gen::k_arg_##name[0]) \
             ? gen::k_arg_##name[abi.slot]                                                        \
             : nullptr
  if (abi.slot < 0) return nullptr;
  if (abi.cls == AbiClass::kGpr) {
    switch (c) {
      case Conversion::kBool:
        FAMILY(bool_g);
      case Conversion::kI8:
        FAMILY(i8_g);
      case Conversion::kI16:
        FAMILY(i16_g);
      case Conversion::kI32:
        FAMILY(i32_g);
      case Conversion::kI64:
        FAMILY(i64_g);
      case Conversion::kU8:
        FAMILY(u8_g);
      case Conversion::kU16:
        FAMILY(u16_g);
      case Conversion::kU32:
        FAMILY(u32_g);
      case Conversion::kU64:
        FAMILY(u64_g);
      case Conversion::kOpaquePtr:
        FAMILY(ptr_g);
      case Conversion::kStr:
        FAMILY(str_g);
      case Conversion::kObject:
        FAMILY(obj_g);
      case Conversion::kDataType:
        FAMILY(dtype_g);
      case Conversion::kTensor:
        FAMILY(tensor_g);
      case Conversion::kAnyView:
        FAMILY(any_g);
      case Conversion::kDevice:
        FAMILY(device_g);
      default:
        break;
    }
  } else if (abi.cls == AbiClass::kSse) {
    switch (c) {
      case Conversion::kF32:
        FAMILY(f32_f);
      case Conversion::kF64:
        FAMILY(f64_f);
      case Conversion::kF16:
        FAMILY(f16_f);
      case Conversion::kBF16:
        FAMILY(bf16_f);
      default:
        break;
    }
  } else if (abi.cls == AbiClass::kGprPair) {
    if (c == Conversion::kBytes) FAMILY(bytes_p);
  } else if (abi.cls == AbiClass::kStackPair && abi.slot + 1 < kMaxStack) {
    if (c == Conversion::kBytes) return &gen::k_stencil_stack_bytes;
  } else if (abi.cls == AbiClass::kStack && abi.slot < kMaxStack) {
    switch (c) {
      case Conversion::kBool:
        return &gen::k_stencil_stack_bool;
      case Conversion::kI8:
        return &gen::k_stencil_stack_i8;
      case Conversion::kI16:
        return &gen::k_stencil_stack_i16;
      case Conversion::kI32:
        return &gen::k_stencil_stack_i32;
      case Conversion::kI64:
        return &gen::k_stencil_stack_i64;
      case Conversion::kU8:
        return &gen::k_stencil_stack_u8;
      case Conversion::kU16:
        return &gen::k_stencil_stack_u16;
      case Conversion::kU32:
        return &gen::k_stencil_stack_u32;
      case Conversion::kU64:
        return &gen::k_stencil_stack_u64;
      case Conversion::kOpaquePtr:
        return &gen::k_stencil_stack_ptr;
      case Conversion::kStr:
        return &gen::k_stencil_stack_str;
      case Conversion::kObject:
        return &gen::k_stencil_stack_obj;
      case Conversion::kDataType:
        return &gen::k_stencil_stack_dtype;
      case Conversion::kTensor:
        return &gen::k_stencil_stack_tensor;
      case Conversion::kAnyView:
        return &gen::k_stencil_stack_any;
      case Conversion::kF16:
        return &gen::k_stencil_stack_f16;
      case Conversion::kBF16:
        return &gen::k_stencil_stack_bf16;
      case Conversion::kDevice:
        return &gen::k_stencil_stack_device;
      case Conversion::kF32:
        return &gen::k_stencil_stack_f32;
      case Conversion::kF64:
        return &gen::k_stencil_stack_f64;
      default:
        break;
    }
  }
#undef FAMILY
  return nullptr;
}

// Results a thunk takes through out-pointers (MAX_RESULTS in stencils.c).
constexpr size_t kMaxResults = 8;

// The out-pointer stencil for a result's trailing parameter, or nullptr.
const Stencil* OutStencil(AbiLocation abi) {
  if (abi.slot < 0) return nullptr;
  const auto slot = static_cast<size_t>(abi.slot);
  if (abi.cls == AbiClass::kGpr) {
    return slot < sizeof(gen::k_arg_out_g) / sizeof(gen::k_arg_out_g[0]) ? gen::k_arg_out_g[slot]
                                                                         : nullptr;
  }
  if (abi.cls == AbiClass::kStack && abi.slot < kMaxStack) return &gen::k_stencil_stack_out;
  return nullptr;
}

// Whether the plan needs the entry's frame (stack slots, out-pointer buffers).
bool HasPaths(const CallPlan& plan) {
  for (const NativeParam& p : plan.params) {
    if (p.path_size > 0) return true;
  }
  return false;
}
bool NeedsFrame(const CallPlan& plan) {
  if (plan.num_stack > 0 || plan.packs_results() || HasPaths(plan)) return true;
  for (const ResultSlot& r : plan.results) {
    if (!r.by_return) return true;
  }
  return false;
}

// The call stencil for the plan's result and stack slots, or nullptr.
const Stencil* CallStencil(const CallPlan& plan) {
  if (plan.num_stack > kMaxStack || plan.results.size() > kMaxResults) return nullptr;
  const size_t ns = static_cast<size_t>(plan.num_stack);
  const bool status = plan.convention == CallConvention::kStatus;
  if (plan.results.empty() && !plan.packs_results()) {
    return status ? gen::k_call_status_s[ns] : gen::k_call_void_s[ns];
  }
  if (plan.packs_results()) {
    // The LLVM thunks refuse a register pair among several results too.
    if (plan.return_kind == ReturnKind::kGprPair && plan.results.size() > 1) return nullptr;
    switch (plan.return_kind) {
      case ReturnKind::kVoid:
        return gen::k_call_packs_void_s[ns];
      case ReturnKind::kStatus:
        return gen::k_call_packs_status_s[ns];
      case ReturnKind::kGpr:
        return gen::k_call_packs_gpr_s[ns];
      case ReturnKind::kSse:
        return gen::k_call_packs_sse_s[ns];
      case ReturnKind::kGprPair:
        return gen::k_call_packs_pair_s[ns];
    }
    return nullptr;
  }
  // One result.
  if (!plan.results[0].by_return) {
    return status ? gen::k_call_outone_status_s[ns] : gen::k_call_outone_void_s[ns];
  }
  const Conversion c = plan.results[0].conversion;
  switch (plan.return_kind) {
    case ReturnKind::kSse:
      if (c == Conversion::kF64) return gen::k_call_f64_s[ns];
      if (c == Conversion::kF32) return gen::k_call_f32_s[ns];
      return gen::k_call_one_sse_s[ns];
    case ReturnKind::kGprPair:
      return gen::k_call_one_pair_s[ns];
    case ReturnKind::kGpr:
      break;
    default:
      return nullptr;
  }
  switch (c) {
    case Conversion::kBool:
      return gen::k_call_bool_s[ns];
    case Conversion::kI8:
      return gen::k_call_i8_s[ns];
    case Conversion::kI16:
      return gen::k_call_i16_s[ns];
    case Conversion::kI32:
      return gen::k_call_i32_s[ns];
    case Conversion::kI64:
      return gen::k_call_i64_s[ns];
    case Conversion::kU8:
      return gen::k_call_u8_s[ns];
    case Conversion::kU16:
      return gen::k_call_u16_s[ns];
    case Conversion::kU32:
      return gen::k_call_u32_s[ns];
    case Conversion::kU64:
      return gen::k_call_u64_s[ns];
    case Conversion::kOpaquePtr:
      return gen::k_call_ptr_s[ns];
    default:
      return gen::k_call_one_gpr_s[ns];
  }
}

// One copied stencil of a thunk.
struct Piece {
  const Stencil* stencil;
  size_t at = 0;           // offset in the thunk
  size_t size = 0;         // bytes copied (the trailing jump dropped when it is elided)
  int64_t offset = 0;      // kOffset: the packed argument's byte offset
  int64_t type_index = 0;  // kTypeIndex
  int64_t slot = 0;        // kSlot
  int64_t index = 0;       // kIndex
  uint64_t rank_plus_one = 0, check_dtype = 0, dtype = 0;  // a tensor parameter's checks
  size_t next = 0;  // kNext: the offset of the following piece
};

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

bool IsFunctionHole(Hole h) {
  return h == Hole::kFallback || h == Hole::kTarget || h == Hole::kBoxResult ||
         h == Hole::kBoxResults || h == Hole::kResolvePath || h == Hole::kAnyDefect ||
         h == Hole::kF16FromDouble || h == Hole::kF16FromInt || h == Hole::kBF16FromDouble ||
         h == Hole::kBF16FromInt || h == Hole::kPropagateStatus || h == Hole::kMemchr;
}

}  // namespace

bool StencilsAvailable() {
  return true;
}

std::string StencilUnsupportedReason(const CallPlan& plan) {
  if (plan.has_keywords()) return "keyword arguments";
  if (plan.num_stack > kMaxStack) {
    return "more than " + std::to_string(kMaxStack) + " stack slots of arguments";
  }
  if (plan.results.size() > kMaxResults) {
    return "more than " + std::to_string(kMaxResults) + " results";
  }
  if (CallStencil(plan) == nullptr) return "a register-pair return together with several results";
  for (const ResultSlot& r : plan.results) {
    if (!r.by_return && OutStencil(r.out_abi) == nullptr) {
      return "a result's out-pointer in a place the stencils do not fill";
    }
  }
  for (const PackedArg& arg : plan.args) {
    // Nothing would check it (an empty structure): the interpreter's.
    if (arg.num_params == 0) return "an argument with no native parameter";
  }
  for (const NativeParam& p : plan.params) {
    if (p.conversion == Conversion::kTensor) {
      for (int64_t dim : p.tensor.dims) {
        if (dim >= 0) return "a tensor parameter with a static dim";
      }
    }
    if (ArgStencil(p.conversion, p.abi) == nullptr) {
      return std::string("a parameter of type ") + ConversionCTypeName(p.conversion);
    }
  }
  return "";
}

StencilThunk* MakeStencilThunk(const BoundFunction* fn, bool count_calls, std::string* why) {
  const CallPlan& plan = *fn->plan;
  *why = StencilUnsupportedReason(plan);
  if (!why->empty()) return nullptr;

  // The chain: entry, one stencil per parameter, the call, the epilogue (which returns the call's
  // status); then the fallback stencil. The entry, the epilogue and the fallback agree on the
  // frame.
  std::vector<Piece> pieces;
  const bool frame = NeedsFrame(plan);
  if (frame) {
    pieces.push_back(
        {count_calls ? &gen::k_stencil_entry_frame_counted : &gen::k_stencil_entry_frame});
  } else {
    pieces.push_back({count_calls ? &gen::k_stencil_entry_counted : &gen::k_stencil_entry});
  }
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const NativeParam& p = plan.params[i];
    Piece piece{ArgStencil(p.conversion, p.abi)};
    piece.offset = 16 * int64_t{p.position};
    if (p.path_size > 0) {
      // The element stands in for the array at offset 0 while the conversion reads it.
      Piece resolve{&gen::k_stencil_resolve};
      resolve.offset = piece.offset;
      resolve.index = static_cast<int64_t>(i);
      pieces.push_back(resolve);
      piece.offset = 0;
    }
    piece.slot = p.abi.slot;
    if (p.conversion == Conversion::kTensor) {
      piece.rank_plus_one = static_cast<uint64_t>(p.tensor.rank + 1);
      piece.check_dtype = p.tensor.check_dtype ? 1 : 0;
      uint32_t bits = 0;
      std::memcpy(&bits, &p.tensor.dtype, sizeof bits);
      piece.dtype = bits;
    }
    if (p.conversion == Conversion::kObject) {
      // Exactly this type inline; a key no type has yet: 0, which no object's tag equals, so
      // every call takes the fallback (which resolves it).
      const int32_t want = __atomic_load_n(&p.object_type_index, __ATOMIC_ACQUIRE);
      piece.type_index = want == kUnresolvedTypeIndex ? 0 : want;
    }
    pieces.push_back(piece);
    if (p.path_size > 0) pieces.push_back({&gen::k_stencil_restore});
  }
  for (size_t i = 0; i < plan.results.size(); ++i) {
    const ResultSlot& result = plan.results[i];
    if (result.by_return) continue;
    Piece piece{OutStencil(result.out_abi)};
    piece.slot = result.out_abi.slot;
    piece.index = static_cast<int64_t>(i);
    pieces.push_back(piece);
  }
  pieces.push_back({CallStencil(plan)});
  pieces.push_back({frame ? &gen::k_stencil_epilogue_frame : &gen::k_stencil_epilogue});
  const size_t fail_index = pieces.size();
  pieces.push_back({frame ? &gen::k_stencil_fail_frame : &gen::k_stencil_fail});

  size_t at = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    Piece& piece = pieces[i];
    piece.at = at;
    piece.size = piece.stencil->size;
    // The chain's next stencil follows directly: its trailing jump falls through instead.
    if (i + 1 < fail_index) piece.size -= piece.stencil->tail_jump;
    at += piece.size;
    if (gen::kMachine == Machine::kAArch64) at = (at + 3) & ~size_t{3};
  }
  for (size_t i = 0; i + 1 < fail_index; ++i) pieces[i].next = pieces[i + 1].at;
  const size_t code_end = (at + 15) & ~size_t{15};
  constexpr size_t kMaxVeneers = 12;  // one per function hole kind
  CodeBlock block = AllocateWritable(code_end + kMaxVeneers * kVeneerSize,
                                     reinterpret_cast<const void*>(&StencilFallback), why);
  if (block.base == nullptr) return nullptr;
  // Addresses are the executable view's (`base`); bytes go through the writable one (`write`).
  uint8_t* const base = block.base;
  uint8_t* const write = block.write;
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
    const size_t at = code_end + veneers_used++ * kVeneerSize;
    WriteVeneer(write + at, target);
    veneers.push_back({target, reinterpret_cast<uint64_t>(base + at)});
    return veneers.back().veneer;
  };
  auto fail = [&](const std::string& reason) -> StencilThunk* {
    Free(block);
    *why = reason;
    return nullptr;
  };

  const uint64_t fail_at = reinterpret_cast<uint64_t>(base + pieces[fail_index].at);
  for (const Piece& piece : pieces) {
    uint8_t* const code = write + piece.at;
    std::memcpy(code, piece.stencil->code, piece.size);
    for (uint16_t k = 0; k < piece.stencil->num_patches; ++k) {
      const Patch& patch = piece.stencil->patches[k];
      if (patch.offset >= piece.size) continue;  // in the dropped trailing jump
      uint64_t value = 0;
      switch (patch.hole) {
        case Hole::kArity:
          value = static_cast<uint64_t>(plan.num_args());
          break;
        case Hole::kOffset:
          value = static_cast<uint64_t>(piece.offset);
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
        case Hole::kHeaderTypeOffset:
          value = offsetof(TVMFFIObject, type_index);
          break;
        case Hole::kHeaderSize:
          value = sizeof(TVMFFIObject);
          break;
        case Hole::kResolvePath:
          value = reinterpret_cast<uint64_t>(&FFIJITResolvePath);
          break;
        case Hole::kAnyDefect:
          value = reinterpret_cast<uint64_t>(&AnyDefectCode);
          break;
        case Hole::kF16FromDouble:
          value = reinterpret_cast<uint64_t>(&FFIJITDoubleToF16Bits);
          break;
        case Hole::kF16FromInt:
          value = reinterpret_cast<uint64_t>(&FFIJITInt64ToF16Bits);
          break;
        case Hole::kBF16FromDouble:
          value = reinterpret_cast<uint64_t>(&FFIJITDoubleToBF16Bits);
          break;
        case Hole::kBF16FromInt:
          value = reinterpret_cast<uint64_t>(&FFIJITInt64ToBF16Bits);
          break;
        case Hole::kNext:
          value = reinterpret_cast<uint64_t>(base + piece.next);
          break;
        case Hole::kFail:
          value = fail_at;
          break;
        case Hole::kFallback:
          value =
              reinterpret_cast<uint64_t>(count_calls ? &StencilFallbackCounted : &StencilFallback);
          break;
        case Hole::kTarget:
          value = reinterpret_cast<uint64_t>(fn->target);
          break;
        case Hole::kBoxResult:
          value = reinterpret_cast<uint64_t>(&FFIJITBoxResult);
          break;
        case Hole::kBoxResults:
          value = reinterpret_cast<uint64_t>(&FFIJITBoxResults);
          break;
        case Hole::kPropagateStatus:
          value = reinterpret_cast<uint64_t>(&FFIJITPropagateStatus);
          break;
        case Hole::kMemchr:
          value = reinterpret_cast<uint64_t>(
              static_cast<const void* (*)(const void*, int, size_t)>(&std::memchr));
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
  made.fetch_add(1, std::memory_order_relaxed);
  live.fetch_add(1, std::memory_order_relaxed);
  return new StencilThunk{block, code_end};
}

TVMFFISafeCallType StencilThunkEntry(const StencilThunk* thunk) {
  return reinterpret_cast<TVMFFISafeCallType>(thunk->block.base);
}

size_t StencilThunkSize(const StencilThunk* thunk) {
  return thunk->code_size;
}

void ReleaseStencilThunk(StencilThunk* thunk) {
  if (thunk == nullptr) return;
  Free(thunk->block);
  live.fetch_sub(1, std::memory_order_relaxed);
  delete thunk;
}

void SetStencilHotCountHook(HotCountHook hook) {
  hot_count_hook.store(hook, std::memory_order_release);
}

StencilCounters Counters() {
  return {made.load(std::memory_order_relaxed), live.load(std::memory_order_relaxed),
          fallbacks.load(std::memory_order_relaxed)};
}

}  // namespace ffijit::stencils
