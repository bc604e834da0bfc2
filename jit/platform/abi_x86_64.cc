// x86-64 System V: where each native parameter and result lives, and the IR types it travels as.
//
// Every type a CallPlan passes is at most 16 bytes and made of INTEGER or SSE eightbytes only, so
// the System V classification reduces to the rules below.
#include "platform/abi.h"

namespace ffijit::platform {
namespace {

// rdi, rsi, rdx, rcx, r8, r9 and xmm0..xmm7.
constexpr int32_t kNumGpr = kX86_64SysV.num_gpr;
constexpr int32_t kNumSse = kX86_64SysV.num_fpr;

// Structs of two INTEGER eightbytes: TVMFFIByteArray {ptr, size} (and TVMFFIAny as a result).
// DLDataType (4 bytes) and DLDevice (8 bytes) are one INTEGER eightbyte: a single register.
bool IsTwoEightbyteStruct(Conversion c) {
  return c == Conversion::kBytes;
}

class Allocator {
 public:
  AbiLocation Scalar(bool sse) {
    if (sse && sse_ < kNumSse) return {AbiClass::kSse, sse_++};
    if (!sse && gpr_ < kNumGpr) return {AbiClass::kGpr, gpr_++};
    // Every stack argument takes one 8-byte slot in parameter order, whatever its size.
    return {AbiClass::kStack, stack_++};
  }

  AbiLocation Pair() {
    // A struct goes in registers only if both eightbytes fit; otherwise it all goes on the stack
    // and the remaining registers stay available for later (smaller) arguments.
    if (gpr_ + 2 <= kNumGpr) {
      AbiLocation loc{AbiClass::kGprPair, gpr_};
      gpr_ += 2;
      return loc;
    }
    AbiLocation loc{AbiClass::kStackPair, stack_};
    stack_ += 2;
    return loc;
  }

  int32_t gpr() const { return gpr_; }
  int32_t sse() const { return sse_; }
  int32_t stack() const { return stack_; }

 private:
  int32_t gpr_ = 0, sse_ = 0, stack_ = 0;
};

}  // namespace

void AssignAbiX86_64SysV(CallPlan& plan) {
  Allocator alloc;
  for (NativeParam& p : plan.params) {
    p.abi = IsTwoEightbyteStruct(p.conversion) ? alloc.Pair()
                                               : alloc.Scalar(IsFloatConversion(p.conversion));
  }
  // Out-pointers follow the arguments, one pointer (INTEGER) each.
  for (ResultSlot& r : plan.results) {
    if (!r.by_return) r.out_abi = alloc.Scalar(false);
  }
  plan.return_kind = ReturnKindOf(plan);
  plan.num_gpr = alloc.gpr();
  plan.num_sse = alloc.sse();
  plan.num_stack = alloc.stack();
}

// Integers, bool, pointers, DLDataType and DLDevice travel as i64 (a whole register or 8-byte
// slot; the callee reads the low bits). Floats as FloatParamIrType says, in an xmm register or,
// once those are used up, an 8-byte stack slot. A register pair as two i64 (what clang emits for
// such a struct); a pair on the stack as a byval copy, which LLVM places on the stack whatever
// registers are left (System V's all-or-nothing rule).
void ParamIrTypesX86_64SysV(const NativeParam& param, std::vector<IrType>* out) {
  switch (param.abi.cls) {
    case AbiClass::kGpr:
      out->push_back(IrType::kI64);
      return;
    case AbiClass::kSse:
      out->push_back(FloatParamIrType(param.conversion));
      return;
    case AbiClass::kStack:
      out->push_back(IsFloatConversion(param.conversion) ? FloatParamIrType(param.conversion)
                                                         : IrType::kI64);
      return;
    case AbiClass::kGprPair:
      out->push_back(IrType::kI64);
      out->push_back(IrType::kI64);
      return;
    case AbiClass::kStackPair:
    case AbiClass::kMemory:
      out->push_back(IrType::kByvalPair);
      return;
  }
}

}  // namespace ffijit::platform
