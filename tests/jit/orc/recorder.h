// A native target that fits every signature: it records the argument registers and stack slots it
// was called with, writes chosen results through the plan's out-pointers and returns chosen bits
// in the integer and vector result registers. Both executors call it for the same packed call; the
// records must match. One assembly entry per supported platform (x86-64 System V, AArch64), laid
// out by jit/platform/abi.h.
#ifndef FFIJIT_TESTS_ORC_RECORDER_H_
#define FFIJIT_TESTS_ORC_RECORDER_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "plan/call_plan.h"

namespace ffijit::testing {

// What one call of the recorder saw (only what `plan` says is passed is meaningful).
struct Recording {
  bool called = false;
  uint64_t gpr[8] = {};  // the host's integer argument registers (6 on x86-64, 8 on AArch64)
  uint64_t sse[8] = {};  // its vector argument registers (low 64 bits)
  std::vector<uint64_t> stack;
};

// The recorder's address: pass it as the native function of any signature.
void* RecorderAddress();

// Arms the recorder for the next call: the plan it is called with (to find out-pointers and the
// stack size), what to return in the first two integer result registers (rax:rdx / x0:x1) and the
// first vector result register (xmm0 / v0), and the 16 bytes to write through each out-pointer.
void ArmRecorder(const CallPlan* plan, uint64_t ret_gpr0, uint64_t ret_gpr1, uint64_t ret_fpr0,
                 std::vector<std::vector<uint8_t>> out_values);

// Takes the recording of the last call (`called` false when the target was not reached).
Recording TakeRecording();

// The recorded words of the parameters (not out-pointers, whose addresses differ per call), as
// text for comparison and failure messages.
std::string DescribeArguments(const CallPlan& plan, const Recording& recording);

// The same text from the words any recording native saw: `words[i]` holds parameter i's first
// word and, for a two-word location (platform::IsTwoWords), its second. Bits the ABI leaves
// undefined (above an f32) are masked, so natives that see them differently describe alike.
std::string DescribeParameterWords(const CallPlan& plan,
                                   const std::vector<std::array<uint64_t, 2>>& words);

}  // namespace ffijit::testing

#endif  // FFIJIT_TESTS_ORC_RECORDER_H_
