// libffijit_orc's one export: the table of its implementations that libffijit_jit forwards to
// (plugin/orc_plugin.h). Compiled into the plugin only; where the ORC objects are linked
// straight into a program (ffijit's tests of internals) nothing reads the table.
#include "ffijit/jit/host_entry.h"
#include "orc/tiers/jit_engine_impl.h"
#include "plan/host_entry_internal.h"
#include "plugin/orc_plugin.h"

namespace ffijit::orc {
namespace {

const orc_plugin::Api kApi = {
    orc_plugin::kApiVersion,
    &AttachTier,
    &OnHotOfPendingTier,
    [](JitEngineOptions options) { return new details::JitEngineImpl(std::move(options)); },
    [](details::JitEngineImpl* impl) { details::JitEngineImplDelete()(impl); },
    []() -> JitEngine& { return JitEngine::Default(); },
    [](JitEngine& engine, const std::vector<Function>& functions) {
      return engine.CompileNow(functions);
    },
    [](JitEngine& engine, const Function& function) { engine.CompileHotNow(function); },
    [](JitEngine& engine) { engine.WaitIdle(); },
    [](const JitEngine& engine) { return engine.Stats(); },
    &OrcTierOf,
    &MakeNativeCallback,
    &SetUnreportedErrorHandler,
    &DestroyNativeCallback,
    &details::CompileHostEntry,
    [](const std::string& name) { return JitModule::Create(name); },
    [](const std::string& path) { return JitModule::Load(path); },
    [](const Module& mod) { return JitModule::From(mod); },
    [](const JitModule& mod, const std::string& path) { mod.AddFile(path); },
    [](const JitModule& mod, std::string_view bytes, const std::string& name) {
      mod.AddObject(bytes, name);
    },
    [](const JitModule& mod, std::string_view bytes, const std::string& name) {
      mod.AddIR(bytes, name);
    },
    [](const JitModule& mod, const llvm::Module& module) { mod.AddIR(module); },
    [](const JitModule& mod, const std::vector<JitModule>& modules) { mod.SetLinkOrder(modules); },
    [](const JitModule& mod) { mod.Unload(); },
    &details::UnloadJitModuleGlobal,
    [](const JitModule& mod, const std::string& symbol) { return mod.Lookup(symbol); },
    [](const JitModule& mod, const std::string& symbol, Signature sig,
       const RegisterOptions& options) { return mod.MakeNative(symbol, std::move(sig), options); },
    [](const JitModule& mod, const std::string& symbol, std::string_view metadata,
       MetadataFormat format, const RegisterOptions& options) {
      return mod.MakeNative(symbol, metadata, format, options);
    },
    [](const JitModule& mod, const std::string& symbol, std::string_view metadata,
       MetadataFormat format, const RegisterOptions& options) {
      return mod.RegisterNative(symbol, metadata, format, options);
    },
};

}  // namespace
}  // namespace ffijit::orc

// The plugin's version script exports this symbol alone.
extern "C" __attribute__((visibility("default"))) const ffijit::orc_plugin::Api*
ffijit_orc_plugin_api(uint32_t version) {
  return version == ffijit::orc_plugin::kApiVersion ? &ffijit::orc::kApi : nullptr;
}
