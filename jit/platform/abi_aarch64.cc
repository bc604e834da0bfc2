// Linux AArch64 (AAPCS64): where each native parameter and result lives, and the IR types it
// travels as.
//
// The rules a CallPlan needs (AAPCS64 section 6.8.2, "Parameter passing rules"): integers,
// pointers and small composites (DLDataType, DLDevice) take the next x register (NGRN) or an
// 8-byte stack slot; floats of every width take the next v register (NSRN: h/s/d views of it) or
// an 8-byte stack slot; a 16-byte composite (TVMFFIByteArray) takes two consecutive x registers
// if both are free, otherwise it goes whole to the stack AND closes the x registers for every
// later argument (rule C.13: NGRN is set to 8). Linux rounds every stack argument up to 8 bytes;
// Apple's arm64 ABI packs them at natural alignment and is not this platform.
#include "platform/abi.h"

namespace ffijit::platform {
namespace {

// x0..x7 and v0..v7.
constexpr int32_t kNumGpr = kAarch64.num_gpr;
constexpr int32_t kNumFpr = kAarch64.num_fpr;

class Allocator {
 public:
  AbiLocation Scalar(bool fp) {
    if (fp && nsrn_ < kNumFpr) return {AbiClass::kSse, nsrn_++};
    if (!fp && ngrn_ < kNumGpr) return {AbiClass::kGpr, ngrn_++};
    return {AbiClass::kStack, nsaa_++};
  }

  AbiLocation Composite16() {
    if (ngrn_ + 2 <= kNumGpr) {
      AbiLocation loc{AbiClass::kGprPair, ngrn_};
      ngrn_ += 2;
      return loc;
    }
    ngrn_ = kNumGpr;  // C.13: no later argument may use an x register
    AbiLocation loc{AbiClass::kStackPair, nsaa_};
    nsaa_ += 2;
    return loc;
  }

  int32_t fpr() const { return nsrn_; }
  int32_t stack() const { return nsaa_; }

 private:
  int32_t ngrn_ = 0, nsrn_ = 0, nsaa_ = 0;
};

}  // namespace

void AssignAbiAarch64(CallPlan& plan) {
  Allocator alloc;
  // The x registers that carry a value (a spilled composite closes the rest without using them).
  int32_t gpr_used = 0;
  auto note = [&](const AbiLocation& loc) {
    if (loc.cls == AbiClass::kGpr) gpr_used = loc.slot + 1;
    if (loc.cls == AbiClass::kGprPair) gpr_used = loc.slot + 2;
  };
  for (NativeParam& p : plan.params) {
    p.abi = p.conversion == Conversion::kBytes ? alloc.Composite16()
                                               : alloc.Scalar(IsFloatConversion(p.conversion));
    note(p.abi);
  }
  // Out-pointers follow the arguments, one pointer each.
  for (ResultSlot& r : plan.results) {
    if (!r.by_return) {
      r.out_abi = alloc.Scalar(false);
      note(r.out_abi);
    }
  }
  plan.return_kind = ReturnKindOf(plan);
  plan.num_gpr = gpr_used;
  plan.num_sse = alloc.fpr();
  plan.num_stack = alloc.stack();
}

// Integers, bool, pointers, DLDataType and DLDevice travel as i64; floats as FloatParamIrType says
// (in the low bits of the v register, or of the 8-byte stack slot). A 16-byte composite as [2 x
// i64], as clang emits it: LLVM's AArch64 lowering gives such an array two consecutive x registers
// or none, and closes the x registers when it spills (C.13). Two separate i64 would be split
// between x7 and the stack, and a byval copy would be passed by address: both miscompiles.
void ParamIrTypesAarch64(const NativeParam& param, std::vector<IrType>* out) {
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
    case AbiClass::kStackPair:
      out->push_back(IrType::kI64Array2);
      return;
    case AbiClass::kMemory:
      // Not produced on AArch64 (a composite over 16 bytes goes by reference); the code
      // generators refuse kMemory before asking.
      out->push_back(IrType::kByvalPair);
      return;
  }
}

}  // namespace ffijit::platform
