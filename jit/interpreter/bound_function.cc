// BoundFunction lifetime: creation from a CallPlan, the deleter, and the JIT's attach hook.
#include "interpreter/bound_function.h"

#include <cstdlib>
#include <memory>
#include <new>

#include "ffijit/c_ext.h"
#include "ffijit/error.h"
#include "interpreter/interp_program.h"
#include "interpreter/libffi_call.h"

namespace ffijit {
namespace {

std::atomic<TierAttachHook> g_tier_attach_hook{nullptr};

void BoundFunctionDeleter(void* self, int flags) {
  auto* fn = static_cast<BoundFunction*>(self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    if (fn->release_tier_state != nullptr && fn->tier_state != nullptr) {
      fn->release_tier_state(fn->tier_state);
    }
    fn->tier_state = nullptr;
    DestroyLibffiCall(fn->libffi);
    fn->libffi = nullptr;
    DestroyInterpProgram(fn->program);
    fn->program = nullptr;
    delete fn->plan;
    fn->plan = nullptr;
    if (fn->owner != nullptr) TVMFFIObjectDecRef(fn->owner);
    fn->owner = nullptr;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) {
    fn->~BoundFunction();
    std::free(fn);
  }
}

// Platforms without a register stub (platform/abi.h) call every target through libffi.
constexpr bool kHaveStub = platform::kHaveCallStub;

}  // namespace

void SetTierAttachHook(TierAttachHook hook) {
  g_tier_attach_hook.store(hook, std::memory_order_release);
}

void ReleasePendingTier(void* pending) {
  auto* tier = static_cast<PendingTier*>(pending);
  if (tier->early.release != nullptr) tier->early.release(tier->early.code);
  delete tier;
}

std::mutex& PendingTierMutex() {
  // Immortal: a function may be queried or adopted during static destruction.
  static auto* mutex = new std::mutex();
  return *mutex;
}

FFIJITTier TierOf(BoundFunction* fn) {
  {
    std::lock_guard<std::mutex> lock(PendingTierMutex());
    // Never attached (interpret-only, or no tier hook): the interpreter for good.
    if (fn->tier_state == nullptr) return kFFIJITTierInterpreted;
    if (fn->release_tier_state == &ReleasePendingTier) {
      // Only a stencil thunk is installed before the plugin adopts the state.
      return static_cast<const PendingTier*>(fn->tier_state)->early.entry != nullptr
                 ? kFFIJITTierStencil
                 : kFFIJITTierInterpreted;
    }
  }
  // jit/orc's state, which stays its kind until the function dies.
  return OrcTierOf(fn);
}

TierAttachHook GetTierAttachHook() {
  return g_tier_attach_hook.load(std::memory_order_acquire);
}

bool IsBoundFunction(const TVMFFIObject* obj) {
  return obj != nullptr && obj->type_index == kTVMFFIFunction &&
         obj->deleter == &BoundFunctionDeleter;
}

BoundFunction* BindFunction(void* target, CallPlan plan, uint32_t flags) {
  return BindFunction(target, std::move(plan), flags, nullptr);
}

BoundFunction* BindFunction(void* target, CallPlan plan, uint32_t flags, TVMFFIObject* owner) {
  if (target == nullptr) throw ValueError("cannot bind `" + plan.function_name + "`: NULL target");
  if (!kHaveStub) flags |= kBoundUseLibffi;
  auto owned_plan = std::make_unique<CallPlan>(std::move(plan));
  std::unique_ptr<LibffiCall, void (*)(LibffiCall*)> libffi(nullptr, DestroyLibffiCall);
  if (flags & kBoundUseLibffi) libffi.reset(PrepareLibffiCall(*owned_plan));
  std::unique_ptr<InterpProgram, void (*)(InterpProgram*)> program(BuildInterpProgram(*owned_plan),
                                                                   DestroyInterpProgram);

  void* memory = std::calloc(1, sizeof(BoundFunction));
  if (memory == nullptr) throw std::bad_alloc();
  auto* fn = new (memory) BoundFunction{};
  FFIJITHeaderInit(&fn->header, kTVMFFIFunction, &BoundFunctionDeleter);
  fn->cell.safe_call = &InterpreterSafeCall;
  fn->cell.cpp_call = reinterpret_cast<void*>(FFIJITFunctionCppCallEntry());
  fn->target = target;
  fn->plan = owned_plan.release();
  fn->calls_until_hot.store(0, std::memory_order_relaxed);
  fn->on_hot = nullptr;
  fn->tier_state = nullptr;
  fn->release_tier_state = nullptr;
  fn->flags = flags;
  fn->libffi = libffi.release();
  fn->program = program.release();
  fn->owner = owner;
  if (owner != nullptr) TVMFFIObjectIncRef(owner);
  if (!(flags & kBoundInterpretOnly)) {
    if (TierAttachHook hook = GetTierAttachHook()) {
      // Tiering is an optimization: if the JIT cannot take this function, it stays on the
      // interpreter, which is complete.
      try {
        hook(fn);
      } catch (...) {
      }
    }
  }
  return fn;
}

}  // namespace ffijit
