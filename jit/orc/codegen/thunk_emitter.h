// ThunkEmitter, the thunk code generator's private class: its state, the small IR helpers every
// part uses, and the parts' declarations (thunk_codegen.cc: entry, conversions, call, boxing;
// thunk_checks.cc: the argument checks and the value-validity contract).
#ifndef FFIJIT_JIT_ORC_CODEGEN_THUNK_EMITTER_H_
#define FFIJIT_JIT_ORC_CODEGEN_THUNK_EMITTER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ffijit/c_api.h"
#include "interpreter/bound_function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "orc/codegen/abi_ir.h"
#include "orc/codegen/thunk_codegen.h"

namespace ffijit::orc {

// Everything needed while emitting one thunk.
//
// Shape: one straight run of loads and compares (the arity among them on the cold tier, a branch of
// its own on the hot tier) that decides whether every argument has a common form (branching only
// where a check must dereference what an earlier one validated); then the call block, which
// converts each argument from its (now known good) form and calls the target. Any other input --
// a rare form, an error -- takes the interpreter, which by definition converts and fails exactly as
// the interpreter does (on the cold tier, an Int or Bool for an f32/f64 parameter and a DLTensorPtr
// for a tensor are such forms).
// On the cold tier, few blocks and no per-argument phis keep instruction selection on FastISel's
// path and the call path free of spills; the hot tier branches where a predicted branch beats
// computing both sides (ThunkOptions::optimized).
class ThunkEmitter {
 public:
  ThunkEmitter(const CallPlan& plan, llvm::Module& module, const ThunkOptions& options = {})
      : plan_(plan),
        options_(options),
        module_(module),
        ctx_(module.getContext()),
        b_(ctx_),
        i8_(b_.getInt8Ty()),
        i16_(b_.getInt16Ty()),
        i32_(b_.getInt32Ty()),
        i64_(b_.getInt64Ty()),
        f32_(b_.getFloatTy()),
        f64_(b_.getDoubleTy()),
        ptr_(b_.getPtrTy()),
        ir_(NativeIrOf(plan, ctx_)) {}

  // "" on success; otherwise the reason, with the half-built thunk removed from the module.
  std::string Emit(const std::string& symbol);

  // The IR type of the native call, as the platform layer chose it (orc/abi_ir.h).
  llvm::FunctionType* CallType() const { return ir_.type; }

  // Bound by ThunkRuntimeSymbols to ThunkFallback.
  static constexpr const char* kFallbackSymbol = "ffijit_orc_thunk_fallback";
  // The common side of a branch: taken every call but one in this many.
  static constexpr uint32_t kLikelyWeight = 1u << 20;
  // Bound by ThunkRuntimeSymbols to AnyDefectCode.
  static constexpr const char* kAnyDefectSymbol = "ffijit_orc_any_defect";

 private:
  // Byte offsets the generated code reads (the ABI of c_api.h / c_ext.h / bound_function.h).
  static constexpr uint64_t kAnyValueOffset = offsetof(TVMFFIAny, v_int64);
  static constexpr uint64_t kAnySmallLenOffset = offsetof(TVMFFIAny, small_str_len);
  static constexpr uint64_t kObjectCellOffset = sizeof(TVMFFIObject);
  static constexpr uint64_t kObjectTypeIndexOffset = offsetof(TVMFFIObject, type_index);
  static constexpr uint64_t kAnySmallLastByteOffset = offsetof(TVMFFIAny, v_bytes) + 7;
  static constexpr uint64_t kTargetOffset = offsetof(BoundFunction, target);
  static constexpr uint64_t kCallCountOffset = offsetof(BoundFunction, calls_until_hot);
  static constexpr uint64_t kTensorNdimOffset = offsetof(DLTensor, ndim);
  static constexpr uint64_t kTensorDtypeOffset = offsetof(DLTensor, dtype);
  static constexpr uint64_t kTensorShapeOffset = offsetof(DLTensor, shape);

  // Unnamed: value and block names cost time and nothing reads them.
  llvm::BasicBlock* NewBlock() { return llvm::BasicBlock::Create(ctx_, "", fn_); }

  // `cold`: the helper runs off the common path (the optimizer moves its callers out of line).
  llvm::Value* CallHelper(const char* name, llvm::Type* ret, std::vector<llvm::Type*> params,
                          std::vector<llvm::Value*> values, bool cold = false) {
    auto callee = module_.getOrInsertFunction(name, llvm::FunctionType::get(ret, params, false));
    if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
      f->addFnAttr(llvm::Attribute::NoUnwind);
    }
    llvm::CallInst* call = b_.CreateCall(callee, values);
    if (cold) call->addFnAttr(llvm::Attribute::Cold);
    return call;
  }

  // A branch whose `likely` side is the common path; with cold_error_paths the weights say so.
  void CondBr(llvm::Value* cond, llvm::BasicBlock* likely, llvm::BasicBlock* unlikely) {
    llvm::BranchInst* br = b_.CreateCondBr(cond, likely, unlikely);
    if (options_.cold_error_paths) {
      br->setMetadata(llvm::LLVMContext::MD_prof,
                      llvm::MDBuilder(ctx_).createBranchWeights(kLikelyWeight, 1));
    }
  }

  llvm::Value* AtOffset(llvm::Value* base, uint64_t offset) {
    return offset == 0 ? base : b_.CreateConstInBoundsGEP1_64(i8_, base, offset);
  }
  llvm::Value* Load(llvm::Type* type, llvm::Value* base, uint64_t offset) {
    return b_.CreateLoad(type, AtOffset(base, offset));
  }
  llvm::Value* ResultBuffer(size_t i) { return AtOffset(results_buf_, 16 * i); }
  llvm::Value* ToWord(llvm::Value* v) {
    return v->getType()->isPointerTy() ? b_.CreatePtrToInt(v, i64_) : v;
  }

  // f32 and f64: the conversions the call block reads as a native double or float.
  static bool IsNativeFloat(Conversion c) { return c == Conversion::kF64 || c == Conversion::kF32; }

  llvm::Value* TagIs(llvm::Value* tag, int32_t index) {
    return b_.CreateICmpEQ(tag, b_.getInt32(static_cast<uint32_t>(index)));
  }
  // first <= tag < first + count, in one unsigned compare.
  llvm::Value* TagIn(llvm::Value* tag, int32_t first, int32_t count) {
    return b_.CreateICmpULT(b_.CreateSub(tag, b_.getInt32(static_cast<uint32_t>(first))),
                            b_.getInt32(static_cast<uint32_t>(count)));
  }
  void Require(llvm::Value* cond) {
    auto* c = llvm::dyn_cast<llvm::ConstantInt>(ok_);
    ok_ = c && c->isOne() ? cond : b_.CreateAnd(ok_, cond);
  }

  // True when BoxOne boxes `c` without the shared boxer (which reads the raw buffer).
  static bool BoxesInline(Conversion c) {
    return c == Conversion::kBool || (IsIntegerConversion(c) && c != Conversion::kU64) ||
           c == Conversion::kF64 || c == Conversion::kF32 || c == Conversion::kOpaquePtr ||
           c == Conversion::kDataType || c == Conversion::kDevice;
  }

  // The parts below are documented where they are defined.

  // ---- Defined in thunk_codegen.cc: the entry block, the conversions, the call, the boxing ----
  void CountCall();
  bool DereferencesAnArgument() const;
  llvm::Value* Zeros(uint64_t bytes = 64);
  llvm::Value* ValueOf(int32_t index, bool resolve);
  void ConvertParam(int32_t index, llvm::Value* words[2]);
  template <typename EmitFromInt>
  llvm::Value* FloatOrConverted(llvm::Value* is_float, llvm::Value* from_float,
                                EmitFromInt from_int);
  void PassParam(int32_t index, llvm::Value* words[2], std::vector<llvm::Value*>* values);
  llvm::Value* CallTarget(const std::vector<llvm::Value*>& values);
  llvm::Value* ReturnWord(Conversion c, llvm::Value* v);
  void StoreAny(int32_t type_index, llvm::Value* word);
  void BoxOne(const ResultSlot& slot, llvm::Value* word, llvm::Value* raw);
  void BoxResults(llvm::Value* returned);

  // ---- Defined in thunk_checks.cc: the check run, the argument checks, the validity contract ----
  void RequireZero(llvm::Value* bits);
  void RequireTagIs(llvm::Value* tag, int32_t index);
  void RequireIntOrBool(llvm::Value* tag);
  void RequireFits(Conversion c, llvm::Value* v);
  void MergeZeroWords();
  void Flush();
  void CheckParam(int32_t index);
  llvm::Value* ObjectHeaderIs(llvm::Value* tag, llvm::Value* payload, int32_t type_index);
  llvm::Value* ReadableObject(llvm::Value* tag, llvm::Value* payload, int32_t type_index);
  llvm::Value* ObjectHeaderIsTag(llvm::Value* tag, llvm::Value* payload);
  llvm::Value* WellFormedSmall(llvm::Value* tag, llvm::Value* value, int32_t small_tag);
  llvm::Value* SmallStrNulFree(llvm::Value* value);
  void RequireNoNulInside(llvm::Value* tag, llvm::Value* value, llvm::Value* payload);
  void RequireWellFormedTensor(const TensorCheck& check, llvm::Value* tensor);
  void RequireWellFormedAny(llvm::Value* value);
  llvm::Value* BranchToTensor(llvm::Value* tag, llvm::Value* payload);
  void CheckTensor(const TensorCheck& check, llvm::Value* tensor);

  const CallPlan& plan_;
  const ThunkOptions options_;
  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Type *i8_, *i16_, *i32_, *i64_, *f32_, *f64_, *ptr_;
  const NativeIr ir_;  // the native's IR type on this platform
  llvm::Function* fn_ = nullptr;
  llvm::Value *handle_ = nullptr, *args_ = nullptr, *num_args_ = nullptr, *result_ = nullptr;
  llvm::Value *results_buf_ = nullptr, *byval_ = nullptr, *paths_ = nullptr;
  llvm::BasicBlock* fallback_ = nullptr;
  llvm::Value* ok_ = nullptr;  // the checks not yet branched on
  // The cold tier's checks not yet in ok_: each is nonzero when a check failed (RequireZero).
  llvm::Value* nonzero_if_bad32_ = nullptr;
  llvm::Value* nonzero_if_bad64_ = nullptr;
  // The DLTensor each tensor parameter's check found (optimized code; the call block reuses it).
  std::map<int32_t, llvm::Value*> checked_tensors_;
};

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_CODEGEN_THUNK_EMITTER_H_
