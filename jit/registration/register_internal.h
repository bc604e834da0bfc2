// Registration with the BoundFunctionFlags that RegisterOptions does not offer: how the C API
// applies kFFIJITUseLibffi (its one public switch), and how tests force the libffi call path.
#ifndef FFIJIT_JIT_REGISTRATION_REGISTER_INTERNAL_H_
#define FFIJIT_JIT_REGISTRATION_REGISTER_INTERNAL_H_

#include <cstdint>
#include <string>

#include "base/plugin_export.h"
#include "ffijit/function.h"
#include "ffijit/jit/register.h"
#include "ffijit/reflect/signature.h"

namespace ffijit {

// MakeFunction (register.h) with `extra_flags` (BoundFunctionFlags, e.g. kBoundUseLibffi) added to
// the ones `options` implies.
Function MakeFunctionWithFlags(const std::string& name, void* fn, Signature sig,
                               const RegisterOptions& options, uint32_t extra_flags);

// MakeFunction (register.h) for a native whose code `owner` holds (a JIT module): the function
// keeps one strong reference to `owner` (may be NULL) for as long as it lives.
FFIJIT_JIT_PLUGIN_API Function MakeFunctionOwnedBy(const std::string& name, void* fn, Signature sig,
                                                   const RegisterOptions& options,
                                                   TVMFFIObject* owner);

}  // namespace ffijit

#endif  // FFIJIT_JIT_REGISTRATION_REGISTER_INTERNAL_H_
