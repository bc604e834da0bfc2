// Host entry code generation: type checks and inline conversions of the host's objects into a
// stack array of TVMFFIAny, the call of the function's thunk (inlined by the light pipeline, which
// then folds the array away), and the result boxed.
//
// Every check comes before any conversion that holds something (a borrowed tensor), so a miss
// leaves for the host's fallback with nothing to undo, except in the tensor phase, whose misses
// release the tensors borrowed before them. Strings and tensors are stored with constant tags, so
// the inlined thunk's tag checks fold as well.
#include "orc/codegen/host_entry_codegen.h"

#include <cstdint>
#include <vector>

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

namespace ffijit::orc {
namespace {

// What the entry does for one argument, by its parameter's conversion.
enum class InlineForm {
  kInt,       // an exact int (the thunk range-checks the narrow ones)
  kFloat,     // an exact float, or an exact int
  kBool,      // True or False
  kPointer,   // None (NULL), or a pointer object through model.pointer_to_any
  kStr,       // an exact str, through model.str_data
  kDevice,    // the host's Device object
  kDataType,  // the host's DataType object
  kTensor,    // anything model.borrow_tensor accepts
  kNone,      // no inline conversion: the function gets no entry
};

InlineForm FormOf(Conversion c) {
  if (IsIntegerConversion(c)) return InlineForm::kInt;
  if (IsFloatConversion(c)) return InlineForm::kFloat;
  switch (c) {
    case Conversion::kBool:
      return InlineForm::kBool;
    case Conversion::kOpaquePtr:
      return InlineForm::kPointer;
    case Conversion::kStr:
      return InlineForm::kStr;
    case Conversion::kDevice:
      return InlineForm::kDevice;
    case Conversion::kDataType:
      return InlineForm::kDataType;
    case Conversion::kTensor:
      return InlineForm::kTensor;
    default:
      return InlineForm::kNone;
  }
}

// The parameter of packed argument `i` when it is one flat parameter, else nullptr.
const NativeParam* FlatParamOf(const CallPlan& plan, size_t i) {
  const PackedArg& arg = plan.args[i];
  if (arg.num_params != 1) return nullptr;
  const NativeParam& p = plan.params[static_cast<size_t>(arg.first_param)];
  return p.path_size == 0 && p.position == static_cast<int32_t>(i) ? &p : nullptr;
}

}  // namespace

std::string HostEntryUnsupportedReason(const CallPlan& plan) {
  // A host entry checks its arguments in packed order, the other executors in native order: with
  // the leaves permuted, the first error reported would differ.
  for (size_t n = 0; n < plan.params.size(); ++n) {
    if (n > 0 && plan.params[n].position < plan.params[n - 1].position) {
      return "its arguments' leaves are out of native order";
    }
  }
  for (size_t i = 0; i < plan.args.size(); ++i) {
    const NativeParam* p = FlatParamOf(plan, i);
    if (p == nullptr) {
      return "argument #" + std::to_string(i) + " `" + plan.args[i].type_text +
             "` is a structure (host entries convert flat arguments only)";
    }
    if (FormOf(p->conversion) == InlineForm::kNone) {
      return "argument #" + std::to_string(i) + " `" + p->type_text +
             "` has no inline conversion in a host entry";
    }
  }
  return "";
}

// Strs shorter than this are scanned for a NUL in line, longer ones by memchr.
constexpr uint64_t kShortStrBytes = 32;

std::string EmitHostEntry(const CallPlan& plan, const void* function, const FFIJITHostModel& model,
                          int flags, llvm::Function* thunk, llvm::Module& module,
                          const std::string& symbol) {
  std::string reason = HostEntryUnsupportedReason(plan);
  if (!reason.empty()) return reason;
  if (thunk == nullptr) return "no thunk to call";
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* i8 = b.getInt8Ty();
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* f64 = b.getDoubleTy();
  llvm::Type* ptr = b.getPtrTy();
  auto* entry_type = llvm::FunctionType::get(ptr, {ptr, ptr, i64, ptr}, false);
  auto* fn = llvm::Function::Create(entry_type, llvm::Function::ExternalLinkage, symbol, module);
  llvm::Argument* self = fn->getArg(0);
  llvm::Argument* args = fn->getArg(1);
  llvm::Argument* nargs = fn->getArg(2);
  llvm::Argument* kwnames = fn->getArg(3);

  auto constant = [&](const void* address) -> llvm::Value* {
    return b.CreateIntToPtr(b.getInt64(reinterpret_cast<uintptr_t>(address)), ptr);
  };
  // A host function, called through its address.
  auto call = [&](auto* host_function, llvm::FunctionType* type,
                  std::initializer_list<llvm::Value*> operands) {
    return b.CreateCall(type, constant(reinterpret_cast<const void*>(host_function)), operands);
  };
  auto block = [&](const char* name) { return llvm::BasicBlock::Create(ctx, name, fn); };
  // libc's memchr, resolved from the process like every symbol the JIT's code names.
  auto memchr_function = [&] {
    return module.getOrInsertFunction("memchr",
                                      llvm::FunctionType::get(ptr, {ptr, i32, i64}, false));
  };
  llvm::MDNode* likely = llvm::MDBuilder(ctx).createBranchWeights(1000, 1);
  auto at = [&](llvm::Value* base, int64_t offset) {
    return b.CreateConstInBoundsGEP1_64(i8, base, static_cast<uint64_t>(offset));
  };

  // Whether `length` bytes at the 8-aligned `data` (a NUL after them) hold a NUL: a word at a
  // time, the classic has-a-zero-byte test; the last word's bytes past the end are set first.
  // Aligned words that hold a byte of the string never cross a page, so no read can fault.
  const bool little_endian = module.getDataLayout().isLittleEndian();
  auto emit_nul_scan = [&](llvm::Value* data, llvm::Value* length, llvm::BasicBlock* none,
                           llvm::BasicBlock* found) {
    const uint64_t ones = 0x0101010101010101ull;
    const uint64_t highs = 0x8080808080808080ull;
    auto has_zero_byte = [&](llvm::Value* word) {
      llvm::Value* bits = b.CreateAnd(
          b.CreateAnd(b.CreateSub(word, b.getInt64(ones)), b.CreateNot(word)), b.getInt64(highs));
      return b.CreateICmpNE(bits, b.getInt64(0));
    };
    llvm::Value* words = b.CreateLShr(length, 3);
    llvm::BasicBlock* before = b.GetInsertBlock();
    llvm::BasicBlock* loop = block("nul_scan");
    llvm::BasicBlock* body = block("nul_scan_word");
    llvm::BasicBlock* tail = block("nul_scan_tail");
    llvm::BasicBlock* last = block("nul_scan_last");
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    llvm::PHINode* index = b.CreatePHI(i64, 2);
    index->addIncoming(b.getInt64(0), before);
    b.CreateCondBr(b.CreateICmpULT(index, words), body, tail, likely);
    b.SetInsertPoint(body);
    llvm::Value* word =
        b.CreateAlignedLoad(i64, b.CreateInBoundsGEP(i64, data, index), llvm::Align(8));
    index->addIncoming(b.CreateAdd(index, b.getInt64(1)), body);
    b.CreateCondBr(has_zero_byte(word), found, loop,
                   llvm::MDBuilder(ctx).createBranchWeights(1, 1000));
    b.SetInsertPoint(tail);
    llvm::Value* bytes_left = b.CreateAnd(length, b.getInt64(7));
    b.CreateCondBr(b.CreateICmpEQ(bytes_left, b.getInt64(0)), none, last);
    b.SetInsertPoint(last);
    llvm::Value* end_word =
        b.CreateAlignedLoad(i64, b.CreateInBoundsGEP(i64, data, words), llvm::Align(8));
    llvm::Value* shift = b.CreateShl(bytes_left, 3);
    llvm::Value* past_end = little_endian ? b.CreateShl(b.getInt64(~0ull), shift)
                                          : b.CreateLShr(b.getInt64(~0ull), shift);
    b.CreateCondBr(has_zero_byte(b.CreateOr(end_word, past_end)), found, none,
                   llvm::MDBuilder(ctx).createBranchWeights(1, 1000));
  };

  const size_t num_args = plan.args.size();
  b.SetInsertPoint(block("entry"));
  llvm::Value* anys =
      b.CreateAlloca(llvm::ArrayType::get(i64, 2 * (num_args ? num_args : 1)), nullptr, "anys");
  llvm::Value* result = b.CreateAlloca(llvm::ArrayType::get(i64, 2), nullptr, "result");
  // Where the host writes a pointer argument's Any: apart from `anys`, which then never escapes.
  llvm::Value* host_any = b.CreateAlloca(llvm::ArrayType::get(i64, 2), nullptr, "host_any");
  std::vector<size_t> tensor_args;
  for (size_t i = 0; i < num_args; ++i) {
    if (FormOf(FlatParamOf(plan, i)->conversion) == InlineForm::kTensor) tensor_args.push_back(i);
  }
  llvm::Value* slots = nullptr;
  if (!tensor_args.empty()) {
    slots = b.CreateAlloca(
        llvm::ArrayType::get(i64,
                             tensor_args.size() * static_cast<size_t>(model.tensor_slot_size) / 8),
        nullptr, "tensor_slots");
  }
  // TVMFFIAny's layout, as c_api.h declares it for both revisions.
  constexpr int64_t kAnySize = sizeof(TVMFFIAny);
  constexpr int64_t kPaddingOffset = offsetof(TVMFFIAny, zero_padding);
  constexpr int64_t kValueOffset = offsetof(TVMFFIAny, v_int64);
  auto any_at = [&](size_t i) { return at(anys, kAnySize * static_cast<int64_t>(i)); };
  // Each argument's Any is kept as SSA values (a type index and a 64-bit payload) while the
  // arguments are converted, and stored into the array only after the last host call, right
  // before the inlined thunk reads it: no call in between may touch the array, so the optimizer
  // forwards the stores into the thunk's loads, folds its type checks and drops its fallback.
  struct AnyIncoming {
    llvm::BasicBlock* from;
    llvm::Value* type_index;
    llvm::Value* payload;
  };
  std::vector<std::vector<AnyIncoming>> pending(num_args);
  std::vector<std::pair<llvm::Value*, llvm::Value*>> any_values(num_args, {nullptr, nullptr});
  // Argument i's Any when the current block branches on to the next argument.
  auto set_any_value = [&](size_t i, llvm::Value* type_index, llvm::Value* value) {
    llvm::Value* payload = value->getType()->isPointerTy()  ? b.CreatePtrToInt(value, i64)
                           : value->getType()->isDoubleTy() ? b.CreateBitCast(value, i64)
                                                            : value;
    pending[i].push_back({b.GetInsertBlock(), type_index, payload});
  };
  auto set_any = [&](size_t i, int32_t type_index, llvm::Value* value) {
    set_any_value(i, b.getInt32(static_cast<uint32_t>(type_index)), value);
  };
  // At the head of the block the pending Anys' branches meet: their values, merged.
  auto merge_pending = [&] {
    for (size_t i = 0; i < num_args; ++i) {
      if (pending[i].empty()) continue;
      if (pending[i].size() == 1) {
        any_values[i] = {pending[i][0].type_index, pending[i][0].payload};
      } else {
        llvm::PHINode* type_index = b.CreatePHI(i32, static_cast<unsigned>(pending[i].size()));
        llvm::PHINode* payload = b.CreatePHI(i64, static_cast<unsigned>(pending[i].size()));
        for (const AnyIncoming& in : pending[i]) {
          type_index->addIncoming(in.type_index, in.from);
          payload->addIncoming(in.payload, in.from);
        }
        any_values[i] = {type_index, payload};
      }
      pending[i].clear();
    }
  };

  llvm::BasicBlock* generic = block("generic");
  llvm::BasicBlock* next = block("arg0");
  b.CreateCondBr(b.CreateAnd(b.CreateICmpEQ(kwnames, llvm::ConstantPointerNull::get(
                                                         llvm::cast<llvm::PointerType>(ptr))),
                             b.CreateICmpEQ(nargs, b.getInt64(num_args))),
                 next, generic, likely);

  auto* int_value_type = llvm::FunctionType::get(i64, {ptr}, false);
  auto* no_arg_ptr_type = llvm::FunctionType::get(ptr, {}, false);
  auto* void_type = llvm::FunctionType::get(b.getVoidTy(), {}, false);
  // An exact int at argument i, already type-checked: its value into the Any, or the generic path
  // when it does not fit int64 (the host error that says so is cleared).
  auto emit_int = [&](size_t i, llvm::Value* obj, llvm::BasicBlock* done) {
    llvm::Value* value = call(model.int_value, int_value_type, {obj});
    llvm::BasicBlock* maybe_error = block("int_maybe_error");
    llvm::BasicBlock* store = block("int_store");
    llvm::BasicBlock* clear = block("int_clear");
    b.CreateCondBr(b.CreateICmpEQ(value, b.getInt64(static_cast<uint64_t>(-1))), maybe_error, store,
                   llvm::MDBuilder(ctx).createBranchWeights(1, 1000));
    b.SetInsertPoint(maybe_error);
    b.CreateCondBr(b.CreateIsNull(call(model.error_occurred, no_arg_ptr_type, {})), store, clear);
    b.SetInsertPoint(clear);
    call(model.clear_error, void_type, {});
    b.CreateBr(generic);
    b.SetInsertPoint(store);
    set_any(i, kTVMFFIInt, value);
    b.CreateBr(done);
  };

  auto* to_any_type = llvm::FunctionType::get(i32, {ptr, ptr}, false);
  for (size_t i = 0; i < num_args; ++i) {
    const NativeParam& param = *FlatParamOf(plan, i);
    b.SetInsertPoint(next);
    merge_pending();
    next = block(("arg" + std::to_string(i + 1)).c_str());
    llvm::Value* obj = b.CreateLoad(ptr, at(args, static_cast<int64_t>(sizeof(void*) * i)), "obj");
    auto type_of = [&] { return b.CreateLoad(ptr, at(obj, model.type_offset), "type"); };
    switch (FormOf(param.conversion)) {
      case InlineForm::kInt: {
        llvm::BasicBlock* is_int = block("is_int");
        b.CreateCondBr(b.CreateICmpEQ(type_of(), constant(model.int_type)), is_int, generic,
                       likely);
        b.SetInsertPoint(is_int);
        emit_int(i, obj, next);
        break;
      }
      case InlineForm::kFloat: {
        llvm::Value* type = type_of();
        llvm::BasicBlock* is_float = block("is_float");
        llvm::BasicBlock* not_float = block("not_float");
        llvm::BasicBlock* is_int = block("is_int");
        b.CreateCondBr(b.CreateICmpEQ(type, constant(model.float_type)), is_float, not_float,
                       likely);
        b.SetInsertPoint(is_float);
        set_any(i, kTVMFFIFloat, b.CreateLoad(f64, at(obj, model.float_value_offset)));
        b.CreateBr(next);
        b.SetInsertPoint(not_float);
        b.CreateCondBr(b.CreateICmpEQ(type, constant(model.int_type)), is_int, generic);
        b.SetInsertPoint(is_int);
        emit_int(i, obj, next);
        break;
      }
      case InlineForm::kBool: {
        llvm::BasicBlock* not_true = block("not_true");
        llvm::BasicBlock* is_true = block("is_true");
        llvm::BasicBlock* is_false = block("is_false");
        b.CreateCondBr(b.CreateICmpEQ(obj, constant(model.true_value)), is_true, not_true);
        b.SetInsertPoint(is_true);
        set_any(i, kTVMFFIBool, b.getInt64(1));
        b.CreateBr(next);
        b.SetInsertPoint(not_true);
        b.CreateCondBr(b.CreateICmpEQ(obj, constant(model.false_value)), is_false, generic);
        b.SetInsertPoint(is_false);
        set_any(i, kTVMFFIBool, b.getInt64(0));
        b.CreateBr(next);
        break;
      }
      case InlineForm::kPointer: {
        llvm::BasicBlock* is_none = block("is_none");
        llvm::BasicBlock* not_none = block("not_none");
        b.CreateCondBr(b.CreateICmpEQ(obj, constant(model.none)), is_none, not_none);
        b.SetInsertPoint(is_none);
        set_any(i, kTVMFFINone, b.getInt64(0));
        b.CreateBr(next);
        b.SetInsertPoint(not_none);
        // The host writes the Any; read back, it joins the others.
        llvm::BasicBlock* taken_block = block("pointer_taken");
        llvm::Value* taken = call(model.pointer_to_any, to_any_type, {obj, host_any});
        b.CreateCondBr(b.CreateICmpNE(taken, b.getInt32(0)), taken_block, generic, likely);
        b.SetInsertPoint(taken_block);
        set_any_value(i, b.CreateLoad(i32, host_any),
                      b.CreateLoad(i64, at(host_any, kValueOffset)));
        b.CreateBr(next);
        break;
      }
      case InlineForm::kStr: {
        // Always as a borrowed C string: at a `str` parameter the generic path's small-string
        // form reaches the native as the same bytes.
        llvm::BasicBlock* is_str = block("is_str");
        llvm::BasicBlock* store = block("str_store");
        b.CreateCondBr(b.CreateICmpEQ(type_of(), constant(model.str_type)), is_str, generic,
                       likely);
        b.SetInsertPoint(is_str);
        llvm::BasicBlock* by_host = block("str_by_host");
        llvm::Value* inline_data = nullptr;
        llvm::BasicBlock* inline_scanned = nullptr;
        if (model.str_flags_offset >= 0) {
          // Bytes in the object: read in place, and scanned for a NUL the native would stop at.
          llvm::BasicBlock* in_object = block("str_in_object");
          llvm::BasicBlock* no_nul = block("str_no_nul");
          const uint32_t mask = model.str_inline_mask;
          llvm::Value* state = b.CreateLoad(i32, at(obj, model.str_flags_offset));
          b.CreateCondBr(b.CreateICmpEQ(b.CreateAnd(state, b.getInt32(mask)), b.getInt32(mask)),
                         in_object, by_host, likely);
          b.SetInsertPoint(in_object);
          inline_data = at(obj, model.str_inline_data_offset);
          llvm::Value* length = b.CreateLoad(i64, at(obj, model.str_length_offset));
          // Short strs a word at a time in line (when the bytes are 8-aligned), longer ones by
          // libc's vectorised memchr: measured, each is the faster below and above 32 bytes.
          llvm::BasicBlock* by_memchr = block("str_memchr");
          if (model.str_inline_data_offset % 8 == 0) {
            llvm::BasicBlock* short_str = block("str_short");
            b.CreateCondBr(b.CreateICmpULT(length, b.getInt64(kShortStrBytes)), short_str,
                           by_memchr);
            b.SetInsertPoint(short_str);
            emit_nul_scan(inline_data, length, no_nul, generic);
          } else {
            b.CreateBr(by_memchr);
          }
          b.SetInsertPoint(by_memchr);
          llvm::Value* nul = b.CreateCall(memchr_function(), {inline_data, b.getInt32(0), length});
          b.CreateCondBr(b.CreateIsNull(nul), no_nul, generic, likely);
          b.SetInsertPoint(no_nul);
          b.CreateBr(store);
          inline_scanned = no_nul;
        } else {
          b.CreateBr(by_host);
        }
        b.SetInsertPoint(by_host);
        llvm::Value* data = call(model.str_data, llvm::FunctionType::get(ptr, {ptr}, false), {obj});
        b.CreateCondBr(b.CreateIsNotNull(data), store, generic, likely);
        b.SetInsertPoint(store);
        llvm::Value* bytes = data;
        if (inline_data != nullptr) {
          llvm::PHINode* either = b.CreatePHI(ptr, 2);
          either->addIncoming(inline_data, inline_scanned);
          either->addIncoming(data, by_host);
          bytes = either;
        }
        set_any(i, kTVMFFIRawStr, bytes);
        b.CreateBr(next);
        break;
      }
      case InlineForm::kDevice:
      case InlineForm::kDataType: {
        const bool device = FormOf(param.conversion) == InlineForm::kDevice;
        llvm::BasicBlock* matches = block("is_value_type");
        b.CreateCondBr(
            b.CreateICmpEQ(type_of(), constant(device ? model.device_type : model.dtype_type)),
            matches, generic, likely);
        b.SetInsertPoint(matches);
        llvm::Value* value =
            device
                ? static_cast<llvm::Value*>(b.CreateLoad(i64, at(obj, model.device_value_offset)))
                : b.CreateZExt(b.CreateLoad(i32, at(obj, model.dtype_value_offset)), i64);
        set_any(i, device ? kTVMFFIDevice : kTVMFFIDataType, value);
        b.CreateBr(next);
        break;
      }
      case InlineForm::kTensor:  // borrowed below, once every other argument has passed
        b.CreateBr(next);
        break;
      case InlineForm::kNone:
        fn->eraseFromParent();
        return "argument #" + std::to_string(i) + " has no inline conversion";
    }
  }

  auto* release_type = llvm::FunctionType::get(b.getVoidTy(), {ptr}, false);
  auto slot_at = [&](size_t t) {
    return at(slots, static_cast<int64_t>(t) * model.tensor_slot_size);
  };
  auto release_tensors = [&](size_t count) {
    for (size_t t = 0; t < count; ++t) call(model.release_tensor, release_type, {slot_at(t)});
  };
  auto* borrow_type = llvm::FunctionType::get(ptr, {ptr, ptr}, false);
  for (size_t t = 0; t < tensor_args.size(); ++t) {
    b.SetInsertPoint(next);
    merge_pending();
    llvm::BasicBlock* borrowed = block("tensor_borrowed");
    next = block("tensor_stored");
    const size_t i = tensor_args[t];
    llvm::Value* obj = b.CreateLoad(ptr, at(args, static_cast<int64_t>(sizeof(void*) * i)), "obj");
    llvm::Value* tensor = call(model.borrow_tensor, borrow_type, {obj, slot_at(t)});
    llvm::BasicBlock* missed = t == 0 ? generic : block("tensor_missed");
    b.CreateCondBr(b.CreateIsNotNull(tensor), borrowed, missed, likely);
    b.SetInsertPoint(borrowed);
    set_any(i, kTVMFFIDLTensorPtr, tensor);
    b.CreateBr(next);
    if (t != 0) {
      b.SetInsertPoint(missed);
      release_tensors(t);
      b.CreateBr(generic);
    }
  }

  // The call.
  b.SetInsertPoint(next);
  merge_pending();
  const bool release_lock = (flags & kFFIJITHostEntryReleaseLock) != 0;
  llvm::Value* lock_state = release_lock ? call(model.release_lock, no_arg_ptr_type, {}) : nullptr;
  // Which call holds the host's lock, for a thread that waits for it (model.lock_holder): stored
  // before the arguments' Anys, so that no atomic store stands between them and the inlined thunk
  // that reads them (between, it kept their loads from folding: 1.1-1.2x on some signatures).
  const bool record_holder = !release_lock && model.lock_holder != nullptr;
  auto relaxed_store = [&](llvm::Value* value, llvm::Value* where) {
    llvm::StoreInst* store = b.CreateStore(value, where);
    store->setAtomic(llvm::AtomicOrdering::Monotonic);
    store->setAlignment(llvm::Align(8));
  };
  llvm::Value* previous_holder = nullptr;
  if (record_holder) {
    llvm::Value* holder = constant(model.lock_holder);
    previous_holder = b.CreateAlignedLoad(ptr, holder, llvm::Align(8));
    relaxed_store(b.CreateLoad(ptr, at(self, model.self_name_offset)), holder);
    llvm::Value* calls = constant(model.lock_calls);
    relaxed_store(b.CreateAdd(b.CreateAlignedLoad(i64, calls, llvm::Align(8)), b.getInt64(1)),
                  calls);
  }
  for (size_t i = 0; i < num_args; ++i) {
    llvm::Value* any = any_at(i);
    b.CreateStore(any_values[i].first, any);
    b.CreateStore(b.getInt32(0), at(any, kPaddingOffset));
    b.CreateStore(any_values[i].second, at(any, kValueOffset));
  }
  // The function: where the host's `self` holds it (code shared by a signature's functions), or
  // this one function's address.
  llvm::Value* handle = model.self_function_offset >= 0
                            ? static_cast<llvm::Value*>(
                                  b.CreateLoad(ptr, at(self, model.self_function_offset), "handle"))
                            : constant(function);
  b.CreateStore(b.getInt64(0), result);
  b.CreateStore(b.getInt64(0), at(result, kValueOffset));
  auto* safe_call_type = llvm::FunctionType::get(i32, {ptr, ptr, i32, ptr}, false);
  llvm::Value* rc = b.CreateCall(
      safe_call_type, thunk, {handle, anys, b.getInt32(static_cast<uint32_t>(num_args)), result});
  // The result is read before the holder is restored: an atomic store between the inlined thunk's
  // result and these loads would keep them, and the kind switch below, from folding.
  llvm::Value* result_type = b.CreateLoad(i32, result);
  llvm::Value* result_value = b.CreateLoad(i64, at(result, kValueOffset));
  if (record_holder) relaxed_store(previous_holder, constant(model.lock_holder));
  if (release_lock) {
    call(model.acquire_lock, llvm::FunctionType::get(b.getVoidTy(), {ptr}, false), {lock_state});
  }
  release_tensors(tensor_args.size());
  llvm::BasicBlock* failed = block("failed");
  llvm::BasicBlock* box = block("box");
  b.CreateCondBr(b.CreateICmpEQ(rc, b.getInt32(0)), box, failed, likely);
  b.SetInsertPoint(failed);
  b.CreateRet(call(model.raise_error, llvm::FunctionType::get(ptr, {i32}, false), {rc}));

  // The result: Int, Float, None and Bool boxed here, anything else by the host.
  b.SetInsertPoint(box);
  llvm::Value* type_index = result_type;
  llvm::BasicBlock* other = block("box_other");
  llvm::BasicBlock* as_int = block("box_int");
  llvm::BasicBlock* as_float = block("box_float");
  llvm::BasicBlock* as_none = block("box_none");
  llvm::BasicBlock* as_bool = block("box_bool");
  llvm::SwitchInst* kinds = b.CreateSwitch(type_index, other, 4);
  kinds->addCase(b.getInt32(kTVMFFIInt), as_int);
  kinds->addCase(b.getInt32(kTVMFFIFloat), as_float);
  kinds->addCase(b.getInt32(kTVMFFINone), as_none);
  kinds->addCase(b.getInt32(kTVMFFIBool), as_bool);
  b.SetInsertPoint(as_int);
  b.CreateRet(call(model.new_int, llvm::FunctionType::get(ptr, {i64}, false), {result_value}));
  b.SetInsertPoint(as_float);
  b.CreateRet(call(model.new_float, llvm::FunctionType::get(ptr, {f64}, false),
                   {b.CreateBitCast(result_value, f64)}));
  auto new_reference = [&](llvm::Value* obj) -> llvm::Value* {
    if (model.plain_refcount == 0) {
      return call(model.new_ref, llvm::FunctionType::get(ptr, {ptr}, false), {obj});
    }
    b.CreateStore(b.CreateAdd(b.CreateLoad(i64, obj), b.getInt64(1)), obj);
    return obj;
  };
  b.SetInsertPoint(as_none);
  b.CreateRet(new_reference(constant(model.none)));
  b.SetInsertPoint(as_bool);
  b.CreateRet(
      new_reference(b.CreateSelect(b.CreateICmpNE(result_value, b.getInt64(0)),
                                   constant(model.true_value), constant(model.false_value))));
  b.SetInsertPoint(other);
  b.CreateRet(call(model.box_result, llvm::FunctionType::get(ptr, {ptr}, false), {result}));

  // The generic path, as a tail call: the host sees its own arguments and this frame is gone.
  b.SetInsertPoint(generic);
  llvm::CallInst* fallback =
      b.CreateCall(entry_type, constant(reinterpret_cast<const void*>(model.fallback)),
                   {self, args, nargs, kwnames});
  fallback->setTailCallKind(llvm::CallInst::TCK_MustTail);
  b.CreateRet(fallback);

  std::string verify;
  llvm::raw_string_ostream out(verify);
  if (llvm::verifyFunction(*fn, &out)) {
    fn->eraseFromParent();
    return "the host entry's IR does not verify: " + verify;
  }
  return "";
}

}  // namespace ffijit::orc
