// jit_module.h in a build without LLVM (FFIJIT_ENABLE_JIT=OFF): object and IR modules need the
// ORC JIT, so every entry point throws a RuntimeError saying so, and no `.o`/`.bc`/`.ll` loader
// is registered (Module::Load reports the format as unknown).
#include "ffijit/error.h"
#include "ffijit/jit/jit_module.h"

namespace ffijit {
namespace {

[[noreturn]] void Unavailable(const char* what) {
  throw RuntimeError(std::string(what) +
                     ": JIT modules need LLVM, and this ffijit was built without it "
                     "(FFIJIT_ENABLE_JIT=OFF)");
}

}  // namespace

JitModule JitModule::Create(const std::string&) {
  Unavailable("JitModule::Create");
}
JitModule JitModule::Load(const std::string&) {
  Unavailable("JitModule::Load");
}
JitModule JitModule::From(const Module&) {
  Unavailable("JitModule::From");
}
void JitModule::AddFile(const std::string&) const {
  Unavailable("JitModule::AddFile");
}
void JitModule::AddObject(std::string_view, const std::string&) const {
  Unavailable("JitModule::AddObject");
}
void JitModule::AddIR(std::string_view, const std::string&) const {
  Unavailable("JitModule::AddIR");
}
void JitModule::AddIR(const llvm::Module&) const {
  Unavailable("JitModule::AddIR");
}
void JitModule::Unload() const {
  Unavailable("JitModule::Unload");
}

void JitModule::SetLinkOrder(const std::vector<JitModule>&) const {
  Unavailable("JitModule::SetLinkOrder");
}
void* JitModule::Lookup(const std::string&) const {
  Unavailable("JitModule::Lookup");
}
Function JitModule::MakeNative(const std::string&, Signature, const RegisterOptions&) const {
  Unavailable("JitModule::MakeNative");
}
Function JitModule::MakeNative(const std::string&, std::string_view, MetadataFormat,
                               const RegisterOptions&) const {
  Unavailable("JitModule::MakeNative");
}
Function JitModule::RegisterNative(const std::string&, std::string_view, MetadataFormat,
                                   const RegisterOptions&) const {
  Unavailable("JitModule::RegisterNative");
}

}  // namespace ffijit
