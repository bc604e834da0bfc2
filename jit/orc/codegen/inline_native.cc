// Inlined hot thunks: copies an IR native (and only what it needs) into the hot thunk's module and
// builds the adapter the thunk calls it through.
#include "orc/codegen/inline_native.h"

#include <unordered_set>
#include <utility>

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "orc/codegen/abi_ir.h"
#include "orc/codegen/thunk_codegen.h"
#include "orc/llvm/session.h"

namespace ffijit::orc {
namespace {

std::string Quoted(llvm::StringRef name) {
  return "`" + name.str() + "`";
}

std::string TypeText(llvm::Type* type) {
  std::string text;
  llvm::raw_string_ostream out(text);
  type->print(out);
  return out.str();
}

// The symbols `value` refers to, through constant expressions and aggregates.
void CollectGlobals(const llvm::Value* value, std::unordered_set<const llvm::Value*>* seen,
                    std::vector<llvm::GlobalValue*>* out) {
  if (!seen->insert(value).second) return;
  if (auto* global = llvm::dyn_cast<llvm::GlobalValue>(value)) {
    out->push_back(const_cast<llvm::GlobalValue*>(global));
    return;
  }
  if (auto* constant = llvm::dyn_cast<llvm::Constant>(value)) {
    for (const llvm::Use& operand : constant->operands()) CollectGlobals(operand.get(), seen, out);
  }
}

std::vector<llvm::GlobalValue*> ReferencedGlobals(const llvm::GlobalValue& global) {
  std::unordered_set<const llvm::Value*> seen;
  std::vector<llvm::GlobalValue*> out;
  if (auto* function = llvm::dyn_cast<llvm::Function>(&global)) {
    for (const llvm::BasicBlock& block : *function) {
      for (const llvm::Instruction& inst : block) {
        for (const llvm::Use& operand : inst.operands()) {
          if (llvm::isa<llvm::Constant>(operand.get())) CollectGlobals(operand.get(), &seen, &out);
        }
      }
    }
  } else if (auto* variable = llvm::dyn_cast<llvm::GlobalVariable>(&global)) {
    if (variable->hasInitializer()) CollectGlobals(variable->getInitializer(), &seen, &out);
  }
  return out;
}

// "" when a function's body can be copied as it is; otherwise why not.
std::string CopyableFunctionReason(const llvm::Function& function) {
  if (function.hasPersonalityFn()) {
    return Quoted(function.getName()) +
           " handles exceptions, and hot-tier code has no unwind tables registered";
  }
  if (function.hasPrefixData() || function.hasPrologueData()) {
    return Quoted(function.getName()) + " has prefix or prologue data";
  }
  return "";
}

// Finds what the native needs: `keep` the module-internal functions and constants to copy (the
// native first), `external` the symbols to resolve. "" or why the native cannot be copied.
std::string Closure(llvm::Function* native, std::vector<llvm::GlobalValue*>* keep,
                    std::vector<llvm::GlobalValue*>* external) {
  std::unordered_set<llvm::GlobalValue*> kept = {native}, resolved;
  keep->push_back(native);
  for (size_t next = 0; next < keep->size(); ++next) {
    for (llvm::GlobalValue* global : ReferencedGlobals(*(*keep)[next])) {
      if (kept.count(global) || resolved.count(global)) continue;
      auto* function = llvm::dyn_cast<llvm::Function>(global);
      if (function && function->isIntrinsic()) continue;
      if (global->isThreadLocal()) {
        return "it uses the thread-local " + Quoted(global->getName()) +
               ", whose address differs per thread";
      }
      if (global->getAddressSpace() != 0) {
        return "it uses " + Quoted(global->getName()) + " in address space " +
               std::to_string(global->getAddressSpace());
      }
      if (!global->hasLocalLinkage()) {
        resolved.insert(global);
        external->push_back(global);
        continue;
      }
      // Module-internal: a copy must be indistinguishable from the original.
      if (function && !function->isDeclaration()) {
        if (function->hasAddressTaken()) {
          return "it uses the address of the module-internal function " +
                 Quoted(function->getName()) + ", which a copy would not have";
        }
        std::string reason = CopyableFunctionReason(*function);
        if (!reason.empty()) return reason;
      } else if (auto* variable = llvm::dyn_cast<llvm::GlobalVariable>(global)) {
        if (!variable->isConstant() || !variable->hasInitializer() ||
            !variable->hasAtLeastLocalUnnamedAddr()) {
          return "it uses the module-internal variable " + Quoted(variable->getName()) +
                 ", whose state (or address) only the module has";
        }
      } else {
        return "it uses the module-internal " + Quoted(global->getName()) +
               " (an alias or ifunc), which is not copied";
      }
      kept.insert(global);
      keep->push_back(global);
    }
  }
  return "";
}

// An aggregate of two 64-bit integer or pointer elements (a register pair).
bool IsWordPair(llvm::Type* type) {
  if (!type->isAggregateType()) return false;
  unsigned n = 0;
  llvm::Type* elements[2] = {nullptr, nullptr};
  if (auto* array = llvm::dyn_cast<llvm::ArrayType>(type)) {
    if (array->getNumElements() != 2) return false;
    elements[0] = elements[1] = array->getElementType();
    n = 2;
  } else if (auto* structure = llvm::dyn_cast<llvm::StructType>(type)) {
    if (structure->getNumElements() != 2) return false;
    elements[0] = structure->getElementType(0);
    elements[1] = structure->getElementType(1);
    n = 2;
  }
  if (n != 2) return false;
  for (llvm::Type* element : elements) {
    if (!element->isIntegerTy(64) && !element->isPointerTy()) return false;
  }
  return true;
}

// One 64-bit word as `to` (i64 or ptr).
llvm::Value* WordAs(llvm::IRBuilder<>& b, llvm::Value* word, llvm::Type* to) {
  if (word->getType() == to) return word;
  if (to->isPointerTy()) return b.CreateIntToPtr(word, to);
  return b.CreatePtrToInt(word, to);
}

// The value the thunk passes as `value` (of the thunk's IR type), as the native's parameter of IR
// type `to` receives the same register or stack slot; nullptr when the two travel differently.
llvm::Value* ToNativeParam(llvm::IRBuilder<>& b, llvm::Value* value, llvm::Type* to) {
  llvm::Type* from = value->getType();
  if (from == to) return value;
  if (from->isIntegerTy(64)) {
    // A narrower integer is the register's low bits; a pointer the whole word.
    if (to->isIntegerTy() && to->getIntegerBitWidth() < 64) return b.CreateTrunc(value, to);
    if (to->isPointerTy()) return b.CreateIntToPtr(value, to);
    return nullptr;
  }
  if (from->isDoubleTy()) {
    // f32, f16 and bf16 travel as the low bits of the vector register the thunk fills as f64.
    if (to->isFloatTy() || to->isHalfTy() || to->isBFloatTy()) {
      llvm::Value* bits = b.CreateBitCast(value, b.getInt64Ty());
      bits = b.CreateTrunc(bits, b.getIntNTy(to->getPrimitiveSizeInBits().getFixedValue()));
      return b.CreateBitCast(bits, to);
    }
    return nullptr;
  }
  if (IsWordPair(from) && IsWordPair(to)) {
    llvm::Value* out = llvm::PoisonValue::get(to);
    for (unsigned i = 0; i < 2; ++i) {
      llvm::Type* element = llvm::isa<llvm::ArrayType>(to)
                                ? to->getArrayElementType()
                                : llvm::cast<llvm::StructType>(to)->getElementType(i);
      out = b.CreateInsertValue(out, WordAs(b, b.CreateExtractValue(value, i), element), i);
    }
    return out;
  }
  return nullptr;
}

// The native's result `value` as the thunk reads the same register(s), of IR type `to`; nullptr
// when that is not defined (e.g. the native returns fewer bits than the thunk reads).
llvm::Value* ToThunkResult(llvm::IRBuilder<>& b, llvm::Value* value, llvm::Type* to,
                           const llvm::AttributeSet& ret_attributes) {
  llvm::Type* from = value->getType();
  if (from == to) return value;
  if (from->isIntegerTy() && to->isIntegerTy()) {
    const unsigned from_bits = from->getIntegerBitWidth(), to_bits = to->getIntegerBitWidth();
    if (from_bits > to_bits) return b.CreateTrunc(value, to);
    // A C bool is a byte holding 0 or 1 on every ABI (AArch64's IR says i1 without zeroext).
    if (from_bits == 1 && to_bits <= 8) return b.CreateZExt(value, to);
    // Only a zeroext/signext result defines bits above its width, and only up to 32.
    if (to_bits <= 32 && ret_attributes.hasAttribute(llvm::Attribute::ZExt)) {
      return b.CreateZExt(value, to);
    }
    if (to_bits <= 32 && ret_attributes.hasAttribute(llvm::Attribute::SExt)) {
      return b.CreateSExt(value, to);
    }
    return nullptr;
  }
  if (from->isPointerTy() && to->isIntegerTy(64)) return b.CreatePtrToInt(value, to);
  if ((from->isHalfTy() || from->isBFloatTy()) && to->isFloatTy()) {
    // The thunk reads an f16/bf16 result as the low 16 bits of an f32.
    llvm::Value* bits = b.CreateZExt(b.CreateBitCast(value, b.getInt16Ty()), b.getInt32Ty());
    return b.CreateBitCast(bits, to);
  }
  if (IsWordPair(from) && IsWordPair(to)) return ToNativeParam(b, value, to);
  return nullptr;
}

// The attributes that decide how a value is passed, copied from the native's parameters to the
// adapter's call (not the native's promises, such as nonnull or noundef).
llvm::AttributeList CallAbiAttributes(llvm::LLVMContext& ctx, const llvm::Function& native) {
  llvm::AttributeList list;
  const llvm::AttributeList& declared = native.getAttributes();
  for (unsigned i = 0; i < native.arg_size(); ++i) {
    llvm::AttrBuilder builder(ctx);
    for (llvm::Attribute::AttrKind kind :
         {llvm::Attribute::ZExt, llvm::Attribute::SExt, llvm::Attribute::InReg}) {
      if (declared.hasParamAttr(i, kind)) builder.addAttribute(kind);
    }
    if (llvm::Type* byval = declared.getParamByValType(i)) {
      builder.addByValAttr(byval);
      if (llvm::MaybeAlign align = declared.getParamAlignment(i)) builder.addAlignmentAttr(align);
    }
    if (builder.hasAttributes()) list = list.addParamAttributes(ctx, i, builder);
  }
  for (llvm::Attribute::AttrKind kind : {llvm::Attribute::ZExt, llvm::Attribute::SExt}) {
    if (declared.hasRetAttr(kind)) list = list.addRetAttribute(ctx, kind);
  }
  return list;
}

// Defines `adapter` (of the thunk's call type) in the native's module: converts, calls, converts
// back. "" or why the native's parameters do not travel the way the thunk passes them.
std::string BuildAdapter(llvm::Function* adapter, llvm::Function* native) {
  llvm::FunctionType* thunk_type = adapter->getFunctionType();
  llvm::FunctionType* native_type = native->getFunctionType();
  const std::string types = " (the native is " + TypeText(native_type) +
                            ", its signature is called as " + TypeText(thunk_type) + ")";
  if (native_type->isVarArg()) return "the native is variadic" + types;
  if (native->getCallingConv() != llvm::CallingConv::C) {
    return "the native has a calling convention other than C's" + types;
  }
  if (native_type->getNumParams() != thunk_type->getNumParams()) {
    return "the native has " + std::to_string(native_type->getNumParams()) +
           " IR parameters, its signature passes " + std::to_string(thunk_type->getNumParams()) +
           types;
  }
  const llvm::AttributeList& declared = native->getAttributes();
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(adapter->getContext(), "", adapter));
  std::vector<llvm::Value*> values;
  for (unsigned i = 0; i < native_type->getNumParams(); ++i) {
    for (llvm::Attribute::AttrKind kind :
         {llvm::Attribute::StructRet, llvm::Attribute::InAlloca, llvm::Attribute::Preallocated,
          llvm::Attribute::SwiftSelf, llvm::Attribute::SwiftError, llvm::Attribute::SwiftAsync,
          llvm::Attribute::Nest, llvm::Attribute::ByRef}) {
      if (declared.hasParamAttr(i, kind)) {
        return "the native's IR parameter " + std::to_string(i) +
               " has an attribute the thunk does not pass (" +
               llvm::Attribute::getNameFromAttrKind(kind).str() + ")" + types;
      }
    }
    const bool native_byval = declared.getParamByValType(i) != nullptr;
    const bool thunk_byval = adapter->getAttributes().getParamByValType(i) != nullptr;
    if (native_byval != thunk_byval) {
      return "the native's IR parameter " + std::to_string(i) +
             (native_byval ? " is a stack copy (byval), which the thunk passes in registers"
                           : " is passed in registers, which the thunk passes as a stack copy") +
             types;
    }
    llvm::Value* value = ToNativeParam(b, adapter->getArg(i), native_type->getParamType(i));
    if (value == nullptr) {
      return "the native's IR parameter " + std::to_string(i) + " is " +
             TypeText(native_type->getParamType(i)) + ", which does not travel as the " +
             TypeText(thunk_type->getParamType(i)) + " the thunk passes" + types;
    }
    values.push_back(value);
  }
  llvm::CallInst* call = b.CreateCall(native, values);
  call->setCallingConv(native->getCallingConv());
  call->setAttributes(CallAbiAttributes(adapter->getContext(), *native));
  llvm::Type* result_type = thunk_type->getReturnType();
  if (result_type->isVoidTy()) {
    b.CreateRetVoid();
    return "";
  }
  if (native_type->getReturnType()->isVoidTy()) return "the native returns nothing" + types;
  llvm::Value* result = ToThunkResult(b, call, result_type, declared.getRetAttrs());
  if (result == nullptr) {
    return "the native returns " + TypeText(native_type->getReturnType()) +
           ", which does not define the " + TypeText(result_type) + " its signature reads" + types;
  }
  b.CreateRet(result);
  return "";
}

// Everything else the copy uses stays a declaration of the same name, which the hot unit's link
// order resolves as the module's own code does (CompileRequest::link_with). An alias or ifunc
// cannot be declared: a plain declaration of its name stands in for it. Returns the declarations.
std::unordered_set<llvm::GlobalValue*> DeclareExternals(
    llvm::Module& source, const std::vector<llvm::GlobalValue*>& external) {
  std::unordered_set<llvm::GlobalValue*> declared;
  for (llvm::GlobalValue* global : external) {
    if (llvm::isa<llvm::GlobalAlias>(global) || llvm::isa<llvm::GlobalIFunc>(global)) {
      const std::string name = global->getName().str();
      global->setName("");
      llvm::GlobalValue* declaration;
      if (auto* type = llvm::dyn_cast<llvm::FunctionType>(global->getValueType())) {
        declaration =
            llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name, source);
      } else {
        declaration = new llvm::GlobalVariable(source, global->getValueType(), false,
                                               llvm::GlobalValue::ExternalLinkage, nullptr, name);
      }
      global->replaceAllUsesWith(declaration);
      declared.insert(declaration);
    } else {
      declared.insert(global);
    }
  }
  return declared;
}

// Drops everything of `source` but `keep` and the declarations: bodies and initialisers first
// (so nothing refers to what goes), then the symbols themselves, then the named metadata.
// Intrinsic declarations the copy calls stay. "" or why the copy cannot be made.
std::string DropAllBut(llvm::Module& source, const std::vector<llvm::GlobalValue*>& keep,
                       const std::unordered_set<llvm::GlobalValue*>& declared) {
  std::unordered_set<llvm::GlobalValue*> kept(keep.begin(), keep.end());
  std::vector<llvm::GlobalValue*> doomed;
  for (llvm::Function& f : source) {
    if (kept.count(&f)) continue;
    if (!f.isDeclaration()) f.deleteBody();
    if (!declared.count(&f)) doomed.push_back(&f);
  }
  for (llvm::GlobalVariable& v : source.globals()) {
    if (kept.count(&v)) continue;
    v.setLinkage(llvm::GlobalValue::ExternalLinkage);
    v.setInitializer(nullptr);
    if (!declared.count(&v)) doomed.push_back(&v);
  }
  for (llvm::GlobalValue* global : declared) {
    global->setLinkage(llvm::GlobalValue::ExternalLinkage);
    global->setVisibility(llvm::GlobalValue::DefaultVisibility);
    global->setDSOLocal(false);
    if (auto* object = llvm::dyn_cast<llvm::GlobalObject>(global)) object->setComdat(nullptr);
  }
  for (llvm::GlobalAlias& a : source.aliases()) doomed.push_back(&a);
  for (llvm::GlobalIFunc& i : source.ifuncs()) doomed.push_back(&i);
  for (llvm::GlobalValue* global : doomed) {
    if (auto* alias = llvm::dyn_cast<llvm::GlobalAlias>(global)) {
      alias->replaceAllUsesWith(llvm::PoisonValue::get(alias->getType()));
    } else if (auto* ifunc = llvm::dyn_cast<llvm::GlobalIFunc>(global)) {
      ifunc->replaceAllUsesWith(llvm::PoisonValue::get(ifunc->getType()));
    }
  }
  for (llvm::GlobalValue* global : doomed) {
    global->removeDeadConstantUsers();
    auto* f = llvm::dyn_cast<llvm::Function>(global);
    if (f && f->isIntrinsic() && !f->use_empty()) continue;
    if (!global->use_empty()) {
      return "internal error: " + Quoted(global->getName()) + " is still used by the copy";
    }
    global->eraseFromParent();
  }
  std::vector<llvm::NamedMDNode*> named;
  for (llvm::NamedMDNode& node : source.named_metadata()) named.push_back(&node);
  for (llvm::NamedMDNode* node : named) source.eraseNamedMetadata(node);
  return "";
}

}  // namespace

bool LinkNativeForInlining(const CallPlan& plan, llvm::Module& module, const std::string& bitcode,
                           const std::string& function, LinkedNative* linked, std::string* why) {
  llvm::LLVMContext& ctx = module.getContext();
  auto parsed = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(llvm::StringRef(bitcode.data(), bitcode.size()), "native"), ctx);
  if (!parsed) {
    *why = "cannot read the native's IR: " + ErrorText(parsed.takeError());
    return false;
  }
  std::unique_ptr<llvm::Module> source = std::move(*parsed);
  llvm::Function* native = source->getFunction(function);
  if (native == nullptr || native->isDeclaration()) {
    *why = "the native's IR does not define " + Quoted(function);
    return false;
  }
  if (std::string reason = CopyableFunctionReason(*native); !reason.empty()) {
    *why = reason;
    return false;
  }
  llvm::StripDebugInfo(*source);

  std::vector<llvm::GlobalValue*> keep, external;
  if (std::string reason = Closure(native, &keep, &external); !reason.empty()) {
    *why = reason;
    return false;
  }

  // The adapter first: a native whose parameters do not fit is refused before any work.
  llvm::FunctionType* call_type = NativeCallType(plan, module);
  auto* adapter = llvm::Function::Create(call_type, llvm::Function::ExternalLinkage,
                                         "ffijit.inline.adapter", *source);
  AddAbiAttributes(NativeIrOf(plan, ctx), adapter);
  if (std::string reason = BuildAdapter(adapter, native); !reason.empty()) {
    *why = reason;
    return false;
  }
  keep.push_back(adapter);

  const std::unordered_set<llvm::GlobalValue*> declared = DeclareExternals(*source, external);
  if (std::string reason = DropAllBut(*source, keep, declared); !reason.empty()) {
    *why = reason;
    return false;
  }

  for (llvm::GlobalValue* global : keep) {
    if (global != adapter) global->setLinkage(llvm::GlobalValue::InternalLinkage);
    global->setVisibility(llvm::GlobalValue::DefaultVisibility);
    global->setDLLStorageClass(llvm::GlobalValue::DefaultStorageClass);
    if (auto* object = llvm::dyn_cast<llvm::GlobalObject>(global)) object->setComdat(nullptr);
  }
  // The hot tier exists to inline the native: a noinline or optnone from its compile does not
  // stop it (either changes speed only).
  for (llvm::Function* f : {native, adapter}) {
    f->removeFnAttr(llvm::Attribute::OptimizeNone);
    f->removeFnAttr(llvm::Attribute::NoInline);
    f->addFnAttr(llvm::Attribute::AlwaysInline);
  }
  source->setDataLayout(module.getDataLayout());
  source->setTargetTriple(module.getTargetTriple());

  const std::string adapter_name = adapter->getName().str();
  linked->module_changed = true;
  if (llvm::Linker::linkModules(module, std::move(source))) {
    *why = "cannot link the native's IR into the thunk's module";
    return false;
  }
  linked->adapter = module.getFunction(adapter_name);
  if (linked->adapter == nullptr) {
    *why = "internal error: the adapter is missing after linking";
    return false;
  }
  linked->adapter->setLinkage(llvm::GlobalValue::InternalLinkage);
  linked->adapter_name = adapter_name;
  // The adapter's one call is the native's copy (renamed if its name was taken).
  linked->native_name.clear();
  for (llvm::BasicBlock& block : *linked->adapter) {
    for (llvm::Instruction& inst : block) {
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(&inst)) {
        if (llvm::Function* callee = call->getCalledFunction()) {
          linked->native_name = callee->getName().str();
        }
      }
    }
  }
  return true;
}

}  // namespace ffijit::orc
