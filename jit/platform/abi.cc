// The platform-ABI layer's shared part: frame indices, dispatch to each platform's rules, the
// generic (libffi-only) placement, and the IR return types every supported platform shares.
#include "platform/abi.h"

#include <string>

#include "ffijit/error.h"

namespace ffijit::platform {

void ParamIrTypesX86_64SysV(const NativeParam& param, std::vector<IrType>* out);
void ParamIrTypesAarch64(const NativeParam& param, std::vector<IrType>* out);

// The same on both: an f32 is a float, in the low 32 bits of its vector register or stack slot
// (the bits above are undefined); f64 a double; f16 and bf16 a double whose low bits are theirs
// (the register's low half or quarter, as the callee reads it).
IrType FloatParamIrType(Conversion conversion) {
  return conversion == Conversion::kF32 ? IrType::kF32 : IrType::kF64;
}

bool IsTwoWords(AbiClass cls) {
  return cls == AbiClass::kGprPair || cls == AbiClass::kStackPair || cls == AbiClass::kMemory;
}

int64_t FrameIndex(const PlatformAbi& abi, const AbiLocation& loc) {
  switch (loc.cls) {
    case AbiClass::kGpr:
    case AbiClass::kGprPair:
      return loc.slot;
    case AbiClass::kSse:
      return abi.fpr_base() + int64_t{loc.slot};
    case AbiClass::kStack:
    case AbiClass::kStackPair:
    case AbiClass::kMemory:
      break;
  }
  return abi.stack_base() + int64_t{loc.slot};
}

void AssignAbi(CallPlan& plan, const PlatformAbi& abi) {
  switch (abi.arch) {
    case Arch::kX86_64SysV:
      return AssignAbiX86_64SysV(plan);
    case Arch::kAarch64:
      return AssignAbiAarch64(plan);
    case Arch::kGeneric:
      return AssignAbiGeneric(plan);
  }
}

// No registers: each value in its own frame word(s), in order. libffi reads them from there and
// places them by the real ABI, so the interpreter needs no knowledge of it.
void AssignAbiGeneric(CallPlan& plan) {
  int32_t slot = 0;
  for (NativeParam& p : plan.params) {
    const bool pair = p.conversion == Conversion::kBytes;
    p.abi = {pair ? AbiClass::kStackPair : AbiClass::kStack, slot};
    slot += pair ? 2 : 1;
  }
  for (ResultSlot& r : plan.results) {
    if (!r.by_return) r.out_abi = {AbiClass::kStack, slot++};
  }
  plan.return_kind = ReturnKindOf(plan);
  plan.num_gpr = 0;
  plan.num_sse = 0;
  plan.num_stack = slot;
}

// x86-64 System V: floats in xmm0, a struct of two INTEGER eightbytes in rax:rdx, everything else
// in rax. AAPCS64: floats in v0 (h0/s0/d0), a 16-byte composite in x0:x1, everything else in x0.
// Bool and narrow integers define only their low bits (the boxer truncates). A result over 16
// bytes would need a hidden pointer (rdi / x8), which no CallPlan result needs. The generic
// platform's libffi descriptions use the same classes.
ReturnKind ReturnKindOf(const CallPlan& plan) {
  if (plan.convention == CallConvention::kStatus) return ReturnKind::kStatus;
  if (plan.results.empty() || !plan.results[0].by_return) return ReturnKind::kVoid;
  const Conversion c = plan.results[0].conversion;
  if (IsFloatConversion(c)) return ReturnKind::kSse;
  if (c == Conversion::kBytes || c == Conversion::kAnyView) return ReturnKind::kGprPair;
  return ReturnKind::kGpr;
}

void ParamIrTypes(const PlatformAbi& abi, const NativeParam& param, std::vector<IrType>* out) {
  switch (abi.arch) {
    case Arch::kX86_64SysV:
      return ParamIrTypesX86_64SysV(param, out);
    case Arch::kAarch64:
      return ParamIrTypesAarch64(param, out);
    case Arch::kGeneric:
      break;
  }
  throw Error("InternalError", std::string("no IR types on platform ") + abi.name);
}

// The same on x86-64 System V and AArch64: an integer result in rax / x0 (only its low bits
// defined, hence the narrow types), a float in xmm0 / v0 (f16 and bf16 as the low bits of an
// f32), a 16-byte pair in rax:rdx / x0:x1, a status in eax / w0.
IrType ReturnIrType(const PlatformAbi& abi, const CallPlan& plan) {
  if (abi.arch == Arch::kGeneric) {
    throw Error("InternalError", std::string("no IR types on platform ") + abi.name);
  }
  switch (plan.return_kind) {
    case ReturnKind::kVoid:
      return IrType::kVoid;
    case ReturnKind::kStatus:
      return IrType::kI32;
    case ReturnKind::kSse:
      return plan.results[0].conversion == Conversion::kF64 ? IrType::kF64 : IrType::kF32;
    case ReturnKind::kGprPair:
      return IrType::kI64Pair;
    case ReturnKind::kGpr:
      break;
  }
  switch (InfoOf(plan.results[0].conversion).bytes) {
    case 1:
      return IrType::kI8;
    case 2:
      return IrType::kI16;
    case 4:
      return IrType::kI32;
    default:
      return IrType::kI64;
  }
}

std::vector<IrType> NativeIrSignature(const PlatformAbi& abi, const CallPlan& plan) {
  std::vector<IrType> types;
  for (const NativeParam& p : plan.params) ParamIrTypes(abi, p, &types);
  for (const ResultSlot& r : plan.results) {
    if (!r.by_return) types.push_back(IrType::kPtr);
  }
  types.push_back(ReturnIrType(abi, plan));
  return types;
}

}  // namespace ffijit::platform
