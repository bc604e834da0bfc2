// The ORC engine: builds the LLJIT, compiles request batches to objects, links and frees code
// units.
#include "orc/engine.h"

#include <map>

#include "jit_settings.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/JITLink/JITLinkMemoryManager.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace ffijit::orc {

struct CodeUnit {
  llvm::orc::JITDylib* dylib = nullptr;
  int64_t refs = 0;
  int64_t object_bytes = 0;
};

namespace {

std::string ToString(llvm::Error error) {
  return llvm::toString(std::move(error));
}

void InitializeNativeTargetOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

}  // namespace

std::unique_ptr<OrcEngine> OrcEngine::Create(const SymbolTable& runtime_symbols,
                                             std::string cache_dir, std::string* error) {
  InitializeNativeTargetOnce();
  auto machine_builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machine_builder) {
    *error = "cannot detect the host target: " + ToString(machine_builder.takeError());
    return nullptr;
  }
  // Thunks are straight runs of loads, compares and one call: -O0 (FastISel, the fast register
  // allocator) gives code as quick to call as -O2 does for them, at a sixth of the compile time.
  machine_builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::None);
  // The JIT default is the large code model, where every call becomes movabs + call through a
  // register, which FastISel cannot lower (the whole block then goes to SelectionDAG). Small PIC
  // code calls through the PLT; JITLink builds the stubs for symbols out of rel32 range.
  machine_builder->setCodeModel(llvm::CodeModel::Small);
  machine_builder->setRelocationModel(llvm::Reloc::PIC_);
  std::unique_ptr<OrcEngine> engine(new OrcEngine());
  engine->host_key_ = std::string("LLVM " LLVM_VERSION_STRING " ") +
                      machine_builder->getTargetTriple().str() + " " + machine_builder->getCPU() +
                      " " + machine_builder->getFeatures().getString();
  auto target_machine = machine_builder->createTargetMachine();
  if (!target_machine) {
    *error = "cannot create the target machine: " + ToString(target_machine.takeError());
    return nullptr;
  }
  engine->target_machine_ = std::move(*target_machine);
  // The hot tier's: the same target at the default codegen level (SelectionDAG, the greedy
  // register allocator).
  llvm::orc::JITTargetMachineBuilder optimizing_builder = *machine_builder;
  optimizing_builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
  auto optimizing_machine = optimizing_builder.createTargetMachine();
  if (!optimizing_machine) {
    *error =
        "cannot create the optimizing target machine: " + ToString(optimizing_machine.takeError());
    return nullptr;
  }
  engine->optimizing_target_machine_ = std::move(*optimizing_machine);

  auto jit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(*machine_builder))
          // Thunks have no static initializers: no platform runtime to set up or run.
          .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
          // JITLink: memory is mapped read-write, filled, then made read-execute.
          .setObjectLinkingLayerCreator(
              [](llvm::orc::ExecutionSession& session,
                 const llvm::Triple&) -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                return std::make_unique<llvm::orc::ObjectLinkingLayer>(session);
              })
          .create();
  if (!jit) {
    *error = "cannot create the LLJIT: " + ToString(jit.takeError());
    return nullptr;
  }
  engine->jit_ = std::move(*jit);

  // Runtime functions are absolute symbols in one dylib every unit links against, so generated
  // code refers to them by name and a cached object works in the next process too.
  auto& session = engine->jit_->getExecutionSession();
  // LLVM's own errors (a link that fails, a symbol not found) go to the JIT log and obey its
  // switch, instead of LLVM's default report on stderr.
  session.setErrorReporter(
      [](llvm::Error err) { LogJit("ffijit: JIT session error: " + ToString(std::move(err))); });
  engine->runtime_dylib_ = &session.createBareJITDylib("ffijit.runtime");
  llvm::orc::SymbolMap symbols;
  for (const auto& [name, address] : runtime_symbols) {
    symbols[engine->jit_->mangleAndIntern(name)] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(address),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  }
  if (llvm::Error err = engine->runtime_dylib_->define(llvm::orc::absoluteSymbols(symbols))) {
    *error = "cannot define the runtime symbols: " + ToString(std::move(err));
    return nullptr;
  }
  if (!cache_dir.empty()) {
    engine->store_ = std::make_unique<ObjectStore>(std::move(cache_dir), engine->host_key_);
  }
  return engine;
}

OrcEngine::~OrcEngine() {
  // Whatever is still referenced goes with the LLJIT: the ExecutionSession ends every dylib.
  if (jit_) {
    if (llvm::Error err = jit_->getExecutionSession().endSession()) {
      llvm::consumeError(std::move(err));
    }
  }
}

bool OrcEngine::LoadObject(const std::string& object, const std::vector<std::string>& symbols,
                           CodeUnit** unit, std::vector<void*>* addresses, std::string* error) {
  auto& session = jit_->getExecutionSession();
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(units_mutex_);
    id = next_unit_id_++;
  }
  llvm::orc::JITDylib& dylib = session.createBareJITDylib("ffijit.unit." + std::to_string(id));
  std::vector<llvm::orc::JITDylib*> links = {runtime_dylib_};
  llvm::orc::JITDylibSP process = jit_->getProcessSymbolsJITDylib();
  if (process) links.push_back(process.get());
  dylib.setLinkOrder(llvm::orc::makeJITDylibSearchOrder(links));

  auto fail = [&](std::string why) {
    *error = std::move(why);
    if (llvm::Error err = session.removeJITDylib(dylib)) llvm::consumeError(std::move(err));
    return false;
  };
  if (llvm::Error err =
          jit_->addObjectFile(dylib, llvm::MemoryBuffer::getMemBufferCopy(object, "ffijit.unit"))) {
    return fail("cannot add the object: " + ToString(std::move(err)));
  }
  llvm::orc::SymbolLookupSet lookup_set;
  for (const std::string& name : symbols) lookup_set.add(jit_->mangleAndIntern(name));
  auto found = session.lookup(llvm::orc::makeJITDylibSearchOrder(&dylib), std::move(lookup_set));
  if (!found) return fail("cannot link the object: " + ToString(found.takeError()));
  addresses->clear();
  for (const std::string& name : symbols) {
    auto it = found->find(jit_->mangleAndIntern(name));
    if (it == found->end()) return fail("symbol " + name + " missing from the object");
    addresses->push_back(it->second.getAddress().toPtr<void*>());
  }
  auto* created = new CodeUnit{&dylib, 0, static_cast<int64_t>(object.size())};
  std::lock_guard<std::mutex> lock(units_mutex_);
  counters_.live_units++;
  counters_.units_created++;
  counters_.object_bytes_live += created->object_bytes;
  *unit = created;
  return true;
}

std::vector<CompiledSymbol> OrcEngine::Compile(std::vector<CompileRequest> requests,
                                               CodeGenLevel level) {
  std::lock_guard<std::mutex> lock(compile_mutex_);
  std::vector<CompiledSymbol> results(requests.size());
  std::vector<bool> done(requests.size(), false);

  // Persistent cache first: group hits by object so each object is linked once.
  if (store_) {
    std::map<std::string, std::vector<std::pair<std::string, size_t>>> hits_by_object;
    for (size_t i = 0; i < requests.size(); ++i) {
      if (requests[i].cache_key.empty()) continue;
      ObjectStore::Location location;
      std::string why;
      switch (store_->Find(requests[i].cache_key, &location, &why)) {
        case ObjectStore::Lookup::kFound:
          hits_by_object[location.object_name].emplace_back(location.symbol, i);
          break;
        case ObjectStore::Lookup::kDamaged:
          ReportCacheError("damaged entry: " + why);
          break;
        case ObjectStore::Lookup::kMissing:
          break;
      }
    }
    for (const auto& [object_name, hits] : hits_by_object) {
      std::vector<std::string> symbols;
      for (const auto& hit : hits) symbols.push_back(hit.first);
      std::string object, why;
      CodeUnit* unit = nullptr;
      std::vector<void*> addresses;
      // A damaged or unreadable entry is reported and counted; its requests compile afresh.
      if (!store_->ReadObject(object_name, &object, &why)) {
        ReportCacheError("damaged entry: " + why);
        continue;
      }
      if (!LoadObject(object, symbols, &unit, &addresses, &why)) {
        ReportCacheError("damaged entry: cannot load " + object_name + ": " + why);
        continue;
      }
      std::lock_guard<std::mutex> units_lock(units_mutex_);
      for (size_t j = 0; j < hits.size(); ++j) {
        results[hits[j].second] = CompiledSymbol{addresses[j], unit, true, ""};
        done[hits[j].second] = true;
        unit->refs++;
        counters_.disk_hits++;
      }
    }
  }

  std::vector<CompileRequest> remaining;
  std::vector<size_t> remaining_index;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!done[i]) {
      remaining.push_back(std::move(requests[i]));
      remaining_index.push_back(i);
    }
  }
  if (!remaining.empty()) {
    std::vector<CompiledSymbol> compiled = CompileModule(remaining, level);
    for (size_t j = 0; j < compiled.size(); ++j)
      results[remaining_index[j]] = std::move(compiled[j]);
  }
  return results;
}

namespace {

// LLVM's O2 module pipeline, tuned for `machine` (its cost model decides e.g. select vs branch).
void OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(module, modules);
}

}  // namespace

std::vector<CompiledSymbol> OrcEngine::CompileModule(std::vector<CompileRequest>& requests,
                                                     CodeGenLevel level) {
  std::vector<CompiledSymbol> results(requests.size());
  auto context = std::make_unique<llvm::LLVMContext>();
  context->setDiscardValueNames(true);  // nothing reads them; naming costs compile time
  // Code generator diagnostics go to the JIT log too (LLVM prints them on stderr by default).
  context->setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo* info, void*) {
        // Remarks and notes are not problems (LLVM's default handler drops them too).
        if (info->getSeverity() == llvm::DS_Remark || info->getSeverity() == llvm::DS_Note) return;
        std::string text;
        llvm::raw_string_ostream stream(text);
        llvm::DiagnosticPrinterRawOStream printer(stream);
        info->print(printer);
        LogJit("ffijit: LLVM diagnostic: " + stream.str());
      },
      nullptr, /*RespectFilters=*/true);
  auto module = std::make_unique<llvm::Module>("ffijit.unit", *context);
  module->setDataLayout(jit_->getDataLayout());
  module->setTargetTriple(jit_->getTargetTriple().str());

  std::vector<std::string> symbols;
  std::vector<size_t> emitted;
  for (size_t i = 0; i < requests.size(); ++i) {
    std::string symbol = "ffijit_fn_" + std::to_string(i);
    std::string failure = requests[i].emit(*module, symbol);
    if (!failure.empty()) {
      results[i].failure = std::move(failure);
      continue;
    }
    symbols.push_back(symbol);
    emitted.push_back(i);
  }
  // Companions are resolved after every function, so symbols[j] stays emitted[j]'s function.
  std::vector<size_t> first_companion(emitted.size());
  for (size_t j = 0; j < emitted.size(); ++j) {
    first_companion[j] = symbols.size();
    for (const std::string& suffix : requests[emitted[j]].companion_suffixes) {
      symbols.push_back(symbols[j] + suffix);
    }
  }
  if (emitted.empty()) return results;
  auto fail_all = [&](const std::string& why) {
    for (size_t i : emitted) results[i].failure = why;
    return results;
  };

  // About a twentieth of a compile; it turns an emitter bug into an interpreted function and a
  // logged reason instead of undefined behaviour inside LLVM's code generator.
  std::string verifier_output;
  llvm::raw_string_ostream verifier_stream(verifier_output);
  if (llvm::verifyModule(*module, &verifier_stream)) {
    return fail_all("generated code failed verification: " + verifier_stream.str());
  }
  llvm::TargetMachine* machine = target_machine_.get();
  if (level == CodeGenLevel::kOptimized) {
    machine = optimizing_target_machine_.get();
    OptimizeModule(*module, *machine);
  }
  for (size_t i : emitted) {
    if (requests[i].inspect) requests[i].inspect(*module);
  }
  llvm::orc::SimpleCompiler compiler(*machine);
  auto object = compiler(*module);
  if (!object) return fail_all("code generation failed: " + ToString(object.takeError()));
  std::string bytes = (*object)->getBuffer().str();
  {
    std::lock_guard<std::mutex> units_lock(units_mutex_);
    counters_.modules_compiled++;
    counters_.functions_compiled += static_cast<int64_t>(emitted.size());
  }

  CodeUnit* unit = nullptr;
  std::vector<void*> addresses;
  std::string why;
  if (!LoadObject(bytes, symbols, &unit, &addresses, &why)) return fail_all(why);
  std::vector<bool> accepted(emitted.size(), true);
  for (size_t j = 0; j < emitted.size(); ++j) {
    const CompileRequest& request = requests[emitted[j]];
    if (!request.accept) continue;
    const auto first = addresses.begin() + static_cast<std::ptrdiff_t>(first_companion[j]);
    std::string rejected = request.accept(std::vector<void*>(
        first, first + static_cast<std::ptrdiff_t>(request.companion_suffixes.size())));
    if (!rejected.empty()) {
      accepted[j] = false;
      results[emitted[j]].failure = std::move(rejected);
    }
  }
  bool any_accepted = false;
  {
    std::lock_guard<std::mutex> units_lock(units_mutex_);
    for (size_t j = 0; j < emitted.size(); ++j) {
      if (!accepted[j]) continue;
      results[emitted[j]] = CompiledSymbol{addresses[j], unit, false, ""};
      unit->refs++;
      any_accepted = true;
    }
  }
  if (!any_accepted) {
    // Nothing in the unit is handed out: drop it now (Release of the one reference taken here).
    Retain(unit);
    Release(unit);
    return results;
  }
  if (store_) {
    std::vector<std::pair<std::string, std::string>> keys;
    for (size_t j = 0; j < emitted.size(); ++j) {
      if (accepted[j] && !requests[emitted[j]].cache_key.empty()) {
        keys.emplace_back(requests[emitted[j]].cache_key, symbols[j]);
      }
    }
    std::string save_error;
    // The code is loaded either way; a cache that cannot be written only costs the next process
    // a compile, and is reported.
    if (!keys.empty() && !store_->Save(bytes, keys, &save_error)) {
      ReportCacheError("cannot save: " + save_error);
    }
  }
  return results;
}

void OrcEngine::WarmUp(CodeGenLevel level) {
  std::vector<CompileRequest> request;
  request.push_back({"", [](llvm::Module& module, const std::string& symbol) {
                       llvm::LLVMContext& ctx = module.getContext();
                       llvm::IRBuilder<> b(ctx);
                       auto* i64 = b.getInt64Ty();
                       auto* ptr = b.getPtrTy();
                       auto* fn =
                           llvm::Function::Create(llvm::FunctionType::get(i64, {ptr, i64}, false),
                                                  llvm::Function::ExternalLinkage, symbol, module);
                       auto* entry = llvm::BasicBlock::Create(ctx, "", fn);
                       auto* call = llvm::BasicBlock::Create(ctx, "", fn);
                       auto* done = llvm::BasicBlock::Create(ctx, "", fn);
                       b.SetInsertPoint(entry);
                       llvm::Value* x = b.CreateLoad(i64, fn->getArg(0));
                       llvm::Value* d = b.CreateSIToFP(x, b.getDoubleTy());
                       b.CreateCondBr(b.CreateICmpEQ(x, fn->getArg(1)), call, done);
                       b.SetInsertPoint(call);
                       llvm::Value* r = b.CreateCall(llvm::FunctionType::get(i64, {i64}, false),
                                                     b.CreateIntToPtr(b.getInt64(4096), ptr),
                                                     {b.CreateBitCast(d, i64)});
                       b.CreateRet(b.CreateSelect(b.CreateICmpSGT(r, x), r, x));
                       b.SetInsertPoint(done);
                       b.CreateRet(x);
                       return std::string();
                     }});
  for (CompiledSymbol& compiled : Compile(std::move(request), level)) {
    if (!compiled.unit) continue;
    Release(compiled.unit);
    // Not a thunk anyone asked for: the counters say nothing of it.
    std::lock_guard<std::mutex> lock(units_mutex_);
    counters_.modules_compiled--;
    counters_.functions_compiled--;
    counters_.units_created--;
    counters_.units_removed--;
  }
}

void OrcEngine::Retain(CodeUnit* unit) {
  std::lock_guard<std::mutex> lock(units_mutex_);
  unit->refs++;
}

void OrcEngine::Release(CodeUnit* unit) {
  {
    std::lock_guard<std::mutex> lock(units_mutex_);
    if (--unit->refs > 0) return;
    counters_.live_units--;
    counters_.units_removed++;
    counters_.object_bytes_live -= unit->object_bytes;
  }
  if (llvm::Error err = jit_->getExecutionSession().removeJITDylib(*unit->dylib)) {
    llvm::consumeError(std::move(err));
  }
  delete unit;
}

void OrcEngine::ReportCacheError(const std::string& what) {
  {
    std::lock_guard<std::mutex> lock(units_mutex_);
    counters_.cache_errors++;
  }
  LogJit("ffijit: persistent JIT cache: " + what + " (compiling instead)");
}

EngineCounters OrcEngine::Counters() const {
  std::lock_guard<std::mutex> lock(units_mutex_);
  return counters_;
}

}  // namespace ffijit::orc
