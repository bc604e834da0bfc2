// The recording native target: an assembly entry saving the argument registers, a C++ body.
#include "recorder.h"

#include <cstring>
#include <sstream>

#include "platform/abi.h"

#define FFIJIT_TEST_HIDDEN __attribute__((visibility("hidden")))

extern "C" {
// The argument registers in the host's frame layout: integer registers, then vector registers.
FFIJIT_TEST_HIDDEN uint64_t ffijit_rec_regs[16];
FFIJIT_TEST_HIDDEN const uint64_t* ffijit_rec_stack;  // first stack argument
FFIJIT_TEST_HIDDEN uint64_t ffijit_rec_ret[3];        // integer result pair, vector result
FFIJIT_TEST_HIDDEN void ffijit_rec_body();
FFIJIT_TEST_HIDDEN void ffijit_rec_entry();
}

static_assert(ffijit::platform::kFrameStackBase <= 16, "ffijit_rec_regs holds the register words");

// Saves every argument register, lets the body look at them, then returns the armed values.
// push/pop keep the section the compiler was in: its own globals must not land in .text.
#if defined(__x86_64__) && defined(__ELF__)
asm(R"(
  .pushsection .text
  .p2align 4
  .hidden ffijit_rec_entry
  .globl ffijit_rec_entry
  .type ffijit_rec_entry,@function
ffijit_rec_entry:
  movq %rdi, ffijit_rec_regs+0(%rip)
  movq %rsi, ffijit_rec_regs+8(%rip)
  movq %rdx, ffijit_rec_regs+16(%rip)
  movq %rcx, ffijit_rec_regs+24(%rip)
  movq %r8, ffijit_rec_regs+32(%rip)
  movq %r9, ffijit_rec_regs+40(%rip)
  movq %xmm0, ffijit_rec_regs+48(%rip)
  movq %xmm1, ffijit_rec_regs+56(%rip)
  movq %xmm2, ffijit_rec_regs+64(%rip)
  movq %xmm3, ffijit_rec_regs+72(%rip)
  movq %xmm4, ffijit_rec_regs+80(%rip)
  movq %xmm5, ffijit_rec_regs+88(%rip)
  movq %xmm6, ffijit_rec_regs+96(%rip)
  movq %xmm7, ffijit_rec_regs+104(%rip)
  leaq 8(%rsp), %rax
  movq %rax, ffijit_rec_stack(%rip)
  subq $8, %rsp
  call ffijit_rec_body
  addq $8, %rsp
  movq ffijit_rec_ret+0(%rip), %rax
  movq ffijit_rec_ret+8(%rip), %rdx
  movq ffijit_rec_ret+16(%rip), %xmm0
  ret
  .size ffijit_rec_entry, .-ffijit_rec_entry
  .popsection
)");
#elif defined(__aarch64__) && defined(__linux__)
// Stack arguments start at sp on entry (AArch64 pushes no return address).
asm(R"(
  .pushsection .text
  .p2align 4
  .hidden ffijit_rec_entry
  .globl ffijit_rec_entry
  .type ffijit_rec_entry,%function
ffijit_rec_entry:
  adrp x9, ffijit_rec_regs
  add x9, x9, :lo12:ffijit_rec_regs
  stp x0, x1, [x9, #0]
  stp x2, x3, [x9, #16]
  stp x4, x5, [x9, #32]
  stp x6, x7, [x9, #48]
  stp d0, d1, [x9, #64]
  stp d2, d3, [x9, #80]
  stp d4, d5, [x9, #96]
  stp d6, d7, [x9, #112]
  mov x10, sp
  adrp x11, ffijit_rec_stack
  str x10, [x11, :lo12:ffijit_rec_stack]
  stp x29, x30, [sp, #-16]!
  mov x29, sp
  bl ffijit_rec_body
  ldp x29, x30, [sp], #16
  adrp x9, ffijit_rec_ret
  add x9, x9, :lo12:ffijit_rec_ret
  ldp x0, x1, [x9, #0]
  ldr d0, [x9, #16]
  ret
  .size ffijit_rec_entry, .-ffijit_rec_entry
  .popsection
)");
#else
#error "the recorder has an entry for x86-64 System V and Linux AArch64 only"
#endif

namespace ffijit::testing {
namespace {

const CallPlan* armed_plan = nullptr;
std::vector<std::vector<uint8_t>> armed_out;
Recording last;

uint64_t WordAt(const AbiLocation& loc, const Recording& r, int word = 0) {
  switch (loc.cls) {
    case AbiClass::kGpr:
    case AbiClass::kGprPair:
      return r.gpr[loc.slot + word];
    case AbiClass::kSse:
      return r.sse[loc.slot];
    default:
      return r.stack[static_cast<size_t>(loc.slot + word)];
  }
}

}  // namespace

void* RecorderAddress() {
  return reinterpret_cast<void*>(&ffijit_rec_entry);
}

void ArmRecorder(const CallPlan* plan, uint64_t ret_gpr0, uint64_t ret_gpr1, uint64_t ret_fpr0,
                 std::vector<std::vector<uint8_t>> out_values) {
  armed_plan = plan;
  armed_out = std::move(out_values);
  ffijit_rec_ret[0] = ret_gpr0;
  ffijit_rec_ret[1] = ret_gpr1;
  ffijit_rec_ret[2] = ret_fpr0;
  last = Recording{};
}

Recording TakeRecording() {
  Recording r = last;
  last = Recording{};
  return r;
}

std::string DescribeArguments(const CallPlan& plan, const Recording& r) {
  std::vector<std::array<uint64_t, 2>> words;
  for (const NativeParam& param : plan.params) {
    const bool two = ffijit::platform::IsTwoWords(param.abi.cls);
    words.push_back({WordAt(param.abi, r), two ? WordAt(param.abi, r, 1) : 0});
  }
  return DescribeParameterWords(plan, words);
}

std::string DescribeParameterWords(const CallPlan& plan,
                                   const std::vector<std::array<uint64_t, 2>>& words) {
  std::ostringstream out;
  out << std::hex;
  for (size_t i = 0; i < plan.params.size() && i < words.size(); ++i) {
    // An f32 is only the low 32 bits of its register or slot; the rest is undefined.
    const uint64_t mask =
        plan.params[i].conversion == ffijit::Conversion::kF32 ? 0xFFFFFFFFu : ~uint64_t{0};
    out << "p" << i << "=" << (words[i][0] & mask);
    if (ffijit::platform::IsTwoWords(plan.params[i].abi.cls)) out << ":" << words[i][1];
    out << " ";
  }
  if (words.size() != plan.params.size()) {
    out << "(" << std::dec << words.size() << " parameters recorded, the plan has "
        << plan.params.size() << ")";
  }
  return out.str();
}

}  // namespace ffijit::testing

using namespace ffijit::testing;

void ffijit_rec_body() {
  last.called = true;
  constexpr const ffijit::platform::PlatformAbi& abi = ffijit::platform::kHost;
  for (int i = 0; i < abi.num_gpr; ++i) last.gpr[i] = ffijit_rec_regs[i];
  for (int i = 0; i < abi.num_fpr; ++i) last.sse[i] = ffijit_rec_regs[abi.fpr_base() + i];
  if (armed_plan == nullptr) return;
  last.stack.assign(ffijit_rec_stack, ffijit_rec_stack + armed_plan->num_stack);
  // Results through out-pointers, as a native would write them.
  for (size_t r = 0; r < armed_plan->results.size() && r < armed_out.size(); ++r) {
    const ffijit::ResultSlot& slot = armed_plan->results[r];
    if (slot.by_return) continue;
    auto* out = reinterpret_cast<uint8_t*>(WordAt(slot.out_abi, last));
    if (out != nullptr) std::memcpy(out, armed_out[r].data(), armed_out[r].size());
  }
}
