// libffijit_jit's side of the LLVM plugin (orc_plugin.h): finds and loads libffijit_orc next to
// itself on the first thing that needs LLVM, and defines jit.h's engine and callbacks and
// jit_module.h by forwarding to the plugin's table. Until then registration and the interpreter
// run as in a build without LLVM, and the lazy attach hook below notes what jit/orc's hook would
// have read at registration. A plugin that cannot be loaded leaves every function interpreted and
// every request for compiled code answered with the reason (the file and dlerror()).
#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "ffijit/error.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/jit_module.h"
#include "plan/host_entry_internal.h"
#include "plugin/orc_plugin.h"
#include "settings/jit_settings.h"
#include "stencils/thunks/stencil_tier.h"

#ifndef FFIJIT_ORC_PLUGIN_FILE
#error "the build names the plugin's file (FFIJIT_ORC_PLUGIN_FILE)"
#endif

namespace ffijit {
namespace {

using orc_plugin::Api;

std::atomic<const Api*> g_api{nullptr};

// The plugin's path: the folder libffijit_jit was loaded from, and the plugin's file name.
std::string PluginPath() {
  Dl_info info{};
  std::string dir;
  if (dladdr(reinterpret_cast<void*>(&PluginPath), &info) != 0 && info.dli_fname != nullptr) {
    dir = info.dli_fname;
    const size_t slash = dir.rfind('/');
    dir = slash == std::string::npos ? std::string() : dir.substr(0, slash + 1);
  }
  return dir + FFIJIT_ORC_PLUGIN_FILE;
}

// Loads the plugin once; the reason it could not be loaded, else "".
const std::string& LoadOnce() {
  static const std::string* failure = [] {
    const std::string path = PluginPath();
    std::string why;
    // RTLD_LOCAL: LLVM's symbols stay out of the process's global scope.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = dlerror();
      why = "cannot load " + path + ": " + (error != nullptr ? error : "unknown dlopen error");
    } else {
      using Entry = const Api* (*)(uint32_t);
      auto entry = reinterpret_cast<Entry>(dlsym(handle, orc_plugin::kEntrySymbol));
      const Api* api = entry != nullptr ? entry(orc_plugin::kApiVersion) : nullptr;
      if (api == nullptr) {
        why = path + (entry == nullptr ? " does not export " + std::string(orc_plugin::kEntrySymbol)
                                       : " is the plugin of another ffijit build");
      } else {
        g_api.store(api, std::memory_order_release);
      }
    }
    if (why.empty()) return new std::string();
    LogJit("ffijit: JIT unavailable: " + why);
    return new std::string("the JIT is unavailable: " + why);
  }();
  return *failure;
}

// The plugin's table, loading it first; nullptr (and *why) when it cannot be loaded.
const Api* TryApi(std::string* why) {
  if (const Api* api = g_api.load(std::memory_order_acquire)) return api;
  const std::string& failure = LoadOnce();
  const Api* api = g_api.load(std::memory_order_acquire);
  if (api == nullptr && why != nullptr) *why = failure;
  return api;
}

// The plugin's table, or a RuntimeError saying `what` needs it and why it cannot be loaded.
const Api& RequireApi(const char* what) {
  std::string why;
  if (const Api* api = TryApi(&why)) return *api;
  throw RuntimeError(std::string(what) + ": " + why);
}

// The table when the plugin is already loaded: what was never compiled needs no LLVM to say so.
const Api* LoadedApi() {
  return g_api.load(std::memory_order_acquire);
}

// The interpreter's count reached zero on a function attached before the plugin loaded.
void OnHotBeforeLoad(BoundFunction* fn) {
  if (const Api* api = TryApi(nullptr)) api->on_hot(fn);  // else: interpreted, failure logged
}

// libffijit_jit's attach hook until the plugin loads (the plugin installs its own then). What
// needs a compile now loads the plugin and hands the function to its hook; everything else only
// notes the registration's options (PendingTier) for the plugin to adopt when it first needs
// the function. A tier that needs no LLVM belongs here, in libffijit_jit, not in the plugin.
void AttachTierBeforeLoad(BoundFunction* fn) {
  if (const Api* api = LoadedApi()) {
    api->attach_tier(fn);
    return;
  }
  JitOptions options = JitOptionsForNewFunction();
  if (stencils::AttachStencilTier(fn, options)) return;
  if (options.policy == JitPolicy::kEager ||
      (options.policy == JitPolicy::kAfterCalls && options.after_calls <= 1)) {
    if (const Api* api = TryApi(nullptr)) api->attach_tier(fn);
    return;
  }
  auto* pending = new PendingTier();
  pending->hot_after = HotAfterCalls(options);
  fn->tier_state = pending;
  fn->release_tier_state = &ReleasePendingTier;
  if (options.policy == JitPolicy::kNever || options.policy == JitPolicy::kStencils) return;
  fn->calls_until_hot.store(options.after_calls, std::memory_order_relaxed);
  fn->on_hot = &OnHotBeforeLoad;
}

const bool kHookInstalled = [] {
  // A stencil thunk's count ran out: the hot tier needs the plugin (whose tiering installs its own
  // report when it loads).
  stencils::SetStencilHotCountHook(
      [](void* handle) { OnHotBeforeLoad(static_cast<BoundFunction*>(handle)); });
  SetTierAttachHook(&AttachTierBeforeLoad);
  return true;
}();

}  // namespace

// ---- jit.h ----

bool JitAvailable() {
  return TryApi(nullptr) != nullptr;
}

void details::JitEngineImplDelete::operator()(JitEngineImpl* impl) const {
  // An engine's state exists only once the plugin made it.
  if (impl != nullptr) LoadedApi()->delete_engine(impl);
}

JitEngine::JitEngine(JitEngineOptions options)
    : impl_(RequireApi("JitEngine").new_engine(std::move(options))) {}
JitEngine::~JitEngine() = default;

JitEngine& JitEngine::Default() {
  return RequireApi("JitEngine::Default").default_engine();
}

void JitEngine::CompileNow(const Function& function) {
  CompileResults results = CompileNow(std::vector<Function>{function});
  if (results.installed != 1) throw RuntimeError(results.reasons[0]);
}

CompileResults JitEngine::CompileNow(const std::vector<Function>& functions) {
  // An engine exists only with the plugin loaded.
  return LoadedApi()->compile_now(*this, functions);
}

void JitEngine::CompileHotNow(const Function& function) {
  LoadedApi()->compile_hot_now(*this, function);
}

void JitEngine::WaitIdle() {
  LoadedApi()->wait_idle(*this);
}

JitStats JitEngine::Stats() const {
  return LoadedApi()->stats(*this);
}

FFIJITTier OrcTierOf(BoundFunction* fn) {
  // Only the plugin makes the state this asks about, so it is loaded.
  const Api* api = LoadedApi();
  return api != nullptr ? api->tier(fn) : kFFIJITTierInterpreted;
}

NativeCallback::NativeCallback(const Function& function, const Signature& signature,
                               JitEngine& engine) {
  // `engine` exists, so the plugin is loaded.
  LoadedApi()->make_callback(function, signature, engine, &pointer_, &state_);
}

void NativeCallback::SetUnreportedErrorHandler(void (*handler)(void* data, const char* declaration),
                                               void* data) {
  LoadedApi()->set_unreported_handler(state_, handler, data);
}

NativeCallback::~NativeCallback() {
  LoadedApi()->destroy_callback(state_);
}

FFIJITHostEntry* details::CompileHostEntry(const BoundFunction* fn, const FFIJITHostModel& model,
                                           int flags) {
  std::string why;
  const Api* api = TryApi(&why);
  if (api == nullptr) throw RuntimeError("FFIJITHostEntryCompile: no host entry: " + why);
  return api->compile_host_entry(fn, model, flags);
}

// ---- jit_module.h ----

JitModule JitModule::Create(const std::string& name) {
  return RequireApi("JitModule::Create").module_create(name);
}
JitModule JitModule::Load(const std::string& path) {
  return RequireApi("JitModule::Load").module_load(path);
}
JitModule JitModule::From(const Module& mod) {
  return RequireApi("JitModule::From").module_from(mod);
}
void JitModule::AddFile(const std::string& path) const {
  RequireApi("JitModule::AddFile").module_add_file(*this, path);
}
void JitModule::AddObject(std::string_view bytes, const std::string& name) const {
  RequireApi("JitModule::AddObject").module_add_object(*this, bytes, name);
}
void JitModule::AddIR(std::string_view bytes, const std::string& name) const {
  RequireApi("JitModule::AddIR").module_add_ir_text(*this, bytes, name);
}
void JitModule::AddIR(const llvm::Module& module) const {
  RequireApi("JitModule::AddIR").module_add_ir(*this, module);
}
void JitModule::Unload() const {
  RequireApi("JitModule::Unload").module_unload(*this);
}
void JitModule::SetLinkOrder(const std::vector<JitModule>& modules) const {
  RequireApi("JitModule::SetLinkOrder").module_set_link_order(*this, modules);
}
void* JitModule::Lookup(const std::string& symbol) const {
  return RequireApi("JitModule::Lookup").module_lookup(*this, symbol);
}
Function JitModule::MakeNative(const std::string& symbol, Signature sig,
                               const RegisterOptions& options) const {
  return RequireApi("JitModule::MakeNative")
      .module_make_native(*this, symbol, std::move(sig), options);
}
Function JitModule::MakeNative(const std::string& symbol, std::string_view metadata,
                               MetadataFormat format, const RegisterOptions& options) const {
  return RequireApi("JitModule::MakeNative")
      .module_make_native_text(*this, symbol, metadata, format, options);
}
Function JitModule::RegisterNative(const std::string& symbol, std::string_view metadata,
                                   MetadataFormat format, const RegisterOptions& options) const {
  return RequireApi("JitModule::RegisterNative")
      .module_register_native(*this, symbol, metadata, format, options);
}

void details::UnloadJitModuleGlobal(const Module& mod) {
  RequireApi("ffijit.JitModuleUnload").module_unload_global(mod);
}

}  // namespace ffijit
