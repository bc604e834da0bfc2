// The files a JIT module loads, by extension (AddFileTo), and what `ffijit.JitModuleUnload`
// (plugin/module_globals.cc registers the globals) does.
#include <string>
#include <vector>

#include "base/file_bytes.h"
#include "ffijit/error.h"
#include "ffijit/jit/jit_module.h"
#include "ffijit/registry.h"
#include "orc/llvm/session.h"
#include "orc/modules/module_state.h"
#include "orc/modules/unload_global.h"

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
// `ffi.Module.load_from_file.<extension>` loaders (plugin/module_globals.cc).
struct FileKind {
  const char* extension;
  bool is_object;  // else LLVM IR, bitcode or text
};
constexpr FileKind kFileKinds[] = {{"o", true}, {"bc", false}, {"ll", false}};

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

namespace ffijit::details {

// The caller's handle and the global's argument.
void UnloadJitModuleGlobal(const Module& mod) {
  orc::StateOf(mod, "ffijit.JitModuleUnload")->Unload(2);
}

}  // namespace ffijit::details
