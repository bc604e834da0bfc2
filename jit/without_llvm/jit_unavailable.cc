// jit.h in a build without LLVM (FFIJIT_ENABLE_JIT=OFF): every function stays on the interpreter,
// policies are kept but have nothing to act on, and asking for compiled code says why it cannot be.
#include <mutex>

#include "ffijit/error.h"
#include "ffijit/jit.h"

namespace ffijit {
namespace {

constexpr const char* kNoJit = "this ffijit was built without LLVM (FFIJIT_ENABLE_JIT=OFF)";

std::mutex& OptionsMutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}
JitOptions& GlobalOptions() {
  static auto* options = new JitOptions();
  return *options;
}
thread_local JitOptions tls_options;
thread_local bool tls_has_options = false;

}  // namespace

struct JitEngine::Impl {};

bool JitAvailable() {
  return false;
}

void SetDefaultJitOptions(const JitOptions& options) {
  std::lock_guard<std::mutex> lock(OptionsMutex());
  GlobalOptions() = options;
}

JitOptions DefaultJitOptions() {
  std::lock_guard<std::mutex> lock(OptionsMutex());
  return GlobalOptions();
}

ScopedJitOptions::ScopedJitOptions(const JitOptions& options)
    : saved_(tls_options), had_saved_(tls_has_options) {
  tls_options = options;
  tls_has_options = true;
}

ScopedJitOptions::~ScopedJitOptions() {
  tls_options = saved_;
  tls_has_options = had_saved_;
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

void SetJitLogSink(std::function<void(const std::string&)>) {}

NativeCallback::NativeCallback(TVMFFIObjectHandle, const Signature&, JitEngine&) {
  throw Error("RuntimeError", std::string("cannot make a native callback: ") + kNoJit);
}

NativeCallback::~NativeCallback() = default;

}  // namespace ffijit
