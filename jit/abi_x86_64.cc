// Platform calling convention: where each native parameter and result lives (x86-64 System V).
//
// The only file with platform ABI knowledge. Every type a CallPlan passes is at most 16 bytes and
// made of INTEGER or SSE eightbytes only, so the System V classification reduces to the rules
// below. Where AArch64 (AAPCS64) would differ, the comment says so.

#include "call_plan.h"

namespace ffijit {
namespace {

// System V: rdi, rsi, rdx, rcx, r8, r9 and xmm0..xmm7.
// AArch64: x0..x7 (8) and v0..v7 (8).
constexpr int32_t kNumGpr = 6;
constexpr int32_t kNumSse = 8;

// Structs of two INTEGER eightbytes: TVMFFIByteArray {ptr, size} (and TVMFFIAny as a result).
// DLDataType (4 bytes) and DLDevice (8 bytes) are one INTEGER eightbyte: a single register.
// AArch64: composites <= 16 bytes likewise travel in one or two X registers.
bool IsTwoEightbyteStruct(Conversion c) {
  return c == Conversion::kBytes;
}

class Allocator {
 public:
  AbiLocation Scalar(bool sse) {
    if (sse && sse_ < kNumSse) return {AbiClass::kSse, sse_++};
    if (!sse && gpr_ < kNumGpr) return {AbiClass::kGpr, gpr_++};
    // Every stack argument takes one 8-byte slot in parameter order, whatever its size.
    // AArch64 (AAPCS64) also rounds to 8 bytes, but Apple's arm64 packs stack arguments at their
    // natural alignment; f16 would use the low 16 bits of a v register (h0..h7).
    return {AbiClass::kStack, stack_++};
  }

  AbiLocation Pair() {
    // A struct goes in registers only if both eightbytes fit; otherwise it all goes on the stack
    // and the remaining registers stay available for later (smaller) arguments.
    // AArch64: same all-or-nothing rule, but once a composite spills, no later argument may use
    // an X register (NGRN is set to 8); a composite larger than 16 bytes is passed by reference
    // there instead of by a stack copy (kMemory).
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

ReturnKind ReturnKindOf(Conversion c) {
  // Floats in xmm0; a 16-byte struct of two INTEGER eightbytes in rax:rdx; everything else in rax
  // (bool and narrow integers: only the low bits are defined, the boxer truncates).
  // AArch64: v0 / x0:x1 / x0; a result larger than 16 bytes would need a hidden pointer in x8
  // (rdi on x86-64), which no CallPlan result type needs.
  if (IsFloatConversion(c)) return ReturnKind::kSse;
  if (c == Conversion::kBytes || c == Conversion::kAnyView) return ReturnKind::kGprPair;
  return ReturnKind::kGpr;
}

}  // namespace

void AssignAbi(CallPlan& plan) {
  Allocator alloc;
  for (NativeParam& p : plan.params) {
    p.abi = IsTwoEightbyteStruct(p.conversion) ? alloc.Pair()
                                               : alloc.Scalar(IsFloatConversion(p.conversion));
  }
  // Out-pointers follow the arguments, one pointer (INTEGER) each.
  for (ResultSlot& r : plan.results) {
    if (!r.by_return) r.out_abi = alloc.Scalar(false);
  }
  if (plan.convention == CallConvention::kStatus) {
    plan.return_kind = ReturnKind::kStatus;
  } else if (!plan.results.empty() && plan.results[0].by_return) {
    plan.return_kind = ReturnKindOf(plan.results[0].conversion);
  } else {
    plan.return_kind = ReturnKind::kVoid;
  }
  plan.num_gpr = alloc.gpr();
  plan.num_sse = alloc.sse();
  plan.num_stack = alloc.stack();
}

}  // namespace ffijit
