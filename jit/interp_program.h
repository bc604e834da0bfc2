// The interpreter's compact form of a CallPlan: one small op per native parameter.
//
// Built once at binding so the per-call loop touches 40 bytes per parameter instead of the plan's
// descriptive structs, and so the commonest conversions skip the general switch.
#ifndef FFIJIT_JIT_INTERP_PROGRAM_H_
#define FFIJIT_JIT_INTERP_PROGRAM_H_

#include <cstdint>
#include <vector>

#include "call_plan.h"
#include "platform/abi.h"

namespace ffijit {

// The call frame the stub reads: the host platform's register words, then the stack argument
// slots (platform/abi.h).
using platform::kFrameStackBase;

enum class InterpOpcode : uint8_t {
  kInt64,      // i64 from Int/Bool, no path: one load and store
  kFloat64,    // f64 from Float (Int/Bool through the generic path), no path
  kOpaquePtr,  // ptr from OpaquePtr, no path
  kInt32,      // i32 from Int/Bool in range, no path
  kFloat32,    // f32 from Float, no path
  kStr,        // const char* from Str/SmallStr/RawStr, no path
  kTensor,     // DLTensor* from Tensor/DLTensorPtr passing the checks, no path
  kDataType,   // DLDataType from DataType, no path
  kDevice,     // DLDevice from Device, no path
  kGeneric,    // anything else: path, then ConvertValue on the plan's NativeParam
};

struct InterpOp {
  InterpOpcode opcode;
  uint8_t words;              // 1, or 2 for a 16-byte struct
  uint16_t dest;              // frame index of the first word
  int32_t position;           // packed argument
  int32_t param;              // index into plan.params (generic path and errors)
  const NativeParam* native;  // &plan.params[param] (tensor dim checks)
  // kTensor: the checks inline, so the common tensor needs no pointer chase into the plan.
  uint32_t tensor_dtype;  // the expected DLDataType's 4 bytes
  int32_t tensor_rank;    // -1: any
  bool tensor_check_dtype;
  bool tensor_has_static_dim;  // some dim is fixed: run the full TensorMatches
};

struct InterpProgram {
  std::vector<InterpOp> ops;
  std::vector<uint16_t> out_dest;  // frame index of each result's out-pointer (by_return: unused)
  int32_t num_args = 0;
  int32_t frame_words = 0;  // kFrameStackBase + stack slots
  int32_t num_stack = 0;
  ReturnKind return_kind = ReturnKind::kVoid;
  Conversion return_conversion = Conversion::kI64;  // results[0] when returned by value
  int32_t num_results = 0;
  bool packs_results = false;  // CallPlan::packs_results: FFIJITBoxResults builds the result
};

// Throws ffijit::Error when a frame index would not fit (more than 65000 stack slots).
InterpProgram* BuildInterpProgram(const CallPlan& plan);
void DestroyInterpProgram(InterpProgram* program);

}  // namespace ffijit

#endif  // FFIJIT_JIT_INTERP_PROGRAM_H_
