// Thunk code generation: the emitter's entry block, per-parameter conversions, the native call,
// result boxing, and the runtime functions generated thunks call.
#include "orc/codegen/thunk_codegen.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ffijit/any.h"
#include "ffijit/c_ext.h"
#include "interpreter/bound_function.h"
#include "interpreter/float16.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "orc/codegen/abi_ir.h"
#include "orc/codegen/thunk_emitter.h"

namespace ffijit::orc {

std::string ThunkEmitter::Emit(const std::string& symbol) {
  if (options_.native && options_.native->getFunctionType() != CallType()) {
    return "the native's IR type differs from the one its plan calls it with";
  }
  auto* type = llvm::FunctionType::get(i32_, {ptr_, ptr_, i32_, ptr_}, false);
  fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, symbol, module_);
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  handle_ = fn_->getArg(0);
  args_ = fn_->getArg(1);
  num_args_ = fn_->getArg(2);
  result_ = fn_->getArg(3);

  auto* entry = NewBlock();
  b_.SetInsertPoint(entry);
  const size_t n_params = plan_.params.size();
  const size_t n_results = plan_.results.size();
  bool any_path = false, any_byval = false;
  for (const NativeParam& p : plan_.params) any_path |= p.path_size > 0;
  for (platform::IrType t : ir_.params) any_byval |= t == platform::IrType::kByvalPair;
  // The raw result buffers: for out-pointers, and for a returned value the shared boxers read.
  if (plan_.packs_results() || (n_results == 1 && (!plan_.results[0].by_return ||
                                                   plan_.return_kind == ReturnKind::kGprPair ||
                                                   !BoxesInline(plan_.results[0].conversion)))) {
    // At least one buffer: a structure of no leaves still passes FFIJITBoxResults a pointer.
    results_buf_ = b_.CreateAlloca(llvm::ArrayType::get(i64_, 2 * std::max<size_t>(n_results, 1)));
  }
  if (any_byval) byval_ = b_.CreateAlloca(llvm::ArrayType::get(i64_, 2 * n_params));
  // Resolved structure elements, found once while checking and read again by the call block.
  if (any_path) paths_ = b_.CreateAlloca(llvm::ArrayType::get(ptr_, n_params));

  fallback_ = NewBlock();
  llvm::Value* arity_ok = b_.CreateICmpEQ(num_args_, b_.getInt32(plan_.num_args()));
  if (options_.optimized || plan_.num_args() == 0 || DereferencesAnArgument()) {
    // On the cold tier too when a check loads through an argument (a header, a string's
    // characters): a select of the array would stand in front of every such load chain, which
    // costs more than the branch's reload of `args` (str: 1.16x handwritten with the select,
    // 1.02x with the branch).
    auto* check = NewBlock();
    CondBr(arity_ok, check, fallback_);
    b_.SetInsertPoint(check);
    ok_ = b_.getTrue();
  } else {
    // The arity joins the other checks in one block: a branch here would make the fast register
    // allocator spill `args` and reload it for the first tag load, a store-to-load round trip on
    // every call's critical path. A wrong-arity call's checks read zeros (None tags) instead.
    args_ = b_.CreateSelect(arity_ok, args_, Zeros(16 * plan_.num_args()));
    ok_ = arity_ok;
  }
  {
    llvm::IRBuilderBase::InsertPointGuard keep(b_);
    b_.SetInsertPoint(fallback_);
    b_.CreateRet(CallHelper(kFallbackSymbol, i32_, {ptr_, ptr_, i32_, ptr_},
                            {handle_, fn_->getArg(1), num_args_, result_},
                            options_.cold_error_paths));
  }
  if (options_.count_calls) CountCall();
  for (size_t i = 0; i < n_params; ++i) CheckParam(static_cast<int32_t>(i));
  Flush();
  // Past the checks the arity is right: the call block reads the caller's array itself, so its
  // loads wait on nothing the checks computed (a select would hold them until the arity
  // compare, and every value the native reads through them until then too).
  args_ = fn_->getArg(1);

  std::vector<llvm::Value*> call_args;
  for (size_t i = 0; i < n_params; ++i) {
    llvm::Value* words[2] = {nullptr, nullptr};
    ConvertParam(static_cast<int32_t>(i), words);
    PassParam(static_cast<int32_t>(i), words, &call_args);
  }
  // Results through out-pointers: zeroed 16-byte buffers, one per result. Plain stores, not a
  // memset: FastISel lowers no memset intrinsic.
  for (size_t i = 0; i < n_results; ++i) {
    if (plan_.results[i].by_return) continue;
    b_.CreateStore(b_.getInt64(0), ResultBuffer(i));
    b_.CreateStore(b_.getInt64(0), AtOffset(ResultBuffer(i), 8));
    call_args.push_back(ResultBuffer(i));
  }
  llvm::Value* returned = CallTarget(call_args);
  BoxResults(returned);
  return "";
}

// Counts the call down at handle + 56; the call that brings the count to zero takes the
// fallback, which reports it (ThunkFallback). One more condition in the check run, no block of
// its own: the count costs the cold tier's compile time nothing measurable. A plain load and
// store: a count lost to a concurrent call only delays the report.
void ThunkEmitter::CountCall() {
  llvm::Value* slot = AtOffset(handle_, kCallCountOffset);
  llvm::Value* left = b_.CreateSub(b_.CreateLoad(i64_, slot), b_.getInt64(1));
  b_.CreateStore(left, slot);
  Require(b_.CreateICmpNE(left, b_.getInt64(0)));
}

// Whether a check of some argument loads through its payload (an object header).
bool ThunkEmitter::DereferencesAnArgument() const {
  for (const NativeParam& p : plan_.params) {
    switch (p.conversion) {
      case Conversion::kStr:
      case Conversion::kBytes:
      case Conversion::kTensor:
      case Conversion::kObject:
        return true;
      default:
        break;
    }
  }
  return false;
}

// At least `bytes` (64 by default) zero bytes: where a speculated load reads when the form it
// serves is not the one present, so the call block picks among forms with selects instead of
// branches. One constant per module, as large as its largest user needs.
llvm::Value* ThunkEmitter::Zeros(uint64_t bytes) {
  const uint64_t words = std::max<uint64_t>(8, (bytes + 7) / 8);
  llvm::GlobalVariable* old = module_.getGlobalVariable("ffijit.zeros", true);
  if (old != nullptr && old->getValueType()->getArrayNumElements() >= words) return old;
  auto* type = llvm::ArrayType::get(i64_, words);
  auto* zeros = new llvm::GlobalVariable(module_, type, true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantAggregateZero::get(type), "ffijit.zeros");
  zeros->setAlignment(llvm::Align(16));
  if (old != nullptr) {
    zeros->takeName(old);
    old->replaceAllUsesWith(zeros);
    old->eraseFromParent();
  }
  return zeros;
}

// The TVMFFIAny the parameter reads. In the check block a structure element is resolved (and
// remembered); the call block reads what was remembered.
llvm::Value* ThunkEmitter::ValueOf(int32_t index, bool resolve) {
  const NativeParam& p = plan_.params[static_cast<size_t>(index)];
  llvm::Value* value =
      b_.CreateConstInBoundsGEP1_64(i8_, args_, 16 * static_cast<uint64_t>(p.position));
  if (p.path_size == 0) return value;
  llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr_, paths_, static_cast<uint64_t>(index));
  if (!resolve) return b_.CreateLoad(ptr_, slot);
  // Every earlier argument passed, so the resolver's path error is the interpreter's first
  // error too: return it as raised.
  Flush();
  value = CallHelper("FFIJITResolvePath", ptr_, {ptr_, i32_, ptr_},
                     {handle_, b_.getInt32(static_cast<uint32_t>(index)), value});
  auto* raised = NewBlock();
  auto* resolved = NewBlock();
  CondBr(b_.CreateIsNotNull(value), resolved, raised);
  b_.SetInsertPoint(raised);
  b_.CreateRet(b_.getInt32(static_cast<uint32_t>(-1)));
  b_.SetInsertPoint(resolved);
  b_.CreateStore(value, slot);
  return value;
}

// The native words of parameter `index`, whose form CheckParam accepted (for f64 and f32 the
// double or float itself).
void ThunkEmitter::ConvertParam(int32_t index, llvm::Value* words[2]) {
  const NativeParam& p = plan_.params[static_cast<size_t>(index)];
  const Conversion c = p.conversion;
  llvm::Value* value = ValueOf(index, false);
  if (c == Conversion::kAnyView) {
    words[0] = ToWord(value);
    return;
  }
  llvm::Value* payload = AtOffset(value, kAnyValueOffset);
  auto payload_word = [&] { return b_.CreateLoad(i64_, payload); };
  auto tag = [&] { return b_.CreateLoad(i32_, value); };
  if (c == Conversion::kBool) {
    words[0] = b_.CreateZExt(b_.CreateIsNotNull(payload_word()), i64_);
  } else if (IsIntegerConversion(c) || c == Conversion::kDevice || c == Conversion::kObject) {
    words[0] = payload_word();
  } else if (IsNativeFloat(c)) {
    // A double or float value. One rounding from the exact input, as the interpreter: a Float
    // narrows to f32, an Int converts straight to the parameter's type.
    llvm::Type* type = c == Conversion::kF64 ? f64_ : f32_;
    llvm::Value* given = b_.CreateLoad(f64_, payload);
    if (type != f64_) given = b_.CreateFPTrunc(given, type);
    words[0] = !options_.optimized ? given  // the check took only a Float
                                   : FloatOrConverted(TagIs(tag(), kTVMFFIFloat), given, [&] {
                                       return b_.CreateSIToFP(payload_word(), type);
                                     });
  } else if (c == Conversion::kF16 || c == Conversion::kBF16) {
    const char* helper = c == Conversion::kF16 ? "ffijit_orc_any_to_f16" : "ffijit_orc_any_to_bf16";
    words[0] = b_.CreateZExt(CallHelper(helper, i16_, {ptr_}, {value}), i64_);
  } else if (c == Conversion::kOpaquePtr) {
    words[0] = b_.CreateSelect(TagIs(tag(), kTVMFFINone), b_.getInt64(0), payload_word());
  } else if (c == Conversion::kStr) {
    llvm::Value* t = tag();
    llvm::Value* is_object = TagIs(t, kTVMFFIStr);
    llvm::Value* cell = b_.CreateSelect(is_object, b_.CreateLoad(ptr_, payload), Zeros());
    llvm::Value* data = Load(i64_, cell, kObjectCellOffset);
    llvm::Value* inline_or_raw =
        b_.CreateSelect(TagIs(t, kTVMFFISmallStr), ToWord(payload), payload_word());
    words[0] = b_.CreateSelect(is_object, data, inline_or_raw);
  } else if (c == Conversion::kBytes) {
    // {data, size} at cell + 24 (Bytes, Str), at the ByteArray (ByteArrayPtr), or inline.
    llvm::Value* t = tag();
    llvm::Value* pointer = b_.CreateLoad(ptr_, payload);
    llvm::Value* array =
        b_.CreateSelect(TagIn(t, kTVMFFIStr, 2), AtOffset(pointer, kObjectCellOffset),
                        b_.CreateSelect(TagIs(t, kTVMFFIByteArrayPtr), pointer, Zeros()));
    llvm::Value* is_inline = TagIn(t, kTVMFFISmallStr, 2);
    words[0] = b_.CreateSelect(is_inline, ToWord(payload), Load(i64_, array, 0));
    words[1] =
        b_.CreateSelect(is_inline, b_.CreateZExt(Load(i32_, value, kAnySmallLenOffset), i64_),
                        Load(i64_, array, 8));
  } else if (c == Conversion::kTensor) {
    auto checked = checked_tensors_.find(index);
    // The hot tier's check found the DLTensor; the cold tier's accepted only a Tensor object.
    words[0] = ToWord(checked != checked_tensors_.end()
                          ? checked->second
                          : AtOffset(b_.CreateLoad(ptr_, payload), kObjectCellOffset));
  } else if (c == Conversion::kDataType) {
    words[0] = b_.CreateZExt(b_.CreateLoad(i32_, payload), i64_);
  }
}

// The optimized tier's float parameter: `from_float` when the argument is a Float, else what
// `from_int` emits (an Int or Bool converted), which runs only on that unlikely side, behind a
// predicted branch.
template <typename EmitFromInt>
llvm::Value* ThunkEmitter::FloatOrConverted(llvm::Value* is_float, llvm::Value* from_float,
                                            EmitFromInt from_int) {
  llvm::BasicBlock* given_float = b_.GetInsertBlock();
  auto* convert = NewBlock();
  auto* join = NewBlock();
  CondBr(is_float, join, convert);
  b_.SetInsertPoint(convert);
  llvm::Value* converted = from_int();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  llvm::PHINode* word = b_.CreatePHI(from_float->getType(), 2);
  word->addIncoming(from_float, given_float);
  word->addIncoming(converted, convert);
  return word;
}

// Passes parameter `index`'s words as the IR types the platform layer chose for it.
void ThunkEmitter::PassParam(int32_t index, llvm::Value* words[2],
                             std::vector<llvm::Value*>* values) {
  const unsigned first = ir_.first[static_cast<size_t>(index)];
  switch (ir_.params[first]) {
    case platform::IrType::kF64:  // a double, or f16/bf16 bits in the low bits of one
      values->push_back(b_.CreateBitCast(words[0], f64_));
      return;
    case platform::IrType::kF32:
      values->push_back(words[0]);
      return;
    case platform::IrType::kI64Array2: {
      llvm::Value* array = llvm::UndefValue::get(llvm::ArrayType::get(i64_, 2));
      array = b_.CreateInsertValue(array, words[0], 0);
      values->push_back(b_.CreateInsertValue(array, words[1], 1));
      return;
    }
    case platform::IrType::kByvalPair: {
      llvm::Value* copy = AtOffset(byval_, 16 * static_cast<uint64_t>(index));
      b_.CreateStore(words[0], copy);
      b_.CreateStore(words[1], AtOffset(copy, 8));
      values->push_back(copy);
      return;
    }
    default:
      values->push_back(words[0]);
      if (ir_.count[static_cast<size_t>(index)] == 2) values->push_back(words[1]);
      return;
  }
}

llvm::Value* ThunkEmitter::CallTarget(const std::vector<llvm::Value*>& values) {
  llvm::Value* target;
  if (options_.native) {
    target = options_.native;
  } else if (options_.target) {
    target = b_.CreateIntToPtr(b_.getInt64(reinterpret_cast<uintptr_t>(options_.target)), ptr_);
  } else {
    target = Load(ptr_, handle_, kTargetOffset);
  }
  llvm::CallInst* call = b_.CreateCall(ir_.type, target, values);
  AddAbiAttributes(ir_, call);
  return call;
}

// The returned value as the 64-bit word the boxer reads (narrow integers extended per their
// signedness, floats as their bit pattern).
llvm::Value* ThunkEmitter::ReturnWord(Conversion c, llvm::Value* v) {
  if (v->getType()->isFloatTy()) return b_.CreateZExt(b_.CreateBitCast(v, i32_), i64_);
  if (v->getType()->isDoubleTy()) return b_.CreateBitCast(v, i64_);
  if (v->getType() == i64_) return v;
  if (c == Conversion::kBool) return b_.CreateZExt(b_.CreateICmpNE(v, b_.getInt8(0)), i64_);
  bool is_signed = c == Conversion::kI8 || c == Conversion::kI16 || c == Conversion::kI32;
  return is_signed ? b_.CreateSExt(v, i64_) : b_.CreateZExt(v, i64_);
}

void ThunkEmitter::StoreAny(int32_t type_index, llvm::Value* word) {
  // The tag and its zero padding in one 8-byte store.
  const uint64_t tag = static_cast<uint32_t>(type_index);
  b_.CreateStore(b_.getInt64(module_.getDataLayout().isLittleEndian() ? tag : tag << 32), result_);
  b_.CreateStore(word, AtOffset(result_, kAnyValueOffset));
}

// Boxes the one result held in `word` (and raw buffer `raw`) into *result.
void ThunkEmitter::BoxOne(const ResultSlot& slot, llvm::Value* word, llvm::Value* raw) {
  const Conversion c = slot.conversion;
  if (c == Conversion::kBool) {
    StoreAny(kTVMFFIBool,
             b_.CreateZExt(b_.CreateICmpNE(b_.CreateTrunc(word, i8_), b_.getInt8(0)), i64_));
    b_.CreateRet(b_.getInt32(0));
    return;
  }
  if (IsIntegerConversion(c) && c != Conversion::kU64) {
    // Only the type's low bytes of the returned register are defined.
    const ConversionInfo& info = InfoOf(c);
    llvm::Value* v = word;
    if (info.bytes < 8) {
      llvm::Value* low = b_.CreateTrunc(word, b_.getIntNTy(8 * info.bytes));
      v = info.is_signed ? b_.CreateSExt(low, i64_) : b_.CreateZExt(low, i64_);
    }
    StoreAny(kTVMFFIInt, v);
    b_.CreateRet(b_.getInt32(0));
    return;
  }
  if (c == Conversion::kF64 || c == Conversion::kF32) {
    llvm::Value* d =
        c == Conversion::kF64
            ? word
            : b_.CreateBitCast(
                  b_.CreateFPExt(b_.CreateBitCast(b_.CreateTrunc(word, i32_), f32_), f64_), i64_);
    StoreAny(kTVMFFIFloat, d);
    b_.CreateRet(b_.getInt32(0));
    return;
  }
  if (c == Conversion::kOpaquePtr) {
    llvm::Value* is_null = b_.CreateICmpEQ(word, b_.getInt64(0));
    llvm::Value* tag =
        b_.CreateSelect(is_null, b_.getInt32(kTVMFFINone), b_.getInt32(kTVMFFIOpaquePtr));
    b_.CreateStore(tag, result_);
    b_.CreateStore(b_.getInt32(0), AtOffset(result_, 4));
    b_.CreateStore(word, AtOffset(result_, kAnyValueOffset));
    b_.CreateRet(b_.getInt32(0));
    return;
  }
  if (c == Conversion::kDataType) {
    StoreAny(kTVMFFIDataType, b_.CreateAnd(word, b_.getInt64(UINT32_MAX)));
    b_.CreateRet(b_.getInt32(0));
    return;
  }
  if (c == Conversion::kDevice) {
    StoreAny(kTVMFFIDevice, word);
    b_.CreateRet(b_.getInt32(0));
    return;
  }
  // Everything else (u64 above INT64_MAX, f16/bf16, strings, bytes, objects, tensors, Any):
  // the shared boxer.
  b_.CreateRet(CallHelper("FFIJITBoxResult", i32_, {ptr_, i32_, ptr_, ptr_},
                          {handle_, b_.getInt32(0), raw, result_}));
}

void ThunkEmitter::BoxResults(llvm::Value* returned) {
  const size_t n = plan_.results.size();
  if (plan_.return_kind == ReturnKind::kStatus) {
    auto* failed = NewBlock();
    auto* ok = NewBlock();
    CondBr(b_.CreateICmpEQ(returned, b_.getInt32(0)), ok, failed);
    b_.SetInsertPoint(failed);
    // The native's raised error reaches the caller unchanged; without one, the shared error.
    b_.CreateRet(CallHelper("ffijit_orc_propagate_status", i32_, {ptr_, i32_}, {handle_, returned},
                            options_.cold_error_paths));
    b_.SetInsertPoint(ok);
  }
  const bool packs = plan_.packs_results();
  if (n == 0 && !packs) {
    StoreAny(kTVMFFINone, b_.getInt64(0));
    b_.CreateRet(b_.getInt32(0));
    return;
  }
  // A value returned in registers goes into its raw buffer like an out-pointer result would.
  llvm::Value* word = nullptr;
  if (plan_.return_kind != ReturnKind::kVoid && plan_.return_kind != ReturnKind::kStatus) {
    if (plan_.return_kind == ReturnKind::kGprPair) {
      b_.CreateStore(b_.CreateExtractValue(returned, 0), ResultBuffer(0));
      b_.CreateStore(b_.CreateExtractValue(returned, 1), AtOffset(ResultBuffer(0), 8));
    } else {
      word = ReturnWord(plan_.results[0].conversion, returned);
      // Only the shared boxers read the buffer; the common kinds box straight from the word.
      if (packs || !BoxesInline(plan_.results[0].conversion)) {
        b_.CreateStore(word, ResultBuffer(0));
        b_.CreateStore(b_.getInt64(0), AtOffset(ResultBuffer(0), 8));
      }
    }
  }
  // Several results, or a structure result (whatever its number of leaves): the shared builder.
  if (packs) {
    b_.CreateRet(CallHelper("FFIJITBoxResults", i32_, {ptr_, ptr_, ptr_, ptr_},
                            {handle_, results_buf_, result_, args_}));
    return;
  }
  if (!word) word = Load(i64_, ResultBuffer(0), 0);
  BoxOne(plan_.results[0], word, ResultBuffer(0));
}

namespace {

// The thunk's way out for every argument form it does not convert inline, and for every error:
// the interpreter, whose behaviour the thunk must match anyway. Also where a counting thunk's
// call that ran the count out lands: reported here (`<= 0`, not `== 0`, so a concurrent call
// that counted on below zero first cannot swallow the report; the tiering asks only once).
int ThunkFallback(void* handle, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  auto* fn = static_cast<BoundFunction*>(handle);
  if (fn->calls_until_hot.load(std::memory_order_relaxed) <= 0) ThunkReachedHotCount(handle);
  return InterpreterSafeCall(handle, args, num_args, result);
}

// details::FindAnyDefect for generated code: 0 for a well-formed value.
int32_t AnyDefectCode(const TVMFFIAny* v) {
  return static_cast<int32_t>(details::FindAnyDefect(*v));
}

// f16/bf16 parameters from a Float, Int or Bool (the thunk checked the tag): one rounding from the
// exact input, as the interpreter.
uint16_t AnyToF16Bits(const TVMFFIAny* v) {
  return v->type_index == kTVMFFIFloat ? FFIJITDoubleToF16Bits(v->v_float64)
                                       : FFIJITInt64ToF16Bits(v->v_int64);
}
uint16_t AnyToBF16Bits(const TVMFFIAny* v) {
  return v->type_index == kTVMFFIFloat ? FFIJITDoubleToBF16Bits(v->v_float64)
                                       : FFIJITInt64ToBF16Bits(v->v_int64);
}

}  // namespace

std::string ThunkUnsupportedReason(const CallPlan& plan) {
  std::string reason = AbiUnsupportedReason(plan);
  if (!reason.empty()) return reason;
  if (plan.return_kind == ReturnKind::kGprPair && plan.results.size() > 1) {
    return "a register-pair return together with several results";
  }
  return "";
}

std::string EmitThunk(const CallPlan& plan, llvm::Module& module, const std::string& symbol,
                      const ThunkOptions& options) {
  std::string reason = ThunkUnsupportedReason(plan);
  if (!reason.empty()) return reason;
  return ThunkEmitter(plan, module, options).Emit(symbol);
}

llvm::FunctionType* NativeCallType(const CallPlan& plan, llvm::Module& module) {
  return ThunkEmitter(plan, module).CallType();
}

SymbolTable ThunkRuntimeSymbols() {
  return {
      {ThunkEmitter::kFallbackSymbol, reinterpret_cast<void*>(&ThunkFallback)},
      {ThunkEmitter::kAnyDefectSymbol, reinterpret_cast<void*>(&AnyDefectCode)},
      {"FFIJITResolvePath", reinterpret_cast<void*>(&FFIJITResolvePath)},
      {"FFIJITBoxResult", reinterpret_cast<void*>(&FFIJITBoxResult)},
      {"FFIJITBoxResults", reinterpret_cast<void*>(&FFIJITBoxResults)},
      {"ffijit_orc_propagate_status", reinterpret_cast<void*>(&FFIJITPropagateStatus)},
      {"ffijit_orc_any_to_f16", reinterpret_cast<void*>(&AnyToF16Bits)},
      {"ffijit_orc_any_to_bf16", reinterpret_cast<void*>(&AnyToBF16Bits)},
  };
}

}  // namespace ffijit::orc
