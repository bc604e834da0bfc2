// jit.h's engine and callbacks in a build without LLVM (FFIJIT_ENABLE_JIT=OFF): every function
// stays on the interpreter and asking for compiled code says why it cannot be. Policies and the
// log are jit_settings.cc's, as in every build.
#include "ffijit/error.h"
#include "ffijit/jit.h"

namespace ffijit {
namespace {

constexpr const char* kNoJit = "this ffijit was built without LLVM (FFIJIT_ENABLE_JIT=OFF)";

}  // namespace

struct JitEngine::Impl {};

bool JitAvailable() {
  return false;
}

JitEngine::JitEngine(JitEngineOptions) : impl_(new Impl()) {}
JitEngine::~JitEngine() = default;

JitEngine& JitEngine::Default() {
  static auto* engine = new JitEngine();
  return *engine;
}

bool JitEngine::CompileNow(TVMFFIObjectHandle, std::string* why) {
  if (why != nullptr) *why = kNoJit;
  return false;
}

int64_t JitEngine::CompileNow(const std::vector<TVMFFIObjectHandle>& functions, std::string* why) {
  if (why != nullptr) {
    why->clear();
    for (size_t i = 0; i < functions.size(); ++i) *why += std::string(kNoJit) + "\n";
  }
  return 0;
}

void JitEngine::WaitIdle() {}

JitStats JitEngine::Stats() const {
  return JitStats{};
}

bool IsJitCompiled(TVMFFIObjectHandle) {
  return false;
}

NativeCallback::NativeCallback(TVMFFIObjectHandle, const Signature&, JitEngine&) {
  throw Error("RuntimeError", std::string("cannot make a native callback: ") + kNoJit);
}

NativeCallback::~NativeCallback() = default;

}  // namespace ffijit
