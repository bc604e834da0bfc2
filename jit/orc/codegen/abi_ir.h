// The host platform's ABI in LLVM IR terms, and the check that asks LLVM whether it agrees.
//
// NativeIr maps platform::NativeIrSignature (jit/platform: the one place deciding which IR type
// each native value travels as) onto llvm types for both code generators (thunks call through it,
// callbacks are defined with it). AddAbiCheck asks the target instead of replaying its rules: it
// compiles, in the same module as the generated function, a probe with the native's IR parameter
// types that records what it receives, calls it once through the interpreter's register stub with
// a frame of distinct sentinel words, and compares where each value came from with the plan's
// AbiLocations. A disagreement rejects the function (it stays interpreted, with the reason), so a
// platform mismatch can never become a miscompiled call. Verified shapes (the IR type list) are
// remembered for the process, so each shape is probed once.
#ifndef FFIJIT_JIT_ORC_CODEGEN_ABI_IR_H_
#define FFIJIT_JIT_ORC_CODEGEN_ABI_IR_H_

#include <string>
#include <vector>

#include "orc/codegen/compile_request.h"
#include "plan/call_plan.h"
#include "platform/abi.h"

namespace llvm {
class CallInst;
class Function;
class FunctionType;
class LLVMContext;
class Module;
class Type;
}  // namespace llvm

namespace ffijit::orc {

// The native function's IR type on the host: arguments, then out-pointers.
struct NativeIr {
  llvm::FunctionType* type = nullptr;
  std::vector<platform::IrType> params;  // per IR parameter
  std::vector<unsigned> first;           // per native parameter (then out-pointer): first IR param
  std::vector<unsigned> count;           // ... and how many IR params it spans (1 or 2)
  platform::IrType ret = platform::IrType::kVoid;
};

llvm::Type* ToLlvmType(llvm::LLVMContext& ctx, platform::IrType type);
NativeIr NativeIrOf(const CallPlan& plan, llvm::LLVMContext& ctx);
// The parameter attributes the IR types need (byval copies), on a call or on a definition.
void AddAbiAttributes(const NativeIr& ir, llvm::CallInst* call);
void AddAbiAttributes(const NativeIr& ir, llvm::Function* fn);

// "" when the host has a platform ABI the code generators can target for `plan`, otherwise why
// not (unknown platform, a parameter passed in memory).
std::string AbiUnsupportedReason(const CallPlan& plan);

// The shape the probe verifies: the IR type list of the native function, as text.
std::string AbiShapeKey(const CallPlan& plan);

// Makes `request` (whose emit function generates code for `plan`) verify the ABI placement when
// it is compiled: unless the shape was verified before in this process, emit also adds the probe
// and the unit compiler runs it before accepting the function. A shape found wrong before fails at
// once. `plan` must outlive the compile.
void AddAbiCheck(const CallPlan* plan, CompileRequest* request);

// Number of probes run and shapes rejected in this process (tests and measurements).
struct AbiProbeCounters {
  int64_t probes_run = 0;
  int64_t shapes_rejected = 0;
};
AbiProbeCounters AbiProbeStats();
// Forgets every verified shape (tests measure cold compiles with it).
void ForgetAbiShapes();

// Test hook: compiles nothing, but runs the comparison a probe does against `recorded` (2 words
// per native parameter) and `ret` (the stub's result words); "" when they match the plan.
std::string CompareProbeRecord(const CallPlan& plan, const uint64_t* frame,
                               const uint64_t* recorded, const uint64_t* ret);

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_CODEGEN_ABI_IR_H_
