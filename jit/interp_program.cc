// Compiles a CallPlan into the interpreter's compact op list.
#include "interp_program.h"

#include <cstring>
#include <memory>
#include <string>

#include "ffijit/error.h"

namespace ffijit {
namespace {

uint16_t FrameIndex(const AbiLocation& loc) {
  const int64_t index = platform::FrameIndex(platform::kHost, loc);
  if (index > 65000) throw ValueError("too many stack arguments: " + std::to_string(loc.slot));
  return static_cast<uint16_t>(index);
}

InterpOpcode OpcodeOf(const NativeParam& p) {
  if (p.path_size != 0) return InterpOpcode::kGeneric;
  switch (p.conversion) {
    case Conversion::kI64:
      return InterpOpcode::kInt64;
    case Conversion::kF64:
      return InterpOpcode::kFloat64;
    case Conversion::kOpaquePtr:
      return InterpOpcode::kOpaquePtr;
    case Conversion::kI32:
      return InterpOpcode::kInt32;
    case Conversion::kF32:
      return InterpOpcode::kFloat32;
    case Conversion::kStr:
      return InterpOpcode::kStr;
    case Conversion::kTensor:
      return InterpOpcode::kTensor;
    case Conversion::kDataType:
      return InterpOpcode::kDataType;
    case Conversion::kDevice:
      return InterpOpcode::kDevice;
    default:
      return InterpOpcode::kGeneric;
  }
}

}  // namespace

InterpProgram* BuildInterpProgram(const CallPlan& plan) {
  auto program = std::make_unique<InterpProgram>();
  program->ops.reserve(plan.params.size());
  program->out_dest.reserve(plan.results.size());
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const NativeParam& p = plan.params[i];
    InterpOp op;
    op.opcode = OpcodeOf(p);
    op.words = platform::IsTwoWords(p.abi.cls) ? 2 : 1;
    op.dest = FrameIndex(p.abi);
    op.position = p.position;
    op.param = static_cast<int32_t>(i);
    op.native = &p;
    std::memcpy(&op.tensor_dtype, &p.tensor.dtype, sizeof op.tensor_dtype);
    op.tensor_rank = p.tensor.rank;
    op.tensor_check_dtype = p.tensor.check_dtype;
    op.tensor_has_static_dim = false;
    for (int64_t d : p.tensor.dims) op.tensor_has_static_dim |= d >= 0;
    program->ops.push_back(op);
  }
  for (const ResultSlot& r : plan.results) {
    program->out_dest.push_back(r.by_return ? 0 : FrameIndex(r.out_abi));
  }
  program->num_args = plan.num_args();
  program->num_stack = plan.num_stack;
  program->frame_words = kFrameStackBase + plan.num_stack;
  program->return_kind = plan.return_kind;
  if (!plan.results.empty()) program->return_conversion = plan.results[0].conversion;
  program->num_results = static_cast<int32_t>(plan.results.size());
  program->packs_results = plan.packs_results();
  return program.release();
}

void DestroyInterpProgram(InterpProgram* program) {
  delete program;
}

}  // namespace ffijit
