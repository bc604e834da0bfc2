// Host entries from stencils: the pieces of a function's entry (the C-ABI entry, one stencil per
// argument by its form, the tensors, the call, and a copy of the function's thunk chain for the
// call to enter), its model data, and the link.
#include "stencils/host_stencil_entry.h"

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ffijit/error.h"
#include "plan/host_forms.h"
#include "stencils/host_stencil_data.h"
#include "stencils/stencil_link.h"
#include "stencils/stencil_tier.h"
#include "stencils_generated.h"  // written by extract_stencils.py at build time

namespace ffijit::stencils {
namespace gen = generated;
namespace {

const Stencil* ArgumentStencil(InlineForm form) {
  switch (form) {
    case InlineForm::kInt:
      return &gen::k_stencil_host_int;
    case InlineForm::kFloat:
      return &gen::k_stencil_host_float;
    case InlineForm::kBool:
      return &gen::k_stencil_host_bool;
    case InlineForm::kPointer:
      return &gen::k_stencil_host_ptr;
    case InlineForm::kStr:
      return &gen::k_stencil_host_str;
    case InlineForm::kDevice:
      return &gen::k_stencil_host_device;
    case InlineForm::kDataType:
      return &gen::k_stencil_host_dtype;
    case InlineForm::kTensor:
      return &gen::k_stencil_host_tensor;
    case InlineForm::kNone:
      break;
  }
  return nullptr;
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
  d.fallback = m.fallback;
  d.count_reached = m.count_reached;
  d.memchr = static_cast<const void* (*)(const void*, int, size_t)>(&std::memchr);
  d.lock_holder = m.lock_holder;
  d.lock_calls = m.lock_calls;
  d.function = const_cast<BoundFunction*>(fn);
  d.type_offset = m.type_offset;
  d.float_value_offset = m.float_value_offset;
  d.device_value_offset = m.device_value_offset;
  d.dtype_value_offset = m.dtype_value_offset;
  d.plain_refcount = m.plain_refcount;
  d.tensor_slot_size = m.tensor_slot_size;
  d.self_name_offset = m.self_name_offset;
  d.self_count_offset = m.self_count_offset;
  d.str_flags_offset = m.str_flags_offset;
  d.str_inline_mask = m.str_inline_mask;
  d.str_length_offset = m.str_length_offset;
  d.str_inline_data_offset = m.str_inline_data_offset;
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

struct HostCode {
  CodeBlock block;
};

void ReleaseHostCode(void* code) {
  auto* host_code = static_cast<HostCode*>(code);
  Free(host_code->block);
  delete host_code;
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
  pieces.push_back({model.count_reached != nullptr ? &gen::k_stencil_host_entry_counted
                                                   : &gen::k_stencil_host_entry});
  auto argument_piece = [&](size_t i) {
    Piece piece{ArgumentStencil(FormOf(FlatParamOf(plan, i)->conversion))};
    piece.object_offset = static_cast<int64_t>(sizeof(void*) * i);
    piece.offset = static_cast<int64_t>(sizeof(TVMFFIAny) * i);
    return piece;
  };
  for (size_t i = 0; i < num_args; ++i) {
    if (FormOf(FlatParamOf(plan, i)->conversion) != InlineForm::kTensor) {
      pieces.push_back(argument_piece(i));
    }
  }
  for (size_t t = 0; t < tensors.size(); ++t) {
    Piece piece = argument_piece(tensors[t]);
    piece.index = static_cast<int64_t>(t);
    pieces.push_back(piece);
  }
  // The call: into a copy of the function's thunk chain when the stencil thunks cover its plan,
  // else through its packed entry.
  LinkTargets targets;
  std::vector<Piece> thunk;
  std::string thunk_why;
  targets.fail =
      AppendThunkPieces(fn, /*count_calls=*/false, /*with_entry=*/false, &thunk, &thunk_why);
  Piece call{targets.fail != LinkTargets::kNone ? &gen::k_stencil_host_call_chain
                                                : &gen::k_stencil_host_call};
  call.index = static_cast<int64_t>(tensors.size());
  pieces.push_back(call);
  for (size_t i = 0; i + 1 < pieces.size(); ++i) pieces[i].falls_through = true;
  if (targets.fail != LinkTargets::kNone) {
    targets.chain = pieces.size();
    targets.fail += pieces.size();
    pieces.insert(pieces.end(), thunk.begin(), thunk.end());
  }

  const FFIJITHostStencilData data = DataOf(fn, model, flags);
  auto hole_value = [](const void* context, Hole hole, uint64_t* value) {
    return ThunkHoleValue(static_cast<const BoundFunction*>(context), /*count_calls=*/false, hole,
                          value);
  };
  LinkedCode code;
  if (!LinkStencils(pieces, targets, hole_value, fn, &data, sizeof data,
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
