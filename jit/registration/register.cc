// The C++ registration API: Signature/metadata/deduced type -> BoundFunction -> Function.
#include "ffijit/jit/register.h"

#include <cstring>

#include "ffijit/jit/bridge.h"
#include "ffijit/registry.h"
#include "interpreter/bound_function.h"
#include "registration/register_internal.h"

namespace ffijit {
namespace {

// Applies the options that change the signature: the convention and the argument names.
Signature Adjust(Signature sig, const RegisterOptions& options) {
  if (options.convention == CallConvention::kStatus) sig.convention = CallConvention::kStatus;
  if (options.arg_names.size() > sig.args.size()) {
    throw ValueError(std::to_string(options.arg_names.size()) + " argument names for " +
                     std::to_string(sig.args.size()) + " arguments");
  }
  for (size_t i = 0; i < options.arg_names.size(); ++i) {
    const TypePtr& arg = sig.args[i];
    if (arg == nullptr) throw ValueError("malformed signature: empty argument type");
    if (arg->kind == TypeKind::kNamed) {
      throw ValueError("argument #" + std::to_string(i) + " is already named `" + arg->name + "`");
    }
    sig.args[i] = Type::Named(options.arg_names[i], arg);
  }
  return sig;
}

}  // namespace

Function MakeFunctionWithFlags(const std::string& name, void* fn, Signature sig,
                               const RegisterOptions& options, uint32_t extra_flags) {
  CallPlan plan = Lower(Adjust(std::move(sig), options), name);
  const uint32_t flags = extra_flags | (options.interpret_only ? kBoundInterpretOnly : 0u);
  BoundFunction* bound = BindFunction(fn, std::move(plan), flags);
  return Function::Adopt(bound);
}

Function MakeFunctionOwnedBy(const std::string& name, void* fn, Signature sig,
                             const RegisterOptions& options, TVMFFIObject* owner) {
  CallPlan plan = Lower(Adjust(std::move(sig), options), name);
  const uint32_t flags = options.interpret_only ? kBoundInterpretOnly : 0u;
  return Function::Adopt(BindFunction(fn, std::move(plan), flags, owner));
}

Function MakeFunction(const std::string& name, void* fn, Signature sig,
                      const RegisterOptions& options) {
  return MakeFunctionWithFlags(name, fn, std::move(sig), options, 0);
}

Function MakeFunction(const std::string& name, void* fn, std::string_view metadata,
                      MetadataFormat format, const RegisterOptions& options) {
  return MakeFunction(name, fn, ParseMetadata(metadata, format), options);
}

Function Register(const std::string& name, void* fn, Signature sig,
                  const RegisterOptions& options) {
  Function func = MakeFunction(name, fn, std::move(sig), options);
  SetGlobalFunction(options.global_name.empty() ? name : options.global_name, func,
                    options.allow_override);
  return func;
}

Function Register(const std::string& name, void* fn, std::string_view metadata,
                  MetadataFormat format, const RegisterOptions& options) {
  return Register(name, fn, ParseMetadata(metadata, format), options);
}

Any CallWithKeywords(const Function& func, const std::vector<AnyView>& args,
                     const std::vector<std::pair<std::string, AnyView>>& kwargs) {
  std::vector<TVMFFIAny> positional;
  positional.reserve(args.size());
  for (const AnyView& a : args) positional.push_back(a.raw());
  std::vector<const char*> names;
  std::vector<TVMFFIAny> values;
  for (const auto& [name, value] : kwargs) {
    names.push_back(name.c_str());
    values.push_back(value.raw());
  }
  TVMFFIAny result{};
  CheckCall(FFIJITCallWithKeywords(func.get(), positional.data(),
                                   static_cast<int32_t>(positional.size()), names.data(),
                                   values.data(), static_cast<int32_t>(values.size()), &result));
  return Any::Adopt(result);
}

std::string DescribeFunction(const Function& func) {
  TVMFFIAny out{};
  CheckCall(FFIJITDescribeFunction(func.get(), &out));
  return Any::Adopt(out).cast<std::string>();
}

}  // namespace ffijit
