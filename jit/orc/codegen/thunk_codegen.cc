// Thunk code generation: per-parameter tag checks and conversions, the native call, result boxing.
#include "orc/codegen/thunk_codegen.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstddef>
#include <map>

#include "bound_function.h"
#include "ffijit/any.h"
#include "ffijit/c_ext.h"
#include "float16.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "orc/codegen/abi_ir.h"

namespace ffijit::orc {
namespace {

// Byte offsets the generated code reads (the ABI of c_api.h / c_ext.h / bound_function.h).
constexpr uint64_t kAnyValueOffset = offsetof(TVMFFIAny, v_int64);
constexpr uint64_t kAnySmallLenOffset = offsetof(TVMFFIAny, small_str_len);
constexpr uint64_t kObjectCellOffset = sizeof(TVMFFIObject);
constexpr uint64_t kObjectTypeIndexOffset = offsetof(TVMFFIObject, type_index);
constexpr uint64_t kAnySmallLastByteOffset = offsetof(TVMFFIAny, v_bytes) + 7;
constexpr uint64_t kTargetOffset = offsetof(BoundFunction, target);
constexpr uint64_t kCallCountOffset = offsetof(BoundFunction, calls_until_hot);
constexpr uint64_t kTensorNdimOffset = offsetof(DLTensor, ndim);
constexpr uint64_t kTensorDtypeOffset = offsetof(DLTensor, dtype);
constexpr uint64_t kTensorShapeOffset = offsetof(DLTensor, shape);

}  // namespace

namespace {

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
  std::string Emit(const std::string& symbol) {
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
    if (n_results > 1 || (n_results == 1 && (!plan_.results[0].by_return ||
                                             plan_.return_kind == ReturnKind::kGprPair ||
                                             !BoxesInline(plan_.results[0].conversion)))) {
      results_buf_ = b_.CreateAlloca(llvm::ArrayType::get(i64_, 2 * n_results));
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

  // The IR type of the native call, as the platform layer chose it (orc/abi_ir.h).
  llvm::FunctionType* CallType() const { return ir_.type; }

  // Bound by ThunkRuntimeSymbols to ThunkFallback.
  static constexpr const char* kFallbackSymbol = "ffijit_orc_thunk_fallback";
  // The common side of a branch: taken every call but one in this many.
  static constexpr uint32_t kLikelyWeight = 1u << 20;
  // Bound by ThunkRuntimeSymbols to AnyDefectCode.
  static constexpr const char* kAnyDefectSymbol = "ffijit_orc_any_defect";

 private:
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

  // Counts the call down at handle + 56; the call that brings the count to zero takes the
  // fallback, which reports it (ThunkFallback). One more condition in the check run, no block of
  // its own: the count costs the cold tier's compile time nothing measurable. A plain load and
  // store: a count lost to a concurrent call only delays the report.
  void CountCall() {
    llvm::Value* slot = AtOffset(handle_, kCallCountOffset);
    llvm::Value* left = b_.CreateSub(b_.CreateLoad(i64_, slot), b_.getInt64(1));
    b_.CreateStore(left, slot);
    Require(b_.CreateICmpNE(left, b_.getInt64(0)));
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

  // Whether a check of some argument loads through its payload (an object header).
  bool DereferencesAnArgument() const {
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

  // The scalar checks are written as "these bits are zero". On the cold tier such bits are ORed
  // into one word per width, which the next Flush compares once: at -O0 a compare of its own costs
  // each check a setcc and an and (i64_f64_i32_f32_ptr: 1.13x handwritten with the compares, 1.08x
  // with the words). The hot tier compares; its optimizer chooses the instructions.
  void RequireZero(llvm::Value* bits) {
    if (options_.optimized) {
      Require(b_.CreateICmpEQ(bits, llvm::ConstantInt::get(bits->getType(), 0)));
      return;
    }
    llvm::Value*& word = bits->getType() == i64_ ? nonzero_if_bad64_ : nonzero_if_bad32_;
    word = word == nullptr ? bits : b_.CreateOr(word, bits);
  }
  void RequireTagIs(llvm::Value* tag, int32_t index) {
    RequireZero(b_.CreateXor(tag, b_.getInt32(static_cast<uint32_t>(index))));
  }
  // An Int or a Bool (tags 1 and 2): tag - 1, unsigned, is 0 or 1.
  void RequireIntOrBool(llvm::Value* tag) {
    static_assert(kTVMFFIBool == kTVMFFIInt + 1);
    RequireZero(b_.CreateLShr(b_.CreateSub(tag, b_.getInt32(kTVMFFIInt)), b_.getInt32(1)));
  }
  // The Int `v` is in the conversion's range [min, max], whose size is a power of two 2^k:
  // (v - min), unsigned, has no bit at k or above. Nothing for i64, where every Int fits.
  void RequireFits(Conversion c, llvm::Value* v) {
    const ConversionInfo& info = InfoOf(c);
    const uint64_t span = static_cast<uint64_t>(info.max) - static_cast<uint64_t>(info.min) + 1;
    if (span == 0) return;
    assert(std::has_single_bit(span) && "integer ranges are 2^k values");
    llvm::Value* offset = info.min == 0 ? v : b_.CreateSub(v, b_.getInt64(info.min));
    RequireZero(b_.CreateLShr(offset, b_.getInt64(std::countr_zero(span))));
  }
  // The words folded into ok_.
  void MergeZeroWords() {
    llvm::Value* bad = nonzero_if_bad64_;
    if (nonzero_if_bad32_ != nullptr) {
      llvm::Value* wide = b_.CreateZExt(nonzero_if_bad32_, i64_);
      bad = bad == nullptr ? wide : b_.CreateOr(bad, wide);
    }
    nonzero_if_bad32_ = nonzero_if_bad64_ = nullptr;
    if (bad != nullptr) Require(b_.CreateICmpEQ(bad, b_.getInt64(0)));
  }

  // Leaves for the fallback unless everything checked so far holds: what follows may dereference
  // what those checks validated.
  void Flush() {
    MergeZeroWords();
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(ok_); c && c->isOne()) return;
    auto* next = NewBlock();
    CondBr(ok_, next, fallback_);
    b_.SetInsertPoint(next);
    ok_ = b_.getTrue();
  }

  // At least `bytes` (64 by default) zero bytes: where a speculated load reads when the form it
  // serves is not the one present, so the call block picks among forms with selects instead of
  // branches. One constant per module, as large as its largest user needs.
  llvm::Value* Zeros(uint64_t bytes = 64) {
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
  llvm::Value* ValueOf(int32_t index, bool resolve) {
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

  // Adds to ok_ whether parameter `index` arrives in one of the forms the call block converts.
  void CheckParam(int32_t index) {
    const NativeParam& p = plan_.params[static_cast<size_t>(index)];
    const Conversion c = p.conversion;
    llvm::Value* value = ValueOf(index, true);
    if (c == Conversion::kAnyView) {
      RequireWellFormedAny(value);
      return;
    }
    llvm::Value* tag = b_.CreateLoad(i32_, value);
    llvm::Value* payload = AtOffset(value, kAnyValueOffset);
    if (c == Conversion::kBool) {
      RequireIntOrBool(tag);
    } else if (IsIntegerConversion(c)) {
      RequireIntOrBool(tag);
      RequireFits(c, b_.CreateLoad(i64_, payload));
    } else if (IsFloatConversion(c)) {
      // Int, Bool or Float; but the cold tier takes an f32/f64 inline only as a Float: converting
      // an Int too would cost every call a conversion and a select at -O0 (the fallback does it).
      if (options_.optimized || !IsNativeFloat(c)) {
        Require(TagIn(tag, kTVMFFIInt, 3));
      } else {
        RequireTagIs(tag, kTVMFFIFloat);
      }
    } else if (c == Conversion::kOpaquePtr) {
      // OpaquePtr (4) or None (0): the only tags with no bit but bit 2 set.
      RequireZero(b_.CreateAnd(tag, b_.getInt32(~uint32_t{kTVMFFIOpaquePtr})));
    } else if (c == Conversion::kStr) {
      // A NULL RawStr is the fallback's to accept (nullable) or reject. The object form's check
      // implies its tag (a wrong tag reads the zero stand-in's header).
      llvm::Value* raw =
          b_.CreateAnd(TagIs(tag, kTVMFFIRawStr), b_.CreateIsNotNull(b_.CreateLoad(i64_, payload)));
      Require(b_.CreateOr(b_.CreateOr(raw, WellFormedSmall(tag, value, kTVMFFISmallStr)),
                          ObjectHeaderIs(tag, payload, kTVMFFIStr)));
    } else if (c == Conversion::kBytes) {
      llvm::Value* array = b_.CreateAnd(TagIs(tag, kTVMFFIByteArrayPtr),
                                        b_.CreateIsNotNull(b_.CreateLoad(i64_, payload)));
      llvm::Value* small = b_.CreateOr(WellFormedSmall(tag, value, kTVMFFISmallStr),
                                       WellFormedSmall(tag, value, kTVMFFISmallBytes));
      llvm::Value* object =
          b_.CreateAnd(TagIn(tag, kTVMFFIStr, 2), ObjectHeaderIsTag(tag, payload));
      Require(b_.CreateOr(b_.CreateOr(array, small), object));
    } else if (c == Conversion::kTensor) {
      llvm::Value* tensor = nullptr;
      if (options_.optimized) {
        tensor = checked_tensors_[index] = BranchToTensor(tag, payload);
      } else {
        // The cold tier takes a Tensor object inline, a DLTensorPtr through the fallback: picking
        // between the two forms at -O0 costs every call a second test and two selects in the
        // chain of each dtype/rank/shape load (tensor: 1.27x handwritten with both, 1.00x with
        // the object alone). The dtype and rank of a wrong form read the zero stand-in.
        llvm::Value* object = ReadableObject(tag, payload, kTVMFFITensor);
        Require(b_.CreateICmpEQ(Load(i32_, object, kObjectTypeIndexOffset),
                                b_.getInt32(static_cast<uint32_t>(kTVMFFITensor))));
        tensor = AtOffset(object, kObjectCellOffset);
      }
      RequireWellFormedTensor(p.tensor, tensor);
      CheckTensor(p.tensor, tensor);
    } else if (c == Conversion::kDataType) {
      RequireTagIs(tag, kTVMFFIDataType);
    } else if (c == Conversion::kDevice) {
      RequireTagIs(tag, kTVMFFIDevice);
    } else if (c == Conversion::kObject) {
      // Subtypes and None take the fallback, which asks the type registry.
      // A key no type has yet (the index is read once, here): always the fallback's.
      const int32_t want = __atomic_load_n(&p.object_type_index, __ATOMIC_ACQUIRE);
      // The header check implies an object tag (a non-object tag reads the stand-in's zero).
      Require(want == kTVMFFIObject          ? ObjectHeaderIsTag(tag, payload)
              : want == kUnresolvedTypeIndex ? b_.getFalse()
                                             : ObjectHeaderIs(tag, payload, want));
    }
  }

  // ---- The value-validity contract (details::FindAnyDefect), the one place thunks emit it ----
  //
  // Each helper adds to ok_ that the forms the conversion accepts inline are well-formed; a value
  // that is not takes the fallback, whose interpreter raises the contract's error. The common case
  // costs one compare of the object header against the tag: a NULL object reads a zero header
  // through the stand-in, which no object tag equals. Subtypes (a header that differs from the tag)
  // take the fallback too, which walks the type table.

  // Whether the object in `payload` exists and its header type index is `type_index`. Loads only
  // through an object the tag says is one, and through the zero stand-in otherwise.
  llvm::Value* ObjectHeaderIs(llvm::Value* tag, llvm::Value* payload, int32_t type_index) {
    llvm::Value* object = ReadableObject(tag, payload, type_index);
    return b_.CreateICmpEQ(Load(i32_, object, kObjectTypeIndexOffset),
                           b_.getInt32(static_cast<uint32_t>(type_index)));
  }
  // The object in `payload` when the tag is `type_index` and the object non-NULL; otherwise the
  // zero stand-in (whose header is 0, and whose cell reads as a tensor of rank 0 with no dtype).
  llvm::Value* ReadableObject(llvm::Value* tag, llvm::Value* payload, int32_t type_index) {
    llvm::Value* pointer = b_.CreateLoad(ptr_, payload);
    llvm::Value* readable = b_.CreateAnd(TagIs(tag, type_index), b_.CreateIsNotNull(pointer));
    return b_.CreateSelect(readable, pointer, Zeros(kObjectCellOffset + sizeof(DLTensor)));
  }
  // The same against the tag itself: an object tag, object non-NULL, header == tag. (The tag test
  // stays in the result: None's tag 0 equals the stand-in's zero header.)
  llvm::Value* ObjectHeaderIsTag(llvm::Value* tag, llvm::Value* payload) {
    llvm::Value* pointer = b_.CreateLoad(ptr_, payload);
    llvm::Value* is_object = b_.CreateICmpSGE(tag, b_.getInt32(kTVMFFIStaticObjectBegin));
    llvm::Value* object =
        b_.CreateSelect(b_.CreateAnd(is_object, b_.CreateIsNotNull(pointer)), pointer, Zeros());
    return b_.CreateAnd(is_object,
                        b_.CreateICmpEQ(Load(i32_, object, kObjectTypeIndexOffset), tag));
  }
  // Whether the value is the inline form `small_tag` and well-formed: at most 7 bytes, and for a
  // SmallStr a NUL eighth byte. One compare: (length | eighth byte << 3) <= 7.
  llvm::Value* WellFormedSmall(llvm::Value* tag, llvm::Value* value, int32_t small_tag) {
    llvm::Value* length = Load(i32_, value, kAnySmallLenOffset);
    if (small_tag == kTVMFFISmallStr) {
      llvm::Value* last = b_.CreateZExt(Load(i8_, value, kAnySmallLastByteOffset), i32_);
      length = b_.CreateOr(length, b_.CreateShl(last, 3));
    }
    return b_.CreateAnd(TagIs(tag, small_tag), b_.CreateICmpULE(length, b_.getInt32(7)));
  }
  // A DLTensor (or the zero stand-in) has ndim >= 0 and a shape when ndim > 0. With a checked
  // rank, ndim == rank settles the sign: only a positive rank needs the shape test.
  void RequireWellFormedTensor(const TensorCheck& check, llvm::Value* tensor) {
    llvm::Value* shape_present = b_.CreateIsNotNull(Load(ptr_, tensor, kTensorShapeOffset));
    if (check.rank > 0) {
      Require(shape_present);
      return;
    }
    if (check.rank == 0) return;
    llvm::Value* ndim = Load(i32_, tensor, kTensorNdimOffset);
    Require(b_.CreateAnd(b_.CreateICmpSGE(ndim, b_.getInt32(0)),
                         b_.CreateOr(b_.CreateICmpEQ(ndim, b_.getInt32(0)), shape_present)));
  }
  // The whole contract for an `any` parameter (every form passes), out of line.
  void RequireWellFormedAny(llvm::Value* value) {
    Require(b_.CreateICmpEQ(CallHelper(kAnyDefectSymbol, i32_, {ptr_}, {value}), b_.getInt32(0)));
  }

  // The optimized tier's form test for a tensor argument: a predicted branch on the tag (a Tensor
  // object, the likely form, or a DLTensorPtr), each side checking its own form and leaving for the
  // fallback when it fails. Selecting between the forms instead would chain the header load, the
  // pick and every dtype/rank/shape load behind conditional moves. Returns the DLTensor.
  llvm::Value* BranchToTensor(llvm::Value* tag, llvm::Value* payload) {
    Flush();
    llvm::Value* pointer = b_.CreateLoad(ptr_, payload);
    auto* as_object = NewBlock();
    auto* object_present = NewBlock();
    auto* as_pointer = NewBlock();
    auto* join = NewBlock();
    CondBr(TagIs(tag, kTVMFFITensor), as_object, as_pointer);
    b_.SetInsertPoint(as_object);
    CondBr(b_.CreateIsNotNull(pointer), object_present, fallback_);
    b_.SetInsertPoint(object_present);
    llvm::Value* header = Load(i32_, pointer, kObjectTypeIndexOffset);
    llvm::Value* cell = AtOffset(pointer, kObjectCellOffset);
    CondBr(b_.CreateICmpEQ(header, b_.getInt32(kTVMFFITensor)), join, fallback_);
    b_.SetInsertPoint(as_pointer);
    CondBr(b_.CreateAnd(TagIs(tag, kTVMFFIDLTensorPtr), b_.CreateIsNotNull(pointer)), join,
           fallback_);
    b_.SetInsertPoint(join);
    llvm::PHINode* tensor = b_.CreatePHI(ptr_, 2);
    tensor->addIncoming(cell, object_present);
    tensor->addIncoming(pointer, as_pointer);
    return tensor;
  }

  // Adds the tensor's dtype, rank and static dims to ok_ (the shape is read once the rank is
  // known to match).
  void CheckTensor(const TensorCheck& check, llvm::Value* tensor) {
    if (check.check_dtype) {
      uint32_t want = static_cast<uint32_t>(check.dtype.code) |
                      static_cast<uint32_t>(check.dtype.bits) << 8 | 1u << 16;
      Require(b_.CreateICmpEQ(Load(i32_, tensor, kTensorDtypeOffset), b_.getInt32(want)));
    }
    if (check.rank < 0) return;
    Require(b_.CreateICmpEQ(Load(i32_, tensor, kTensorNdimOffset),
                            b_.getInt32(static_cast<uint32_t>(check.rank))));
    bool any_static = false;
    for (int64_t d : check.dims) any_static |= d >= 0;
    if (!any_static) return;
    Flush();
    llvm::Value* shape = Load(ptr_, tensor, kTensorShapeOffset);
    for (size_t i = 0; i < check.dims.size(); ++i) {
      if (check.dims[i] < 0) continue;
      Require(b_.CreateICmpEQ(Load(i64_, shape, 8 * i),
                              b_.getInt64(static_cast<uint64_t>(check.dims[i]))));
    }
  }

  // The native words of parameter `index`, whose form CheckParam accepted (for f64 and f32 the
  // double or float itself).
  void ConvertParam(int32_t index, llvm::Value* words[2]) {
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
      const char* helper =
          c == Conversion::kF16 ? "ffijit_orc_any_to_f16" : "ffijit_orc_any_to_bf16";
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
  llvm::Value* FloatOrConverted(llvm::Value* is_float, llvm::Value* from_float,
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
  void PassParam(int32_t index, llvm::Value* words[2], std::vector<llvm::Value*>* values) {
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

  llvm::Value* CallTarget(const std::vector<llvm::Value*>& values) {
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
  llvm::Value* ReturnWord(Conversion c, llvm::Value* v) {
    if (v->getType()->isFloatTy()) return b_.CreateZExt(b_.CreateBitCast(v, i32_), i64_);
    if (v->getType()->isDoubleTy()) return b_.CreateBitCast(v, i64_);
    if (v->getType() == i64_) return v;
    if (c == Conversion::kBool) return b_.CreateZExt(b_.CreateICmpNE(v, b_.getInt8(0)), i64_);
    bool is_signed = c == Conversion::kI8 || c == Conversion::kI16 || c == Conversion::kI32;
    return is_signed ? b_.CreateSExt(v, i64_) : b_.CreateZExt(v, i64_);
  }

  void StoreAny(int32_t type_index, llvm::Value* word) {
    // The tag and its zero padding in one 8-byte store.
    const uint64_t tag = static_cast<uint32_t>(type_index);
    b_.CreateStore(b_.getInt64(module_.getDataLayout().isLittleEndian() ? tag : tag << 32),
                   result_);
    b_.CreateStore(word, AtOffset(result_, kAnyValueOffset));
  }

  // True when BoxOne boxes `c` without the shared boxer (which reads the raw buffer).
  static bool BoxesInline(Conversion c) {
    return c == Conversion::kBool || (IsIntegerConversion(c) && c != Conversion::kU64) ||
           c == Conversion::kF64 || c == Conversion::kF32 || c == Conversion::kOpaquePtr ||
           c == Conversion::kDataType || c == Conversion::kDevice;
  }

  // Boxes the one result held in `word` (and raw buffer `raw`) into *result.
  void BoxOne(const ResultSlot& slot, llvm::Value* word, llvm::Value* raw) {
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

  void BoxResults(llvm::Value* returned) {
    const size_t n = plan_.results.size();
    if (plan_.return_kind == ReturnKind::kStatus) {
      auto* failed = NewBlock();
      auto* ok = NewBlock();
      CondBr(b_.CreateICmpEQ(returned, b_.getInt32(0)), ok, failed);
      b_.SetInsertPoint(failed);
      // The native's raised error reaches the caller unchanged; without one, the shared error.
      b_.CreateRet(CallHelper("ffijit_orc_propagate_status", i32_, {ptr_, i32_},
                              {handle_, returned}, options_.cold_error_paths));
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
        // Only the shared boxers read the buffer; the common kinds box straight from the word.
        if (n > 1 || !BoxesInline(plan_.results[0].conversion)) {
          b_.CreateStore(word, ResultBuffer(0));
          b_.CreateStore(b_.getInt64(0), AtOffset(ResultBuffer(0), 8));
        }
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

UnitCompiler::SymbolTable ThunkRuntimeSymbols() {
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
