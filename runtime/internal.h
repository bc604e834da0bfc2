// The C boundary helpers every runtime source uses, under ffijit::internal: aliases of the ones the
// public headers share with the other libraries. What a source defines for the others is declared
// in a header of its own (object_internal.h, string_internal.h, container_internal.h, ...).
#ifndef FFIJIT_RUNTIME_INTERNAL_H_
#define FFIJIT_RUNTIME_INTERNAL_H_

#include <cstdlib>
#include <new>
#include <string>
#include <string_view>

#include "ffijit/any.h"
#include "ffijit/c_api.h"
#include "ffijit/c_ext.h"
#include "ffijit/error.h"

namespace ffijit::internal {

// Shared with the other libraries (one copy each, in the public headers): releasing an owned Any,
// and the NULL check of C entry point arguments.
using ffijit::details::ReleaseAny;
using ffijit::details::RequireNonNull;

// Every C API function of the runtime runs its body under this guard.
using ffijit::GuardCBoundary;

}  // namespace ffijit::internal

#endif  // FFIJIT_RUNTIME_INTERNAL_H_
