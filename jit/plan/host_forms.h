// What a host entry (ffijit/jit/host_entry.h) does with each packed argument, by its parameter's
// conversion, and which plans can have one: shared by the LLVM host entries (jit/orc/codegen) and
// the stencil ones (jit/stencils), so both accept exactly the same functions and arguments.
#ifndef FFIJIT_JIT_PLAN_HOST_FORMS_H_
#define FFIJIT_JIT_PLAN_HOST_FORMS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "plan/call_plan.h"

namespace ffijit {

// What the entry does for one argument, by its parameter's conversion.
enum class InlineForm {
  kInt,       // an exact int (the thunk range-checks the narrow ones)
  kFloat,     // an exact float, or an exact int
  kBool,      // True or False
  kPointer,   // None (NULL), or a pointer object through model.pointer_to_any
  kStr,       // an exact str, read in place or through model.str_data
  kDevice,    // the host's Device object
  kDataType,  // the host's DataType object
  kTensor,    // anything model.borrow_tensor accepts
  kNone,      // no inline conversion: the function gets no entry
};

inline InlineForm FormOf(Conversion c) {
  if (IsIntegerConversion(c)) return InlineForm::kInt;
  if (IsFloatConversion(c)) return InlineForm::kFloat;
  switch (c) {
    case Conversion::kBool:
      return InlineForm::kBool;
    case Conversion::kOpaquePtr:
      return InlineForm::kPointer;
    case Conversion::kStr:
      return InlineForm::kStr;
    case Conversion::kDevice:
      return InlineForm::kDevice;
    case Conversion::kDataType:
      return InlineForm::kDataType;
    case Conversion::kTensor:
      return InlineForm::kTensor;
    default:
      return InlineForm::kNone;
  }
}

// The parameter of packed argument `i` when it is one flat parameter, else nullptr.
inline const NativeParam* FlatParamOf(const CallPlan& plan, size_t i) {
  const PackedArg& arg = plan.args[i];
  if (arg.num_params != 1) return nullptr;
  const NativeParam& p = plan.params[static_cast<size_t>(arg.first_param)];
  return p.path_size == 0 && p.position == static_cast<int32_t>(i) ? &p : nullptr;
}

// "" when a host entry can convert every argument of `plan`, otherwise why not.
inline std::string HostEntryUnsupportedReason(const CallPlan& plan) {
  // A host entry may hold no packed argument to hand back.
  if (const int32_t storage = plan.FirstStorageArgument(); storage >= 0) {
    return "a result is written into argument #" + std::to_string(storage) +
           "'s output storage (host entries box native results only)";
  }
  // A host entry checks its arguments in packed order, the other executors in native order: with
  // the leaves permuted, the first error reported would differ.
  for (size_t n = 0; n < plan.params.size(); ++n) {
    if (n > 0 && plan.params[n].position < plan.params[n - 1].position) {
      return "its arguments' leaves are out of native order";
    }
  }
  for (size_t i = 0; i < plan.args.size(); ++i) {
    const NativeParam* p = FlatParamOf(plan, i);
    if (p == nullptr) {
      return "argument #" + std::to_string(i) + " `" + plan.args[i].type_text +
             "` is a structure (host entries convert flat arguments only)";
    }
    if (FormOf(p->conversion) == InlineForm::kNone) {
      return "argument #" + std::to_string(i) + " `" + p->type_text +
             "` has no inline conversion in a host entry";
    }
  }
  return "";
}

// Strs shorter than this are scanned for a NUL a word at a time, longer ones by memchr.
inline constexpr uint64_t kShortStrBytes = 32;

}  // namespace ffijit

#endif  // FFIJIT_JIT_PLAN_HOST_FORMS_H_
