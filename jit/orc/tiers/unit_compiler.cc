// The unit compiler: compiles request batches to objects and links them into code units of the
// process's ORC session (orc/llvm/session.h), and frees them.
#include "orc/tiers/unit_compiler.h"

#include <algorithm>
#include <atomic>
#include <map>

#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "orc/llvm/llvm_compat.h"
#include "orc/llvm/session.h"
#include "settings/jit_settings.h"

namespace ffijit::orc {
namespace {

// Marks every function defined in `module` nounwind without an unwind table. Code units are linked
// by Session::code_linker, which registers no unwind tables, and nothing unwinds through generated
// code (an exception escaping a native is not caught there either way); copies of a native's IR
// come with clang's uwtable, which goes too.
void StripUnwindTables(llvm::Module& module) {
  for (llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    function.setUWTableKind(llvm::UWTableKind::None);
    function.addFnAttr(llvm::Attribute::NoUnwind);
  }
}

}  // namespace

struct CodeUnit {
  llvm::orc::JITDylib* dylib = nullptr;
  int64_t refs = 0;
  int64_t object_bytes = 0;
};

std::unique_ptr<UnitCompiler> UnitCompiler::Create(const SymbolTable& runtime_symbols,
                                                   std::string cache_dir, std::string* error) {
  Session* session = Session::Get(error);
  if (session == nullptr) return nullptr;
  std::unique_ptr<UnitCompiler> compiler(new UnitCompiler());
  compiler->session_ = session;
  compiler->target_machine_ = session->CreateTargetMachine(CodeGenLevel::kFast, error);
  if (!compiler->target_machine_) return nullptr;
  // The hot tier's: the same target at the default codegen level (SelectionDAG, the greedy
  // register allocator).
  compiler->optimizing_target_machine_ =
      session->CreateTargetMachine(CodeGenLevel::kOptimized, error);
  if (!compiler->optimizing_target_machine_) return nullptr;
  compiler->light_target_machine_ = session->CreateTargetMachine(CodeGenLevel::kLight, error);
  if (!compiler->light_target_machine_) return nullptr;

  // Runtime functions are absolute symbols in one dylib every unit links against, so generated
  // code refers to them by name and a cached object works in the next process too.
  static std::atomic<uint64_t> next_compiler{0};
  compiler->id_ = next_compiler.fetch_add(1);
  compiler->runtime_dylib_ =
      &session->CreateBareDylib("ffijit.runtime." + std::to_string(compiler->id_));
  llvm::orc::SymbolMap symbols;
  for (const auto& [name, address] : runtime_symbols) {
    symbols[session->jit().mangleAndIntern(name)] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(address),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  }
  if (llvm::Error err = compiler->runtime_dylib_->define(llvm::orc::absoluteSymbols(symbols))) {
    *error = "cannot define the runtime symbols: " + ErrorText(std::move(err));
    return nullptr;
  }
  if (!cache_dir.empty()) {
    compiler->store_ = std::make_unique<ObjectStore>(std::move(cache_dir), session->host_key());
  }
  return compiler;
}

UnitCompiler::~UnitCompiler() {
  // The compiler's code goes with it, whatever still refers to it (as its owner promises).
  std::lock_guard<std::mutex> lock(units_mutex_);
  for (CodeUnit* unit : live_units_) {
    session_->RemoveDylib(*unit->dylib);
    delete unit;
  }
  if (runtime_dylib_ != nullptr) session_->RemoveDylib(*runtime_dylib_);
}

const std::string& UnitCompiler::HostKey() const {
  return session_->host_key();
}

bool UnitCompiler::LoadObject(const std::string& object, const std::vector<std::string>& symbols,
                              const std::vector<llvm::orc::JITDylib*>& link_with, CodeUnit** unit,
                              std::vector<void*>* addresses, std::string* error) {
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(units_mutex_);
    id = next_unit_id_++;
  }
  llvm::orc::LLJIT& jit = session_->jit();
  llvm::orc::JITDylib& dylib =
      session_->CreateBareDylib("ffijit.unit." + std::to_string(id_) + "." + std::to_string(id));
  // Hot thunks with a module's native inlined resolve what the native uses as the module's own
  // code does: through the module's dylib and its link order.
  // (A module's own code sees its hidden symbols too.)
  llvm::orc::JITDylibSearchOrder links = {
      {runtime_dylib_, llvm::orc::JITDylibLookupFlags::MatchExportedSymbolsOnly}};
  for (llvm::orc::JITDylib* extra : link_with) {
    auto same = [extra](const auto& link) { return link.first == extra; };
    if (std::none_of(links.begin(), links.end(), same)) {
      links.emplace_back(extra, llvm::orc::JITDylibLookupFlags::MatchAllSymbols);
    }
  }
  links.emplace_back(&session_->process_symbols(),
                     llvm::orc::JITDylibLookupFlags::MatchExportedSymbolsOnly);
  dylib.setLinkOrder(std::move(links));

  auto fail = [&](std::string why) {
    *error = std::move(why);
    session_->RemoveDylib(dylib);
    return false;
  };
  ReportedErrors reported;
  if (llvm::Error err = session_->code_linker().add(
          dylib, llvm::MemoryBuffer::getMemBufferCopy(object, "ffijit.unit"))) {
    return fail("cannot add the object: " + ErrorText(std::move(err)));
  }
  llvm::orc::SymbolLookupSet lookup_set;
  for (const std::string& name : symbols) lookup_set.add(jit.mangleAndIntern(name));
  auto found =
      session_->session().lookup(llvm::orc::makeJITDylibSearchOrder(&dylib), std::move(lookup_set));
  if (!found) {
    return fail("cannot link the object: " + reported.Or(ErrorText(found.takeError())));
  }
  addresses->clear();
  for (const std::string& name : symbols) {
    auto it = found->find(jit.mangleAndIntern(name));
    if (it == found->end()) return fail("symbol " + name + " missing from the object");
    addresses->push_back(it->second.getAddress().toPtr<void*>());
  }
  auto* created = new CodeUnit{&dylib, 0, static_cast<int64_t>(object.size())};
  std::lock_guard<std::mutex> lock(units_mutex_);
  counters_.live_units++;
  counters_.units_created++;
  counters_.object_bytes_live += created->object_bytes;
  live_units_.insert(created);
  *unit = created;
  return true;
}

std::vector<CompiledSymbol> UnitCompiler::Compile(std::vector<CompileRequest> requests,
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
      if (!LoadObject(object, symbols, {}, &unit, &addresses, &why)) {
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

std::vector<CompiledSymbol> UnitCompiler::CompileModule(std::vector<CompileRequest>& requests,
                                                        CodeGenLevel level) {
  std::vector<CompiledSymbol> results(requests.size());
  auto context = std::make_unique<llvm::LLVMContext>();
  context->setDiscardValueNames(true);  // nothing reads them; naming costs compile time
  // Code generator diagnostics go to the JIT log too (LLVM prints them on stderr by default).
  LogDiagnostics(*context, "ffijit: ");
  auto module = std::make_unique<llvm::Module>("ffijit.unit", *context);
  module->setDataLayout(session_->data_layout());
  compat::SetTargetTriple(*module, session_->triple());

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

  StripUnwindTables(*module);
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
  } else if (level == CodeGenLevel::kLight) {
    machine = light_target_machine_.get();
    OptimizeModuleLightly(*module, *machine);
  }
  for (size_t i : emitted) {
    if (requests[i].inspect) requests[i].inspect(*module);
  }
  llvm::orc::SimpleCompiler compiler(*machine);
  auto object = compiler(*module);
  if (!object) return fail_all("code generation failed: " + ErrorText(object.takeError()));
  std::string bytes = (*object)->getBuffer().str();
  {
    std::lock_guard<std::mutex> units_lock(units_mutex_);
    counters_.modules_compiled++;
    counters_.functions_compiled += static_cast<int64_t>(emitted.size());
  }

  CodeUnit* unit = nullptr;
  std::vector<void*> addresses;
  std::string why;
  std::vector<llvm::orc::JITDylib*> link_with;
  for (size_t i : emitted) {
    for (llvm::orc::JITDylib* dylib : requests[i].link_with) link_with.push_back(dylib);
  }
  if (!LoadObject(bytes, symbols, link_with, &unit, &addresses, &why)) return fail_all(why);
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

void UnitCompiler::WarmUp(CodeGenLevel level) {
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

void UnitCompiler::Retain(CodeUnit* unit) {
  std::lock_guard<std::mutex> lock(units_mutex_);
  unit->refs++;
}

void UnitCompiler::Release(CodeUnit* unit) {
  {
    std::lock_guard<std::mutex> lock(units_mutex_);
    if (--unit->refs > 0) return;
    counters_.live_units--;
    counters_.units_removed++;
    counters_.object_bytes_live -= unit->object_bytes;
    live_units_.erase(unit);
  }
  session_->RemoveDylib(*unit->dylib);
  delete unit;
}

void UnitCompiler::ReportCacheError(const std::string& what) {
  {
    std::lock_guard<std::mutex> lock(units_mutex_);
    counters_.cache_errors++;
  }
  LogJit("ffijit: persistent JIT cache: " + what + " (compiling instead)");
}

UnitCounters UnitCompiler::Counters() const {
  std::lock_guard<std::mutex> lock(units_mutex_);
  return counters_;
}

}  // namespace ffijit::orc
