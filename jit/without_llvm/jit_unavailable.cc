// jit.h's engine and callbacks in a build without LLVM (FFIJIT_ENABLE_JIT=OFF): every function
// stays on the interpreter and asking for compiled code says why it cannot be. Policies and the
// log are jit_settings.cc's, as in every build.
#include <string>
#include <vector>

#include "ffijit/error.h"
#include "ffijit/jit/jit.h"
#include "interpreter/bound_function.h"
#include "plan/host_entry_internal.h"

namespace ffijit {
namespace {

constexpr const char* kNoJit = "this ffijit was built without LLVM (FFIJIT_ENABLE_JIT=OFF)";
// What CompileNow reports for every function, worded as the LLVM build words its reasons.
const std::string kStaysInterpreted = std::string("the function stays interpreted: ") + kNoJit;

}  // namespace

struct details::JitEngineImpl {};
struct details::NativeCallbackState {};

bool JitAvailable() {
  return false;
}

JitEngine::JitEngine(JitEngineOptions) : impl_(new details::JitEngineImpl()) {}
JitEngine::~JitEngine() = default;

void details::JitEngineImplDelete::operator()(JitEngineImpl* impl) const {
  delete impl;
}

JitEngine& JitEngine::Default() {
  static auto* engine = new JitEngine();
  return *engine;
}

void JitEngine::CompileNow(const Function&) {
  throw RuntimeError(kStaysInterpreted);
}

CompileResults JitEngine::CompileNow(const std::vector<Function>& functions) {
  CompileResults results;
  results.reasons.assign(functions.size(), kStaysInterpreted);
  return results;
}

void JitEngine::CompileHotNow(const Function&) {
  throw RuntimeError(std::string("the function has no hot-tier thunk: ") + kNoJit);
}

void JitEngine::WaitIdle() {}

JitStats JitEngine::Stats() const {
  return JitStats{};
}

// No function has jit/orc's tier state here.
FFIJITTier OrcTierOf(BoundFunction*) {
  return kFFIJITTierInterpreted;
}

NativeCallback::NativeCallback(const Function&, const Signature&, JitEngine&) {
  throw Error("RuntimeError", std::string("cannot make a native callback: ") + kNoJit);
}

// Never constructed here (the constructor throws): nothing to tell.
void NativeCallback::SetUnreportedErrorHandler(void (*)(void*, const char*), void*) {}

// Never constructed here (the constructor throws), but the destructor stays honest.
NativeCallback::~NativeCallback() {
  delete state_;
}

FFIJITHostEntry* details::CompileHostEntry(const BoundFunction*, const FFIJITHostModel&, int) {
  throw RuntimeError(std::string("FFIJITHostEntryCompile: no host entry: ") + kNoJit);
}

}  // namespace ffijit
