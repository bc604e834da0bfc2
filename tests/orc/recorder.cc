// The recording native target: an assembly entry saving the argument registers, a C++ body.
#include "recorder.h"

#include <cstring>
#include <sstream>

#if !defined(__x86_64__)
#error "the recorder is written for x86-64 System V"
#endif

#define FFIJIT_TEST_HIDDEN __attribute__((visibility("hidden")))

extern "C" {
FFIJIT_TEST_HIDDEN uint64_t ffijit_rec_regs[14];      // rdi rsi rdx rcx r8 r9, xmm0..xmm7
FFIJIT_TEST_HIDDEN const uint64_t* ffijit_rec_stack;  // first stack argument
FFIJIT_TEST_HIDDEN uint64_t ffijit_rec_ret[3];        // rax, rdx, xmm0 to return
FFIJIT_TEST_HIDDEN void ffijit_rec_body();
FFIJIT_TEST_HIDDEN void ffijit_rec_entry();
}

// Saves every argument register, lets the body look at them, then returns the armed values.
// push/pop keep the section the compiler was in: its own globals must not land in .text.
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

namespace ffijit::testing {
namespace {

const CallPlan* armed_plan = nullptr;
std::vector<std::vector<uint8_t>> armed_out;
Recording last;

uint64_t WordAt(const AbiLocation& loc, const Recording& r) {
  switch (loc.cls) {
    case AbiClass::kGpr:
    case AbiClass::kGprPair:
      return r.gpr[loc.slot];
    case AbiClass::kSse:
      return r.sse[loc.slot];
    default:
      return r.stack[static_cast<size_t>(loc.slot)];
  }
}

}  // namespace

void* RecorderAddress() {
  return reinterpret_cast<void*>(&ffijit_rec_entry);
}

void ArmRecorder(const CallPlan* plan, uint64_t rax, uint64_t rdx, uint64_t xmm0,
                 std::vector<std::vector<uint8_t>> out_values) {
  armed_plan = plan;
  armed_out = std::move(out_values);
  ffijit_rec_ret[0] = rax;
  ffijit_rec_ret[1] = rdx;
  ffijit_rec_ret[2] = xmm0;
  last = Recording{};
}

Recording TakeRecording() {
  Recording r = last;
  last = Recording{};
  return r;
}

std::string DescribeArguments(const CallPlan& plan, const Recording& r) {
  std::ostringstream out;
  out << std::hex;
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const AbiLocation& loc = plan.params[i].abi;
    out << "p" << i << "=" << WordAt(loc, r);
    if (loc.cls == AbiClass::kGprPair) out << ":" << r.gpr[loc.slot + 1];
    if (loc.cls == AbiClass::kStackPair) out << ":" << r.stack[static_cast<size_t>(loc.slot) + 1];
    out << " ";
  }
  return out.str();
}

}  // namespace ffijit::testing

using namespace ffijit::testing;

void ffijit_rec_body() {
  last.called = true;
  for (int i = 0; i < 6; ++i) last.gpr[i] = ffijit_rec_regs[i];
  for (int i = 0; i < 8; ++i) last.sse[i] = ffijit_rec_regs[6 + i];
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
