// Callback code generation: native parameters in, an array of words out, the invoke call, return.
#include "orc/callback_codegen.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "orc/thunk_codegen.h"

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
  for (const ResultSlot& r : plan.results) {
    if (!IsPlainValueResult(r.conversion)) {
      return "result `" + r.type_text +
             "` would be borrowed from a temporary; callbacks return values only";
    }
  }
  return CheckAbiAgreement(plan);
}

std::string EmitCallback(const CallPlan& plan, void* state, llvm::Module& module,
                         const std::string& symbol) {
  std::string reason = CallbackUnsupportedReason(plan);
  if (!reason.empty()) return reason;
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* f64 = b.getDoubleTy();
  llvm::Type* ptr = b.getPtrTy();
  auto* pair = llvm::StructType::get(ctx, {i64, i64});

  // The C parameter list, in the IR types whose System V lowering CheckAbiAgreement verified.
  std::vector<llvm::Type*> types;
  std::vector<int> first_type;  // per native parameter (arguments then out-pointers)
  std::vector<unsigned> byval;
  for (const NativeParam& p : plan.params) {
    first_type.push_back(static_cast<int>(types.size()));
    switch (p.abi.cls) {
      case AbiClass::kSse:
        types.push_back(f64);
        break;
      case AbiClass::kStack:
        types.push_back(IsFloatConversion(p.conversion) ? f64 : i64);
        break;
      case AbiClass::kGprPair:
        types.push_back(i64);
        types.push_back(i64);
        break;
      case AbiClass::kStackPair:
      case AbiClass::kMemory:
        byval.push_back(static_cast<unsigned>(types.size()));
        types.push_back(ptr);
        break;
      case AbiClass::kGpr:
        types.push_back(i64);
        break;
    }
  }
  for (const ResultSlot& r : plan.results) {
    if (r.by_return) continue;
    first_type.push_back(static_cast<int>(types.size()));
    types.push_back(ptr);
  }
  llvm::Type* ret = b.getVoidTy();
  switch (plan.return_kind) {
    case ReturnKind::kStatus:
      ret = i32;
      break;
    case ReturnKind::kGpr:
      ret = i64;
      break;
    case ReturnKind::kSse:
      // A float result is its bit pattern in the low bits of xmm0.
      ret = f64;
      break;
    case ReturnKind::kGprPair:
      return "a result returned in a register pair";
    case ReturnKind::kVoid:
      break;
  }

  auto* fn = llvm::Function::Create(llvm::FunctionType::get(ret, types, false),
                                    llvm::Function::ExternalLinkage, symbol, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  for (unsigned index : byval) {
    fn->addParamAttr(index, llvm::Attribute::getWithByValType(ctx, pair));
    fn->addParamAttr(index, llvm::Attribute::getWithAlignment(ctx, llvm::Align(8)));
  }
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  const size_t num_native = first_type.size();
  llvm::Value* words = b.CreateAlloca(llvm::ArrayType::get(i64, 2 * (num_native ? num_native : 1)),
                                      nullptr, "words");
  llvm::Value* returned = b.CreateAlloca(llvm::ArrayType::get(i64, 2), nullptr, "returned");
  auto word_at = [&](size_t native, int half) {
    return b.CreateConstInBoundsGEP1_64(i64, words, 2 * native + static_cast<size_t>(half));
  };
  auto as_word = [&](llvm::Value* v) -> llvm::Value* {
    if (v->getType()->isDoubleTy()) return b.CreateBitCast(v, i64);
    if (v->getType()->isPointerTy()) return b.CreatePtrToInt(v, i64);
    return v;
  };
  for (size_t n = 0; n < num_native; ++n) {
    llvm::Argument* first = fn->getArg(static_cast<unsigned>(first_type[n]));
    bool is_param = n < plan.params.size();
    AbiClass cls = is_param ? plan.params[n].abi.cls : AbiClass::kGpr;
    if (cls == AbiClass::kGprPair) {
      b.CreateStore(first, word_at(n, 0));
      b.CreateStore(fn->getArg(static_cast<unsigned>(first_type[n]) + 1), word_at(n, 1));
    } else if (cls == AbiClass::kStackPair || cls == AbiClass::kMemory) {
      b.CreateStore(b.CreateLoad(i64, first), word_at(n, 0));
      b.CreateStore(b.CreateLoad(i64, b.CreateConstInBoundsGEP1_64(i64, first, 1)), word_at(n, 1));
    } else {
      b.CreateStore(as_word(first), word_at(n, 0));
      b.CreateStore(b.getInt64(0), word_at(n, 1));
    }
  }
  auto invoke = module.getOrInsertFunction(kCallbackInvokeSymbol,
                                           llvm::FunctionType::get(i32, {ptr, ptr, ptr}, false));
  llvm::Value* state_ptr = b.CreateIntToPtr(b.getInt64(reinterpret_cast<uintptr_t>(state)), ptr);
  llvm::Value* status = b.CreateCall(invoke, {state_ptr, words, returned});
  switch (plan.return_kind) {
    case ReturnKind::kStatus:
      b.CreateRet(status);
      break;
    case ReturnKind::kGpr:
      b.CreateRet(b.CreateLoad(i64, returned));
      break;
    case ReturnKind::kSse:
      b.CreateRet(b.CreateBitCast(b.CreateLoad(i64, returned), f64));
      break;
    default:
      b.CreateRetVoid();
      break;
  }
  return "";
}

}  // namespace ffijit::orc
