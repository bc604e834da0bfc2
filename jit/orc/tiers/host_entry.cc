// Host entries in the LLVM build: one function's entry compiled into its own code unit at the
// fast level, freed with the entry.
#include <chrono>
#include <string>
#include <vector>

#include "ffijit/error.h"
#include "host_entry_internal.h"
#include "llvm/IR/Module.h"
#include "orc/codegen/host_entry_codegen.h"
#include "orc/codegen/thunk_codegen.h"
#include "orc/tiers/jit_engine_impl.h"

namespace ffijit::details {
namespace {

struct EntryCode {
  orc::UnitCompiler* engine = nullptr;
  orc::CodeUnit* unit = nullptr;
};

void ReleaseEntryCode(void* opaque) {
  auto* code = static_cast<EntryCode*>(opaque);
  code->engine->Release(code->unit);
  delete code;
}

}  // namespace

FFIJITHostEntry* CompileHostEntry(const BoundFunction* fn, const FFIJITHostModel& model,
                                  int flags) {
  const CallPlan& plan = *fn->plan;
  const std::string refused =
      "FFIJITHostEntryCompile: no host entry for `" + plan.declaration + "`: ";
  std::string why = orc::HostEntryUnsupportedReason(plan);
  if (!why.empty()) throw RuntimeError(refused + why);
  const auto start = std::chrono::steady_clock::now();
  orc::UnitCompiler* engine = JitEngineAccess::Of(JitEngine::Default())->Engine(&why);
  if (engine == nullptr) throw RuntimeError(refused + why);
  // No cache key: the code holds this process's addresses.
  std::vector<orc::CompileRequest> request;
  // The function's hot-tier thunk inside the entry, for LLVM to inline and fold the TVMFFIAny
  // array away.
  request.push_back({"", [&](llvm::Module& module, const std::string& symbol) {
                       const std::string thunk_symbol = symbol + ".thunk";
                       std::string failed = orc::EmitThunk(plan, module, thunk_symbol,
                                                           orc::HotThunkOptions(fn->target));
                       if (!failed.empty()) return failed;
                       llvm::Function* thunk = module.getFunction(thunk_symbol);
                       thunk->setLinkage(llvm::GlobalValue::InternalLinkage);
                       thunk->addFnAttr(llvm::Attribute::AlwaysInline);
                       return orc::EmitHostEntry(plan, fn, model, flags, thunk, module, symbol);
                     }});
  orc::CompiledSymbol compiled = engine->Compile(std::move(request), orc::CodeGenLevel::kLight)[0];
  if (compiled.address == nullptr) throw RuntimeError(refused + compiled.failure);
  auto entry = std::make_unique<FFIJITHostEntry>();
  entry->address = compiled.address;
  entry->code = new EntryCode{engine, compiled.unit};
  entry->release_code = &ReleaseEntryCode;
  entry->compile_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  return entry.release();
}

}  // namespace ffijit::details
