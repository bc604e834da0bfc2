// CallPlan printing: a readable dump of a whole plan.
#include <sstream>
#include <string>

#include "plan/call_plan.h"

namespace ffijit {
namespace {

const char* AbiClassName(AbiClass c) {
  switch (c) {
    case AbiClass::kGpr:
      return "gpr";
    case AbiClass::kSse:
      return "sse";
    case AbiClass::kGprPair:
      return "gpr-pair";
    case AbiClass::kStack:
      return "stack";
    case AbiClass::kStackPair:
      return "stack-pair";
    case AbiClass::kMemory:
      return "memory";
  }
  return "?";
}

const char* ReturnKindName(ReturnKind k) {
  switch (k) {
    case ReturnKind::kVoid:
      return "void";
    case ReturnKind::kGpr:
      return "gpr";
    case ReturnKind::kSse:
      return "sse";
    case ReturnKind::kGprPair:
      return "gpr-pair";
    case ReturnKind::kStatus:
      return "status";
  }
  return "?";
}

std::string Location(const AbiLocation& loc) {
  return std::string(AbiClassName(loc.cls)) + "[" + std::to_string(loc.slot) + "]";
}

// The node after shape[n]'s subtree.
size_t SubtreeEnd(const std::vector<ResultNode>& shape, size_t n) {
  const size_t children = shape[n].kind == ResultNode::kArray || shape[n].kind == ResultNode::kMap
                              ? static_cast<size_t>(shape[n].size)
                              : 0;
  ++n;
  for (size_t c = 0; c < children; ++c) n = SubtreeEnd(shape, n);
  return n;
}

}  // namespace

std::string PlanToString(const CallPlan& plan) {
  std::ostringstream out;
  out << plan.declaration << "\n";
  out << "  convention: " << (plan.convention == CallConvention::kStatus ? "status" : "plain")
      << ", returns: " << ReturnKindName(plan.return_kind) << ", registers: " << plan.num_gpr
      << " gpr + " << plan.num_sse << " sse, stack slots: " << plan.num_stack << "\n";
  for (size_t i = 0; i < plan.args.size(); ++i) {
    const PackedArg& arg = plan.args[i];
    out << "  arg #" << i << " " << arg.type_text;
    if (!arg.keyword.empty()) out << " (keyword `" << arg.keyword << "`)";
    out << "\n";
    // By position: a SIP's leaf order may scatter an argument's parameters.
    for (size_t k = 0; k < plan.params.size(); ++k) {
      const NativeParam& p = plan.params[k];
      if (p.position != static_cast<int32_t>(i)) continue;
      out << "    param " << k << ": " << ConversionCTypeName(p.conversion) << " <- #"
          << p.position;
      for (int32_t s = 0; s < p.path_size; ++s) {
        const PathStep& step = plan.path_steps[static_cast<size_t>(p.path_begin + s)];
        if (step.kind == PathStep::kArrayIndex) {
          out << "[" << step.index << "]";
        } else {
          out << "[\"" << step.key << "\"]";
        }
      }
      out << " " << p.type_text << " @ " << Location(p.abi) << "\n";
    }
  }
  for (size_t i = 0; i < plan.results.size(); ++i) {
    const ResultSlot& r = plan.results[i];
    out << "  result " << r.label << ": " << ConversionCTypeName(r.conversion) << " " << r.type_text
        << (r.by_return ? " (returned)" : " (out-pointer @ " + Location(r.out_abi) + ")") << "\n";
  }
  // Output storage is a whole result (the root, or one of several results' Array).
  const auto& shape = plan.result_shape;
  const bool several =
      !shape.empty() && shape[0].kind == ResultNode::kArray && plan.FirstStorageArgument() >= 0;
  for (size_t n = several ? 1 : 0, result = 0; n < shape.size(); ++result) {
    if (shape[n].kind == ResultNode::kArgument) {
      out << "  result #" << result << ": the output storage of arg #" << shape[n].index << "\n";
    }
    n = SubtreeEnd(shape, n);
  }
  return out.str();
}

}  // namespace ffijit
