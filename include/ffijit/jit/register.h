// Registering native functions from C++: a function pointer plus its signature (deduced from the
// C++ type, given as IREE metadata text, or as a Signature) becomes a packed ffijit::Function.
#ifndef FFIJIT_JIT_REGISTER_H_
#define FFIJIT_JIT_REGISTER_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ffijit/any.h"
#include "ffijit/function.h"
#include "ffijit/reflect/deduce.h"
#include "ffijit/reflect/metadata.h"
#include "ffijit/reflect/signature.h"

namespace ffijit {

struct RegisterOptions {
  // Register under this global name instead of the function's name.
  std::string global_name;
  // Replace a global function of the same name instead of failing with a RuntimeError.
  bool allow_override = false;
  // kStatus overrides the signature's convention (metadata formats cannot express it).
  CallConvention convention = CallConvention::kPlain;
  // Names of the leading top-level arguments: each makes its argument bindable by keyword (it
  // becomes `named`) and appears in error messages, e.g. `add(a: i64, b: i64) -> i64`.
  std::vector<std::string> arg_names;
  // Never compile a JIT thunk for this function.
  bool interpret_only = false;
};

// A packed Function calling `fn` per `sig`, not registered globally. `name` appears in errors.
// Throws ffijit::Error when the signature cannot be called or `fn` is NULL.
FFIJIT_JIT_API Function MakeFunction(const std::string& name, void* fn, Signature sig,
                                     const RegisterOptions& options = {});
// Same, with the signature parsed from IREE metadata text (ValueError on bad metadata).
FFIJIT_JIT_API Function MakeFunction(const std::string& name, void* fn, std::string_view metadata,
                                     MetadataFormat format, const RegisterOptions& options = {});
// Same, with the signature deduced from the function's C++ type.
template <typename R, typename... A>
Function MakeFunction(const std::string& name, R (*fn)(A...), const RegisterOptions& options = {}) {
  return MakeFunction(name, reinterpret_cast<void*>(fn), SignatureOf<R (*)(A...)>(), options);
}

// MakeFunction, then registers the function globally (under options.global_name, or `name`).
// RemoveGlobalFunction (registry.h) removes it again.
FFIJIT_JIT_API Function Register(const std::string& name, void* fn, Signature sig,
                                 const RegisterOptions& options = {});
FFIJIT_JIT_API Function Register(const std::string& name, void* fn, std::string_view metadata,
                                 MetadataFormat format, const RegisterOptions& options = {});
template <typename R, typename... A>
Function Register(const std::string& name, R (*fn)(A...), const RegisterOptions& options = {}) {
  return Register(name, reinterpret_cast<void*>(fn), SignatureOf<R (*)(A...)>(), options);
}

// Calls `func` with positional arguments then keyword arguments (see FFIJITCallWithKeywords).
FFIJIT_JIT_API Any CallWithKeywords(const Function& func, const std::vector<AnyView>& args,
                                    const std::vector<std::pair<std::string, AnyView>>& kwargs);

// The readable CallPlan of a function made by MakeFunction/Register.
FFIJIT_JIT_API std::string DescribeFunction(const Function& func);

}  // namespace ffijit

#endif  // FFIJIT_JIT_REGISTER_H_
