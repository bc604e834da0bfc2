// The seam between libffijit_jit and its LLVM plugin, libffijit_orc (everything under jit/orc/):
// the table of entry points the plugin hands libffijit_jit when it is loaded, on the first thing
// that needs LLVM. Loading libLLVM costs tens of milliseconds of relocations and static
// constructors; a process that registers functions and calls them on the interpreter never pays.
#ifndef FFIJIT_JIT_PLUGIN_ORC_PLUGIN_H_
#define FFIJIT_JIT_PLUGIN_ORC_PLUGIN_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ffijit/jit/host_entry.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/jit_module.h"
#include "interpreter/bound_function.h"
#include "orc/modules/unload_global.h"

namespace ffijit::orc_plugin {

// Bumped whenever the table changes: a plugin of another build is refused by name.
constexpr uint32_t kApiVersion = 2;
// The one symbol the plugin exports: `const Api* ffijit_orc_plugin_api(uint32_t version)`,
// nullptr when the versions differ.
constexpr const char* kEntrySymbol = "ffijit_orc_plugin_api";

// The plugin's implementations of jit.h and jit_module.h (libffijit_jit's exported definitions
// forward here) and of the tier hooks. Exceptions cross the table: both sides are one C++ runtime.
struct Api {
  uint32_t version;
  // Tiering: the plugin's attach hook (installed by the plugin when it loads, for later
  // functions); the count's report for a function attached before the plugin loaded.
  TierAttachHook attach_tier;
  void (*on_hot)(BoundFunction* fn);

  // jit.h
  details::JitEngineImpl* (*new_engine)(JitEngineOptions options);
  void (*delete_engine)(details::JitEngineImpl* impl);
  JitEngine& (*default_engine)();
  CompileResults (*compile_now)(JitEngine& engine, const std::vector<Function>& functions);
  void (*compile_hot_now)(JitEngine& engine, const Function& function);
  void (*wait_idle)(JitEngine& engine);
  JitStats (*stats)(const JitEngine& engine);
  // The tier query for a function whose tier state is the plugin's (OrcTierOf).
  FFIJITTier (*tier)(BoundFunction* fn);
  void (*make_callback)(const Function& function, const Signature& signature, JitEngine& engine,
                        void** pointer, details::NativeCallbackState** state);
  void (*set_unreported_handler)(details::NativeCallbackState* state,
                                 void (*handler)(void* data, const char* declaration), void* data);
  void (*destroy_callback)(details::NativeCallbackState* state);
  FFIJITHostEntry* (*compile_host_entry)(const BoundFunction* fn, const FFIJITHostModel& model,
                                         int flags);

  // jit_module.h
  JitModule (*module_create)(const std::string& name);
  JitModule (*module_load)(const std::string& path);
  JitModule (*module_from)(const Module& mod);
  void (*module_add_file)(const JitModule& mod, const std::string& path);
  void (*module_add_object)(const JitModule& mod, std::string_view bytes, const std::string& name);
  void (*module_add_ir_text)(const JitModule& mod, std::string_view bytes, const std::string& name);
  void (*module_add_ir)(const JitModule& mod, const llvm::Module& module);
  void (*module_set_link_order)(const JitModule& mod, const std::vector<JitModule>& modules);
  void (*module_unload)(const JitModule& mod);
  void (*module_unload_global)(const Module& mod);
  void* (*module_lookup)(const JitModule& mod, const std::string& symbol);
  Function (*module_make_native)(const JitModule& mod, const std::string& symbol, Signature sig,
                                 const RegisterOptions& options);
  Function (*module_make_native_text)(const JitModule& mod, const std::string& symbol,
                                      std::string_view metadata, MetadataFormat format,
                                      const RegisterOptions& options);
  Function (*module_register_native)(const JitModule& mod, const std::string& symbol,
                                     std::string_view metadata, MetadataFormat format,
                                     const RegisterOptions& options);
};

}  // namespace ffijit::orc_plugin

#endif  // FFIJIT_JIT_PLUGIN_ORC_PLUGIN_H_
