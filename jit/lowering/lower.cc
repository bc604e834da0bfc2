// Lowering: Signature -> CallPlan (sources, conversions, result boxing; ABI placement is
// delegated).
#include <string>
#include <utility>
#include <vector>

#include "ffijit/c_api.h"
#include "ffijit/c_ext.h"
#include "ffijit/error.h"
#include "ffijit/reflect/signature.h"
#include "interpreter/marshal.h"
#include "plan/call_plan.h"
#include "platform/abi.h"

namespace ffijit {
namespace {

Conversion ScalarConversion(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::kI1:
      return Conversion::kBool;
    case ScalarKind::kI8:
      return Conversion::kI8;
    case ScalarKind::kI16:
      return Conversion::kI16;
    case ScalarKind::kI32:
      return Conversion::kI32;
    case ScalarKind::kI64:
      return Conversion::kI64;
    case ScalarKind::kU8:
      return Conversion::kU8;
    case ScalarKind::kU16:
      return Conversion::kU16;
    case ScalarKind::kU32:
      return Conversion::kU32;
    case ScalarKind::kU64:
      return Conversion::kU64;
    case ScalarKind::kF16:
      return Conversion::kF16;
    case ScalarKind::kBF16:
      return Conversion::kBF16;
    case ScalarKind::kF32:
      return Conversion::kF32;
    case ScalarKind::kF64:
      return Conversion::kF64;
    case ScalarKind::kAny:
      break;
  }
  throw TypeError("a scalar of element kind `any` cannot be passed to a native function");
}

// The DLPack element type a tensor of `kind` must have.
DLDataType TensorElementType(ScalarKind kind) {
  auto make = [](uint8_t code, uint8_t bits) {
    DLDataType t;
    t.code = code;
    t.bits = bits;
    t.lanes = 1;
    return t;
  };
  switch (kind) {
    case ScalarKind::kF16:
      return make(kDLFloat, 16);
    case ScalarKind::kF32:
      return make(kDLFloat, 32);
    case ScalarKind::kF64:
      return make(kDLFloat, 64);
    case ScalarKind::kBF16:
      return make(kDLBfloat, 16);
    case ScalarKind::kI8:
      return make(kDLInt, 8);
    case ScalarKind::kI16:
      return make(kDLInt, 16);
    case ScalarKind::kI32:
      return make(kDLInt, 32);
    case ScalarKind::kI64:
      return make(kDLInt, 64);
    case ScalarKind::kU8:
      return make(kDLUInt, 8);
    case ScalarKind::kU16:
      return make(kDLUInt, 16);
    case ScalarKind::kU32:
      return make(kDLUInt, 32);
    case ScalarKind::kU64:
      return make(kDLUInt, 64);
    case ScalarKind::kI1:
      // DLPack 1.0 bool: one byte per element.
      return make(FFIJIT_DL_BOOL_CODE, 8);
    case ScalarKind::kAny:
      break;
  }
  return make(0, 0);  // unreachable: kAny is never checked
}

// The runtime type index for an object type key, or kUnresolvedTypeIndex when no module registered
// the key yet. Nothing is allocated for an unknown key (neither a type index nor a forward
// reference): a plan resolves it on first need (ObjectTypeIndexOf), so any number of functions
// may name keys that never appear without using up the type table.
int32_t ObjectTypeIndex(const std::string& key) {
  if (key.empty()) return kTVMFFIObject;
  return ResolveTypeKey(key);
}

class Lowerer {
 public:
  explicit Lowerer(CallPlan& plan) : plan_(plan) {}

  // Appends the native parameters fed by `type`, read through `path` from packed arg `position`.
  void Flatten(int32_t position, const Type& type, std::vector<PathStep>& path) {
    switch (type.kind) {
      case TypeKind::kNamed:
        // `named` only changes how a top-level argument may be passed; nested, it is transparent.
        Flatten(position, Inner(type), path);
        return;
      case TypeKind::kSList:
      case TypeKind::kSTuple: {
        const std::string container = TypeToString(type);
        for (size_t i = 0; i < type.elements.size(); ++i) {
          if (type.elements[i] == nullptr) continue;  // a tuple gap: counted, never read
          PathStep step;
          step.kind = PathStep::kArrayIndex;
          step.index = static_cast<int64_t>(i);
          step.expected_size = static_cast<int64_t>(type.elements.size());
          step.container_type = container;
          path.push_back(std::move(step));
          Flatten(position, *type.elements[i], path);
          path.pop_back();
        }
        return;
      }
      case TypeKind::kSDict: {
        if (type.keys.size() != type.elements.size()) {
          throw ValueError("malformed sdict type: " + std::to_string(type.keys.size()) +
                           " keys but " + std::to_string(type.elements.size()) + " values");
        }
        const std::string container = TypeToString(type);
        for (size_t i = 0; i < type.elements.size(); ++i) {
          if (type.elements[i] == nullptr) throw ValueError("malformed sdict type: empty slot");
          PathStep step;
          step.kind = PathStep::kMapKey;
          step.key = type.keys[i];
          step.expected_size = -1;
          step.container_type = container;
          path.push_back(std::move(step));
          Flatten(position, *type.elements[i], path);
          path.pop_back();
        }
        return;
      }
      default:
        break;
    }
    NativeParam param = Leaf(type);
    param.position = position;
    param.path_begin = static_cast<int32_t>(plan_.path_steps.size());
    param.path_size = static_cast<int32_t>(path.size());
    plan_.path_steps.insert(plan_.path_steps.end(), path.begin(), path.end());
    plan_.params.push_back(std::move(param));
  }

  // The conversion of one non-structure type (an argument leaf or a result).
  static NativeParam Leaf(const Type& type) {
    NativeParam p;
    p.type_text = TypeToString(type);
    p.nullable = type.nullable;
    switch (type.kind) {
      case TypeKind::kScalar:
        p.conversion = ScalarConversion(type.scalar);
        break;
      case TypeKind::kNDArray:
        p.conversion = Conversion::kTensor;
        p.tensor.check_dtype = type.scalar != ScalarKind::kAny;
        if (p.tensor.check_dtype) p.tensor.dtype = TensorElementType(type.scalar);
        p.tensor.rank = type.rank;
        if (type.rank >= 0) {
          if (!type.dims.empty() && type.dims.size() != static_cast<size_t>(type.rank)) {
            throw ValueError("malformed ndarray type `" + p.type_text + "`: rank " +
                             std::to_string(type.rank) + " but " +
                             std::to_string(type.dims.size()) + " dims");
          }
          p.tensor.dims = type.dims;
          p.tensor.dims.resize(static_cast<size_t>(type.rank), -1);
        }
        break;
      case TypeKind::kStr:
        p.conversion = Conversion::kStr;
        break;
      case TypeKind::kBytes:
        p.conversion = Conversion::kBytes;
        break;
      case TypeKind::kOpaquePtr:
        p.conversion = Conversion::kOpaquePtr;
        p.nullable = true;
        break;
      case TypeKind::kObject:
        p.conversion = Conversion::kObject;
        p.object_type_key = type.name;
        p.object_type_index = ObjectTypeIndex(type.name);
        break;
      case TypeKind::kDataType:
        p.conversion = Conversion::kDataType;
        break;
      case TypeKind::kDevice:
        p.conversion = Conversion::kDevice;
        break;
      case TypeKind::kUnknown:
        p.conversion = Conversion::kAnyView;
        break;
      case TypeKind::kList:
        // A homogeneous list of unknown length reaches the native side as the Array itself.
        p.conversion = Conversion::kObject;
        p.object_type_index = kTVMFFIArray;
        break;
      case TypeKind::kDict:
        p.conversion = Conversion::kObject;
        p.object_type_index = kTVMFFIMap;
        break;
      case TypeKind::kNamed:
      case TypeKind::kSList:
      case TypeKind::kSTuple:
      case TypeKind::kSDict:
        throw TypeError("internal: structure type reached Leaf");
    }
    return p;
  }

  static const Type& Inner(const Type& named) {
    if (named.elements.empty() || named.elements[0] == nullptr) {
      throw ValueError("malformed named argument `" + named.name + "`: no type");
    }
    return *named.elements[0];
  }

 private:
  CallPlan& plan_;
};

// `order` (a Signature leaf order) as native indices, checked to be a permutation of 0..leaves-1.
std::vector<size_t> NativeIndices(const std::vector<int32_t>& order, size_t leaves,
                                  const char* field, const char* what) {
  if (order.size() != leaves) {
    throw ValueError("malformed signature: " + std::string(field) + " has " +
                     std::to_string(order.size()) + " entries for " + std::to_string(leaves) + " " +
                     what);
  }
  std::vector<size_t> native(leaves);
  std::vector<bool> taken(leaves, false);
  for (size_t k = 0; k < leaves; ++k) {
    if (order[k] < 0 || static_cast<size_t>(order[k]) >= leaves ||
        taken[static_cast<size_t>(order[k])]) {
      throw ValueError("malformed signature: " + std::string(field) +
                       " is not a permutation of 0.." + std::to_string(leaves - 1) + " (entry " +
                       std::to_string(k) + " is " + std::to_string(order[k]) + ")");
    }
    taken[static_cast<size_t>(order[k])] = true;
    native[k] = static_cast<size_t>(order[k]);
  }
  return native;
}

// `items` (in leaf order) moved to native order: leaf k goes to native[k].
template <typename T>
std::vector<T> Permuted(std::vector<T> items, const std::vector<size_t>& native) {
  std::vector<T> out(items.size());
  for (size_t k = 0; k < items.size(); ++k) out[native[k]] = std::move(items[k]);
  return out;
}

// Appends result `type`'s leaves to plan.results and its nodes to `shape`; `label` is where it
// sits in the packed result. Returns whether it is a structure.
bool LowerResult(const Type& type, const std::string& label, CallPlan& plan,
                 std::vector<ResultNode>& shape) {
  switch (type.kind) {
    case TypeKind::kNamed:
      return LowerResult(Lowerer::Inner(type), label, plan, shape);
    case TypeKind::kSList:
    case TypeKind::kSTuple: {
      ResultNode node;
      node.kind = ResultNode::kArray;
      node.size = static_cast<int32_t>(type.elements.size());
      shape.push_back(std::move(node));
      for (size_t i = 0; i < type.elements.size(); ++i) {
        if (type.elements[i] == nullptr) {
          shape.push_back(ResultNode{ResultNode::kGap, 0, {}, 0});
          continue;
        }
        LowerResult(*type.elements[i], label + "[" + std::to_string(i) + "]", plan, shape);
      }
      return true;
    }
    case TypeKind::kSDict: {
      if (type.keys.size() != type.elements.size()) {
        throw ValueError("malformed sdict type: " + std::to_string(type.keys.size()) +
                         " keys but " + std::to_string(type.elements.size()) + " values");
      }
      const size_t at = shape.size();
      ResultNode node;
      node.kind = ResultNode::kMap;
      node.size = static_cast<int32_t>(type.elements.size());
      node.keys = type.keys;
      shape.push_back(std::move(node));
      for (size_t i = 0; i < type.elements.size(); ++i) {
        if (type.elements[i] == nullptr) throw ValueError("malformed sdict type: empty slot");
        for (size_t k = 0; k < i; ++k) {
          if (shape[at].keys[k] == shape[at].keys[i]) {
            throw ValueError("malformed sdict type `" + TypeToString(type) + "`: key `" +
                             type.keys[i] + "` appears twice");
          }
        }
        LowerResult(*type.elements[i], label + "[\"" + type.keys[i] + "\"]", plan, shape);
      }
      return true;
    }
    default:
      break;
  }
  NativeParam leaf = Lowerer::Leaf(type);
  ResultSlot slot;
  slot.conversion = leaf.conversion;
  slot.object_type_index = leaf.object_type_index;
  slot.object_type_key = leaf.object_type_key;
  slot.type_text = leaf.type_text;
  slot.label = label;
  shape.push_back(ResultNode{ResultNode::kLeaf, 0, {}, static_cast<int32_t>(plan.results.size())});
  plan.results.push_back(std::move(slot));
  return false;
}

void LowerResults(const Signature& sig, CallPlan& plan) {
  std::vector<ResultNode> shape;
  if (sig.results.size() > 1) {
    shape.push_back(
        ResultNode{ResultNode::kArray, static_cast<int32_t>(sig.results.size()), {}, 0});
  }
  // A result written into caller-provided storage is no native result: the packed result is the
  // storage argument itself.
  std::vector<int32_t> stored_in(sig.results.size(), -1);
  for (size_t a = 0; a < sig.output_storage.size(); ++a) {
    if (sig.output_storage[a] >= 0)
      stored_in[static_cast<size_t>(sig.output_storage[a])] = static_cast<int32_t>(a);
  }
  bool structured = false;
  for (size_t i = 0; i < sig.results.size(); ++i) {
    if (sig.results[i] == nullptr) throw ValueError("malformed signature: empty result type");
    if (stored_in[i] >= 0) {
      shape.push_back(ResultNode{ResultNode::kArgument, 0, {}, stored_in[i]});
      structured = true;
      continue;
    }
    structured |= LowerResult(*sig.results[i], "#" + std::to_string(i), plan, shape);
  }
  if (!sig.result_leaf_order.empty()) {
    // The results go to native order; each leaf then names the result it takes.
    const std::vector<size_t> native = NativeIndices(sig.result_leaf_order, plan.results.size(),
                                                     "result_leaf_order", "result leaves");
    plan.results = Permuted(std::move(plan.results), native);
    for (ResultNode& node : shape) {
      if (node.kind == ResultNode::kLeaf) {
        node.index = static_cast<int32_t>(native[static_cast<size_t>(node.index)]);
      }
    }
    structured = true;
  }
  // Without a structure or a permutation, the flat results need no description (one as itself,
  // several as an Array).
  if (structured) plan.result_shape = std::move(shape);
  // One native result of a plain function comes back as the return value; otherwise (status
  // convention, several results or leaves) every result goes through a trailing out-pointer.
  if (sig.convention == CallConvention::kPlain && plan.results.size() == 1) {
    plan.results[0].by_return = true;
  }
}

}  // namespace

bool CallPlan::has_keywords() const {
  for (const PackedArg& arg : args) {
    if (!arg.keyword.empty()) return true;
  }
  return false;
}

int32_t CallPlan::KeywordPosition(const std::string& keyword) const {
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].keyword.empty() && args[i].keyword == keyword) return static_cast<int32_t>(i);
  }
  return -1;
}

CallPlan Lower(const Signature& sig, std::string function_name) {
  const std::string storage_defect = OutputStorageDefect(sig);
  if (!storage_defect.empty()) throw ValueError("malformed signature: " + storage_defect);
  CallPlan plan;
  plan.function_name = std::move(function_name);
  plan.declaration = DeclarationString(plan.function_name, sig);
  // The canonical form is the declaration without the name (CanonicalString), derived here
  // rather than printed twice: registration cost is mostly these strings.
  plan.canonical = plan.declaration.substr(plan.function_name.size());
  if (sig.convention == CallConvention::kStatus) plan.canonical += " [status]";
  plan.convention = sig.convention;

  // Most signatures pass one native parameter per argument; growing these vectors one by one
  // would move every parameter's strings several times per registration.
  plan.args.reserve(sig.args.size());
  plan.params.reserve(sig.args.size());
  Lowerer lowerer(plan);
  std::vector<PathStep> path;
  for (size_t i = 0; i < sig.args.size(); ++i) {
    if (sig.args[i] == nullptr) throw ValueError("malformed signature: empty argument type");
    const Type* type = sig.args[i].get();
    PackedArg arg;
    if (type->kind == TypeKind::kNamed) {
      arg.keyword = type->name;
      type = &Lowerer::Inner(*type);
      if (arg.keyword.empty()) throw ValueError("malformed signature: named argument without name");
      if (plan.KeywordPosition(arg.keyword) >= 0) {
        throw ValueError("malformed signature: keyword `" + arg.keyword + "` appears twice");
      }
    }
    arg.first_param = static_cast<int32_t>(plan.params.size());
    lowerer.Flatten(static_cast<int32_t>(i), *type, path);
    arg.num_params = static_cast<int32_t>(plan.params.size()) - arg.first_param;
    const bool leaf = arg.num_params == 1 && plan.params.back().path_size == 0;
    arg.type_text = leaf ? plan.params.back().type_text : TypeToString(*type);
    plan.args.push_back(std::move(arg));
  }
  if (!sig.arg_leaf_order.empty()) {
    // Each parameter carries its source (position and path), so the executors read it wherever it
    // sits; only the packed arguments' parameter ranges change.
    // The indices first: a function's arguments are evaluated in no set order, and the vector
    // may be moved from before plan.params.size() is read.
    const std::vector<size_t> native =
        NativeIndices(sig.arg_leaf_order, plan.params.size(), "arg_leaf_order", "argument leaves");
    plan.params = Permuted(std::move(plan.params), native);
    for (PackedArg& arg : plan.args) arg.first_param = -1;
    for (size_t n = 0; n < plan.params.size(); ++n) {
      PackedArg& arg = plan.args[static_cast<size_t>(plan.params[n].position)];
      if (arg.first_param < 0) arg.first_param = static_cast<int32_t>(n);
    }
    for (PackedArg& arg : plan.args) {
      if (arg.first_param < 0) arg.first_param = 0;  // no parameters
    }
    plan.canonical = CanonicalString(sig);
  }
  LowerResults(sig, plan);
  if (!sig.result_leaf_order.empty() || !sig.output_storage.empty()) {
    plan.canonical = CanonicalString(sig);
  }
  platform::AssignAbi(plan, platform::kHost);
  return plan;
}

}  // namespace ffijit
