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
#include <string>
#include <vector>

#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "orc/codegen/host_entry_emitter.h"

namespace ffijit::orc {

std::string HostEntryEmitter::Emit(const std::string& symbol) {
  entry_type_ = llvm::FunctionType::get(ptr_, {ptr_, ptr_, i64_, ptr_}, false);
  fn_ = llvm::Function::Create(entry_type_, llvm::Function::ExternalLinkage, symbol, module_);
  self_ = fn_->getArg(0);
  args_ = fn_->getArg(1);
  nargs_ = fn_->getArg(2);
  kwnames_ = fn_->getArg(3);
  likely_ = llvm::MDBuilder(ctx_).createBranchWeights(1000, 1);
  little_endian_ = module_.getDataLayout().isLittleEndian();

  EmitPrologue();
  for (size_t i = 0; i < num_args_; ++i) {
    std::string reason = EmitArgument(i);
    if (!reason.empty()) {
      fn_->eraseFromParent();
      return reason;
    }
  }
  EmitTensors();
  EmitCallAndResult();
  EmitFallback();

  std::string verify;
  llvm::raw_string_ostream out(verify);
  if (llvm::verifyFunction(*fn_, &out)) {
    fn_->eraseFromParent();
    return "the host entry's IR does not verify: " + verify;
  }
  return "";
}

void HostEntryEmitter::MergePending() {
  for (size_t i = 0; i < num_args_; ++i) {
    if (pending_[i].empty()) continue;
    if (pending_[i].size() == 1) {
      any_values_[i] = {pending_[i][0].type_index, pending_[i][0].payload};
    } else {
      llvm::PHINode* type_index = b_.CreatePHI(i32_, static_cast<unsigned>(pending_[i].size()));
      llvm::PHINode* payload = b_.CreatePHI(i64_, static_cast<unsigned>(pending_[i].size()));
      for (const AnyIncoming& in : pending_[i]) {
        type_index->addIncoming(in.type_index, in.from);
        payload->addIncoming(in.payload, in.from);
      }
      any_values_[i] = {type_index, payload};
    }
    pending_[i].clear();
  }
}

void HostEntryEmitter::EmitPrologue() {
  b_.SetInsertPoint(Block("entry"));
  anys_ =
      b_.CreateAlloca(llvm::ArrayType::get(i64_, 2 * (num_args_ ? num_args_ : 1)), nullptr, "anys");
  result_ = b_.CreateAlloca(llvm::ArrayType::get(i64_, 2), nullptr, "result");
  // Where the host writes a pointer argument's Any: apart from `anys`, which then never escapes.
  host_any_ = b_.CreateAlloca(llvm::ArrayType::get(i64_, 2), nullptr, "host_any");
  for (size_t i = 0; i < num_args_; ++i) {
    if (FormOf(FlatParamOf(plan_, i)->conversion) == InlineForm::kTensor) {
      tensor_args_.push_back(i);
    }
  }
  if (!tensor_args_.empty()) {
    slots_ = b_.CreateAlloca(
        llvm::ArrayType::get(
            i64_, tensor_args_.size() * static_cast<size_t>(model_.tensor_slot_size) / 8),
        nullptr, "tensor_slots");
  }
  generic_ = Block("generic");
  next_ = Block("arg0");
  b_.CreateCondBr(b_.CreateAnd(b_.CreateICmpEQ(kwnames_, llvm::ConstantPointerNull::get(
                                                             llvm::cast<llvm::PointerType>(ptr_))),
                               b_.CreateICmpEQ(nargs_, b_.getInt64(num_args_))),
                  next_, generic_, likely_);
}

std::string HostEntryEmitter::EmitArgument(size_t i) {
  const NativeParam& param = *FlatParamOf(plan_, i);
  b_.SetInsertPoint(next_);
  MergePending();
  next_ = Block("arg" + std::to_string(i + 1));
  llvm::Value* obj = ArgumentObject(i);
  switch (FormOf(param.conversion)) {
    case InlineForm::kInt: {
      llvm::BasicBlock* is_int = Block("is_int");
      b_.CreateCondBr(b_.CreateICmpEQ(TypeOf(obj), Constant(model_.int_type)), is_int, generic_,
                      likely_);
      b_.SetInsertPoint(is_int);
      EmitInt(i, obj, next_);
      break;
    }
    case InlineForm::kFloat:
      EmitFloat(i, obj);
      break;
    case InlineForm::kBool:
      EmitBool(i, obj);
      break;
    case InlineForm::kPointer:
      EmitPointer(i, obj);
      break;
    case InlineForm::kStr:
      EmitStr(i, obj);
      break;
    case InlineForm::kDevice:
    case InlineForm::kDataType:
      EmitValueType(i, obj, FormOf(param.conversion) == InlineForm::kDevice);
      break;
    case InlineForm::kTensor:  // borrowed below, once every other argument has passed
      b_.CreateBr(next_);
      break;
    case InlineForm::kNone:
      return "argument #" + std::to_string(i) + " has no inline conversion";
  }
  return "";
}

llvm::Value* HostEntryEmitter::SlotAt(size_t t) {
  return At(slots_, static_cast<int64_t>(t) * model_.tensor_slot_size);
}

void HostEntryEmitter::ReleaseTensors(size_t count) {
  auto* release_type = llvm::FunctionType::get(b_.getVoidTy(), {ptr_}, false);
  for (size_t t = 0; t < count; ++t) CallHost(model_.release_tensor, release_type, {SlotAt(t)});
}

void HostEntryEmitter::EmitTensors() {
  auto* borrow_type = llvm::FunctionType::get(ptr_, {ptr_, ptr_}, false);
  for (size_t t = 0; t < tensor_args_.size(); ++t) {
    b_.SetInsertPoint(next_);
    MergePending();
    llvm::BasicBlock* borrowed = Block("tensor_borrowed");
    next_ = Block("tensor_stored");
    const size_t i = tensor_args_[t];
    llvm::Value* obj = ArgumentObject(i);
    llvm::Value* tensor = CallHost(model_.borrow_tensor, borrow_type, {obj, SlotAt(t)});
    llvm::BasicBlock* missed = t == 0 ? generic_ : Block("tensor_missed");
    b_.CreateCondBr(b_.CreateIsNotNull(tensor), borrowed, missed, likely_);
    b_.SetInsertPoint(borrowed);
    SetAny(i, kTVMFFIDLTensorPtr, tensor);
    b_.CreateBr(next_);
    if (t != 0) {
      b_.SetInsertPoint(missed);
      ReleaseTensors(t);
      b_.CreateBr(generic_);
    }
  }
}

void HostEntryEmitter::EmitCallAndResult() {
  b_.SetInsertPoint(next_);
  MergePending();
  const bool release_lock = (flags_ & kFFIJITHostEntryReleaseLock) != 0;
  llvm::Value* lock_state =
      release_lock ? CallHost(model_.release_lock, llvm::FunctionType::get(ptr_, {}, false), {})
                   : nullptr;
  // Which call holds the host's lock, for a thread that waits for it (model.lock_holder):
  // stored before the arguments' Anys, so that no atomic store stands between them and the
  // inlined thunk that reads them (between, it kept their loads from folding: 1.1-1.2x on some
  // signatures).
  const bool record_holder = !release_lock && model_.lock_holder != nullptr;
  llvm::Value* previous_holder = nullptr;
  if (record_holder) {
    llvm::Value* holder = Constant(model_.lock_holder);
    previous_holder = b_.CreateAlignedLoad(ptr_, holder, llvm::Align(8));
    RelaxedStore(b_.CreateLoad(ptr_, At(self_, model_.self_name_offset)), holder);
    llvm::Value* calls = Constant(model_.lock_calls);
    RelaxedStore(b_.CreateAdd(b_.CreateAlignedLoad(i64_, calls, llvm::Align(8)), b_.getInt64(1)),
                 calls);
  }
  for (size_t i = 0; i < num_args_; ++i) {
    llvm::Value* any = At(anys_, kAnySize * static_cast<int64_t>(i));
    b_.CreateStore(any_values_[i].first, any);
    b_.CreateStore(b_.getInt32(0), At(any, kPaddingOffset));
    b_.CreateStore(any_values_[i].second, At(any, kValueOffset));
  }
  // The function: where the host's `self` holds it (code shared by a signature's functions),
  // or this one function's address.
  llvm::Value* handle = model_.self_function_offset >= 0
                            ? static_cast<llvm::Value*>(b_.CreateLoad(
                                  ptr_, At(self_, model_.self_function_offset), "handle"))
                            : Constant(function_);
  b_.CreateStore(b_.getInt64(0), result_);
  b_.CreateStore(b_.getInt64(0), At(result_, kValueOffset));
  auto* safe_call_type = llvm::FunctionType::get(i32_, {ptr_, ptr_, i32_, ptr_}, false);
  llvm::Value* rc =
      b_.CreateCall(safe_call_type, thunk_,
                    {handle, anys_, b_.getInt32(static_cast<uint32_t>(num_args_)), result_});
  // The result is read before the holder is restored: an atomic store between the inlined
  // thunk's result and these loads would keep them, and the kind switch below, from folding.
  llvm::Value* result_type = b_.CreateLoad(i32_, result_);
  llvm::Value* result_value = b_.CreateLoad(i64_, At(result_, kValueOffset));
  if (record_holder) RelaxedStore(previous_holder, Constant(model_.lock_holder));
  if (release_lock) {
    CallHost(model_.acquire_lock, llvm::FunctionType::get(b_.getVoidTy(), {ptr_}, false),
             {lock_state});
  }
  ReleaseTensors(tensor_args_.size());
  if (record_holder && model_.held_work != nullptr) RunHeldWork();
  llvm::BasicBlock* failed = Block("failed");
  llvm::BasicBlock* box = Block("box");
  b_.CreateCondBr(b_.CreateICmpEQ(rc, b_.getInt32(0)), box, failed, likely_);
  b_.SetInsertPoint(failed);
  b_.CreateRet(CallHost(model_.raise_error, llvm::FunctionType::get(ptr_, {i32_}, false), {rc}));

  b_.SetInsertPoint(box);
  llvm::BasicBlock* other = Block("box_other");
  llvm::BasicBlock* as_int = Block("box_int");
  llvm::BasicBlock* as_float = Block("box_float");
  llvm::BasicBlock* as_none = Block("box_none");
  llvm::BasicBlock* as_bool = Block("box_bool");
  llvm::SwitchInst* kinds = b_.CreateSwitch(result_type, other, 4);
  kinds->addCase(b_.getInt32(kTVMFFIInt), as_int);
  kinds->addCase(b_.getInt32(kTVMFFIFloat), as_float);
  kinds->addCase(b_.getInt32(kTVMFFINone), as_none);
  kinds->addCase(b_.getInt32(kTVMFFIBool), as_bool);
  b_.SetInsertPoint(as_int);
  b_.CreateRet(
      CallHost(model_.new_int, llvm::FunctionType::get(ptr_, {i64_}, false), {result_value}));
  b_.SetInsertPoint(as_float);
  b_.CreateRet(CallHost(model_.new_float, llvm::FunctionType::get(ptr_, {f64_}, false),
                        {b_.CreateBitCast(result_value, f64_)}));
  b_.SetInsertPoint(as_none);
  b_.CreateRet(NewReference(Constant(model_.none)));
  b_.SetInsertPoint(as_bool);
  b_.CreateRet(
      NewReference(b_.CreateSelect(b_.CreateICmpNE(result_value, b_.getInt64(0)),
                                   Constant(model_.true_value), Constant(model_.false_value))));
  b_.SetInsertPoint(other);
  b_.CreateRet(
      CallHost(model_.box_result, llvm::FunctionType::get(ptr_, {ptr_}, false), {result_}));
}

// What threads left the call to do under the lock (model.held_work), before the result is boxed.
void HostEntryEmitter::RunHeldWork() {
  llvm::LoadInst* work = b_.CreateLoad(ptr_, Constant(model_.held_work));
  work->setAtomic(llvm::AtomicOrdering::Monotonic);
  work->setAlignment(llvm::Align(8));
  llvm::BasicBlock* run = Block("run_held_work");
  llvm::BasicBlock* done = Block("held_work_done");
  b_.CreateCondBr(b_.CreateIsNotNull(work), run, done, Unlikely());
  b_.SetInsertPoint(run);
  CallHost(model_.run_held_work, llvm::FunctionType::get(b_.getVoidTy(), {}, false), {});
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

llvm::Value* HostEntryEmitter::NewReference(llvm::Value* obj) {
  if (model_.plain_refcount == 0) {
    return CallHost(model_.new_ref, llvm::FunctionType::get(ptr_, {ptr_}, false), {obj});
  }
  b_.CreateStore(b_.CreateAdd(b_.CreateLoad(i64_, obj), b_.getInt64(1)), obj);
  return obj;
}

void HostEntryEmitter::EmitFallback() {
  b_.SetInsertPoint(generic_);
  llvm::CallInst* fallback =
      b_.CreateCall(entry_type_, Constant(reinterpret_cast<const void*>(model_.fallback)),
                    {self_, args_, nargs_, kwnames_});
  fallback->setTailCallKind(llvm::CallInst::TCK_MustTail);
  b_.CreateRet(fallback);
}

std::string EmitHostEntry(const CallPlan& plan, const void* function, const FFIJITHostModel& model,
                          int flags, llvm::Function* thunk, llvm::Module& module,
                          const std::string& symbol) {
  std::string reason = HostEntryUnsupportedReason(plan);
  if (!reason.empty()) return reason;
  if (thunk == nullptr) return "no thunk to call";
  return HostEntryEmitter(plan, function, model, flags, thunk, module).Emit(symbol);
}

}  // namespace ffijit::orc
