// The files a JIT module loads, by extension (AddFileTo), and the globals that reach JIT modules by
// name: the `ffi.Module.load_from_file.{o,bc,ll}` loaders and the `ffijit.JitModule*` functions.
#include <string>
#include <vector>

#include "ffijit/error.h"
#include "ffijit/jit_module.h"
#include "ffijit/registry.h"
#include "orc/llvm/session.h"
#include "orc/modules/module_state.h"
#include "settings/file_bytes.h"

namespace ffijit::orc {
namespace {

std::string ReadFileOrThrow(const std::string& path) {
  std::string bytes, why;
  if (!ReadFileBytes(path, &bytes, &why))
    throw ValueError("cannot read " + Quote(path) + ": " + why);
  return bytes;
}

std::string Extension(const std::string& path) {
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  return path.substr(dot + 1);
}

// The files a JIT module loads, by extension: the one list behind AddFile and the
// `ffi.Module.load_from_file.<extension>` loaders registered below.
struct FileKind {
  const char* extension;
  bool is_object;  // else LLVM IR, bitcode or text
};
constexpr FileKind kFileKinds[] = {{"o", true}, {"bc", false}, {"ll", false}};

// An empty name is "auto": the loader's global takes the format as an optional string.
MetadataFormat FormatFromName(const std::string& name) {
  if (name.empty()) return MetadataFormat::kAuto;
  if (auto format = MetadataFormatFromName(name)) return *format;
  throw ValueError("unknown metadata format " + Quote(name) +
                   " (expected \"auto\", \"json\", \"raw\", \"sip\" or \"\")");
}

bool RegisterGlobals() {
  auto load = Function::FromTyped(
      [](std::string path, std::string) -> Module { return JitModule::Load(path); },
      "ffi.Module.load_from_file.o");
  for (const FileKind& kind : kFileKinds) {
    SetGlobalFunction(std::string("ffi.Module.load_from_file.") + kind.extension, load, true);
  }
  SetGlobalFunction("ffijit.JitModuleCreate", Function::FromTyped([](std::string name) -> Module {
                      return JitModule::Create(name);
                    }),
                    true);
  SetGlobalFunction(
      "ffijit.JitModuleAddFile",
      Function::FromTyped([](Module mod, std::string path) { JitModule::From(mod).AddFile(path); }),
      true);
  // The caller's handle and this function's argument.
  SetGlobalFunction("ffijit.JitModuleUnload", Function::FromTyped([](Module mod) {
                      StateOf(mod, "ffijit.JitModuleUnload")->Unload(2);
                    }),
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

void AddFileTo(ModuleState* state, const std::string& path) {
  const std::string extension = Extension(path);
  for (const FileKind& kind : kFileKinds) {
    if (extension != kind.extension) continue;
    const std::string bytes = ReadFileOrThrow(path);
    if (kind.is_object) {
      state->AddObject(bytes, path);
    } else {
      state->AddIR(bytes, path);
    }
    return;
  }
  throw ValueError("cannot add " + Quote(path) +
                   " to a JIT module: the extension must be .o, .bc or .ll");
}

}  // namespace ffijit::orc
