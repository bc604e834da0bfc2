// Thunk code generation: per-parameter tag checks and conversions, the native call, result boxing.
#include "orc/thunk_codegen.h"

#include <array>
#include <cstddef>
#include <functional>

#include "bound_function.h"
#include "ffijit/c_ext.h"
#include "float16.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace ffijit::orc {
namespace {

// Byte offsets the generated code reads (the ABI of c_api.h / c_ext.h / bound_function.h).
constexpr uint64_t kAnyValueOffset = offsetof(TVMFFIAny, v_int64);
constexpr uint64_t kAnySmallLenOffset = offsetof(TVMFFIAny, small_str_len);
constexpr uint64_t kObjectCellOffset = sizeof(TVMFFIObject);
constexpr uint64_t kTargetOffset = offsetof(BoundFunction, target);
constexpr uint64_t kTensorNdimOffset = offsetof(DLTensor, ndim);
constexpr uint64_t kTensorDtypeOffset = offsetof(DLTensor, dtype);
constexpr uint64_t kTensorShapeOffset = offsetof(DLTensor, shape);

bool IsFloat(Conversion c) {
  return c == Conversion::kF16 || c == Conversion::kBF16 || c == Conversion::kF32 ||
         c == Conversion::kF64;
}

bool IsInteger(Conversion c) {
  switch (c) {
    case Conversion::kI8:
    case Conversion::kI16:
    case Conversion::kI32:
    case Conversion::kI64:
    case Conversion::kU8:
    case Conversion::kU16:
    case Conversion::kU32:
    case Conversion::kU64:
      return true;
    default:
      return false;
  }
}

}  // namespace

// Replays the x86-64 System V assignment LLVM performs for the IR types the thunk passes, and
// checks it lands every value where the plan's AbiLocation (reflect/abi_x86_64.cc, the one file
// with the rules) says. A disagreement makes the plan unsupported rather than miscompiled.
std::string CheckAbiAgreement(const CallPlan& plan) {
  int32_t gpr = 0, sse = 0, stack = 0;
  auto scalar = [&](bool is_sse, const AbiLocation& want, const std::string& what) -> std::string {
    AbiLocation got;
    if (is_sse && sse < 8) {
      got = {AbiClass::kSse, sse++};
    } else if (!is_sse && gpr < 6) {
      got = {AbiClass::kGpr, gpr++};
    } else {
      got = {AbiClass::kStack, stack++};
    }
    if (got.cls != want.cls || got.slot != want.slot) return "ABI placement of " + what + " differs";
    return "";
  };
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const NativeParam& p = plan.params[i];
    std::string what = "parameter " + std::to_string(i);
    std::string bad;
    switch (p.abi.cls) {
      case AbiClass::kGpr:
      case AbiClass::kSse:
      case AbiClass::kStack:
        bad = scalar(IsFloat(p.conversion), p.abi, what);
        break;
      case AbiClass::kGprPair:
        if (gpr + 2 > 6 || p.abi.slot != gpr) return "ABI placement of " + what + " differs";
        gpr += 2;
        break;
      case AbiClass::kStackPair:
        // byval: a stack copy, whatever registers are left.
        if (gpr + 2 <= 6 || p.abi.slot != stack) return "ABI placement of " + what + " differs";
        stack += 2;
        break;
      case AbiClass::kMemory:
        return what + " is passed in memory, which the thunk compiler does not emit";
    }
    if (!bad.empty()) return bad;
  }
  for (size_t i = 0; i < plan.results.size(); ++i) {
    if (plan.results[i].by_return) continue;
    std::string bad = scalar(false, plan.results[i].out_abi, "out-pointer " + std::to_string(i));
    if (!bad.empty()) return bad;
  }
  return "";
}

namespace {

// Everything needed while emitting one thunk.
class ThunkEmitter {
 public:
  ThunkEmitter(const CallPlan& plan, llvm::Module& module)
      : plan_(plan),
        module_(module),
        ctx_(module.getContext()),
        b_(ctx_),
        i8_(b_.getInt8Ty()),
        i16_(b_.getInt16Ty()),
        i32_(b_.getInt32Ty()),
        i64_(b_.getInt64Ty()),
        f32_(b_.getFloatTy()),
        f64_(b_.getDoubleTy()),
        ptr_(b_.getPtrTy()) {}

  void Emit(const std::string& symbol) {
    auto* type = llvm::FunctionType::get(i32_, {ptr_, ptr_, i32_, ptr_}, false);
    fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, symbol, module_);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    handle_ = fn_->getArg(0);
    args_ = fn_->getArg(1);
    num_args_ = fn_->getArg(2);
    result_ = fn_->getArg(3);

    auto* entry = NewBlock("entry");
    b_.SetInsertPoint(entry);
    // Scratch: the slow-path conversion buffer and the result buffers, zeroed once.
    scratch_ = b_.CreateAlloca(llvm::ArrayType::get(i64_, 2), nullptr, "convert_out");
    size_t n_results = plan_.results.size();
    results_buf_ = b_.CreateAlloca(llvm::ArrayType::get(i64_, 2 * (n_results ? n_results : 1)),
                                   nullptr, "results");
    byval_ = b_.CreateAlloca(llvm::ArrayType::get(i64_, 2 * (plan_.params.size() + 1)), nullptr,
                             "byval");
    fail_block_ = NewBlock("raised");

    auto* arity_bad = NewBlock("arity_bad");
    auto* params = NewBlock("params");
    b_.CreateCondBr(b_.CreateICmpEQ(num_args_, b_.getInt32(plan_.num_args())), params, arity_bad);
    b_.SetInsertPoint(arity_bad);
    b_.CreateRet(CallHelper("FFIJITRaiseArityError", i32_, {ptr_, i32_}, {handle_, num_args_}));

    b_.SetInsertPoint(fail_block_);
    b_.CreateRet(b_.getInt32(-1));

    b_.SetInsertPoint(params);
    std::vector<llvm::Value*> call_args;
    std::vector<llvm::Type*> call_types;
    for (size_t i = 0; i < plan_.params.size(); ++i) {
      llvm::Value* words[2] = {nullptr, nullptr};
      ConvertParam(static_cast<int32_t>(i), words);
      PassParam(plan_.params[i], static_cast<int32_t>(i), words, &call_args, &call_types);
    }
    // Results through out-pointers: zeroed 16-byte buffers, one per result.
    if (n_results > 0) {
      b_.CreateMemSet(results_buf_, b_.getInt8(0), 16 * n_results, llvm::MaybeAlign(8));
    }
    for (size_t i = 0; i < n_results; ++i) {
      if (plan_.results[i].by_return) continue;
      call_args.push_back(ResultBuffer(i));
      call_types.push_back(ptr_);
    }
    llvm::Value* returned = CallTarget(call_args, call_types);
    BoxResults(returned);
  }

 private:
  llvm::BasicBlock* NewBlock(const char* name) { return llvm::BasicBlock::Create(ctx_, name, fn_); }

  llvm::Value* CallHelper(const char* name, llvm::Type* ret, std::vector<llvm::Type*> params,
                          std::vector<llvm::Value*> values) {
    auto callee = module_.getOrInsertFunction(name, llvm::FunctionType::get(ret, params, false));
    if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
      f->addFnAttr(llvm::Attribute::NoUnwind);
    }
    return b_.CreateCall(callee, values);
  }

  llvm::Value* AtOffset(llvm::Value* base, uint64_t offset) {
    return offset == 0 ? base : b_.CreateConstInBoundsGEP1_64(i8_, base, offset);
  }
  llvm::Value* Load(llvm::Type* type, llvm::Value* base, uint64_t offset) {
    return b_.CreateLoad(type, AtOffset(base, offset));
  }
  llvm::Value* ResultBuffer(size_t i) { return AtOffset(results_buf_, 16 * i); }

  llvm::Value* TagIs(llvm::Value* tag, int32_t index) {
    return b_.CreateICmpEQ(tag, b_.getInt32(index));
  }
  llvm::Value* TagIsAny(llvm::Value* tag, std::initializer_list<int32_t> indices) {
    llvm::Value* any = nullptr;
    for (int32_t index : indices) {
      llvm::Value* is = TagIs(tag, index);
      any = any ? b_.CreateOr(any, is) : is;
    }
    return any;
  }

  // One fast form of a parameter: taken when `cond` holds, computing the words in its own block.
  struct Form {
    llvm::Value* cond;
    std::function<void(llvm::Value* words[2])> convert;  // may branch to `slow` when it rejects
  };

  // Emits: value = argument (after its path); the first form whose condition holds converts
  // inline; otherwise the shared helper converts (rare forms) or raises (errors).
  void ConvertParam(int32_t index, llvm::Value* words[2]) {
    const NativeParam& p = plan_.params[static_cast<size_t>(index)];
    llvm::Value* value =
        b_.CreateConstInBoundsGEP1_64(i8_, args_, 16 * static_cast<uint64_t>(p.position));
    if (p.path_size > 0) {
      // Structure elements: the shared resolver, which raises the interpreter's path errors.
      value = CallHelper("FFIJITResolvePath", ptr_, {ptr_, i32_, ptr_},
                         {handle_, b_.getInt32(index), value});
      auto* resolved = NewBlock("resolved");
      b_.CreateCondBr(b_.CreateIsNull(value), fail_block_, resolved);
      b_.SetInsertPoint(resolved);
    }
    value_ = value;
    tag_ = b_.CreateLoad(i32_, value);
    payload_ = AtOffset(value, kAnyValueOffset);

    auto* slow = NewBlock("slow");
    auto* done = NewBlock("converted");
    const bool two_words = p.conversion == Conversion::kBytes;
    std::vector<std::pair<llvm::BasicBlock*, std::array<llvm::Value*, 2>>> incoming;

    for (const Form& form : FormsFor(p, slow)) {
      auto* take = NewBlock("fast");
      auto* next = NewBlock("next");
      b_.CreateCondBr(form.cond, take, next);
      b_.SetInsertPoint(take);
      llvm::Value* out[2] = {nullptr, nullptr};
      form.convert(out);
      incoming.push_back({b_.GetInsertBlock(), {out[0], two_words ? out[1] : nullptr}});
      b_.CreateBr(done);
      b_.SetInsertPoint(next);
    }
    b_.CreateBr(slow);

    b_.SetInsertPoint(slow);
    llvm::Value* status = CallHelper("FFIJITConvertParam", i32_, {ptr_, i32_, ptr_, ptr_},
                                     {handle_, b_.getInt32(index), value_, scratch_});
    auto* slow_ok = NewBlock("slow_ok");
    b_.CreateCondBr(b_.CreateICmpEQ(status, b_.getInt32(0)), slow_ok, fail_block_);
    b_.SetInsertPoint(slow_ok);
    incoming.push_back({slow_ok,
                        {Load(i64_, scratch_, 0), two_words ? Load(i64_, scratch_, 8) : nullptr}});
    b_.CreateBr(done);

    b_.SetInsertPoint(done);
    for (int w = 0; w < (two_words ? 2 : 1); ++w) {
      auto* phi = b_.CreatePHI(i64_, static_cast<unsigned>(incoming.size()));
      for (auto& [block, values] : incoming) phi->addIncoming(values[static_cast<size_t>(w)], block);
      words[w] = phi;
    }
  }

  llvm::Value* PayloadI64() { return b_.CreateLoad(i64_, payload_); }
  llvm::Value* PayloadPtr() { return b_.CreateLoad(ptr_, payload_); }
  llvm::Value* ToWord(llvm::Value* v) {
    if (v->getType()->isPointerTy()) return b_.CreatePtrToInt(v, i64_);
    return v;
  }
  // Branches to `slow` unless `ok`; continues in a fresh block.
  void RequireOr(llvm::Value* ok, llvm::BasicBlock* slow) {
    auto* pass = NewBlock("ok");
    b_.CreateCondBr(ok, pass, slow);
    b_.SetInsertPoint(pass);
  }

  std::vector<Form> FormsFor(const NativeParam& p, llvm::BasicBlock* slow) {
    llvm::Value* tag = tag_;
    const Conversion c = p.conversion;
    std::vector<Form> forms;
    if (c == Conversion::kBool) {
      forms.push_back({TagIsAny(tag, {kTVMFFIBool, kTVMFFIInt}), [this](llvm::Value* w[2]) {
                         w[0] = b_.CreateZExt(b_.CreateICmpNE(PayloadI64(), b_.getInt64(0)), i64_);
                       }});
    } else if (IsInteger(c)) {
      forms.push_back({TagIsAny(tag, {kTVMFFIInt, kTVMFFIBool}), [this, c, slow](llvm::Value* w[2]) {
                         llvm::Value* v = PayloadI64();
                         if (llvm::Value* fits = Fits(c, v)) RequireOr(fits, slow);
                         w[0] = v;
                       }});
    } else if (IsFloat(c)) {
      forms.push_back({TagIs(tag, kTVMFFIFloat), [this, c](llvm::Value* w[2]) {
                         w[0] = FloatBits(c, b_.CreateLoad(f64_, payload_), false);
                       }});
      forms.push_back({TagIsAny(tag, {kTVMFFIInt, kTVMFFIBool}), [this, c](llvm::Value* w[2]) {
                         w[0] = FloatBits(c, PayloadI64(), true);
                       }});
    } else if (c == Conversion::kOpaquePtr) {
      forms.push_back({TagIs(tag, kTVMFFIOpaquePtr), [this](llvm::Value* w[2]) { w[0] = PayloadI64(); }});
      forms.push_back({TagIs(tag, kTVMFFINone), [this](llvm::Value* w[2]) { w[0] = b_.getInt64(0); }});
    } else if (c == Conversion::kStr) {
      forms.push_back({TagIs(tag, kTVMFFIRawStr), [this](llvm::Value* w[2]) { w[0] = PayloadI64(); }});
      forms.push_back({TagIs(tag, kTVMFFISmallStr),
                       [this](llvm::Value* w[2]) { w[0] = ToWord(payload_); }});
      forms.push_back({TagIs(tag, kTVMFFIStr), [this](llvm::Value* w[2]) {
                         w[0] = Load(i64_, PayloadPtr(), kObjectCellOffset);
                       }});
    } else if (c == Conversion::kBytes) {
      forms.push_back({TagIsAny(tag, {kTVMFFISmallBytes, kTVMFFISmallStr}), [this](llvm::Value* w[2]) {
                         w[0] = ToWord(payload_);
                         w[1] = b_.CreateZExt(Load(i32_, value_, kAnySmallLenOffset), i64_);
                       }});
      forms.push_back({TagIsAny(tag, {kTVMFFIBytes, kTVMFFIStr}), [this](llvm::Value* w[2]) {
                         llvm::Value* obj = PayloadPtr();
                         w[0] = Load(i64_, obj, kObjectCellOffset);
                         w[1] = Load(i64_, obj, kObjectCellOffset + 8);
                       }});
      forms.push_back({TagIs(tag, kTVMFFIByteArrayPtr), [this](llvm::Value* w[2]) {
                         llvm::Value* array = PayloadPtr();
                         w[0] = Load(i64_, array, 0);
                         w[1] = Load(i64_, array, 8);
                       }});
    } else if (c == Conversion::kTensor) {
      const TensorCheck* check = &p.tensor;
      forms.push_back({TagIs(tag, kTVMFFIDLTensorPtr), [this, check, slow](llvm::Value* w[2]) {
                         llvm::Value* t = PayloadPtr();
                         RequireOr(b_.CreateIsNotNull(t), slow);
                         CheckTensor(*check, t, slow);
                         w[0] = ToWord(t);
                       }});
      forms.push_back({TagIs(tag, kTVMFFITensor), [this, check, slow](llvm::Value* w[2]) {
                         llvm::Value* t = AtOffset(PayloadPtr(), kObjectCellOffset);
                         CheckTensor(*check, t, slow);
                         w[0] = ToWord(t);
                       }});
    } else if (c == Conversion::kDataType) {
      forms.push_back({TagIs(tag, kTVMFFIDataType), [this](llvm::Value* w[2]) {
                         w[0] = b_.CreateZExt(b_.CreateLoad(i32_, payload_), i64_);
                       }});
    } else if (c == Conversion::kDevice) {
      forms.push_back({TagIs(tag, kTVMFFIDevice), [this](llvm::Value* w[2]) { w[0] = PayloadI64(); }});
    } else if (c == Conversion::kObject) {
      llvm::Value* accepted = p.object_type_index == kTVMFFIObject
                                  ? b_.CreateICmpSGE(tag, b_.getInt32(kTVMFFIStaticObjectBegin))
                                  : TagIs(tag, p.object_type_index);
      // Subtypes and None take the helper, which asks the type registry.
      forms.push_back({accepted, [this](llvm::Value* w[2]) { w[0] = PayloadI64(); }});
    } else if (c == Conversion::kAnyView) {
      forms.push_back({b_.getTrue(), [this](llvm::Value* w[2]) { w[0] = ToWord(value_); }});
    }
    return forms;
  }

  // The range condition for an integer conversion; nullptr when every Int fits (i64).
  llvm::Value* Fits(Conversion c, llvm::Value* v) {
    auto signed_fits = [&](llvm::Type* narrow) {
      return b_.CreateICmpEQ(v, b_.CreateSExt(b_.CreateTrunc(v, narrow), i64_));
    };
    switch (c) {
      case Conversion::kI8:
        return signed_fits(i8_);
      case Conversion::kI16:
        return signed_fits(i16_);
      case Conversion::kI32:
        return signed_fits(i32_);
      case Conversion::kU8:
        return b_.CreateICmpULE(v, b_.getInt64(UINT8_MAX));
      case Conversion::kU16:
        return b_.CreateICmpULE(v, b_.getInt64(UINT16_MAX));
      case Conversion::kU32:
        return b_.CreateICmpULE(v, b_.getInt64(UINT32_MAX));
      case Conversion::kU64:
        return b_.CreateICmpSGE(v, b_.getInt64(0));
      default:
        return nullptr;
    }
  }

  // The native bit pattern of a float parameter, zero-extended to 64 bits, from a double or an
  // int64 (one rounding from the exact input, as the interpreter).
  llvm::Value* FloatBits(Conversion c, llvm::Value* v, bool from_int) {
    switch (c) {
      case Conversion::kF64:
        return from_int ? b_.CreateBitCast(b_.CreateSIToFP(v, f64_), i64_) : b_.CreateBitCast(v, i64_);
      case Conversion::kF32: {
        llvm::Value* f = from_int ? b_.CreateSIToFP(v, f32_) : b_.CreateFPTrunc(v, f32_);
        return b_.CreateZExt(b_.CreateBitCast(f, i32_), i64_);
      }
      case Conversion::kF16:
        return b_.CreateZExt(CallHelper(from_int ? "FFIJITInt64ToF16Bits" : "FFIJITDoubleToF16Bits",
                                        i16_, {from_int ? i64_ : f64_}, {v}),
                             i64_);
      default:  // kBF16
        return b_.CreateZExt(CallHelper(from_int ? "FFIJITInt64ToBF16Bits" : "FFIJITDoubleToBF16Bits",
                                        i16_, {from_int ? i64_ : f64_}, {v}),
                             i64_);
    }
  }

  // Branches to `slow` (which raises the tensor error) unless the tensor matches.
  void CheckTensor(const TensorCheck& check, llvm::Value* tensor, llvm::BasicBlock* slow) {
    llvm::Value* ok = b_.getTrue();
    if (check.check_dtype) {
      uint32_t want = static_cast<uint32_t>(check.dtype.code) |
                      static_cast<uint32_t>(check.dtype.bits) << 8 | 1u << 16;
      ok = b_.CreateICmpEQ(Load(i32_, tensor, kTensorDtypeOffset), b_.getInt32(want));
    }
    if (check.rank >= 0) {
      ok = b_.CreateAnd(ok, b_.CreateICmpEQ(Load(i32_, tensor, kTensorNdimOffset),
                                            b_.getInt32(static_cast<uint32_t>(check.rank))));
      bool any_static = false;
      for (int64_t d : check.dims) any_static |= d >= 0;
      if (any_static) {
        // The shape may only be read once the rank is known to match.
        RequireOr(ok, slow);
        ok = b_.getTrue();
        llvm::Value* shape = Load(ptr_, tensor, kTensorShapeOffset);
        for (size_t i = 0; i < check.dims.size(); ++i) {
          if (check.dims[i] < 0) continue;
          ok = b_.CreateAnd(ok, b_.CreateICmpEQ(Load(i64_, shape, 8 * i),
                                                b_.getInt64(static_cast<uint64_t>(check.dims[i]))));
        }
      }
    }
    RequireOr(ok, slow);
  }

  void PassParam(const NativeParam& p, int32_t index, llvm::Value* words[2],
                 std::vector<llvm::Value*>* values, std::vector<llvm::Type*>* types) {
    switch (p.abi.cls) {
      case AbiClass::kSse:
        values->push_back(b_.CreateBitCast(words[0], f64_));
        types->push_back(f64_);
        return;
      case AbiClass::kGpr:
        values->push_back(words[0]);
        types->push_back(i64_);
        return;
      case AbiClass::kStack:
        // A float on the stack is its bits in an 8-byte slot; LLVM sends a double there once
        // the vector registers are used up, as the plan says.
        if (IsFloat(p.conversion)) {
          values->push_back(b_.CreateBitCast(words[0], f64_));
          types->push_back(f64_);
        } else {
          values->push_back(words[0]);
          types->push_back(i64_);
        }
        return;
      case AbiClass::kGprPair:
        values->push_back(words[0]);
        values->push_back(words[1]);
        types->push_back(i64_);
        types->push_back(i64_);
        return;
      case AbiClass::kStackPair:
      case AbiClass::kMemory: {
        llvm::Value* copy = AtOffset(byval_, 16 * static_cast<uint64_t>(index));
        b_.CreateStore(words[0], copy);
        b_.CreateStore(words[1], AtOffset(copy, 8));
        values->push_back(copy);
        types->push_back(ptr_);
        byval_params_.push_back(static_cast<unsigned>(types->size() - 1));
        return;
      }
    }
  }

  llvm::Type* ReturnType() {
    switch (plan_.return_kind) {
      case ReturnKind::kVoid:
        return b_.getVoidTy();
      case ReturnKind::kStatus:
        return i32_;
      case ReturnKind::kSse:
        return plan_.results[0].conversion == Conversion::kF64 ? f64_ : f32_;
      case ReturnKind::kGprPair:
        return llvm::StructType::get(ctx_, {i64_, i64_});
      case ReturnKind::kGpr:
        break;
    }
    switch (plan_.results[0].conversion) {
      case Conversion::kBool:
      case Conversion::kI8:
      case Conversion::kU8:
        return i8_;
      case Conversion::kI16:
      case Conversion::kU16:
        return i16_;
      case Conversion::kI32:
      case Conversion::kU32:
      case Conversion::kDataType:
        return i32_;
      default:
        return i64_;
    }
  }

  llvm::Value* CallTarget(const std::vector<llvm::Value*>& values,
                          const std::vector<llvm::Type*>& types) {
    auto* type = llvm::FunctionType::get(ReturnType(), types, false);
    llvm::Value* target = Load(ptr_, handle_, kTargetOffset);
    llvm::CallInst* call = b_.CreateCall(type, target, values);
    auto* pair = llvm::StructType::get(ctx_, {i64_, i64_});
    for (unsigned index : byval_params_) {
      call->addParamAttr(index, llvm::Attribute::getWithByValType(ctx_, pair));
      call->addParamAttr(index, llvm::Attribute::getWithAlignment(ctx_, llvm::Align(8)));
    }
    return call;
  }

  // The returned value as the 64-bit word the boxer reads (narrow integers extended per their
  // signedness, floats as their bit pattern).
  llvm::Value* ReturnWord(Conversion c, llvm::Value* v) {
    if (v->getType()->isFloatTy()) return b_.CreateZExt(b_.CreateBitCast(v, i32_), i64_);
    if (v->getType()->isDoubleTy()) return b_.CreateBitCast(v, i64_);
    if (v->getType() == i64_) return v;
    if (c == Conversion::kBool) return b_.CreateZExt(b_.CreateICmpNE(v, b_.getInt8(0)), i64_);
    bool is_signed = c == Conversion::kI8 || c == Conversion::kI16 || c == Conversion::kI32;
    return is_signed ? b_.CreateSExt(v, i64_) : b_.CreateZExt(v, i64_);
  }

  void StoreAny(int32_t type_index, llvm::Value* word) {
    b_.CreateStore(b_.getInt32(static_cast<uint32_t>(type_index)), result_);
    b_.CreateStore(b_.getInt32(0), AtOffset(result_, 4));
    b_.CreateStore(word, AtOffset(result_, kAnyValueOffset));
  }

  // Boxes the one result held in `word` (and raw buffer `raw`) into *result.
  void BoxOne(const ResultSlot& slot, llvm::Value* word, llvm::Value* raw) {
    const Conversion c = slot.conversion;
    if (c == Conversion::kBool) {
      StoreAny(kTVMFFIBool, b_.CreateZExt(b_.CreateICmpNE(b_.CreateTrunc(word, i8_), b_.getInt8(0)), i64_));
      b_.CreateRet(b_.getInt32(0));
      return;
    }
    if (IsInteger(c) && c != Conversion::kU64) {
      llvm::Value* v = word;
      switch (c) {
        case Conversion::kI8: v = b_.CreateSExt(b_.CreateTrunc(word, i8_), i64_); break;
        case Conversion::kI16: v = b_.CreateSExt(b_.CreateTrunc(word, i16_), i64_); break;
        case Conversion::kI32: v = b_.CreateSExt(b_.CreateTrunc(word, i32_), i64_); break;
        case Conversion::kU8: v = b_.CreateZExt(b_.CreateTrunc(word, i8_), i64_); break;
        case Conversion::kU16: v = b_.CreateZExt(b_.CreateTrunc(word, i16_), i64_); break;
        case Conversion::kU32: v = b_.CreateZExt(b_.CreateTrunc(word, i32_), i64_); break;
        default: break;
      }
      StoreAny(kTVMFFIInt, v);
      b_.CreateRet(b_.getInt32(0));
      return;
    }
    if (c == Conversion::kF64 || c == Conversion::kF32) {
      llvm::Value* d = c == Conversion::kF64
                           ? word
                           : b_.CreateBitCast(b_.CreateFPExt(b_.CreateBitCast(b_.CreateTrunc(word, i32_), f32_), f64_), i64_);
      StoreAny(kTVMFFIFloat, d);
      b_.CreateRet(b_.getInt32(0));
      return;
    }
    if (c == Conversion::kOpaquePtr) {
      llvm::Value* is_null = b_.CreateICmpEQ(word, b_.getInt64(0));
      llvm::Value* tag = b_.CreateSelect(is_null, b_.getInt32(kTVMFFINone), b_.getInt32(kTVMFFIOpaquePtr));
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

  void BoxResults(llvm::Value* returned) {
    const size_t n = plan_.results.size();
    if (plan_.return_kind == ReturnKind::kStatus) {
      auto* failed = NewBlock("status_failed");
      auto* ok = NewBlock("status_ok");
      b_.CreateCondBr(b_.CreateICmpEQ(returned, b_.getInt32(0)), ok, failed);
      b_.SetInsertPoint(failed);
      // The native's raised error reaches the caller unchanged; without one, the shared error.
      b_.CreateRet(CallHelper("ffijit_orc_propagate_status", i32_, {ptr_, i32_}, {handle_, returned}));
      b_.SetInsertPoint(ok);
    }
    if (n == 0) {
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
        b_.CreateStore(word, ResultBuffer(0));
      }
    }
    if (n > 1) {
      b_.CreateRet(CallHelper("FFIJITBoxResults", i32_, {ptr_, ptr_, ptr_},
                              {handle_, results_buf_, result_}));
      return;
    }
    if (!word) word = Load(i64_, ResultBuffer(0), 0);
    BoxOne(plan_.results[0], word, ResultBuffer(0));
  }

  const CallPlan& plan_;
  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Type *i8_, *i16_, *i32_, *i64_, *f32_, *f64_, *ptr_;
  llvm::Function* fn_ = nullptr;
  llvm::Value *handle_ = nullptr, *args_ = nullptr, *num_args_ = nullptr, *result_ = nullptr;
  llvm::Value *scratch_ = nullptr, *results_buf_ = nullptr, *byval_ = nullptr;
  llvm::BasicBlock* fail_block_ = nullptr;
  // The parameter being converted.
  llvm::Value *value_ = nullptr, *tag_ = nullptr, *payload_ = nullptr;
  std::vector<unsigned> byval_params_;
};

// A status-convention native returned nonzero: as the interpreter, keep the error it raised, or
// raise the shared "returned status without raising" error.
int PropagateStatus(const BoundFunction* fn, int32_t status) {
  TVMFFIObjectHandle error = nullptr;
  TVMFFIErrorMoveFromRaised(&error);
  if (error == nullptr) return FFIJITRaiseStatusWithoutError(fn, status);
  TVMFFIErrorSetRaised(error);
  TVMFFIObjectDecRef(error);
  return -1;
}

}  // namespace

std::string ThunkUnsupportedReason(const CallPlan& plan) {
  for (size_t i = 0; i < plan.params.size(); ++i) {
    if (plan.params[i].abi.cls == AbiClass::kMemory) {
      return "parameter " + std::to_string(i) + " is passed in memory";
    }
  }
  if (plan.return_kind == ReturnKind::kGprPair && plan.results.size() > 1) {
    return "a register-pair return together with several results";
  }
  return CheckAbiAgreement(plan);
}

std::string EmitThunk(const CallPlan& plan, llvm::Module& module, const std::string& symbol) {
  std::string reason = ThunkUnsupportedReason(plan);
  if (!reason.empty()) return reason;
  ThunkEmitter(plan, module).Emit(symbol);
  return "";
}

OrcEngine::SymbolTable ThunkRuntimeSymbols() {
  return {
      {"FFIJITRaiseArityError", reinterpret_cast<void*>(&FFIJITRaiseArityError)},
      {"FFIJITResolvePath", reinterpret_cast<void*>(&FFIJITResolvePath)},
      {"FFIJITConvertParam", reinterpret_cast<void*>(&FFIJITConvertParam)},
      {"FFIJITBoxResult", reinterpret_cast<void*>(&FFIJITBoxResult)},
      {"FFIJITBoxResults", reinterpret_cast<void*>(&FFIJITBoxResults)},
      {"ffijit_orc_propagate_status", reinterpret_cast<void*>(&PropagateStatus)},
      {"FFIJITDoubleToF16Bits", reinterpret_cast<void*>(&FFIJITDoubleToF16Bits)},
      {"FFIJITDoubleToBF16Bits", reinterpret_cast<void*>(&FFIJITDoubleToBF16Bits)},
      {"FFIJITInt64ToF16Bits", reinterpret_cast<void*>(&FFIJITInt64ToF16Bits)},
      {"FFIJITInt64ToBF16Bits", reinterpret_cast<void*>(&FFIJITInt64ToBF16Bits)},
  };
}

}  // namespace ffijit::orc
