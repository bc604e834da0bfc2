// Host entries from stencils: the pieces of a function's entry (the C-ABI entry, one stencil per
// argument by its form, the tensors, the switch into a copy of the function's thunk chain, the
// call, the epilogue and the ways out of line), its model data, and the link.
#include "stencils/entries/host_stencil_entry.h"

#include <chrono>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "ffijit/error.h"
#include "interpreter/bound_function.h"
#include "plan/host_forms.h"
#include "stencils/generate/host_stencil_data.h"
#include "stencils/link/stencil_link.h"
#include "stencils/thunks/stencil_tier.h"
#include "stencils_generated.h"  // written by extract_stencils.py at build time

namespace ffijit::stencils {
namespace gen = generated;
namespace {

// An argument's stencil by its form and the model's int layout, and its out-of-line part (the
// rarer forms; nullptr when it has none).
struct ArgumentStencils {
  const Stencil* fast;
  const Stencil* slow = nullptr;
};
ArgumentStencils ArgumentStencilsOf(InlineForm form, int32_t int_layout) {
  const bool sized = int_layout == FFIJIT_HOST_INT_SIZED_DIGITS;
  const bool tagged = int_layout == FFIJIT_HOST_INT_TAGGED_DIGITS;
  switch (form) {
    case InlineForm::kInt:
      if (sized) return {&gen::k_stencil_host_int_sized, &gen::k_stencil_host_int};
      if (tagged) return {&gen::k_stencil_host_int_tagged, &gen::k_stencil_host_int};
      return {&gen::k_stencil_host_int};
    case InlineForm::kFloat:
      if (sized) return {&gen::k_stencil_host_float_sized, &gen::k_stencil_host_float_int_sized};
      if (tagged) return {&gen::k_stencil_host_float_tagged, &gen::k_stencil_host_float_int_tagged};
      return {&gen::k_stencil_host_float};
    case InlineForm::kBool:
      return {&gen::k_stencil_host_bool};
    case InlineForm::kPointer:
      return {&gen::k_stencil_host_ptr, &gen::k_stencil_host_ptr_slow};
    case InlineForm::kStr:
      return {&gen::k_stencil_host_str, &gen::k_stencil_host_str_slow};
    case InlineForm::kDevice:
      return {&gen::k_stencil_host_device};
    case InlineForm::kDataType:
      return {&gen::k_stencil_host_dtype};
    case InlineForm::kTensor:
      return {&gen::k_stencil_host_tensor, &gen::k_stencil_host_tensor_miss};
    case InlineForm::kNone:
      break;
  }
  return {nullptr};
}

// The host call stencils of one result kind by number of stack slots: the plain ones (an entry
// that keeps the lock, without tensors, for a host whose references are a plain count) and the
// full ones.
struct HostCallFamily {
  const Stencil* const* plain;
  const Stencil* const* full;
};
#define HOST_CALL_FAMILY(kind)                            \
  HostCallFamily {                                        \
    gen::k_hcall_##kind##_s, gen::k_hcall_full_##kind##_s \
  }
static_assert(std::size(gen::k_hcall_void_s) == std::size(gen::k_hcall_full_void_s));

// The host call stencil for the plan's result (the native called and its result boxed by the
// host), or nullptr: such results end in the thunk's call stencil.
const Stencil* HostCallStencil(const CallPlan& plan, bool plain) {
  if (plan.convention == CallConvention::kStatus || plan.packs_results() || plan.num_stack < 0 ||
      static_cast<size_t>(plan.num_stack) >= std::size(gen::k_hcall_void_s)) {
    return nullptr;
  }
  const auto ns = static_cast<size_t>(plan.num_stack);
  auto pick = [&](HostCallFamily family) { return plain ? family.plain[ns] : family.full[ns]; };
  if (plan.results.empty()) return pick(HOST_CALL_FAMILY(void));
  if (plan.results.size() != 1 || !plan.results[0].by_return) return nullptr;
  const Conversion c = plan.results[0].conversion;
  if (plan.return_kind == ReturnKind::kSse) {
    if (c == Conversion::kF64) return pick(HOST_CALL_FAMILY(f64));
    if (c == Conversion::kF32) return pick(HOST_CALL_FAMILY(f32));
    return nullptr;
  }
  if (plan.return_kind != ReturnKind::kGpr) return nullptr;
  switch (c) {
    case Conversion::kBool:
      return pick(HOST_CALL_FAMILY(bool));
    case Conversion::kI8:
      return pick(HOST_CALL_FAMILY(i8));
    case Conversion::kI16:
      return pick(HOST_CALL_FAMILY(i16));
    case Conversion::kI32:
      return pick(HOST_CALL_FAMILY(i32));
    case Conversion::kI64:
      return pick(HOST_CALL_FAMILY(i64));
    case Conversion::kU8:
      return pick(HOST_CALL_FAMILY(u8));
    case Conversion::kU16:
      return pick(HOST_CALL_FAMILY(u16));
    case Conversion::kU32:
      return pick(HOST_CALL_FAMILY(u32));
    default:
      return nullptr;
  }
}
#undef HOST_CALL_FAMILY

// In a host entry's copy of the thunk chain, the argument stencils of the forms the host's
// argument stencils store in exactly the shape the parameter takes (a Str as a RawStr, a Device, a
// DataType, an Int for an i64) become plain loads of the payload: their checks have been made.
void LoadCheckedPayloads(std::vector<Piece>* thunk) {
  static_assert(std::size(gen::k_arg_payload_g) == std::size(gen::k_arg_str_g));
  const Stencil* const* checked[] = {gen::k_arg_str_g, gen::k_arg_device_g, gen::k_arg_dtype_g,
                                     gen::k_arg_i64_g};
  const Stencil* checked_on_stack[] = {&gen::k_stencil_stack_str, &gen::k_stencil_stack_device,
                                       &gen::k_stencil_stack_dtype, &gen::k_stencil_stack_i64};
  for (Piece& piece : *thunk) {
    for (const Stencil* const* family : checked) {
      for (size_t k = 0; k < std::size(gen::k_arg_payload_g); ++k) {
        if (piece.stencil == family[k]) piece.stencil = gen::k_arg_payload_g[k];
      }
    }
    for (const Stencil* stencil : checked_on_stack) {
      if (piece.stencil == stencil) piece.stencil = &gen::k_stencil_stack_payload;
    }
  }
}

FFIJITHostStencilData DataOf(const BoundFunction* fn, const FFIJITHostModel& m, int flags) {
  FFIJITHostStencilData d{};
  d.int_type = m.int_type;
  d.float_type = m.float_type;
  d.str_type = m.str_type;
  d.device_type = m.device_type;
  d.dtype_type = m.dtype_type;
  d.none = const_cast<void*>(m.none);
  d.true_value = const_cast<void*>(m.true_value);
  d.false_value = const_cast<void*>(m.false_value);
  d.int_value = m.int_value;
  d.error_occurred = m.error_occurred;
  d.clear_error = m.clear_error;
  d.str_data = m.str_data;
  d.pointer_to_any = reinterpret_cast<int (*)(void*, void*)>(m.pointer_to_any);
  d.borrow_tensor = reinterpret_cast<void* (*)(void*, void*)>(m.borrow_tensor);
  d.release_tensor = m.release_tensor;
  d.new_int = m.new_int;
  d.new_float = m.new_float;
  d.new_ref = m.new_ref;
  d.box_result = reinterpret_cast<void* (*)(void*)>(m.box_result);
  d.raise_error = m.raise_error;
  d.release_lock = m.release_lock;
  d.acquire_lock = m.acquire_lock;
  d.memchr = static_cast<const void* (*)(const void*, int, size_t)>(&std::memchr);
  // A call that releases the lock records no holder.
  if ((flags & kFFIJITHostEntryReleaseLock) == 0) {
    d.lock_holder = m.lock_holder;
    d.lock_calls = m.lock_calls;
    d.held_work = m.held_work;
    d.run_held_work = m.run_held_work;
  }
  d.function = const_cast<BoundFunction*>(fn);
  d.type_offset = m.type_offset;
  d.float_value_offset = m.float_value_offset;
  d.device_value_offset = m.device_value_offset;
  d.dtype_value_offset = m.dtype_value_offset;
  d.plain_refcount = m.plain_refcount;
  d.tensor_slot_size = m.tensor_slot_size;
  d.str_flags_offset = m.str_flags_offset;
  d.str_inline_mask = m.str_inline_mask;
  // Read before the flags are tested, so they must lie in the object (offset 0 when not given).
  if (m.str_flags_offset >= 0) {
    d.str_length_offset = m.str_length_offset;
    d.str_inline_data_offset = m.str_inline_data_offset;
  }
  d.function_cell_offset =
      static_cast<int32_t>(offsetof(BoundFunction, cell) + offsetof(TVMFFIFunctionCell, safe_call));
  d.release_lock_around_call = (flags & kFFIJITHostEntryReleaseLock) != 0 ? 1 : 0;
  switch (m.int_layout) {
    case kFFIJITHostIntSizedDigits:
      d.int_layout = FFIJIT_HOST_INT_SIZED_DIGITS;
      break;
    case kFFIJITHostIntTaggedDigits:
      d.int_layout = FFIJIT_HOST_INT_TAGGED_DIGITS;
      break;
    default:
      d.int_layout = FFIJIT_HOST_INT_OPAQUE;
      break;
  }
  // Read whatever the layout, so they must lie in the object (offset 0 when not described).
  if (d.int_layout != FFIJIT_HOST_INT_OPAQUE) {
    d.int_size_offset = m.int_size_offset;
    d.int_digits_offset = m.int_digits_offset;
  }
  return d;
}

// An offset the data holds, as a hole's value (sign-extended, as the displacement reads it).
bool Offset(int32_t offset, uint64_t* value) {
  *value = static_cast<uint64_t>(static_cast<int64_t>(offset));
  return true;
}

struct HostCode {
  CodeBlock block;
};

void ReleaseHostCode(void* code) {
  auto* host_code = static_cast<HostCode*>(code);
  Free(host_code->block);
  delete host_code;
}

// Argument pieces with an out-of-line part: (the piece, its part), placed after the chain.
using SlowParts = std::vector<std::pair<size_t, Piece>>;

// Appends every argument's piece but the tensors', then the tensors' (borrowed last).
void AppendArgumentPieces(const CallPlan& plan, const std::vector<size_t>& tensors,
                          int32_t int_layout, std::vector<Piece>& pieces, SlowParts& slow_parts) {
  // Argument i's piece (`index`: a tensor's number).
  auto argument_piece = [&](size_t i, int64_t index) {
    const ArgumentStencils stencils =
        ArgumentStencilsOf(FormOf(FlatParamOf(plan, i)->conversion), int_layout);
    Piece piece{stencils.fast};
    piece.object_offset = static_cast<int64_t>(sizeof(void*) * i);
    piece.offset = static_cast<int64_t>(sizeof(TVMFFIAny) * i);
    piece.index = index;
    if (stencils.slow != nullptr) {
      Piece slow = piece;
      slow.stencil = stencils.slow;
      slow_parts.push_back({pieces.size(), slow});
    }
    return piece;
  };
  for (size_t i = 0; i < plan.args.size(); ++i) {
    if (FormOf(FlatParamOf(plan, i)->conversion) != InlineForm::kTensor) {
      pieces.push_back(argument_piece(i, 0));
    }
  }
  for (size_t t = 0; t < tensors.size(); ++t) {
    pieces.push_back(argument_piece(tensors[t], static_cast<int64_t>(t)));
  }
}

// The switch to the call: into a copy of the function's thunk chain when the stencil thunks
// cover its plan, else to its packed entry. Sets targets.fail to the thunk's fallback piece
// (LinkTargets::kNone for the packed entry, which has none).
void AppendCallPieces(const BoundFunction* fn, const FFIJITHostModel& model, int flags,
                      size_t num_tensors, LinkTargets& targets, std::vector<Piece>& pieces) {
  std::vector<Piece> thunk;
  std::string thunk_why;
  targets.fail =
      AppendThunkPieces(fn, /*count_calls=*/false, /*with_entry=*/false, &thunk, &thunk_why);
  const bool unlocking = (flags & kFFIJITHostEntryReleaseLock) != 0;
  if (targets.fail == LinkTargets::kNone) {
    pieces.push_back({&gen::k_stencil_host_to_packed});
  } else {
    pieces.push_back(
        {unlocking ? &gen::k_stencil_host_to_chain_unlocking : &gen::k_stencil_host_to_chain});
  }
  for (size_t i = 0; i + 1 < pieces.size(); ++i) pieces[i].falls_through = true;
  if (targets.fail == LinkTargets::kNone) {
    pieces.back().index = static_cast<int64_t>(num_tensors);  // it releases them
    return;
  }
  LoadCheckedPayloads(&thunk);
  // The thunk's pieces end in its call stencil, its epilogue and its fallback: here the host's
  // call stencil where it has one for the result (which boxes it and takes back what the entry
  // gave away), else the thunk's call and a return stencil that does the same with the Any the
  // call left; then the host's fallback.
  thunk.pop_back();  // the fallback
  const bool plain = !unlocking && num_tensors == 0 && model.plain_refcount != 0;
  if (const Stencil* host_call = HostCallStencil(*fn->plan, plain)) {
    thunk.pop_back();  // the epilogue
    thunk.back() = Piece{host_call};
  } else {
    thunk.back() = Piece{&gen::k_stencil_host_return};
    thunk[thunk.size() - 2].falls_through = true;
  }
  thunk.back().index = static_cast<int64_t>(num_tensors);
  pieces.back().falls_through = true;
  pieces.insert(pieces.end(), thunk.begin(), thunk.end());
}

// The epilogue, which the call's end falls into, then the ways out of line: the host's fallback
// for the thunk's stencils, the way to the generic path, and each argument's out-of-line part,
// which continues the chain where its piece would.
void AppendEpilogueAndOutOfLine(size_t num_tensors, SlowParts& slow_parts, LinkTargets& targets,
                                std::vector<Piece>& pieces) {
  pieces.back().falls_through = true;
  targets.exit = pieces.size();
  pieces.push_back({&gen::k_stencil_host_epilogue});
  if (targets.fail != LinkTargets::kNone) {
    targets.fail = pieces.size();
    pieces.push_back({&gen::k_stencil_host_fail});
    pieces.back().index = static_cast<int64_t>(num_tensors);
  }
  targets.generic = pieces.size();
  pieces.push_back({&gen::k_stencil_host_generic});
  for (auto& [index, slow] : slow_parts) {
    pieces[index].slow_piece = pieces.size();
    slow.next_piece = index + 1;
    pieces.push_back(slow);
  }
}

struct HostHoleContext {
  const BoundFunction* fn;
  const FFIJITHostModel* model;
  const FFIJITHostStencilData* data;
};

// The values of the holes only host entries have (a HoleValue; `opaque`: a HostHoleContext),
// the rest the thunk's.
bool HostHoleValue(const void* opaque, Hole hole, uint64_t* value) {
  const auto& c = *static_cast<const HostHoleContext*>(opaque);
  switch (hole) {
    case Hole::kSelfCountOffset:
      *value = static_cast<uint64_t>(static_cast<int64_t>(c.model->self_count_offset));
      return true;
    case Hole::kSelfNameOffset:
      *value = static_cast<uint64_t>(static_cast<int64_t>(c.model->self_name_offset));
      return true;
    case Hole::kHostFallback:
      *value = reinterpret_cast<uint64_t>(c.model->fallback);
      return true;
    case Hole::kCountReached:
      *value = reinterpret_cast<uint64_t>(c.model->count_reached);
      return c.model->count_reached != nullptr;
    case Hole::kHostTypeOffset:
      return Offset(c.data->type_offset, value);
    case Hole::kHostIntSizeOffset:
      return Offset(c.data->int_size_offset, value);
    case Hole::kHostIntDigitsOffset:
      return Offset(c.data->int_digits_offset, value);
    case Hole::kHostFloatValueOffset:
      return Offset(c.data->float_value_offset, value);
    case Hole::kHostDeviceValueOffset:
      return Offset(c.data->device_value_offset, value);
    case Hole::kHostDtypeValueOffset:
      return Offset(c.data->dtype_value_offset, value);
    default:
      return ThunkHoleValue(c.fn, /*count_calls=*/false, hole, value);
  }
}

}  // namespace

FFIJITHostEntry* MakeStencilHostEntry(const BoundFunction* fn, const FFIJITHostModel& model,
                                      int flags) {
  const auto start = std::chrono::steady_clock::now();
  const CallPlan& plan = *fn->plan;
  const std::string refused =
      "FFIJITHostEntryCompile: no stencil host entry for `" + plan.declaration + "`: ";
  std::string why = HostEntryUnsupportedReason(plan);
  if (!why.empty()) throw RuntimeError(refused + why);
  const size_t num_args = plan.args.size();
  if (num_args > FFIJIT_HOST_STENCIL_MAX_ARGS) {
    throw RuntimeError(refused + "more than " + std::to_string(FFIJIT_HOST_STENCIL_MAX_ARGS) +
                       " arguments");
  }
  std::vector<size_t> tensors;
  for (size_t i = 0; i < num_args; ++i) {
    if (FormOf(FlatParamOf(plan, i)->conversion) == InlineForm::kTensor) tensors.push_back(i);
  }
  const size_t slot_bytes = tensors.size() * static_cast<size_t>(model.tensor_slot_size);
  if (slot_bytes > FFIJIT_HOST_STENCIL_SLOT_BYTES) {
    throw RuntimeError(refused + "its tensors' slots need " + std::to_string(slot_bytes) +
                       " bytes, more than " + std::to_string(FFIJIT_HOST_STENCIL_SLOT_BYTES));
  }

  // The chain: the entry, every argument but the tensors, the tensors (borrowed last), the call.
  std::vector<Piece> pieces;
  const bool counted = model.count_reached != nullptr;
  if (tensors.empty()) {
    pieces.push_back({counted ? &gen::k_stencil_host_entry_counted : &gen::k_stencil_host_entry});
  } else {
    pieces.push_back(
        {counted ? &gen::k_stencil_host_entry_slots_counted : &gen::k_stencil_host_entry_slots});
  }
  const FFIJITHostStencilData data = DataOf(fn, model, flags);
  SlowParts slow_parts;
  AppendArgumentPieces(plan, tensors, data.int_layout, pieces, slow_parts);
  LinkTargets targets;
  AppendCallPieces(fn, model, flags, tensors.size(), targets, pieces);
  AppendEpilogueAndOutOfLine(tensors.size(), slow_parts, targets, pieces);
  const HostHoleContext context{fn, &model, &data};
  LinkedCode code;
  if (!LinkStencils(pieces, targets, &HostHoleValue, &context, &data, sizeof data,
                    reinterpret_cast<const void*>(&MakeStencilHostEntry), &code, &why)) {
    throw RuntimeError(refused + why);
  }
  auto entry = std::make_unique<FFIJITHostEntry>();
  entry->address = code.block.base;
  entry->code = new HostCode{code.block};
  entry->release_code = &ReleaseHostCode;
  entry->compile_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  return entry.release();
}

}  // namespace ffijit::stencils
