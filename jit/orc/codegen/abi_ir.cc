// The host ABI as LLVM IR types, and the probe that asks the target whether it agrees.
#include "orc/codegen/abi_ir.h"

#include <cstring>
#include <mutex>
#include <unordered_map>

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace ffijit::orc {
namespace {

using platform::IrType;

// What the probe returns, per result IR type: distinct bit patterns (the floats are pi).
constexpr uint64_t kRetIntSentinel = 0x8877665544332211u;
constexpr uint64_t kRetHighSentinel = 0x0102030405060708u;
constexpr uint32_t kRetF32Sentinel = 0x40490FDBu;
constexpr uint64_t kRetF64Sentinel = 0x400921FB54442D18u;

constexpr const char* kProbeSuffix = ".abi_probe";
constexpr const char* kProbeBufferSuffix = ".abi_probe_buffer";

// Frame word i of a probe call: a distinct value, a normal double too (exponent 0x4A5), so no
// vector register move can treat it as a NaN.
uint64_t Sentinel(size_t i) {
  return 0x4A5A000000000000u | (uint64_t{i + 1} << 16) | 0xA5u;
}

struct ShapeCache {
  std::mutex mutex;
  std::unordered_map<std::string, std::string> verdicts;  // shape -> "" (agrees) or why not
  AbiProbeCounters counters;
};
ShapeCache& Shapes() {
  static auto* cache = new ShapeCache();
  return *cache;
}

const char* IrTypeName(IrType t) {
  switch (t) {
    case IrType::kVoid:
      return "void";
    case IrType::kI8:
      return "i8";
    case IrType::kI16:
      return "i16";
    case IrType::kI32:
      return "i32";
    case IrType::kI64:
      return "i64";
    case IrType::kF32:
      return "float";
    case IrType::kF64:
      return "double";
    case IrType::kPtr:
      return "ptr";
    case IrType::kI64Pair:
      return "{i64,i64}";
    case IrType::kI64Array2:
      return "[2 x i64]";
    case IrType::kByvalPair:
      return "ptr byval({i64,i64})";
  }
  return "?";
}

// Native parameter n's location: arguments first, then the out-pointers.
std::vector<AbiLocation> NativeLocations(const CallPlan& plan) {
  std::vector<AbiLocation> locations;
  for (const NativeParam& p : plan.params) locations.push_back(p.abi);
  for (const ResultSlot& r : plan.results) {
    if (!r.by_return) locations.push_back(r.out_abi);
  }
  return locations;
}

std::string DescribeFrameWord(int64_t index) {
  const platform::PlatformAbi& abi = platform::kHost;
  if (index < abi.fpr_base()) return "integer register " + std::to_string(index);
  if (index < abi.stack_base()) {
    return "vector register " + std::to_string(index - abi.fpr_base());
  }
  return "stack slot " + std::to_string(index - abi.stack_base());
}

// Where the recorded word came from: the frame word holding it, or that it is no frame word.
std::string DescribeSource(const uint64_t* frame, size_t frame_words, uint64_t word) {
  for (size_t i = 0; i < frame_words; ++i) {
    if (frame[i] == word) return DescribeFrameWord(static_cast<int64_t>(i));
  }
  return "no word the caller passed";
}

std::string RunProbe(const CallPlan& plan, void* probe, void* buffer) {
#if FFIJIT_HAVE_CALL_STUB
  const size_t frame_words = static_cast<size_t>(platform::kFrameStackBase + plan.num_stack);
  std::vector<uint64_t> frame(frame_words);
  for (size_t i = 0; i < frame_words; ++i) frame[i] = Sentinel(i);
  const size_t natives = NativeLocations(plan).size();
  std::memset(buffer, 0, 16 * (natives ? natives : 1));
  uint64_t ret[platform::kRetWords] = {};
  platform::ffijit_call_stub(probe, frame.data(), frame.data() + platform::kFrameStackBase,
                             static_cast<uint64_t>(plan.num_stack), ret);
  return CompareProbeRecord(plan, frame.data(), static_cast<const uint64_t*>(buffer), ret);
#else
  (void)plan;
  (void)probe;
  (void)buffer;
  return platform::kNoPlatformReason;
#endif
}

void EmitAbiProbe(const CallPlan& plan, llvm::Module& module, const std::string& name) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* i64 = b.getInt64Ty();
  NativeIr ir = NativeIrOf(plan, ctx);
  const size_t natives = ir.first.size();
  auto* buffer_type = llvm::ArrayType::get(i64, 2 * (natives ? natives : 1));
  auto* buffer = new llvm::GlobalVariable(
      module, buffer_type, false, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantAggregateZero::get(buffer_type), name + kProbeBufferSuffix);
  auto* fn =
      llvm::Function::Create(ir.type, llvm::Function::ExternalLinkage, name + kProbeSuffix, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  AddAbiAttributes(ir, fn);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "", fn));
  auto as_word = [&](llvm::Value* v) -> llvm::Value* {
    llvm::Type* t = v->getType();
    if (t->isPointerTy()) return b.CreatePtrToInt(v, i64);
    if (t->isDoubleTy()) return b.CreateBitCast(v, i64);
    if (t->isFloatTy()) return b.CreateZExt(b.CreateBitCast(v, b.getInt32Ty()), i64);
    if (t != i64) return b.CreateZExt(v, i64);
    return v;
  };
  for (size_t n = 0; n < natives; ++n) {
    llvm::Argument* arg = fn->getArg(ir.first[n]);
    llvm::Value* words[2] = {nullptr, nullptr};
    switch (ir.params[ir.first[n]]) {
      case IrType::kI64Array2:
        words[0] = b.CreateExtractValue(arg, 0);
        words[1] = b.CreateExtractValue(arg, 1);
        break;
      case IrType::kByvalPair:
        words[0] = b.CreateLoad(i64, arg);
        words[1] = b.CreateLoad(i64, b.CreateConstInBoundsGEP1_64(i64, arg, 1));
        break;
      default:
        words[0] = as_word(arg);
        if (ir.count[n] == 2) words[1] = as_word(fn->getArg(ir.first[n] + 1));
        break;
    }
    for (int w = 0; w < 2; ++w) {
      if (words[w] == nullptr) continue;
      b.CreateStore(words[w], b.CreateConstInBoundsGEP1_64(i64, buffer, 2 * n + w));
    }
  }
  switch (ir.ret) {
    case IrType::kVoid:
      b.CreateRetVoid();
      break;
    case IrType::kF32:
      b.CreateRet(llvm::ConstantFP::get(
          ctx, llvm::APFloat(llvm::APFloat::IEEEsingle(), llvm::APInt(32, kRetF32Sentinel))));
      break;
    case IrType::kF64:
      b.CreateRet(llvm::ConstantFP::get(
          ctx, llvm::APFloat(llvm::APFloat::IEEEdouble(), llvm::APInt(64, kRetF64Sentinel))));
      break;
    case IrType::kI64Pair: {
      llvm::Type* pair = ToLlvmType(ctx, IrType::kI64Pair);
      llvm::Value* v = llvm::UndefValue::get(pair);
      v = b.CreateInsertValue(v, b.getInt64(kRetIntSentinel), 0);
      v = b.CreateInsertValue(v, b.getInt64(kRetHighSentinel), 1);
      b.CreateRet(v);
      break;
    }
    default: {
      llvm::Type* t = ToLlvmType(ctx, ir.ret);
      b.CreateRet(llvm::ConstantInt::get(
          t, kRetIntSentinel &
                 (t->getIntegerBitWidth() == 64 ? ~uint64_t{0}
                                                : (uint64_t{1} << t->getIntegerBitWidth()) - 1)));
      break;
    }
  }
}

}  // namespace

llvm::Type* ToLlvmType(llvm::LLVMContext& ctx, IrType type) {
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  switch (type) {
    case IrType::kVoid:
      return llvm::Type::getVoidTy(ctx);
    case IrType::kI8:
      return llvm::Type::getInt8Ty(ctx);
    case IrType::kI16:
      return llvm::Type::getInt16Ty(ctx);
    case IrType::kI32:
      return llvm::Type::getInt32Ty(ctx);
    case IrType::kI64:
      return i64;
    case IrType::kF32:
      return llvm::Type::getFloatTy(ctx);
    case IrType::kF64:
      return llvm::Type::getDoubleTy(ctx);
    case IrType::kPtr:
    case IrType::kByvalPair:
      return llvm::PointerType::getUnqual(ctx);
    case IrType::kI64Pair:
      return llvm::StructType::get(ctx, {i64, i64});
    case IrType::kI64Array2:
      return llvm::ArrayType::get(i64, 2);
  }
  return i64;
}

NativeIr NativeIrOf(const CallPlan& plan, llvm::LLVMContext& ctx) {
  NativeIr ir;
  for (const NativeParam& p : plan.params) {
    const size_t before = ir.params.size();
    platform::ParamIrTypes(platform::kHost, p, &ir.params);
    ir.first.push_back(static_cast<unsigned>(before));
    ir.count.push_back(static_cast<unsigned>(ir.params.size() - before));
  }
  for (const ResultSlot& r : plan.results) {
    if (r.by_return) continue;
    ir.first.push_back(static_cast<unsigned>(ir.params.size()));
    ir.count.push_back(1);
    ir.params.push_back(IrType::kPtr);
  }
  ir.ret = platform::ReturnIrType(platform::kHost, plan);
  std::vector<llvm::Type*> types;
  for (IrType t : ir.params) types.push_back(ToLlvmType(ctx, t));
  ir.type = llvm::FunctionType::get(ToLlvmType(ctx, ir.ret), types, false);
  return ir;
}

void AddAbiAttributes(const NativeIr& ir, llvm::CallInst* call) {
  llvm::LLVMContext& ctx = call->getContext();
  for (unsigned i = 0; i < ir.params.size(); ++i) {
    if (ir.params[i] != IrType::kByvalPair) continue;
    call->addParamAttr(i,
                       llvm::Attribute::getWithByValType(ctx, ToLlvmType(ctx, IrType::kI64Pair)));
    call->addParamAttr(i, llvm::Attribute::getWithAlignment(ctx, llvm::Align(8)));
  }
}

void AddAbiAttributes(const NativeIr& ir, llvm::Function* fn) {
  llvm::LLVMContext& ctx = fn->getContext();
  for (unsigned i = 0; i < ir.params.size(); ++i) {
    if (ir.params[i] != IrType::kByvalPair) continue;
    fn->addParamAttr(i, llvm::Attribute::getWithByValType(ctx, ToLlvmType(ctx, IrType::kI64Pair)));
    fn->addParamAttr(i, llvm::Attribute::getWithAlignment(ctx, llvm::Align(8)));
  }
}

std::string AbiUnsupportedReason(const CallPlan& plan) {
  if (!platform::kHaveCallStub) return platform::kNoPlatformReason;
  for (size_t i = 0; i < plan.params.size(); ++i) {
    if (plan.params[i].abi.cls == AbiClass::kMemory) {
      return "parameter " + std::to_string(i) + " is passed in memory";
    }
  }
  return "";
}

std::string AbiShapeKey(const CallPlan& plan) {
  std::vector<IrType> types = platform::NativeIrSignature(platform::kHost, plan);
  std::vector<AbiLocation> locations = NativeLocations(plan);
  std::string key;
  for (size_t i = 0; i + 1 < types.size(); ++i) key += std::string(IrTypeName(types[i])) + ",";
  key += "->";
  key += IrTypeName(types.back());
  key += "@";
  for (const AbiLocation& loc : locations) {
    key += std::to_string(static_cast<int>(loc.cls)) + ":" + std::to_string(loc.slot) + ",";
  }
  return key;
}

void AddAbiCheck(const CallPlan* plan, CompileRequest* request) {
  if (!AbiUnsupportedReason(*plan).empty()) return;  // the emitter refuses it with the reason
  std::string shape = AbiShapeKey(*plan);
  {
    ShapeCache& cache = Shapes();
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.verdicts.find(shape);
    if (it != cache.verdicts.end()) {
      if (it->second.empty()) return;  // verified before: nothing to add
      std::string reason = it->second;
      request->emit = [reason](llvm::Module&, const std::string&) { return reason; };
      return;
    }
  }
  EmitFunction emit = std::move(request->emit);
  request->emit = [plan, emit](llvm::Module& module, const std::string& symbol) {
    std::string failure = emit(module, symbol);
    if (failure.empty()) EmitAbiProbe(*plan, module, symbol);
    return failure;
  };
  request->companion_suffixes = {kProbeSuffix, kProbeBufferSuffix};
  request->accept = [plan, shape](const std::vector<void*>& companions) {
    std::string verdict = RunProbe(*plan, companions[0], companions[1]);
    ShapeCache& cache = Shapes();
    std::lock_guard<std::mutex> lock(cache.mutex);
    cache.counters.probes_run++;
    if (!verdict.empty()) cache.counters.shapes_rejected++;
    cache.verdicts[shape] = verdict;
    return verdict;
  };
}

AbiProbeCounters AbiProbeStats() {
  ShapeCache& cache = Shapes();
  std::lock_guard<std::mutex> lock(cache.mutex);
  return cache.counters;
}

void ForgetAbiShapes() {
  ShapeCache& cache = Shapes();
  std::lock_guard<std::mutex> lock(cache.mutex);
  cache.verdicts.clear();
}

std::string CompareProbeRecord(const CallPlan& plan, const uint64_t* frame,
                               const uint64_t* recorded, const uint64_t* ret) {
  const size_t frame_words = static_cast<size_t>(platform::kFrameStackBase + plan.num_stack);
  const std::vector<AbiLocation> locations = NativeLocations(plan);
  const std::string prefix = std::string("the target's calling convention disagrees with ") +
                             platform::kHost.name + " placement: ";
  for (size_t n = 0; n < locations.size(); ++n) {
    const int64_t index = platform::FrameIndex(platform::kHost, locations[n]);
    const int words = platform::IsTwoWords(locations[n].cls) ? 2 : 1;
    for (int w = 0; w < words; ++w) {
      // An f32 parameter is only the low 32 bits of its register or slot.
      const bool f32 = n < plan.params.size() && plan.params[n].conversion == Conversion::kF32;
      const uint64_t want = frame[index + w] & (f32 ? 0xFFFFFFFFu : ~uint64_t{0});
      const uint64_t got = recorded[2 * n + static_cast<size_t>(w)];
      if (got == want) continue;
      std::string what =
          n < plan.params.size()
              ? "parameter " + std::to_string(n) + " (`" + plan.params[n].type_text + "`)"
              : "out-pointer " + std::to_string(n - plan.params.size());
      if (words == 2) what += w == 0 ? " first word" : " second word";
      return prefix + what + " belongs in " + DescribeFrameWord(index + w) +
             ", the compiled code reads it from " + DescribeSource(frame, frame_words, got);
    }
  }
  const IrType type = platform::ReturnIrType(platform::kHost, plan);
  auto returned = [&](uint64_t got, uint64_t want, uint64_t mask, const char* where) {
    if ((got & mask) == (want & mask)) return std::string();
    return prefix + "the result does not arrive in " + where;
  };
  switch (type) {
    case IrType::kVoid:
      return "";
    case IrType::kI8:
      return returned(ret[platform::kRetGpr], kRetIntSentinel, 0xFF, "the integer result register");
    case IrType::kI16:
      return returned(ret[platform::kRetGpr], kRetIntSentinel, 0xFFFF,
                      "the integer result register");
    case IrType::kI32:
      return returned(ret[platform::kRetGpr], kRetIntSentinel, 0xFFFFFFFF,
                      "the integer result register");
    case IrType::kF32:
      return returned(ret[platform::kRetFpr], kRetF32Sentinel, 0xFFFFFFFF,
                      "the vector result register");
    case IrType::kF64:
      return returned(ret[platform::kRetFpr], kRetF64Sentinel, ~uint64_t{0},
                      "the vector result register");
    case IrType::kI64Pair: {
      std::string first = returned(ret[platform::kRetGpr], kRetIntSentinel, ~uint64_t{0},
                                   "the first integer result register");
      if (!first.empty()) return first;
      return returned(ret[platform::kRetGpr + 1], kRetHighSentinel, ~uint64_t{0},
                      "the second integer result register");
    }
    default:
      return returned(ret[platform::kRetGpr], kRetIntSentinel, ~uint64_t{0},
                      "the integer result register");
  }
}

}  // namespace ffijit::orc
