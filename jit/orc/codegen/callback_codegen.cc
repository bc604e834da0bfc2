// Callback code generation: native parameters in, an array of words out, the invoke call, return.
#include "orc/codegen/callback_codegen.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "orc/codegen/abi_ir.h"

namespace ffijit::orc {
namespace {

// Results a callback can hand back by value: no ownership to manage across the C boundary.
bool IsPlainValueResult(Conversion c) {
  switch (c) {
    case Conversion::kStr:
    case Conversion::kBytes:
    case Conversion::kTensor:
    case Conversion::kObject:
    case Conversion::kAnyView:
      return false;
    default:
      return true;
  }
}

}  // namespace

std::string CallbackUnsupportedReason(const CallPlan& plan) {
  for (size_t i = 0; i < plan.params.size(); ++i) {
    if (plan.params[i].path_size != 0) {
      return "argument `" + plan.params[i].type_text +
             "` is a structure; callbacks take flat C parameters";
    }
  }
  for (size_t i = 1; i < plan.params.size(); ++i) {
    if (plan.params[i].position < plan.params[i - 1].position) {
      return "its arguments are out of native order; callbacks pass C parameters in order";
    }
  }
  if (const int32_t storage = plan.FirstStorageArgument(); storage >= 0) {
    return "a result is written into argument #" + std::to_string(storage) +
           "'s output storage; callbacks return their results";
  }
  if (!plan.result_shape.empty()) {
    return "a result is a structure; callbacks return flat C results";
  }
  for (const ResultSlot& r : plan.results) {
    if (!IsPlainValueResult(r.conversion)) {
      return "result `" + r.type_text +
             "` would be borrowed from a temporary; callbacks return values only";
    }
  }
  if (plan.return_kind == ReturnKind::kGprPair) return "a result returned in a register pair";
  return AbiUnsupportedReason(plan);
}

std::string EmitCallback(const CallPlan& plan, void* state, llvm::Module& module,
                         const std::string& symbol) {
  std::string reason = CallbackUnsupportedReason(plan);
  if (!reason.empty()) return reason;
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* ptr = b.getPtrTy();

  // The C function type, in the IR types of the platform layer (which the ABI probe checks).
  const NativeIr ir = NativeIrOf(plan, ctx);
  auto* fn = llvm::Function::Create(ir.type, llvm::Function::ExternalLinkage, symbol, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  AddAbiAttributes(ir, fn);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  const size_t num_native = ir.first.size();
  llvm::Value* words = b.CreateAlloca(llvm::ArrayType::get(i64, 2 * (num_native ? num_native : 1)),
                                      nullptr, "words");
  llvm::Value* returned = b.CreateAlloca(llvm::ArrayType::get(i64, 2), nullptr, "returned");
  auto word_at = [&](size_t native, int half) {
    return b.CreateConstInBoundsGEP1_64(i64, words, 2 * native + static_cast<size_t>(half));
  };
  auto as_word = [&](llvm::Value* v) -> llvm::Value* {
    if (v->getType()->isDoubleTy()) return b.CreateBitCast(v, i64);
    if (v->getType()->isFloatTy()) return b.CreateZExt(b.CreateBitCast(v, i32), i64);
    if (v->getType()->isPointerTy()) return b.CreatePtrToInt(v, i64);
    return v;
  };
  for (size_t n = 0; n < num_native; ++n) {
    llvm::Argument* first = fn->getArg(ir.first[n]);
    llvm::Value* second = nullptr;
    switch (ir.params[ir.first[n]]) {
      case platform::IrType::kI64Array2:
        b.CreateStore(b.CreateExtractValue(first, 0), word_at(n, 0));
        second = b.CreateExtractValue(first, 1);
        break;
      case platform::IrType::kByvalPair:
        b.CreateStore(b.CreateLoad(i64, first), word_at(n, 0));
        second = b.CreateLoad(i64, b.CreateConstInBoundsGEP1_64(i64, first, 1));
        break;
      default:
        b.CreateStore(as_word(first), word_at(n, 0));
        second = ir.count[n] == 2 ? static_cast<llvm::Value*>(fn->getArg(ir.first[n] + 1))
                                  : b.getInt64(0);
        break;
    }
    b.CreateStore(second, word_at(n, 1));
  }
  auto invoke = module.getOrInsertFunction(kCallbackInvokeSymbol,
                                           llvm::FunctionType::get(i32, {ptr, ptr, ptr}, false));
  llvm::Value* state_ptr = b.CreateIntToPtr(b.getInt64(reinterpret_cast<uintptr_t>(state)), ptr);
  llvm::Value* status = b.CreateCall(invoke, {state_ptr, words, returned});
  // The returned word as the result's IR type: narrow integers and f32 (f16/bf16 in its low bits)
  // from the word's low bits.
  llvm::Type* ret = fn->getReturnType();
  if (plan.return_kind == ReturnKind::kStatus) {
    b.CreateRet(status);
  } else if (ret->isVoidTy()) {
    b.CreateRetVoid();
  } else {
    llvm::Value* word = b.CreateLoad(i64, returned);
    if (ret->isDoubleTy()) {
      b.CreateRet(b.CreateBitCast(word, ret));
    } else if (ret->isFloatTy()) {
      b.CreateRet(b.CreateBitCast(b.CreateTrunc(word, i32), ret));
    } else {
      b.CreateRet(ret == i64 ? word : b.CreateTrunc(word, ret));
    }
  }
  return "";
}

}  // namespace ffijit::orc
