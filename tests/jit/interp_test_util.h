// Helpers for the interpreter tests: signature builders, binding on either call path, calling.
#ifndef FFIJIT_TESTS_INTERP_INTERP_TEST_UTIL_H_
#define FFIJIT_TESTS_INTERP_INTERP_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ffijit/ffijit.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "ffijit/reflect/signature.h"
#include "interpreter/bound_function.h"
#include "registration/register_internal.h"

namespace ffijit::testing {

// Which executor runs the call: the interpreter through its register stub or through libffi, the
// JIT's shared cold-tier thunk, or the function's own hot-tier thunk. The matrix suites run on
// every path, so each asserted result and error message holds for all executors alike.
enum class CallPath { kStub, kLibffi, kJit, kHot };

inline std::string PathName(const ::testing::TestParamInfo<CallPath>& info) {
  switch (info.param) {
    case CallPath::kStub:
      return "stub";
    case CallPath::kLibffi:
      return "libffi";
    case CallPath::kJit:
      return "jit";
    case CallPath::kHot:
      return "hot";
  }
  return "unknown";
}

// Every path this build has (the JIT only with LLVM).
inline auto AllCallPaths() {
#if FFIJIT_HAVE_LLVM
  return ::testing::Values(CallPath::kStub, CallPath::kLibffi, CallPath::kJit, CallPath::kHot);
#else
  return ::testing::Values(CallPath::kStub, CallPath::kLibffi);
#endif
}

inline TypePtr S(ScalarKind k) {
  return Type::Scalar(k);
}
inline TypePtr T(TypeKind k) {
  return Type::Simple(k);
}

inline Signature Sig(std::vector<TypePtr> args, std::vector<TypePtr> results,
                     CallConvention convention = CallConvention::kPlain) {
  Signature sig;
  sig.args = std::move(args);
  sig.results = std::move(results);
  sig.convention = convention;
  return sig;
}

// A function run by `path`: interpreted only (never handed to the JIT), or compiled (cold or hot
// tier) before use.
template <typename F>
Function Bind(const std::string& name, F* fn, Signature sig, CallPath path = CallPath::kStub,
              std::vector<std::string> arg_names = {}) {
  RegisterOptions options;
  const bool compiled = path == CallPath::kJit || path == CallPath::kHot;
  options.interpret_only = !compiled;
  options.arg_names = std::move(arg_names);
  ScopedJitOptions never({JitPolicy::kNever, 0});
  Function f = MakeFunctionWithFlags(name, reinterpret_cast<void*>(fn), std::move(sig), options,
                                     path == CallPath::kLibffi ? kBoundUseLibffi : 0u);
  try {
    if (path == CallPath::kJit) {
      JitEngine::Default().CompileNow(f);
    } else if (path == CallPath::kHot) {
      JitEngine::Default().CompileHotNow(f);
      EXPECT_TRUE(IsHotCompiled(f)) << name;
    }
  } catch (const Error& e) {
    ADD_FAILURE() << name << ": " << e.what();
  }
  return f;
}

inline Any Call(const Function& f, std::vector<Any> args) {
  return f.CallPacked(reinterpret_cast<TVMFFIAny*>(args.data()), static_cast<int32_t>(args.size()));
}

// The error a call raises; a test failure (and an empty Error) if it succeeds.
inline Error CallError(const Function& f, std::vector<Any> args) {
  try {
    Call(f, std::move(args));
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "the call succeeded";
  return Error("", "");
}

// Calls with raw views (RawStr, ByteArrayPtr, DLTensorPtr cannot live in an owned Any).
inline Any CallRaw(const Function& f, std::vector<TVMFFIAny> args) {
  return f.CallPacked(args.data(), static_cast<int32_t>(args.size()));
}

inline Error CallRawError(const Function& f, std::vector<TVMFFIAny> args) {
  try {
    CallRaw(f, std::move(args));
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "the call succeeded";
  return Error("", "");
}

inline TVMFFIAny RawStr(const char* s) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = s;
  return a;
}

inline TVMFFIAny RawPtr(int32_t type_index, void* p) {
  TVMFFIAny a{};
  a.type_index = type_index;
  a.v_ptr = p;
  return a;
}

}  // namespace ffijit::testing

#endif  // FFIJIT_TESTS_INTERP_INTERP_TEST_UTIL_H_
