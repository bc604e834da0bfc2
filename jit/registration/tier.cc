// jit.h's tier query (Tier, TierName, IsJitCompiled, IsHotCompiled, IsHotInlined), in every build:
// the tier is read from the function's tier state (interpreter/bound_function.h's TierOf), so a
// function the LLVM plugin never saw is answered without loading it.
#include <string>

#include "ffijit/error.h"
#include "ffijit/jit/jit.h"
#include "interpreter/bound_function.h"

namespace ffijit {
namespace {

// Whether `function` was made by ffijit's registration, and then its tier in *tier.
bool TryTier(const Function& function, FFIJITTier* tier) {
  TVMFFIObject* obj = function.get();
  if (!IsBoundFunction(obj)) return false;
  *tier = TierOf(reinterpret_cast<BoundFunction*>(obj));
  return true;
}

// The names, by FFIJITTier value.
constexpr const char* kTierNames[] = {"interpreted", "stencil", "llvm", "hot", "hot_inlined"};
static_assert(sizeof(kTierNames) / sizeof(kTierNames[0]) == kFFIJITTierHotInlined + 1,
              "a name for every FFIJITTier");

}  // namespace

FFIJITTier Tier(const Function& function) {
  if (!function.defined()) throw ValueError("the function has no tier: the Function is null");
  FFIJITTier tier = kFFIJITTierInterpreted;
  if (!TryTier(function, &tier)) {
    throw TypeError("the function has no tier: not a function made by ffijit's registration");
  }
  return tier;
}

const char* TierName(FFIJITTier tier) {
  const int value = static_cast<int>(tier);
  if (value < kFFIJITTierInterpreted || value > kFFIJITTierHotInlined) {
    throw ValueError("TierName: " + std::to_string(value) + " is no FFIJITTier");
  }
  return kTierNames[value];
}

bool IsJitCompiled(const Function& function) {
  FFIJITTier tier = kFFIJITTierInterpreted;
  return TryTier(function, &tier) && tier != kFFIJITTierInterpreted;
}

bool IsHotCompiled(const Function& function) {
  FFIJITTier tier = kFFIJITTierInterpreted;
  return TryTier(function, &tier) && (tier == kFFIJITTierHot || tier == kFFIJITTierHotInlined);
}

bool IsHotInlined(const Function& function) {
  FFIJITTier tier = kFFIJITTierInterpreted;
  return TryTier(function, &tier) && tier == kFFIJITTierHotInlined;
}

}  // namespace ffijit
