// JIT modules: loads ELF relocatable objects and LLVM IR into per-module JITDylibs of one LLJIT,
// runs their static initialisers and finalisers, and exposes them to the runtime as library
// modules (FFIJITLibraryModuleCreate) and to users as ffijit::JitModule.
//
// No ORC platform runs here (ELFNixPlatform needs the ORC runtime archive, which distributions do
// not always ship): a JITLink plugin keeps the .init_array/.ctors/.fini_array/.dtors sections of
// every linked object alive, reads their fixed-up entries and runs them itself, in priority
// order. Each module defines its own `__dso_handle`, and `__cxa_atexit` resolves to an
// interposer that records the C++ static destructors registered for that handle, so they run
// when the module is released rather than at process exit (when the code would be gone).
#include "orc/jit_module.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ffijit/c_ext.h"
#include "ffijit/error.h"
#include "ffijit/jit_module.h"
#include "ffijit/registry.h"
#include "jit_settings.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/JITLink/EHFrameSupport.h"
#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ObjectFileInterface.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/Orc/Shared/ObjectFormats.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"
#include "orc/object_check.h"
#include "register_internal.h"

extern "C" int __cxa_atexit(void (*func)(void*), void* arg, void* dso_handle);

namespace ffijit {
namespace orc {
namespace {

using llvm::orc::SymbolStringPtr;

constexpr const char* kFunctionPrefix = "__tvm_ffi_";
// Names the symbol that stands for an object's initialisers (see AddObject).
constexpr const char* kInitAnchorPrefix = "__ffijit_init_anchor.";

std::atomic<bool> g_run_static_initializers{true};

// ---- Errors ORC reports on the side ----

// ORC reports a failed link's cause through the session's error reporter and hands the caller
// only "Failed to materialize symbols". Links run on the thread that looks the symbols up (no
// compile threads), so a per-thread capture pairs each cause with its load.
thread_local std::vector<std::string>* t_reported_errors = nullptr;

class ReportCapture {
 public:
  ReportCapture() : saved_(t_reported_errors) { t_reported_errors = &errors_; }
  ~ReportCapture() { t_reported_errors = saved_; }
  ReportCapture(const ReportCapture&) = delete;
  ReportCapture& operator=(const ReportCapture&) = delete;
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  std::vector<std::string>* saved_;
  std::vector<std::string> errors_;
};

// One line for an ORC error: the undefined or duplicate symbols by name, else LLVM's text.
std::string DescribeError(llvm::Error error) {
  std::string text;
  llvm::handleAllErrors(
      std::move(error),
      [&](const llvm::orc::SymbolsNotFound& missing) {
        text = missing.getSymbols().size() == 1 ? "undefined symbol " : "undefined symbols ";
        bool first = true;
        for (const SymbolStringPtr& name : missing.getSymbols()) {
          text += (first ? "" : ", ") + Quote((*name).str());
          first = false;
        }
      },
      [&](const llvm::orc::DuplicateDefinition& duplicate) {
        text = "duplicate definition of symbol " + Quote(duplicate.getSymbolName()) +
               " (an earlier object of this module defines it too)";
      },
      [&](const llvm::ErrorInfoBase& other) { text = other.message(); });
  return text;
}

// The reported causes, else `fallback`.
std::string ReportedOr(const ReportCapture& capture, std::string fallback) {
  if (capture.errors().empty()) return fallback;
  std::string text;
  for (const std::string& e : capture.errors()) text += (text.empty() ? "" : "; ") + e;
  return text;
}

// ---- Static initialisers and finalisers ----

struct InitFunction {
  int64_t priority;  // lower runs first
  uint64_t sequence;
  void* function;
  std::string symbol;  // the function's symbol, for messages
};

struct SymbolInfo {
  uint64_t size = 0;
  bool is_code = false;
};

// What one linked object contributed, recorded by the plugin, taken by the module after the link.
struct LinkRecords {
  std::vector<InitFunction> inits;
  std::vector<InitFunction> finis;
  std::unordered_map<std::string, SymbolInfo> symbols;
};

enum class InitKind { kNone, kInit, kFini };

// The kind and priority of an initialiser section: .init_array[.N], .preinit_array, .ctors[.N]
// (whose N counts down: priority 65535 - N, entries in reverse), the same for finalisers.
InitKind ClassifySection(llvm::StringRef name, int64_t* priority, bool* reversed) {
  constexpr int64_t kDefault = 65536;  // unprioritised entries run after every prioritised one
  struct Prefix {
    const char* name;
    InitKind kind;
    bool counts_down;
  };
  static const Prefix kPrefixes[] = {
      {".preinit_array", InitKind::kInit, false}, {".init_array", InitKind::kInit, false},
      {".ctors", InitKind::kInit, true},          {".fini_array", InitKind::kFini, false},
      {".dtors", InitKind::kFini, true},
  };
  for (const Prefix& prefix : kPrefixes) {
    if (!name.starts_with(prefix.name)) continue;
    llvm::StringRef rest = name.drop_front(std::strlen(prefix.name));
    *reversed = prefix.counts_down;
    if (rest.empty()) {
      *priority = std::strcmp(prefix.name, ".preinit_array") == 0 ? -1 : kDefault;
      return prefix.kind;
    }
    unsigned value = 0;
    if (!rest.consume_front(".") || rest.getAsInteger(10, value)) return InitKind::kNone;
    *priority = prefix.counts_down ? 65535 - static_cast<int64_t>(value) : value;
    return prefix.kind;
  }
  return InitKind::kNone;
}

class ModuleState;

// JITDylib -> module, __dso_handle -> module, module object -> module.
class Registry {
 public:
  static Registry& Get() {
    static Registry* registry = new Registry();  // never destroyed: modules may outlive statics
    return *registry;
  }
  std::mutex mutex;
  std::unordered_map<const llvm::orc::JITDylib*, ModuleState*> by_dylib;
  std::unordered_map<const void*, ModuleState*> by_dso;
  std::unordered_map<const TVMFFIObject*, ModuleState*> by_object;
};

// ---- The module's state ----

class ModuleJit;

class ModuleState {
 public:
  ModuleState(std::string name, llvm::orc::JITDylib* dylib, void* dso_handle)
      : name_(std::move(name)), dylib_(dylib), dso_handle_(dso_handle) {}

  const std::string& name() const { return name_; }
  llvm::orc::JITDylib* dylib() const { return dylib_; }
  const void* dso_handle() const { return dso_handle_; }
  void set_object(TVMFFIObject* object) { object_ = object; }
  TVMFFIObject* object() const { return object_; }

  // Called by the plugin (any thread) when an object of this module finished linking.
  void Commit(LinkRecords records) {
    std::lock_guard lock(records_mutex_);
    pending_.push_back(std::move(records));
  }
  // Called by the __cxa_atexit interposer while an initialiser of this module runs.
  void AddAtExit(void (*function)(void*), void* arg) {
    std::lock_guard lock(records_mutex_);
    at_exit_.emplace_back(function, arg);
  }

  void AddObject(std::string_view bytes, const std::string& file);
  void AddIR(std::string_view bytes, const std::string& file);
  void SetLinkOrder(const std::vector<JitModule>& modules);
  // Finds a global symbol this module defines; false when it does not.
  bool Find(const std::string& symbol, void** address, SymbolInfo* info);
  bool DefinesTvmFfiFunction();
  void RecordNative(void* address, const std::string& symbol);
  bool NativeIR(void* address, std::string* bitcode, std::string* function);
  // The addresses `names` resolve to from inside this module (its own symbols, then its link
  // order, then the process): what code copied out of its IR must call and read.
  bool ResolveFromInside(const std::vector<std::string>& names, std::vector<void*>* addresses,
                         std::string* why);
  // Runs the finalisers and frees the code.
  ~ModuleState();

 private:
  std::vector<LinkRecords> TakePending() {
    std::lock_guard lock(records_mutex_);
    return std::exchange(pending_, {});
  }
  size_t AtExitCount() {
    std::lock_guard lock(records_mutex_);
    return at_exit_.size();
  }
  // Runs (newest first) and forgets the C++ static destructors registered after the first `keep`.
  void RunAtExitFrom(size_t keep);
  void RebindContext();

  std::string name_;
  llvm::orc::JITDylib* dylib_;
  TVMFFIObject* object_ = nullptr;  // the library module (no reference: it owns this state)
  void* dso_handle_;                // the module's __dso_handle
  // Held by every operation on the dylib, so a lookup never sees an object whose initialisers
  // have not run; recursive because an initialiser may look up its own module.
  std::recursive_mutex mutex_;
  std::mutex records_mutex_;  // what the plugin and the interposer write
  std::vector<LinkRecords> pending_;
  std::vector<std::pair<void (*)(void*), void*>> at_exit_;
  std::vector<InitFunction> finis_;  // in registration order; run backwards
  std::unordered_map<std::string, SymbolInfo> symbols_;
  std::vector<ObjectPtr<>> link_order_;  // the modules this one links against, kept alive
  struct IrUnit {
    std::string name;
    std::string bitcode;  // optimised
    std::unordered_set<std::string> functions;
  };
  std::vector<IrUnit> ir_units_;
  std::unordered_map<void*, std::string> natives_;  // MakeNative address -> symbol
};

// ---- The JIT ----

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

// Keeps initialiser and finaliser sections alive and records their entries after fixup.
class InitFiniPlugin final : public llvm::orc::ObjectLinkingLayer::Plugin {
 public:
  void modifyPassConfig(llvm::orc::MaterializationResponsibility& mr,
                        llvm::jitlink::LinkGraph& graph,
                        llvm::jitlink::PassConfiguration& config) override {
    (void)graph;
    // The symbol AddObject put in the object's interface so that linking the object (and so
    // running its initialisers) can be requested by name: defined here on the first
    // initialiser block, every other one kept alive beside it.
    SymbolStringPtr anchor;
    for (const auto& [name, flags] : mr.getSymbols()) {
      if ((*name).starts_with(kInitAnchorPrefix)) anchor = name;
    }
    config.PrePrunePasses.push_back([anchor](llvm::jitlink::LinkGraph& g) -> llvm::Error {
      bool defined = !anchor;
      for (llvm::jitlink::Section& section : g.sections()) {
        int64_t priority = 0;
        bool reversed = false;
        const bool is_init =
            ClassifySection(section.getName(), &priority, &reversed) != InitKind::kNone ||
            llvm::orc::isELFInitializerSection(section.getName());
        if (!is_init) continue;
        for (llvm::jitlink::Block* block : section.blocks()) {
          if (!defined) {
            g.addDefinedSymbol(*block, 0, *anchor, 0, llvm::jitlink::Linkage::Strong,
                               llvm::jitlink::Scope::Hidden, false, true);
            defined = true;
          } else {
            g.addAnonymousSymbol(*block, 0, block->getSize(), false, true);
          }
        }
      }
      if (!defined) {
        return llvm::make_error<llvm::StringError>(
            "the object's interface names initializers, but it has no initializer section",
            llvm::inconvertibleErrorCode());
      }
      return llvm::Error::success();
    });
    config.PostFixupPasses.push_back([this, &mr](llvm::jitlink::LinkGraph& g) {
      LinkRecords records;
      Record(g, &records);
      std::lock_guard lock(mutex_);
      in_flight_[&mr] = std::move(records);
      return llvm::Error::success();
    });
  }

  llvm::Error notifyEmitted(llvm::orc::MaterializationResponsibility& mr) override {
    LinkRecords records;
    {
      std::lock_guard lock(mutex_);
      auto it = in_flight_.find(&mr);
      if (it == in_flight_.end()) return llvm::Error::success();
      records = std::move(it->second);
      in_flight_.erase(it);
    }
    ModuleState* state = nullptr;
    {
      Registry& registry = Registry::Get();
      std::lock_guard lock(registry.mutex);
      auto it = registry.by_dylib.find(&mr.getTargetJITDylib());
      if (it != registry.by_dylib.end()) state = it->second;
    }
    if (state != nullptr) state->Commit(std::move(records));
    return llvm::Error::success();
  }
  llvm::Error notifyFailed(llvm::orc::MaterializationResponsibility& mr) override {
    std::lock_guard lock(mutex_);
    in_flight_.erase(&mr);
    return llvm::Error::success();
  }
  llvm::Error notifyRemovingResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey) override {
    return llvm::Error::success();
  }
  void notifyTransferringResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey,
                                   llvm::orc::ResourceKey) override {}

 private:
  static void Record(llvm::jitlink::LinkGraph& g, LinkRecords* records) {
    std::unordered_map<uint64_t, std::string> names;  // address -> a symbol there, for messages
    for (llvm::jitlink::Symbol* symbol : g.defined_symbols()) {
      if (!symbol->hasName()) continue;
      const std::string name = symbol->getName().str();
      if (symbol->isCallable()) names.emplace(symbol->getAddress().getValue(), name);
      if (symbol->getScope() != llvm::jitlink::Scope::Local) {
        records->symbols[name] = SymbolInfo{symbol->getSize(), symbol->isCallable()};
      }
    }
    uint64_t sequence = 0;
    for (llvm::jitlink::Section& section : g.sections()) {
      int64_t priority = 0;
      bool reversed = false;
      const InitKind kind = ClassifySection(section.getName(), &priority, &reversed);
      if (kind == InitKind::kNone) continue;
      std::vector<llvm::jitlink::Block*> blocks(section.blocks().begin(), section.blocks().end());
      std::sort(blocks.begin(), blocks.end(),
                [](auto* a, auto* b) { return a->getAddress() < b->getAddress(); });
      std::vector<InitFunction> entries;
      for (llvm::jitlink::Block* block : blocks) {
        if (block->isZeroFill()) continue;
        llvm::ArrayRef<char> content = block->getContent();
        for (size_t at = 0; at + sizeof(uint64_t) <= content.size(); at += sizeof(uint64_t)) {
          uint64_t address = 0;
          std::memcpy(&address, content.data() + at, sizeof(address));
          if (address == 0 || address == ~uint64_t{0}) continue;  // .ctors list markers
          auto name = names.find(address);
          entries.push_back(InitFunction{priority, 0, reinterpret_cast<void*>(address),
                                         name != names.end() ? name->second : "<anonymous>"});
        }
      }
      if (reversed) std::reverse(entries.begin(), entries.end());
      for (InitFunction& entry : entries) {
        entry.sequence = sequence++;
        (kind == InitKind::kInit ? records->inits : records->finis).push_back(std::move(entry));
      }
    }
    auto by_priority = [](const InitFunction& a, const InitFunction& b) {
      return a.priority != b.priority ? a.priority < b.priority : a.sequence < b.sequence;
    };
    std::sort(records->inits.begin(), records->inits.end(), by_priority);
    std::sort(records->finis.begin(), records->finis.end(), by_priority);
  }

  std::mutex mutex_;
  std::unordered_map<llvm::orc::MaterializationResponsibility*, LinkRecords> in_flight_;
};

void LogDiagnostic(const llvm::DiagnosticInfo* info_ptr, void* context) {
  const llvm::DiagnosticInfo& info = *info_ptr;
  // Remarks and notes (instruction counts, optimisation reports) are not problems.
  if (info.getSeverity() != llvm::DS_Error && info.getSeverity() != llvm::DS_Warning) return;
  std::string text;
  llvm::raw_string_ostream stream(text);
  llvm::DiagnosticPrinterRawOStream printer(stream);
  info.print(printer);
  LogJit("ffijit: JIT module " + *static_cast<const std::string*>(context) + ": LLVM " +
         (info.getSeverity() == llvm::DS_Error ? "error" : "warning") + ": " +
         LoaderExcerpt(stream.str()));
}

class ModuleJit {
 public:
  // The one JIT of every module, built on first use; a RuntimeError when LLVM cannot be set up.
  static ModuleJit& Get() {
    static std::mutex mutex;
    static ModuleJit* jit = nullptr;  // never destroyed: modules may be released at exit
    static std::string failure;
    std::lock_guard lock(mutex);
    if (jit == nullptr && failure.empty()) {
      auto created = std::unique_ptr<ModuleJit>(new ModuleJit());
      failure = created->Init();
      if (failure.empty()) jit = created.release();
    }
    if (jit == nullptr) throw RuntimeError("the JIT for object and bitcode modules: " + failure);
    return *jit;
  }

  llvm::orc::ExecutionSession& session() { return jit_->getExecutionSession(); }
  llvm::orc::ObjectLinkingLayer& layer() { return *layer_; }
  llvm::orc::JITDylib* support() { return support_; }
  llvm::orc::JITDylib* process() { return jit_->getProcessSymbolsJITDylib().get(); }
  const llvm::Triple& triple() const { return jit_->getTargetTriple(); }
  const llvm::DataLayout& data_layout() const { return jit_->getDataLayout(); }
  std::mutex& compile_mutex() { return compile_mutex_; }
  llvm::TargetMachine& target_machine() { return *target_machine_; }
  uint64_t NextId() { return next_id_.fetch_add(1); }

 private:
  std::string Init() {
    static std::once_flag once;
    std::call_once(once, [] {
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetAsmPrinter();
      llvm::InitializeNativeTargetAsmParser();
    });
    auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!builder) return "cannot detect the host target: " + DescribeError(builder.takeError());
    builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
    builder->setCodeModel(llvm::CodeModel::Small);
    builder->setRelocationModel(llvm::Reloc::PIC_);
    auto machine = builder->createTargetMachine();
    if (!machine) return "cannot create the target machine: " + DescribeError(machine.takeError());
    target_machine_ = std::move(*machine);
    llvm::orc::ObjectLinkingLayer* layer = nullptr;
    auto jit =
        llvm::orc::LLJITBuilder()
            .setJITTargetMachineBuilder(std::move(*builder))
            .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
            .setObjectLinkingLayerCreator(
                [&layer](llvm::orc::ExecutionSession& session, const llvm::Triple&)
                    -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                  auto created = std::make_unique<llvm::orc::ObjectLinkingLayer>(session);
                  created->addPlugin(std::make_shared<llvm::orc::EHFrameRegistrationPlugin>(
                      session, std::make_unique<llvm::jitlink::InProcessEHFrameRegistrar>()));
                  created->addPlugin(std::make_shared<InitFiniPlugin>());
                  layer = created.get();
                  return created;
                })
            .create();
    if (!jit) return "cannot create the LLJIT: " + DescribeError(jit.takeError());
    jit_ = std::move(*jit);
    layer_ = layer;
    session().setErrorReporter([](llvm::Error error) {
      const std::string text = LoaderExcerpt(DescribeError(std::move(error)));
      if (t_reported_errors != nullptr) t_reported_errors->push_back(text);
      LogJit("ffijit: JIT module: " + text);
    });
    support_ = &session().createBareJITDylib("ffijit.module-support");
    llvm::orc::SymbolMap symbols;
    symbols[session().intern("__cxa_atexit")] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(&AtExitInterposer),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
    if (llvm::Error err = support_->define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
      return "cannot define the support symbols: " + DescribeError(std::move(err));
    }
    return "";
  }

  std::unique_ptr<llvm::orc::LLJIT> jit_;
  llvm::orc::ObjectLinkingLayer* layer_ = nullptr;
  llvm::orc::JITDylib* support_ = nullptr;
  std::unique_ptr<llvm::TargetMachine> target_machine_;
  std::mutex compile_mutex_;  // a TargetMachine compiles one module at a time
  std::atomic<uint64_t> next_id_{0};
};

bool ReadWholeFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return false;
  *out = std::move(content).str();
  return true;
}

std::string ReadFileOrThrow(const std::string& path) {
  std::string bytes;
  errno = 0;
  if (!ReadWholeFile(path, &bytes)) {
    throw ValueError("cannot read " + Quote(path) + ": " +
                     (errno != 0 ? std::strerror(errno) : "unreadable"));
  }
  return bytes;
}

std::string Extension(const std::string& path) {
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  return path.substr(dot + 1);
}

bool IsBitcode(std::string_view bytes) {
  // llvm::isBitcode reads the 4-byte magic without checking the length (a 1-byte input over-read).
  if (bytes.size() < 4) return false;
  auto start = reinterpret_cast<const unsigned char*>(bytes.data());
  return llvm::isBitcode(start, start + bytes.size());
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
  ModuleJit& jit = ModuleJit::Get();
  auto buffer =
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(bytes.data(), bytes.size()), file);
  CheckObject(buffer->getMemBufferRef(), file, jit.triple());
  CheckAbiRevision(buffer->getMemBufferRef(), file);
  ReportCapture capture;
  auto interface = llvm::orc::getObjectFileInterface(jit.session(), buffer->getMemBufferRef());
  if (!interface) {
    throw ValueError(file + ": not a loadable object: " +
                     LoaderExcerpt(ReportedOr(capture, DescribeError(interface.takeError()))));
  }
  // ORC's interface names the initialisers with a side-effects-only symbol that only a platform
  // defines. Without a platform the object gets an ordinary hidden symbol instead, which the
  // plugin defines on its initialiser section and the lookup below asks for, so every object is
  // linked, and its initialisers found, whether or not it has other symbols.
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
             LoaderExcerpt(DescribeError(std::move(err))));
    }
  };
  if (llvm::Error err = jit.layer().add(tracker, std::move(buffer), std::move(*interface))) {
    const std::string why = DescribeError(std::move(err));
    remove_object();
    throw RuntimeError(file + ": " + LoaderExcerpt(why));
  }
  auto found = jit.session().lookup(
      llvm::orc::makeJITDylibSearchOrder(dylib_, llvm::orc::JITDylibLookupFlags::MatchAllSymbols),
      std::move(lookup));
  if (!found) {
    const std::string why = ReportedOr(capture, DescribeError(found.takeError()));
    TakePending();
    remove_object();
    throw RuntimeError(file + ": cannot link: " + LoaderExcerpt(why));
  }
  std::vector<LinkRecords> linked = TakePending();
  for (LinkRecords& records : linked) {
    for (auto& [name, info] : records.symbols) symbols_[name] = info;
  }
  RebindContext();
  if (!g_run_static_initializers.load(std::memory_order_relaxed)) return;
  const size_t at_exit_before = AtExitCount();
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
        // The object goes again: its static destructors first, while its code is still there.
        RunAtExitFrom(at_exit_before);
        for (auto& [name, info] : records.symbols) symbols_.erase(name);
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
  context->setDiagnosticHandlerCallBack(&LogDiagnostic, const_cast<std::string*>(&file));
  // The IR lexer reads up to a terminating NUL: parse a copy that has one.
  const std::unique_ptr<llvm::MemoryBuffer> owned =
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(bytes.data(), bytes.size()), file);
  const llvm::MemoryBufferRef buffer = owned->getMemBufferRef();
  std::unique_ptr<llvm::Module> module;
  if (IsBitcode(bytes)) {
    auto parsed = llvm::parseBitcodeFile(buffer, *context);
    if (!parsed) {
      throw ValueError(file +
                       ": malformed bitcode: " + LoaderExcerpt(DescribeError(parsed.takeError())));
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
  module->setTargetTriple(jit.triple().str());
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
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager functions;
    llvm::CGSCCAnalysisManager cgscc;
    llvm::ModuleAnalysisManager modules;
    llvm::PassBuilder passes(&jit.target_machine());
    passes.registerModuleAnalyses(modules);
    passes.registerCGSCCAnalyses(cgscc);
    passes.registerFunctionAnalyses(functions);
    passes.registerLoopAnalyses(loops);
    passes.crossRegisterProxies(loops, functions, cgscc, modules);
    passes.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(*module, modules);
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
          file + ": code generation failed: " + LoaderExcerpt(DescribeError(compiled.takeError())));
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
  ModuleJit& jit = ModuleJit::Get();
  dylibs.push_back(jit.support());
  if (llvm::orc::JITDylib* process = jit.process()) dylibs.push_back(process);
  dylib_->setLinkOrder(llvm::orc::makeJITDylibSearchOrder(dylibs));
  link_order_ = std::move(keep);
}

bool ModuleState::Find(const std::string& symbol, void** address, SymbolInfo* info) {
  std::lock_guard lock(mutex_);
  *address = nullptr;
  auto known = symbols_.find(symbol);
  if (known == symbols_.end()) return false;  // every linked symbol is recorded
  ModuleJit& jit = ModuleJit::Get();
  llvm::orc::SymbolLookupSet lookup(jit.session().intern(symbol),
                                    llvm::orc::SymbolLookupFlags::WeaklyReferencedSymbol);
  ReportCapture capture;
  auto found = jit.session().lookup(
      llvm::orc::makeJITDylibSearchOrder(dylib_, llvm::orc::JITDylibLookupFlags::MatchAllSymbols),
      std::move(lookup));
  if (!found) {
    throw RuntimeError(name_ + ": cannot look up " + Quote(symbol) + ": " +
                       LoaderExcerpt(ReportedOr(capture, DescribeError(found.takeError()))));
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

bool ModuleState::ResolveFromInside(const std::vector<std::string>& names,
                                    std::vector<void*>* addresses, std::string* why) {
  std::lock_guard lock(mutex_);
  ModuleJit& jit = ModuleJit::Get();
  llvm::orc::JITDylibSearchOrder order;
  dylib_->withLinkOrderDo([&](const llvm::orc::JITDylibSearchOrder& links) { order = links; });
  llvm::orc::SymbolLookupSet lookup;
  for (const std::string& name : names) {
    lookup.add(jit.session().intern(name), llvm::orc::SymbolLookupFlags::WeaklyReferencedSymbol);
  }
  ReportCapture capture;
  auto found = jit.session().lookup(order, std::move(lookup));
  if (!found) {
    *why = name_ + ": cannot look up the symbols its IR uses: " +
           LoaderExcerpt(ReportedOr(capture, DescribeError(found.takeError())));
    return false;
  }
  addresses->clear();
  for (const std::string& name : names) {
    auto it = found->find(jit.session().intern(name));
    if (it == found->end() || !it->second.getAddress()) {
      *why = Quote(name) + " resolves to nothing from JIT module " + name_;
      return false;
    }
    addresses->push_back(it->second.getAddress().toPtr<void*>());
  }
  return true;
}

ModuleState::~ModuleState() {
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
  {
    Registry& registry = Registry::Get();
    std::lock_guard lock(registry.mutex);
    registry.by_dylib.erase(dylib_);
    registry.by_dso.erase(dso_handle());
    if (object_ != nullptr) registry.by_object.erase(object_);
  }
  if (llvm::Error err = ModuleJit::Get().session().removeJITDylib(*dylib_)) {
    LogJit("ffijit: JIT module " + name_ +
           ": cannot free its code: " + LoaderExcerpt(DescribeError(std::move(err))));
  }
  link_order_.clear();  // after the dylib that linked against them is gone
}

// ---- The symbol source the runtime's library module calls ----

int FindSymbol(void* self, const char* name, void** address, size_t* size, int* is_code) {
  return GuardCBoundary([&] {
    SymbolInfo info;
    *address = nullptr;
    *size = 0;
    *is_code = -1;
    if (static_cast<ModuleState*>(self)->Find(name, address, &info)) {
      *size = static_cast<size_t>(info.size);
      *is_code = info.is_code ? 1 : 0;
    }
  });
}

void ReleaseState(void* self) {
  delete static_cast<ModuleState*>(self);
}

ModuleState* StateOf(const Module& mod, const char* what) {
  if (!mod.defined()) throw TypeError(std::string(what) + ": the module is None");
  Registry& registry = Registry::Get();
  std::lock_guard lock(registry.mutex);
  auto it = registry.by_object.find(mod.get());
  if (it == registry.by_object.end()) {
    throw TypeError(std::string(what) +
                    ": not a JIT module (made by JitModule::Create or loaded from a .o, .bc or "
                    ".ll file)");
  }
  return it->second;
}

Module CreateModule(std::string name) {
  ModuleJit& jit = ModuleJit::Get();
  const uint64_t id = jit.NextId();
  if (name.empty()) name = "jit-module-" + std::to_string(id);
  llvm::orc::JITDylib& dylib =
      jit.session().createBareJITDylib("ffijit.module." + std::to_string(id));
  // The module's own __dso_handle, which C++ objects pass to __cxa_atexit: in JIT memory, since
  // objects address it PC-relative (within 2 GiB of their code).
  auto graph = std::make_unique<llvm::jitlink::LinkGraph>("ffijit.dso_handle." + std::to_string(id),
                                                          jit.triple(),
                                                          llvm::jitlink::getGenericEdgeKindName);
  using llvm::BitmaskEnumDetail::operator|;
  llvm::jitlink::Section& section = graph->createSection(
      "__ffijit_dso_handle", llvm::orc::MemProt::Read | llvm::orc::MemProt::Write);
  llvm::jitlink::Block& block =
      graph->createZeroFillBlock(section, 8, llvm::orc::ExecutorAddr(), 8, 0);
  graph->addDefinedSymbol(block, 0, "__dso_handle", 8, llvm::jitlink::Linkage::Strong,
                          llvm::jitlink::Scope::Hidden, false, true);
  auto fail = [&](const std::string& why) {
    {
      Registry& registry = Registry::Get();
      std::lock_guard lock(registry.mutex);
      registry.by_dylib.erase(&dylib);
    }
    if (llvm::Error err = jit.session().removeJITDylib(dylib)) llvm::consumeError(std::move(err));
    throw RuntimeError("cannot create JIT module " + name + ": " + why);
  };
  if (llvm::Error err = jit.layer().add(dylib, std::move(graph))) {
    fail(DescribeError(std::move(err)));
  }
  auto dso = jit.session().lookup(
      llvm::orc::makeJITDylibSearchOrder(&dylib, llvm::orc::JITDylibLookupFlags::MatchAllSymbols),
      jit.session().intern("__dso_handle"));
  if (!dso) fail(DescribeError(dso.takeError()));
  auto* state = new ModuleState(name, &dylib, dso->getAddress().toPtr<void*>());
  {
    Registry& registry = Registry::Get();
    std::lock_guard lock(registry.mutex);
    registry.by_dylib[&dylib] = state;
    registry.by_dso[state->dso_handle()] = state;
  }
  std::vector<llvm::orc::JITDylib*> links = {jit.support()};
  if (llvm::orc::JITDylib* process = jit.process()) links.push_back(process);
  dylib.setLinkOrder(llvm::orc::makeJITDylibSearchOrder(links));
  FFIJITSymbolSource source{state, &FindSymbol, &ReleaseState, name.c_str()};
  TVMFFIObjectHandle handle = nullptr;
  CheckCall(FFIJITLibraryModuleCreate(&source, &handle));  // releases the state on failure
  auto* object = static_cast<TVMFFIObject*>(handle);
  state->set_object(object);
  {
    Registry& registry = Registry::Get();
    std::lock_guard lock(registry.mutex);
    registry.by_object[object] = state;
  }
  return Module(ObjectPtr<>::Adopt(object));
}

void AddFileTo(ModuleState* state, const std::string& path) {
  const std::string format = Extension(path);
  if (format != "o" && format != "bc" && format != "ll") {
    throw ValueError("cannot add " + Quote(path) +
                     " to a JIT module: the extension must be .o, .bc or .ll");
  }
  const std::string bytes = ReadFileOrThrow(path);
  if (format == "o") {
    state->AddObject(bytes, path);
  } else {
    state->AddIR(bytes, path);
  }
}

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
  for (const char* format : {"o", "bc", "ll"}) {
    SetGlobalFunction(std::string("ffi.Module.load_from_file.") + format, load, true);
  }
  SetGlobalFunction("ffijit.JitModuleCreate", Function::FromTyped([](std::string name) -> Module {
                      return JitModule::Create(name);
                    }),
                    true);
  SetGlobalFunction(
      "ffijit.JitModuleAddFile",
      Function::FromTyped([](Module mod, std::string path) { JitModule::From(mod).AddFile(path); }),
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

void SetRunStaticInitializers(bool run) {
  g_run_static_initializers.store(run, std::memory_order_relaxed);
}

bool FindNativeIR(TVMFFIObject* owner, void* target, std::string* bitcode, std::string* function) {
  if (owner == nullptr) return false;
  ModuleState* state = nullptr;
  {
    Registry& registry = Registry::Get();
    std::lock_guard lock(registry.mutex);
    auto it = registry.by_object.find(owner);
    if (it == registry.by_object.end()) return false;
    state = it->second;
  }
  return state->NativeIR(target, bitcode, function);
}

bool ResolveInModule(TVMFFIObject* owner, const std::vector<std::string>& names,
                     std::vector<void*>* addresses, std::string* why) {
  ModuleState* state = nullptr;
  {
    Registry& registry = Registry::Get();
    std::lock_guard lock(registry.mutex);
    auto it = registry.by_object.find(owner);
    if (it != registry.by_object.end()) state = it->second;
  }
  if (state == nullptr) {
    *why = "the native's JIT module is gone";
    return false;
  }
  return state->ResolveFromInside(names, addresses, why);
}

}  // namespace orc

// ---- The public API ----

JitModule JitModule::Create(const std::string& name) {
  return JitModule(orc::CreateModule(name));
}

JitModule JitModule::Load(const std::string& path) {
  JitModule mod = Create(path);
  mod.AddFile(path);
  if (!orc::StateOf(mod, "JitModule::Load")->DefinesTvmFfiFunction()) {
    throw ValueError(path +
                     " defines no `__tvm_ffi_<name>` function, so it is not a TVM FFI module (add "
                     "a file of helpers or natives with JitModule::AddFile instead)");
  }
  return mod;
}

JitModule JitModule::From(const Module& mod) {
  orc::StateOf(mod, "JitModule::From");
  return JitModule(mod);
}

void JitModule::AddFile(const std::string& path) const {
  orc::AddFileTo(orc::StateOf(*this, "JitModule::AddFile"), path);
}

void JitModule::AddObject(std::string_view bytes, const std::string& name) const {
  orc::StateOf(*this, "JitModule::AddObject")->AddObject(bytes, name);
}

void JitModule::AddIR(std::string_view bytes, const std::string& name) const {
  orc::StateOf(*this, "JitModule::AddIR")->AddIR(bytes, name);
}

void JitModule::AddIR(const llvm::Module& module) const {
  orc::ModuleState* state = orc::StateOf(*this, "JitModule::AddIR");
  std::string bitcode;
  llvm::raw_string_ostream stream(bitcode);
  llvm::WriteBitcodeToFile(module, stream);
  stream.flush();
  const std::string name =
      module.getModuleIdentifier().empty() ? "<llvm::Module>" : module.getModuleIdentifier();
  state->AddIR(bitcode, name);
}

void JitModule::SetLinkOrder(const std::vector<JitModule>& modules) const {
  orc::StateOf(*this, "JitModule::SetLinkOrder")->SetLinkOrder(modules);
}

void* JitModule::Lookup(const std::string& symbol) const {
  void* address = nullptr;
  orc::SymbolInfo info;
  orc::StateOf(*this, "JitModule::Lookup")->Find(symbol, &address, &info);
  return address;
}

Function JitModule::MakeNative(const std::string& symbol, Signature sig,
                               const RegisterOptions& options) const {
  orc::ModuleState* state = orc::StateOf(*this, "JitModule::MakeNative");
  void* address = nullptr;
  orc::SymbolInfo info;
  if (!state->Find(symbol, &address, &info)) {
    throw KeyError("JIT module " + state->name() + " defines no symbol " + orc::Quote(symbol));
  }
  if (!info.is_code) {
    throw TypeError("symbol " + orc::Quote(symbol) + " of JIT module " + state->name() +
                    " is data, not a function");
  }
  Function func = MakeFunctionOwnedBy(symbol, address, std::move(sig), options, get());
  state->RecordNative(address, symbol);
  return func;
}

Function JitModule::MakeNative(const std::string& symbol, std::string_view metadata,
                               MetadataFormat format, const RegisterOptions& options) const {
  return MakeNative(symbol, ParseMetadata(metadata, format), options);
}

Function JitModule::RegisterNative(const std::string& symbol, std::string_view metadata,
                                   MetadataFormat format, const RegisterOptions& options) const {
  Function func = MakeNative(symbol, metadata, format, options);
  SetGlobalFunction(options.global_name.empty() ? symbol : options.global_name, func,
                    options.allow_override);
  return func;
}

}  // namespace ffijit
