// Host entry code generation, each argument's part: the exact-type check its parameter's
// conversion calls for and the inline conversion into the TVMFFIAny the host's generic path would
// make (host_entry_emitter.h).
#include <cstdint>
#include <string>

#include "orc/codegen/host_entry_emitter.h"

namespace ffijit::orc {

void HostEntryEmitter::EmitInt(size_t i, llvm::Value* obj, llvm::BasicBlock* done) {
  llvm::Value* value =
      CallHost(model_.int_value, llvm::FunctionType::get(i64_, {ptr_}, false), {obj});
  llvm::BasicBlock* maybe_error = Block("int_maybe_error");
  llvm::BasicBlock* store = Block("int_store");
  llvm::BasicBlock* clear = Block("int_clear");
  b_.CreateCondBr(b_.CreateICmpEQ(value, b_.getInt64(static_cast<uint64_t>(-1))), maybe_error,
                  store, Unlikely());
  b_.SetInsertPoint(maybe_error);
  b_.CreateCondBr(b_.CreateIsNull(CallHost(model_.error_occurred,
                                           llvm::FunctionType::get(ptr_, {}, false), {})),
                  store, clear);
  b_.SetInsertPoint(clear);
  CallHost(model_.clear_error, llvm::FunctionType::get(b_.getVoidTy(), {}, false), {});
  b_.CreateBr(generic_);
  b_.SetInsertPoint(store);
  SetAny(i, kTVMFFIInt, value);
  b_.CreateBr(done);
}

void HostEntryEmitter::EmitFloat(size_t i, llvm::Value* obj) {
  llvm::Value* type = TypeOf(obj);
  llvm::BasicBlock* is_float = Block("is_float");
  llvm::BasicBlock* not_float = Block("not_float");
  llvm::BasicBlock* is_int = Block("is_int");
  b_.CreateCondBr(b_.CreateICmpEQ(type, Constant(model_.float_type)), is_float, not_float, likely_);
  b_.SetInsertPoint(is_float);
  SetAny(i, kTVMFFIFloat, b_.CreateLoad(f64_, At(obj, model_.float_value_offset)));
  b_.CreateBr(next_);
  b_.SetInsertPoint(not_float);
  b_.CreateCondBr(b_.CreateICmpEQ(type, Constant(model_.int_type)), is_int, generic_);
  b_.SetInsertPoint(is_int);
  EmitInt(i, obj, next_);
}

void HostEntryEmitter::EmitBool(size_t i, llvm::Value* obj) {
  llvm::BasicBlock* not_true = Block("not_true");
  llvm::BasicBlock* is_true = Block("is_true");
  llvm::BasicBlock* is_false = Block("is_false");
  b_.CreateCondBr(b_.CreateICmpEQ(obj, Constant(model_.true_value)), is_true, not_true);
  b_.SetInsertPoint(is_true);
  SetAny(i, kTVMFFIBool, b_.getInt64(1));
  b_.CreateBr(next_);
  b_.SetInsertPoint(not_true);
  b_.CreateCondBr(b_.CreateICmpEQ(obj, Constant(model_.false_value)), is_false, generic_);
  b_.SetInsertPoint(is_false);
  SetAny(i, kTVMFFIBool, b_.getInt64(0));
  b_.CreateBr(next_);
}

void HostEntryEmitter::EmitPointer(size_t i, llvm::Value* obj) {
  llvm::BasicBlock* is_none = Block("is_none");
  llvm::BasicBlock* not_none = Block("not_none");
  b_.CreateCondBr(b_.CreateICmpEQ(obj, Constant(model_.none)), is_none, not_none);
  b_.SetInsertPoint(is_none);
  SetAny(i, kTVMFFINone, b_.getInt64(0));
  b_.CreateBr(next_);
  b_.SetInsertPoint(not_none);
  // The host writes the Any; read back, it joins the others.
  llvm::BasicBlock* taken_block = Block("pointer_taken");
  llvm::Value* taken = CallHost(
      model_.pointer_to_any, llvm::FunctionType::get(i32_, {ptr_, ptr_}, false), {obj, host_any_});
  b_.CreateCondBr(b_.CreateICmpNE(taken, b_.getInt32(0)), taken_block, generic_, likely_);
  b_.SetInsertPoint(taken_block);
  SetAnyValue(i, b_.CreateLoad(i32_, host_any_), b_.CreateLoad(i64_, At(host_any_, kValueOffset)));
  b_.CreateBr(next_);
}

void HostEntryEmitter::EmitStr(size_t i, llvm::Value* obj) {
  llvm::BasicBlock* is_str = Block("is_str");
  llvm::BasicBlock* store = Block("str_store");
  b_.CreateCondBr(b_.CreateICmpEQ(TypeOf(obj), Constant(model_.str_type)), is_str, generic_,
                  likely_);
  b_.SetInsertPoint(is_str);
  llvm::BasicBlock* by_host = Block("str_by_host");
  llvm::Value* inline_data = nullptr;
  llvm::BasicBlock* inline_scanned = nullptr;
  if (model_.str_flags_offset >= 0) {
    // Bytes in the object: read in place, and scanned for a NUL the native would stop at.
    llvm::BasicBlock* in_object = Block("str_in_object");
    llvm::BasicBlock* no_nul = Block("str_no_nul");
    const uint32_t mask = model_.str_inline_mask;
    llvm::Value* state = b_.CreateLoad(i32_, At(obj, model_.str_flags_offset));
    b_.CreateCondBr(b_.CreateICmpEQ(b_.CreateAnd(state, b_.getInt32(mask)), b_.getInt32(mask)),
                    in_object, by_host, likely_);
    b_.SetInsertPoint(in_object);
    inline_data = At(obj, model_.str_inline_data_offset);
    llvm::Value* length = b_.CreateLoad(i64_, At(obj, model_.str_length_offset));
    // Short strs a word at a time in line (when the bytes are 8-aligned), longer ones by
    // libc's vectorised memchr: measured, each is the faster below and above 32 bytes.
    llvm::BasicBlock* by_memchr = Block("str_memchr");
    if (model_.str_inline_data_offset % 8 == 0) {
      llvm::BasicBlock* short_str = Block("str_short");
      b_.CreateCondBr(b_.CreateICmpULT(length, b_.getInt64(kShortStrBytes)), short_str, by_memchr);
      b_.SetInsertPoint(short_str);
      EmitNulScan(inline_data, length, no_nul, generic_);
    } else {
      b_.CreateBr(by_memchr);
    }
    b_.SetInsertPoint(by_memchr);
    llvm::Value* nul = b_.CreateCall(Memchr(), {inline_data, b_.getInt32(0), length});
    b_.CreateCondBr(b_.CreateIsNull(nul), no_nul, generic_, likely_);
    b_.SetInsertPoint(no_nul);
    b_.CreateBr(store);
    inline_scanned = no_nul;
  } else {
    b_.CreateBr(by_host);
  }
  b_.SetInsertPoint(by_host);
  llvm::Value* data =
      CallHost(model_.str_data, llvm::FunctionType::get(ptr_, {ptr_}, false), {obj});
  b_.CreateCondBr(b_.CreateIsNotNull(data), store, generic_, likely_);
  b_.SetInsertPoint(store);
  llvm::Value* bytes = data;
  if (inline_data != nullptr) {
    llvm::PHINode* either = b_.CreatePHI(ptr_, 2);
    either->addIncoming(inline_data, inline_scanned);
    either->addIncoming(data, by_host);
    bytes = either;
  }
  SetAny(i, kTVMFFIRawStr, bytes);
  b_.CreateBr(next_);
}

void HostEntryEmitter::EmitNulScan(llvm::Value* data, llvm::Value* length, llvm::BasicBlock* none,
                                   llvm::BasicBlock* found) {
  const uint64_t ones = 0x0101010101010101ull;
  const uint64_t highs = 0x8080808080808080ull;
  auto has_zero_byte = [&](llvm::Value* word) {
    llvm::Value* bits =
        b_.CreateAnd(b_.CreateAnd(b_.CreateSub(word, b_.getInt64(ones)), b_.CreateNot(word)),
                     b_.getInt64(highs));
    return b_.CreateICmpNE(bits, b_.getInt64(0));
  };
  llvm::Value* words = b_.CreateLShr(length, 3);
  llvm::BasicBlock* before = b_.GetInsertBlock();
  llvm::BasicBlock* loop = Block("nul_scan");
  llvm::BasicBlock* body = Block("nul_scan_word");
  llvm::BasicBlock* tail = Block("nul_scan_tail");
  llvm::BasicBlock* last = Block("nul_scan_last");
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode* index = b_.CreatePHI(i64_, 2);
  index->addIncoming(b_.getInt64(0), before);
  b_.CreateCondBr(b_.CreateICmpULT(index, words), body, tail, likely_);
  b_.SetInsertPoint(body);
  llvm::Value* word =
      b_.CreateAlignedLoad(i64_, b_.CreateInBoundsGEP(i64_, data, index), llvm::Align(8));
  index->addIncoming(b_.CreateAdd(index, b_.getInt64(1)), body);
  b_.CreateCondBr(has_zero_byte(word), found, loop, Unlikely());
  b_.SetInsertPoint(tail);
  llvm::Value* bytes_left = b_.CreateAnd(length, b_.getInt64(7));
  b_.CreateCondBr(b_.CreateICmpEQ(bytes_left, b_.getInt64(0)), none, last);
  b_.SetInsertPoint(last);
  llvm::Value* end_word =
      b_.CreateAlignedLoad(i64_, b_.CreateInBoundsGEP(i64_, data, words), llvm::Align(8));
  llvm::Value* shift = b_.CreateShl(bytes_left, 3);
  llvm::Value* past_end = little_endian_ ? b_.CreateShl(b_.getInt64(~0ull), shift)
                                         : b_.CreateLShr(b_.getInt64(~0ull), shift);
  b_.CreateCondBr(has_zero_byte(b_.CreateOr(end_word, past_end)), found, none, Unlikely());
}

void HostEntryEmitter::EmitValueType(size_t i, llvm::Value* obj, bool device) {
  llvm::BasicBlock* matches = Block("is_value_type");
  b_.CreateCondBr(
      b_.CreateICmpEQ(TypeOf(obj), Constant(device ? model_.device_type : model_.dtype_type)),
      matches, generic_, likely_);
  b_.SetInsertPoint(matches);
  llvm::Value* value =
      device ? static_cast<llvm::Value*>(b_.CreateLoad(i64_, At(obj, model_.device_value_offset)))
             : b_.CreateZExt(b_.CreateLoad(i32_, At(obj, model_.dtype_value_offset)), i64_);
  SetAny(i, device ? kTVMFFIDevice : kTVMFFIDataType, value);
  b_.CreateBr(next_);
}

}  // namespace ffijit::orc
