// The globals that reach JIT modules by name: the `ffi.Module.load_from_file.{o,bc,ll}` loaders
// and the `ffijit.JitModule*` functions. Registered by libffijit_jit itself when it loads (in a
// build with LLVM): they call jit_module.h, which loads the LLVM plugin on the first call, so that
// Module::Load of a `.o` works before anything else needed LLVM.
#include <string>
#include <vector>

#include "ffijit/error.h"
#include "ffijit/jit/jit_module.h"
#include "ffijit/registry.h"
#include "plugin/orc_plugin.h"

namespace ffijit {
namespace {

// The extensions a JIT module loads (orc/modules/module_files.cc's AddFileTo reads them).
constexpr const char* kExtensions[] = {"o", "bc", "ll"};

// An empty name is "auto": the loader's global takes the format as an optional string.
MetadataFormat FormatFromName(const std::string& name) {
  if (name.empty()) return MetadataFormat::kAuto;
  if (auto format = MetadataFormatFromName(name)) return *format;
  // As jit/orc quotes a loader's text (orc/llvm/session.h's Quote).
  throw ValueError("unknown metadata format `" + Excerpt(name, 600) + "`" +
                   " (expected \"auto\", \"json\", \"raw\", \"sip\" or \"\")");
}

bool RegisterGlobals() {
  auto load = Function::FromTyped(
      [](std::string path, std::string) -> Module { return JitModule::Load(path); },
      "ffi.Module.load_from_file.o");
  for (const char* extension : kExtensions) {
    SetGlobalFunction(std::string("ffi.Module.load_from_file.") + extension, load, true);
  }
  SetGlobalFunction("ffijit.JitModuleCreate", Function::FromTyped([](std::string name) -> Module {
                      return JitModule::Create(name);
                    }),
                    true);
  SetGlobalFunction(
      "ffijit.JitModuleAddFile",
      Function::FromTyped([](Module mod, std::string path) { JitModule::From(mod).AddFile(path); }),
      true);
  SetGlobalFunction("ffijit.JitModuleUnload",
                    Function::FromTyped([](Module mod) { details::UnloadJitModuleGlobal(mod); }),
                    true);
  SetGlobalFunction("ffijit.JitModuleSetLinkOrder",
                    Function::FromTyped([](Module mod, Array modules) {
                      std::vector<JitModule> order;
                      for (int64_t i = 0; i < modules.size(); ++i) {
                        order.push_back(JitModule::From(modules[i].cast<Module>()));
                      }
                      JitModule::From(mod).SetLinkOrder(order);
                    }),
                    true);
  SetGlobalFunction(
      "ffijit.JitModuleMakeNative",
      Function::FromTyped(
          [](Module mod, std::string symbol, std::string metadata, std::string format) -> Function {
            return JitModule::From(mod).MakeNative(symbol, metadata, FormatFromName(format));
          }),
      true);
  return true;
}

__attribute__((constructor)) void RegisterGlobalsAtLoad() {
  RegisterAtLoad("the JIT module loaders", RegisterGlobals);
}

}  // namespace
}  // namespace ffijit
