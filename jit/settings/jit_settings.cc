// JIT settings shared by every build: policies (FFIJIT_JIT, the default, scoped overrides), the
// default engine's options (FFIJIT_JIT_CACHE_DIR, FFIJIT_JIT_HOT_MAX) and the JIT log
// (FFIJIT_JIT_LOG, SetJitLogSink).
#include "settings/jit_settings.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <utility>

namespace ffijit {
namespace {

std::mutex& PolicyMutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}

// N of "after:N" with N > 0; 0 for anything else.
int64_t AfterCount(const char* text) {
  if (std::strncmp(text, "after:", 6) != 0) return 0;
  char* end = nullptr;
  long long n = std::strtoll(text + 6, &end, 10);
  return end != text + 6 && *end == '\0' && n > 0 ? n : 0;
}

// FFIJIT_JIT: "eager", "never" (or "off"), "stencils", "after:N" with N > 0. Anything else keeps
// the built-in default and says so on the JIT log: a misspelt policy must not pass silently.
JitOptions OptionsFromEnvironment() {
  JitOptions options;
  const char* text = std::getenv("FFIJIT_JIT");
  if (text == nullptr) return options;
  if (std::strcmp(text, "eager") == 0) {
    options.policy = JitPolicy::kEager;
    return options;
  }
  if (std::strcmp(text, "never") == 0 || std::strcmp(text, "off") == 0) {
    options.policy = JitPolicy::kNever;
    return options;
  }
  if (std::strcmp(text, "stencils") == 0) {
    options.policy = JitPolicy::kStencils;
    return options;
  }
  if (int64_t n = AfterCount(text); n > 0) {
    options.after_calls = n;
    return options;
  }
  LogJit(std::string("ffijit: FFIJIT_JIT=\"") + text +
         "\" is not eager, never, off, stencils or after:N (N > 0); using after:" +
         std::to_string(options.after_calls));
  return options;
}

// FFIJIT_JIT_HOT: "never" (or "off"), "after:N" with N > 0; anything else keeps the default and
// says so, as FFIJIT_JIT does.
void HotOptionsFromEnvironment(JitOptions* options) {
  const char* text = std::getenv("FFIJIT_JIT_HOT");
  if (text == nullptr) return;
  if (std::strcmp(text, "never") == 0 || std::strcmp(text, "off") == 0) {
    options->hot_after_calls = 0;
    return;
  }
  if (int64_t n = AfterCount(text); n > 0) {
    options->hot_after_calls = n;
    return;
  }
  LogJit(std::string("ffijit: FFIJIT_JIT_HOT=\"") + text +
         "\" is not never, off or after:N (N > 0); using after:" +
         std::to_string(options->hot_after_calls));
}

JitOptions& GlobalOptions() {
  static auto* options = [] {
    auto* made = new JitOptions(OptionsFromEnvironment());
    HotOptionsFromEnvironment(made);
    return made;
  }();
  return *options;
}

thread_local JitOptions tls_options;
thread_local bool tls_has_options = false;

std::mutex& LogMutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}
using LogSinkFunction = std::function<void(const std::string&)>;

// Shared, so LogJit can call the sink after releasing the lock while SetJitLogSink replaces it.
std::shared_ptr<const LogSinkFunction>& LogSink() {
  static auto* sink = new std::shared_ptr<const LogSinkFunction>();
  return *sink;
}

}  // namespace

void LogJit(const std::string& line) {
  std::shared_ptr<const LogSinkFunction> sink;
  {
    std::unique_lock<std::mutex> lock(LogMutex());
    sink = LogSink();
    if (!sink) {
      // Once per distinct line: a signature that cannot compile is reported once, not per
      // function.
      static auto* seen = new std::unordered_set<std::string>();
      const char* enabled = std::getenv("FFIJIT_JIT_LOG");
      if (enabled != nullptr && std::strcmp(enabled, "0") == 0) return;
      if (!seen->insert(line).second) return;
      std::fprintf(stderr, "%s\n", line.c_str());
      return;
    }
  }
  // Outside the lock: a sink may log itself, or set a new sink.
  (*sink)(line);
}

JitOptions JitOptionsForNewFunction() {
  return tls_has_options ? tls_options : DefaultJitOptions();
}

void SetDefaultJitOptions(const JitOptions& options) {
  std::lock_guard<std::mutex> lock(PolicyMutex());
  GlobalOptions() = options;
}

JitOptions DefaultJitOptions() {
  std::lock_guard<std::mutex> lock(PolicyMutex());
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

void SetJitLogSink(std::function<void(const std::string&)> sink) {
  auto replacement = sink ? std::make_shared<const LogSinkFunction>(std::move(sink)) : nullptr;
  std::shared_ptr<const LogSinkFunction> previous;  // destroyed after the lock is released
  std::lock_guard<std::mutex> lock(LogMutex());
  previous = std::exchange(LogSink(), std::move(replacement));
}

JitEngineOptions DefaultEngineOptions() {
  JitEngineOptions options;
  if (const char* dir = std::getenv("FFIJIT_JIT_CACHE_DIR")) options.cache_dir = dir;
  if (const char* max = std::getenv("FFIJIT_JIT_HOT_MAX")) {
    char* end = nullptr;
    long long n = std::strtoll(max, &end, 10);
    if (end != max && *end == '\0' && n >= 0) {
      options.max_hot_thunks = n;
    } else {
      LogJit(std::string("ffijit: FFIJIT_JIT_HOT_MAX=\"") + max + "\" is not a count >= 0; using " +
             std::to_string(options.max_hot_thunks));
    }
  }
  return options;
}

}  // namespace ffijit
