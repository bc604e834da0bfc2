// The copy-and-patch thunk tier: chooses the stencils of a plan and the values of their holes;
// stencil_link.cc lays them out, patches them and publishes the code W^X.
#include "stencils/thunks/stencil_tier.h"

#include <atomic>
#include <cstddef>
#include <cstring>
#include <vector>

#include "ffijit/any.h"
#include "interpreter/bound_function.h"
#include "interpreter/float16.h"
#include "stencils/link/code_memory.h"
#include "stencils/link/stencil_link.h"
#include "stencils/link/stencil_types.h"
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

size_t AppendThunkPieces(const BoundFunction* fn, bool count_calls, bool with_entry,
                         std::vector<Piece>* out, std::string* why) {
  const CallPlan& plan = *fn->plan;
  *why = StencilUnsupportedReason(plan);
  if (!why->empty()) return LinkTargets::kNone;
  // The chain: entry, one stencil per parameter, the call, the epilogue (which returns the call's
  // status); then the fallback stencil. The entry, the epilogue and the fallback agree on the
  // frame.
  std::vector<Piece>& pieces = *out;
  const size_t first = pieces.size();
  const bool frame = NeedsFrame(plan);
  if (!with_entry) {
  } else if (frame) {
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
  for (size_t i = first; i < pieces.size(); ++i) pieces[i].falls_through = true;
  pieces.push_back({frame ? &gen::k_stencil_epilogue_frame : &gen::k_stencil_epilogue});
  pieces.push_back({frame ? &gen::k_stencil_fail_frame : &gen::k_stencil_fail});
  return pieces.size() - 1;
}

bool ThunkHoleValue(const BoundFunction* fn, bool count_calls, Hole hole, uint64_t* value) {
  switch (hole) {
    case Hole::kArity:
      *value = static_cast<uint64_t>(fn->plan->num_args());
      return true;
    case Hole::kHeaderTypeOffset:
      *value = offsetof(TVMFFIObject, type_index);
      return true;
    case Hole::kHeaderSize:
      *value = sizeof(TVMFFIObject);
      return true;
    case Hole::kResolvePath:
      *value = reinterpret_cast<uint64_t>(&FFIJITResolvePath);
      return true;
    case Hole::kAnyDefect:
      *value = reinterpret_cast<uint64_t>(&AnyDefectCode);
      return true;
    case Hole::kF16FromDouble:
      *value = reinterpret_cast<uint64_t>(&FFIJITDoubleToF16Bits);
      return true;
    case Hole::kF16FromInt:
      *value = reinterpret_cast<uint64_t>(&FFIJITInt64ToF16Bits);
      return true;
    case Hole::kBF16FromDouble:
      *value = reinterpret_cast<uint64_t>(&FFIJITDoubleToBF16Bits);
      return true;
    case Hole::kBF16FromInt:
      *value = reinterpret_cast<uint64_t>(&FFIJITInt64ToBF16Bits);
      return true;
    case Hole::kFallback:
      *value = reinterpret_cast<uint64_t>(count_calls ? &StencilFallbackCounted : &StencilFallback);
      return true;
    case Hole::kBoxResult:
      *value = reinterpret_cast<uint64_t>(&FFIJITBoxResult);
      return true;
    case Hole::kBoxResults:
      *value = reinterpret_cast<uint64_t>(&FFIJITBoxResults);
      return true;
    case Hole::kPropagateStatus:
      *value = reinterpret_cast<uint64_t>(&FFIJITPropagateStatus);
      return true;
    case Hole::kMemchr:
      *value = reinterpret_cast<uint64_t>(
          static_cast<const void* (*)(const void*, int, size_t)>(&std::memchr));
      return true;
    default:
      return false;
  }
}

StencilThunk* MakeStencilThunk(const BoundFunction* fn, bool count_calls, std::string* why) {
  std::vector<Piece> pieces;
  LinkTargets targets;
  targets.fail = AppendThunkPieces(fn, count_calls, /*with_entry=*/true, &pieces, why);
  if (targets.fail == LinkTargets::kNone) return nullptr;
  struct Context {
    const BoundFunction* fn;
    bool count_calls;
  } context{fn, count_calls};
  auto hole_value = [](const void* opaque, Hole hole, uint64_t* value) {
    const auto& c = *static_cast<const Context*>(opaque);
    return ThunkHoleValue(c.fn, c.count_calls, hole, value);
  };
  LinkedCode code;
  if (!LinkStencils(pieces, targets, hole_value, &context, nullptr, 0,
                    reinterpret_cast<const void*>(&StencilFallback), &code, why)) {
    return nullptr;
  }
  made.fetch_add(1, std::memory_order_relaxed);
  live.fetch_add(1, std::memory_order_relaxed);
  return new StencilThunk{code.block, code.code_size};
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
