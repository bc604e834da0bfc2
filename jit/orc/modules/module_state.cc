// A JIT module's state: adding objects and IR (checks, thread-locals, link, initialisers), link
// orders, lookups, finalisers and Unload; the registry; ModuleJit's set-up (module_state.h).
#include "orc/modules/module_state.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <cxxabi.h>

#include "ffijit/c_ext.h"
#include "ffijit/error.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ObjectFileInterface.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"
#include "orc/llvm/llvm_compat.h"
#include "orc/llvm_patches/eh_frames.h"
#include "orc/llvm_patches/object_check.h"
#include "orc/llvm_patches/thread_locals.h"
#include "orc/modules/thread_exits.h"
#include "settings/jit_settings.h"

extern "C" int __cxa_atexit(void (*func)(void*), void* arg, void* dso_handle);

namespace ffijit::orc {
namespace {

constexpr const char* kFunctionPrefix = "__tvm_ffi_";

int AtExitInterposer(void (*function)(void*), void* arg, void* dso_handle) {
  ModuleState* state = nullptr;
  {
    Registry& registry = Registry::Get();
    std::lock_guard lock(registry.mutex);
    auto it = registry.by_dso.find(dso_handle);
    if (it != registry.by_dso.end()) state = it->second;
  }
  if (state == nullptr) return __cxa_atexit(function, arg, dso_handle);
  state->AddAtExit(function, arg);
  return 0;
}

// Module code's __cxa_thread_atexit: its thread-locals' destructors, kept per module and thread
// (thread_exits.h). Another __dso_handle (none of a module's) goes to the C++ runtime.
int ThreadAtExitInterposer(void (*function)(void*), void* object, void* dso_handle) {
  ModuleState* state = nullptr;
  {
    Registry& registry = Registry::Get();
    std::lock_guard lock(registry.mutex);
    auto it = registry.by_dso.find(dso_handle);
    if (it != registry.by_dso.end()) state = it->second;
  }
  if (state == nullptr) return __cxxabiv1::__cxa_thread_atexit(function, object, dso_handle);
  AddThreadExit(state, function, object);
  return 0;
}

bool IsBitcode(std::string_view bytes) {
  // llvm::isBitcode reads the 4-byte magic without checking the length (a 1-byte input over-read).
  if (bytes.size() < 4) return false;
  auto start = reinterpret_cast<const unsigned char*>(bytes.data());
  return llvm::isBitcode(start, start + bytes.size());
}

void FinalizeModulesAtExit();

}  // namespace

ModuleJit& ModuleJit::Get() {
  static std::mutex mutex;
  static ModuleJit* jit = nullptr;  // never destroyed: module code runs until the process ends
  static std::string failure;
  std::lock_guard lock(mutex);
  if (jit == nullptr && failure.empty()) {
    std::unique_ptr<ModuleJit> created(new ModuleJit());
    failure = created->Init();
    if (failure.empty()) jit = created.release();
  }
  if (jit == nullptr) throw RuntimeError("the JIT for object and bitcode modules: " + failure);
  return *jit;
}

std::string ModuleJit::Init() {
  std::string why;
  session_ = Session::Get(&why);
  if (session_ == nullptr) return why;
  target_machine_ = session_->CreateTargetMachine(CodeGenLevel::kOptimized, &why);
  if (!target_machine_) return why;
  layer().addPlugin(MakeLinkRecordsPlugin([](const llvm::orc::JITDylib& dylib) -> LinkRecordSink* {
    Registry& registry = Registry::Get();
    std::lock_guard lock(registry.mutex);
    auto it = registry.by_dylib.find(&dylib);
    return it == registry.by_dylib.end() ? nullptr : it->second;
  }));
  // The ORC runtime's registration of an object's thread-local data, which the thread-local
  // plugin calls itself (thread_locals.h).
  auto register_sections = session().lookup(
      llvm::orc::makeJITDylibSearchOrder(session_->jit().getPlatformJITDylib().get(),
                                         llvm::orc::JITDylibLookupFlags::MatchAllSymbols),
      session().intern("__orc_rt_elfnix_register_object_sections"));
  if (!register_sections) {
    return "the ORC runtime has no thread-local registration: " +
           ErrorText(register_sections.takeError());
  }
  layer().addPlugin(MakeThreadLocalPlugin(session(), register_sections->getAddress()));
  support_ = &session_->CreateBareDylib("ffijit.module-support");
  llvm::orc::SymbolMap symbols;
  symbols[session().intern("__cxa_atexit")] =
      llvm::orc::ExecutorSymbolDef(llvm::orc::ExecutorAddr::fromPtr(&AtExitInterposer),
                                   llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  symbols[session().intern("__cxa_thread_atexit")] =
      llvm::orc::ExecutorSymbolDef(llvm::orc::ExecutorAddr::fromPtr(&ThreadAtExitInterposer),
                                   llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  if (llvm::Error err = support_->define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
    return "cannot define the support symbols: " + ErrorText(std::move(err));
  }
  std::atexit(&FinalizeModulesAtExit);
  return "";
}

llvm::orc::ExecutionSession& ModuleJit::session() {
  return session_->session();
}

llvm::orc::ObjectLinkingLayer& ModuleJit::layer() {
  return session_->linker();
}

std::vector<llvm::orc::JITDylib*> ModuleJit::BaseLinks() {
  return {support_, session_->jit().getPlatformJITDylib().get(), &session_->process_symbols()};
}

const llvm::Triple& ModuleJit::triple() const {
  return session_->triple();
}

const llvm::DataLayout& ModuleJit::data_layout() const {
  return session_->data_layout();
}

// ---- ModuleState ----

void ModuleState::RunAtExitFrom(size_t keep) {
  std::vector<std::pair<void (*)(void*), void*>> run;
  {
    std::lock_guard lock(records_mutex_);
    if (at_exit_.size() <= keep) return;
    run.assign(at_exit_.begin() + static_cast<std::ptrdiff_t>(keep), at_exit_.end());
    at_exit_.resize(keep);
  }
  for (auto it = run.rbegin(); it != run.rend(); ++it) {
    try {
      it->first(it->second);
    } catch (const std::exception& e) {
      LogJit("ffijit: JIT module " + name_ +
             ": a static destructor threw: " + LoaderExcerpt(e.what()));
    } catch (...) {
      LogJit("ffijit: JIT module " + name_ + ": a static destructor threw");
    }
  }
}

void ModuleState::RebindContext() {
  if (object_ != nullptr) CheckCall(FFIJITLibraryModuleBindContext(object_));
}

// Refuses an object built for the other TVM FFI ABI revision (FFIJITCheckModuleAbiSymbols): its
// undefined symbols tell. IR is checked here too, as the object it compiles to.
static void CheckAbiRevision(llvm::MemoryBufferRef buffer, const std::string& file) {
  auto object = llvm::object::ObjectFile::createObjectFile(buffer);
  if (!object) {
    llvm::consumeError(object.takeError());
    return;  // CheckObject accepted it; JITLink reports what it cannot read
  }
  std::vector<std::string> undefined;
  for (const llvm::object::SymbolRef& symbol : (*object)->symbols()) {
    auto flags = symbol.getFlags();
    if (!flags) {
      llvm::consumeError(flags.takeError());
      continue;
    }
    if (!(*flags & llvm::object::SymbolRef::SF_Undefined)) continue;
    auto name = symbol.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    undefined.push_back(name->str());
  }
  std::vector<TVMFFIByteArray> names;
  names.reserve(undefined.size());
  for (const std::string& name : undefined) names.push_back({name.data(), name.size()});
  CheckCall(
      FFIJITCheckModuleAbiSymbols(file.c_str(), names.data(), static_cast<int32_t>(names.size())));
}

void ModuleState::AddObject(std::string_view bytes, const std::string& file) {
  std::lock_guard lock(mutex_);
  if (unloaded_) throw RuntimeError("JIT module " + name_ + " was unloaded");
  ModuleJit& jit = ModuleJit::Get();
  const llvm::MemoryBufferRef given(llvm::StringRef(bytes.data(), bytes.size()), file);
  CheckObject(given, file, jit.triple());
  CheckAbiRevision(given, file);
  std::string prepared(bytes);
  std::string link_name = file;
  PrepareThreadLocals(prepared, file, jit.triple(), &link_name);
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(prepared, link_name);
  struct ForgetOnExit {
    const std::string& name;
    ~ForgetOnExit() { ForgetThreadLocals(name); }
  } forget{link_name};
  ReportedErrors capture;
  auto interface = llvm::orc::getObjectFileInterface(jit.session(), buffer->getMemBufferRef());
  if (!interface) {
    throw ValueError(file + ": not a loadable object: " +
                     LoaderExcerpt(capture.Or(ErrorText(interface.takeError()))));
  }
  // ORC's interface names the initialisers with a side-effects-only symbol that the platform
  // would run through the ORC runtime (see the file comment for why it does not). The object gets
  // an ordinary hidden symbol instead, which the plugin defines on its initialiser section and
  // the lookup below asks for, so every object is linked, and its initialisers found, whether or
  // not it has other symbols.
  if (interface->InitSymbol) {
    interface->SymbolFlags.erase(interface->InitSymbol);
    interface->InitSymbol = nullptr;
    interface->SymbolFlags[jit.session().intern(kInitAnchorPrefix + std::to_string(jit.NextId()))] =
        llvm::JITSymbolFlags::None;
  }
  llvm::orc::SymbolLookupSet lookup;
  for (const auto& [name, flags] : interface->SymbolFlags) {
    lookup.add(name, flags.hasMaterializationSideEffectsOnly()
                         ? llvm::orc::SymbolLookupFlags::WeaklyReferencedSymbol
                         : llvm::orc::SymbolLookupFlags::RequiredSymbol);
  }
  llvm::orc::ResourceTrackerSP tracker = dylib_->createResourceTracker();
  auto remove_object = [&] {
    if (llvm::Error err = tracker->remove()) {
      LogJit("ffijit: JIT module " + name_ + ": cannot remove " + file + ": " +
             LoaderExcerpt(ErrorText(std::move(err))));
    }
  };
  if (llvm::Error err = jit.layer().add(tracker, std::move(buffer), std::move(*interface))) {
    const std::string why = ErrorText(std::move(err));
    remove_object();
    throw RuntimeError(file + ": " + LoaderExcerpt(why));
  }
  auto found = jit.session().lookup(
      llvm::orc::makeJITDylibSearchOrder(dylib_, llvm::orc::JITDylibLookupFlags::MatchAllSymbols),
      std::move(lookup));
  if (!found) {
    const std::string why = capture.Or(ErrorText(found.takeError()));
    TakePending();
    remove_object();
    // What a position-dependent object (-fpie, -fno-pic) meets: it reaches the program's data
    // PC-relatively, as if linked into the executable, and JIT memory is not within 2 GiB of it.
    const bool out_of_range = why.find("out of range of Delta32 fixup") != std::string::npos;
    throw RuntimeError(file + ": cannot link: " + LoaderExcerpt(why) +
                       (out_of_range ? "; an object built -fpie or -fno-pic addresses the "
                                       "program's data PC-relatively, which loaded code cannot "
                                       "reach: compile it with -fPIC"
                                     : ""));
  }
  std::vector<LinkRecords> linked = TakePending();
  const size_t eh_frames_before = eh_frames_.size();
  for (LinkRecords& records : linked) {
    for (auto& [name, info] : records.symbols) symbols_[name] = info;
    eh_frames_.insert(eh_frames_.end(), records.eh_frames.begin(), records.eh_frames.end());
  }
  auto forget_eh_frames = [&] {
    for (size_t i = eh_frames_before; i < eh_frames_.size(); ++i) DeregisterEhFrame(eh_frames_[i]);
    eh_frames_.resize(eh_frames_before);
  };
  RebindContext();
  if (!RunStaticInitializers()) return;
  const size_t at_exit_before = AtExitCount();
  const size_t thread_exits_before = ThreadExitCountOf(this);
  for (LinkRecords& records : linked) {
    for (const InitFunction& init : records.inits) {
      std::string failure;
      try {
        reinterpret_cast<void (*)()>(init.function)();
      } catch (const Error& e) {
        failure = e.kind() + ": " + e.message();
      } catch (const std::exception& e) {
        failure = e.what();
      } catch (...) {
        failure = "an exception that is not a std::exception";
      }
      if (!failure.empty()) {
        // The object goes again: its thread_locals' and static destructors first, while its
        // code is still there.
        RunThreadExitsOf(this, thread_exits_before);
        RunAtExitFrom(at_exit_before);
        for (auto& [name, info] : records.symbols) symbols_.erase(name);
        forget_eh_frames();
        remove_object();
        throw RuntimeError(file + ": static initializer " + Quote(init.symbol) +
                           " threw: " + LoaderExcerpt(failure));
      }
    }
  }
  for (LinkRecords& records : linked) {
    for (InitFunction& fini : records.finis) finis_.push_back(std::move(fini));
  }
}

void ModuleState::AddIR(std::string_view bytes, const std::string& file) {
  ModuleJit& jit = ModuleJit::Get();
  auto context = std::make_unique<llvm::LLVMContext>();
  LogDiagnostics(*context, "ffijit: JIT module " + file + ": ");
  // The IR lexer reads up to a terminating NUL: parse a copy that has one.
  const std::unique_ptr<llvm::MemoryBuffer> owned =
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(bytes.data(), bytes.size()), file);
  const llvm::MemoryBufferRef buffer = owned->getMemBufferRef();
  std::unique_ptr<llvm::Module> module;
  if (IsBitcode(bytes)) {
    auto parsed = llvm::parseBitcodeFile(buffer, *context);
    if (!parsed) {
      throw ValueError(file +
                       ": malformed bitcode: " + LoaderExcerpt(ErrorText(parsed.takeError())));
    }
    module = std::move(*parsed);
  } else {
    llvm::SMDiagnostic diagnostic;
    module = llvm::parseAssembly(buffer, diagnostic, *context);
    if (module == nullptr) {
      throw ValueError(file + ":" + std::to_string(diagnostic.getLineNo()) + ":" +
                       std::to_string(diagnostic.getColumnNo() + 1) +
                       ": malformed LLVM IR: " + LoaderExcerpt(diagnostic.getMessage().str()));
    }
  }
  if (!module->getTargetTriple().empty()) {
    const llvm::Triple triple(module->getTargetTriple());
    if (triple.getArch() != jit.triple().getArch()) {
      throw ValueError(file + ": IR for " + Quote(triple.str()) + ", but this machine is " +
                       jit.triple().str());
    }
  }
  // Code is generated for this machine's CPU and features: per-function requests for others
  // could name a CPU LLVM does not know or turn off 64-bit mode, which LLVM answers by aborting.
  for (llvm::Function& function : *module) {
    function.removeFnAttr("target-cpu");
    function.removeFnAttr("tune-cpu");
    function.removeFnAttr("target-features");
  }
  compat::SetTargetTriple(*module, jit.triple());
  module->setDataLayout(jit.data_layout());
  std::string verifier_output;
  llvm::raw_string_ostream verifier_stream(verifier_output);
  if (llvm::verifyModule(*module, &verifier_stream)) {
    throw ValueError(file + ": invalid LLVM IR: " + LoaderExcerpt(verifier_stream.str()));
  }
  IrUnit unit;
  unit.name = file;
  std::string object;
  {
    std::lock_guard lock(jit.compile_mutex());
    OptimizeModule(*module, jit.target_machine());
    llvm::raw_string_ostream bitcode(unit.bitcode);
    llvm::WriteBitcodeToFile(*module, bitcode);
    bitcode.flush();
    for (const llvm::Function& function : *module) {
      if (!function.isDeclaration() && !function.hasLocalLinkage()) {
        unit.functions.insert(function.getName().str());
      }
    }
    llvm::orc::SimpleCompiler compiler(jit.target_machine());
    auto compiled = compiler(*module);
    if (!compiled) {
      throw RuntimeError(
          file + ": code generation failed: " + LoaderExcerpt(ErrorText(compiled.takeError())));
    }
    object = (*compiled)->getBuffer().str();
  }
  std::lock_guard lock(mutex_);
  AddObject(object, file);
  ir_units_.push_back(std::move(unit));
}

void ModuleState::SetLinkOrder(const std::vector<JitModule>& modules) {
  std::vector<ObjectPtr<>> keep;
  std::vector<llvm::orc::JITDylib*> dylibs;
  for (const JitModule& mod : modules) {
    ModuleState* other = nullptr;
    {
      Registry& registry = Registry::Get();
      std::lock_guard lock(registry.mutex);
      auto it = registry.by_object.find(mod.get());
      if (it != registry.by_object.end()) other = it->second;
    }
    if (other == nullptr) throw TypeError("SetLinkOrder: a module is not a live JIT module");
    if (other == this) throw RuntimeError("SetLinkOrder: " + name_ + " cannot link against itself");
    keep.push_back(ObjectPtr<>::Borrow(mod.get()));
    dylibs.push_back(other->dylib());
  }
  // A cycle would keep both modules alive for ever: refuse it. Link orders change under one lock.
  static std::mutex* order_mutex = new std::mutex();
  std::lock_guard order_lock(*order_mutex);
  std::vector<const TVMFFIObject*> stack;
  for (const JitModule& mod : modules) stack.push_back(mod.get());
  std::unordered_set<const TVMFFIObject*> seen;
  while (!stack.empty()) {
    const TVMFFIObject* next = stack.back();
    stack.pop_back();
    if (next == object_) {
      throw RuntimeError("SetLinkOrder: " + name_ +
                         " would link against itself through the modules given (a cycle)");
    }
    if (!seen.insert(next).second) continue;
    ModuleState* state = nullptr;
    {
      Registry& registry = Registry::Get();
      std::lock_guard registry_lock(registry.mutex);
      auto it = registry.by_object.find(next);
      if (it != registry.by_object.end()) state = it->second;
    }
    if (state == nullptr) continue;
    std::lock_guard state_lock(state->mutex_);
    for (const ObjectPtr<>& linked : state->link_order_) stack.push_back(linked.get());
  }
  std::lock_guard lock(mutex_);
  for (llvm::orc::JITDylib* base : ModuleJit::Get().BaseLinks()) dylibs.push_back(base);
  dylib_->setLinkOrder(llvm::orc::makeJITDylibSearchOrder(dylibs));
  link_order_ = std::move(keep);
}

bool ModuleState::Find(const std::string& symbol, void** address, SymbolInfo* info) {
  std::lock_guard lock(mutex_);
  *address = nullptr;
  if (unloaded_) throw RuntimeError("JIT module " + name_ + " was unloaded");
  auto known = symbols_.find(symbol);
  if (known == symbols_.end()) return false;  // every linked symbol is recorded
  ModuleJit& jit = ModuleJit::Get();
  llvm::orc::SymbolLookupSet lookup(jit.session().intern(symbol),
                                    llvm::orc::SymbolLookupFlags::WeaklyReferencedSymbol);
  ReportedErrors capture;
  auto found = jit.session().lookup(
      llvm::orc::makeJITDylibSearchOrder(dylib_, llvm::orc::JITDylibLookupFlags::MatchAllSymbols),
      std::move(lookup));
  if (!found) {
    throw RuntimeError(name_ + ": cannot look up " + Quote(symbol) + ": " +
                       LoaderExcerpt(capture.Or(ErrorText(found.takeError()))));
  }
  if (found->empty()) return false;
  *address = found->begin()->second.getAddress().toPtr<void*>();
  *info = known->second;
  return *address != nullptr;
}

bool ModuleState::DefinesTvmFfiFunction() {
  std::lock_guard lock(mutex_);
  for (const auto& [name, info] : symbols_) {
    if (info.is_code && name.rfind(kFunctionPrefix, 0) == 0 && name.rfind("__tvm_ffi__", 0) != 0) {
      return true;
    }
  }
  return false;
}

void ModuleState::RecordNative(void* address, const std::string& symbol) {
  std::lock_guard lock(mutex_);
  natives_[address] = symbol;
}

bool ModuleState::NativeIR(void* address, std::string* bitcode, std::string* function) {
  std::lock_guard lock(mutex_);
  auto native = natives_.find(address);
  if (native == natives_.end()) return false;
  for (const IrUnit& unit : ir_units_) {
    if (unit.functions.count(native->second) != 0) {
      *bitcode = unit.bitcode;
      *function = native->second;
      return true;
    }
  }
  return false;
}

std::vector<llvm::orc::JITDylib*> ModuleState::LinkOrder() {
  std::lock_guard lock(mutex_);
  std::vector<llvm::orc::JITDylib*> order;
  if (unloaded_) return order;
  dylib_->withLinkOrderDo([&](const llvm::orc::JITDylibSearchOrder& links) {
    order.push_back(dylib_);
    for (const auto& link : links) order.push_back(link.first);
  });
  return order;
}

void ModuleState::Finalize() {
  std::lock_guard lock(mutex_);
  if (finalized_) return;
  finalized_ = true;
  // Finalisers newest first, then the C++ static destructors (as a shared library's
  // __cxa_finalize runs after its own .fini_array entries).
  for (auto it = finis_.rbegin(); it != finis_.rend(); ++it) {
    try {
      reinterpret_cast<void (*)()>(it->function)();
    } catch (...) {
      LogJit("ffijit: JIT module " + name_ + ": finalizer " + Quote(it->symbol) + " threw");
    }
  }
  RunAtExitFrom(0);
}

void ModuleState::Unload(uint64_t handles) {
  std::lock_guard lock(mutex_);
  if (unloaded_) throw RuntimeError("JIT module " + name_ + " is unloaded already");
  if (object_ != nullptr && details::StrongCount(object_) > handles) {
    throw RuntimeError("cannot unload JIT module " + name_ + ": " +
                       std::to_string(details::StrongCount(object_) - handles) +
                       " other reference(s) to it (its functions, its importers) are alive");
  }
  // Another thread's thread_local destroyed here would be destroyed on the wrong thread (its
  // destructor would reach the unloading thread's thread-locals): those threads must exit first.
  if (const size_t threads = OtherThreadsWithExitsOf(this); threads != 0) {
    throw RuntimeError("cannot unload JIT module " + name_ + ": " + std::to_string(threads) +
                       " other thread(s) hold its thread_local objects, whose destructors (its "
                       "code) run when those threads exit; unload it after they have exited");
  }
  // The calling thread's own thread_locals go first, as they would at its exit.
  RunThreadExitsOf(this);
  Finalize();
  {
    Registry& registry = Registry::Get();
    std::lock_guard registry_lock(registry.mutex);
    registry.by_dylib.erase(dylib_);
    registry.by_dso.erase(dso_handle());
    std::erase(registry.loaded, this);
  }
  for (const void* frame : eh_frames_) DeregisterEhFrame(frame);
  eh_frames_.clear();
  const std::string failure = ModuleJit::Get().jit_session().RemoveDylib(*dylib_);
  if (!failure.empty()) {
    LogJit("ffijit: JIT module " + name_ + ": cannot free its code: " + LoaderExcerpt(failure));
  }
  unloaded_ = true;
  symbols_.clear();
  natives_.clear();
  ir_units_.clear();
  link_order_.clear();  // after the dylib that linked against them is gone
}

namespace {

void FinalizeModulesAtExit() {
  std::vector<ModuleState*> loaded;
  {
    Registry& registry = Registry::Get();
    std::lock_guard lock(registry.mutex);
    loaded = registry.loaded;
  }
  for (auto it = loaded.rbegin(); it != loaded.rend(); ++it) (*it)->Finalize();
}

}  // namespace

}  // namespace ffijit::orc
