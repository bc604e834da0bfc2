// Functions compilers call from ordinary objects for the host that no shared library exports:
// the JIT defines them for the code it loads (abi.h, HostLoaderHelpers).
#include <utility>
#include <vector>

#include "platform/abi.h"

#if defined(__aarch64__)
// gcc and clang compile atomics for Linux AArch64 to calls of libgcc's outline helpers
// (-moutline-atomics, both compilers' default there). libgcc keeps them in its static archive
// only, hidden: taking their addresses here links this library's own copies.
// clang-format does not settle on one layout of these macros from one run to the next.
// clang-format off
#define FFIJIT_A64_ORDERS(X, op) X(op##_relax) X(op##_acq) X(op##_rel) X(op##_acq_rel)
#define FFIJIT_A64_SIZES(X, op) \
  FFIJIT_A64_ORDERS(X, op##1) FFIJIT_A64_ORDERS(X, op##2) \
  FFIJIT_A64_ORDERS(X, op##4) FFIJIT_A64_ORDERS(X, op##8)
#define FFIJIT_A64_OUTLINE_ATOMICS(X) \
  FFIJIT_A64_SIZES(X, __aarch64_cas) FFIJIT_A64_ORDERS(X, __aarch64_cas16) \
  FFIJIT_A64_SIZES(X, __aarch64_swp) FFIJIT_A64_SIZES(X, __aarch64_ldadd) \
  FFIJIT_A64_SIZES(X, __aarch64_ldclr) FFIJIT_A64_SIZES(X, __aarch64_ldeor) \
  FFIJIT_A64_SIZES(X, __aarch64_ldset)
// clang-format on
#define FFIJIT_A64_DECLARE(name) void name();
extern "C" {
FFIJIT_A64_OUTLINE_ATOMICS(FFIJIT_A64_DECLARE)
}
#endif

namespace ffijit::platform {

std::vector<std::pair<const char*, void*>> HostLoaderHelpers() {
  std::vector<std::pair<const char*, void*>> helpers;
#if defined(__aarch64__)
#define FFIJIT_A64_ADD(name) helpers.emplace_back(#name, reinterpret_cast<void*>(&name));
  FFIJIT_A64_OUTLINE_ATOMICS(FFIJIT_A64_ADD)
#endif
  return helpers;
}

}  // namespace ffijit::platform
