// The one ORC session: LLJIT with LLVM's ORC runtime (ELFNixPlatform) over one JITLink
// ObjectLinkingLayer, target machines, LLVM error text and diagnostics.
#include "orc/llvm/session.h"

#include <dlfcn.h>

#include <mutex>

#include "ffijit/error.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/AlwaysInliner.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Scalar/SROA.h"
#include "llvm/Transforms/Scalar/SimplifyCFG.h"
#include "orc/llvm/llvm_compat.h"
#include "platform/abi.h"
#include "settings/jit_settings.h"

#if defined(__SANITIZE_ADDRESS__)
#define FFIJIT_LEAK_CHECKED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define FFIJIT_LEAK_CHECKED 1
#endif
#endif
#if defined(FFIJIT_LEAK_CHECKED)
#include <sanitizer/lsan_interface.h>
#endif

extern "C" const char ffijit_orc_runtime_start[];
extern "C" const char ffijit_orc_runtime_end[];

namespace ffijit::orc {
namespace {

thread_local std::vector<std::string>* t_reported_errors = nullptr;

// The machine every session target is built for: the host, small PIC code (the JIT default is
// the large code model, where every call becomes movabs + call through a register, which FastISel
// cannot lower; small PIC code calls through the PLT and JITLink builds stubs for symbols out of
// rel32 range).
llvm::Expected<llvm::orc::JITTargetMachineBuilder> HostMachine(CodeGenLevel level) {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) return builder.takeError();
  // Thunks are straight runs of loads, compares and one call: -O0 (FastISel, the fast register
  // allocator) gives code as quick to call as -O2 does for them, at a sixth of the compile time.
  // kLight's code generation is O1's: the greedy register allocator keeps the entry's values in
  // registers as O2 does, and its pipeline costs a third less than O2's.
  builder->setCodeGenOptLevel(level == CodeGenLevel::kFast    ? llvm::CodeGenOptLevel::None
                              : level == CodeGenLevel::kLight ? llvm::CodeGenOptLevel::Less
                                                              : llvm::CodeGenOptLevel::Default);
  builder->setCodeModel(llvm::CodeModel::Small);
  builder->setRelocationModel(llvm::Reloc::PIC_);
  return builder;
}

// JIT code resolves the C ABI, libc and the C++ runtime from the process's global scope. A host
// that loads ffijit with RTLD_LOCAL (CPython imports every extension so) leaves ffijit's
// libraries and their dependencies (libstdc++, libgcc_s) out of that scope, and the ORC runtime
// cannot even boot. Opening this library again with RTLD_GLOBAL puts it and its dependencies in.
// Where ffijit is linked into the executable itself, RTLD_NOLOAD finds no library by that name,
// and the executable's symbols are in the scope already.
void ExposeOwnLibraries() {
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&HostMachine), &self) == 0 || self.dli_fname == nullptr) {
    return;
  }
  // The handle's reference is kept: the library stays as long as the session does (for ever).
  dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
}

}  // namespace

std::string ErrorText(llvm::Error error) {
  std::string text;
  llvm::handleAllErrors(
      std::move(error),
      [&](const llvm::orc::SymbolsNotFound& missing) {
        text = missing.getSymbols().size() == 1 ? "undefined symbol " : "undefined symbols ";
        bool first = true;
        for (const llvm::orc::SymbolStringPtr& name : missing.getSymbols()) {
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

ReportedErrors::ReportedErrors() : saved_(t_reported_errors) {
  t_reported_errors = &errors_;
}

ReportedErrors::~ReportedErrors() {
  t_reported_errors = saved_;
}

std::string ReportedErrors::Or(std::string fallback) const {
  if (errors_.empty()) return fallback;
  std::string text;
  for (const std::string& e : errors_) text += (text.empty() ? "" : "; ") + e;
  return text;
}

void LogDiagnostics(llvm::LLVMContext& context, std::string prefix) {
  struct Handler final : llvm::DiagnosticHandler {
    explicit Handler(std::string p) : prefix(std::move(p)) {}
    bool handleDiagnostics(const llvm::DiagnosticInfo& info) override {
      // Remarks and notes (instruction counts, optimisation reports) are not problems.
      if (info.getSeverity() != llvm::DS_Error && info.getSeverity() != llvm::DS_Warning) {
        return true;
      }
      std::string text;
      llvm::raw_string_ostream stream(text);
      llvm::DiagnosticPrinterRawOStream printer(stream);
      info.print(printer);
      LogJit(prefix + (info.getSeverity() == llvm::DS_Error ? "LLVM error: " : "LLVM warning: ") +
             LoaderExcerpt(stream.str()));
      return true;
    }
    std::string prefix;
  };
  context.setDiagnosticHandler(std::make_unique<Handler>(std::move(prefix)),
                               /*RespectFilters=*/true);
}

namespace {

// Runs the pipeline `build` makes over `module`, with every analysis registered and tuned for
// `machine` (its cost model decides e.g. select vs branch).
template <typename Build>
void RunPipeline(llvm::Module& module, llvm::TargetMachine& machine, Build build) {
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
  build(builder).run(module, modules);
}

}  // namespace

void OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine) {
  RunPipeline(module, machine, [](llvm::PassBuilder& builder) {
    return builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  });
}

void OptimizeModuleLightly(llvm::Module& module, llvm::TargetMachine& machine) {
  RunPipeline(module, machine, [](llvm::PassBuilder&) {
    llvm::ModulePassManager pipeline;
    pipeline.addPass(llvm::AlwaysInlinerPass());
    llvm::FunctionPassManager simplify;
    simplify.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
    simplify.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
    simplify.addPass(llvm::InstCombinePass());
    simplify.addPass(llvm::SimplifyCFGPass());
    // Once the thunk's checks have folded, its fallback (which took the arrays' addresses) is
    // gone: the arrays become values, and what they decided (the result's kind) folds too.
    simplify.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
    simplify.addPass(llvm::InstCombinePass());
    simplify.addPass(llvm::SimplifyCFGPass());
    pipeline.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(simplify)));
    return pipeline;
  });
}

Session* Session::Get(std::string* why) {
  static std::mutex mutex;
  static Session* session = nullptr;  // never destroyed (see the header)
  static std::string failure;
  std::lock_guard lock(mutex);
  if (session == nullptr && failure.empty()) {
    std::unique_ptr<Session> created(new Session());
    failure = created->Init();
    if (failure.empty()) session = created.release();
  }
  if (session == nullptr && why != nullptr) *why = failure;
  return session;
}

std::string Session::Init() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::InitializeNativeTargetAsmParser();
  auto builder = HostMachine(CodeGenLevel::kFast);
  if (!builder) return "cannot detect the host target: " + ErrorText(builder.takeError());
  host_key_ = std::string("LLVM " LLVM_VERSION_STRING " ") + builder->getTargetTriple().str() +
              " " + builder->getCPU() + " " + builder->getFeatures().getString();
  auto runtime = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(ffijit_orc_runtime_start,
                      static_cast<size_t>(ffijit_orc_runtime_end - ffijit_orc_runtime_start)),
      "liborc_rt", /*RequiresNullTerminator=*/false);
  ExposeOwnLibraries();
  llvm::orc::ObjectLinkingLayer* linker = nullptr;
#if defined(FFIJIT_LEAK_CHECKED)
  // The ORC runtime's state, made while the platform boots, is referred to only from the
  // runtime's own data in JIT memory, which LeakSanitizer does not scan: it lives as long as the
  // session (for ever), so what the boot allocates is not a leak.
  __lsan::ScopedDisabler boot_allocations_are_not_leaks;
#endif
  auto jit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(*builder))
          // JITLink: memory is mapped read-write, filled, then made read-execute (never W+X).
          .setObjectLinkingLayerCreator(compat::ObjectLinkingLayerCreator(
              [&linker](llvm::orc::ExecutionSession& session)
                  -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                auto created = std::make_unique<llvm::orc::ObjectLinkingLayer>(session);
                linker = created.get();
                return created;
              }))
          // ELFNixPlatform over the embedded runtime: __dso_handle per JITDylib, eh-frame
          // registration, thread-local variables.
          .setPlatformSetUp(llvm::orc::ExecutorNativePlatform(std::move(runtime)))
          .create();
  if (!jit) return "cannot set up the ORC session: " + ErrorText(jit.takeError());
  jit_ = std::move(*jit);
  linker_ = linker;
  code_linker_ = std::make_unique<llvm::orc::ObjectLinkingLayer>(session());
  llvm::orc::SymbolMap helpers;
  for (const auto& [name, address] : platform::HostLoaderHelpers()) {
    helpers[session().intern(name)] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(address),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  }
  if (!helpers.empty()) {
    if (llvm::Error err =
            process_symbols().define(llvm::orc::absoluteSymbols(std::move(helpers)))) {
      return "cannot define the platform's loader helpers: " + ErrorText(std::move(err));
    }
  }
  // LLVM's own errors (a link that fails, a symbol not found) go to the JIT log and obey its
  // switch, instead of LLVM's default report on stderr; a ReportedErrors on the linking thread
  // gets them too.
  session().setErrorReporter([](llvm::Error error) {
    const std::string text = LoaderExcerpt(ErrorText(std::move(error)));
    if (t_reported_errors != nullptr) t_reported_errors->push_back(text);
    LogJit("ffijit: JIT session error: " + text);
  });
  return "";
}

llvm::orc::ExecutionSession& Session::session() {
  return jit_->getExecutionSession();
}

llvm::orc::JITDylib& Session::process_symbols() {
  return *jit_->getProcessSymbolsJITDylib();
}

const llvm::Triple& Session::triple() const {
  return jit_->getTargetTriple();
}

const llvm::DataLayout& Session::data_layout() const {
  return jit_->getDataLayout();
}

std::unique_ptr<llvm::TargetMachine> Session::CreateTargetMachine(CodeGenLevel level,
                                                                  std::string* why) const {
  auto builder = HostMachine(level);
  if (!builder) {
    *why = "cannot detect the host target: " + ErrorText(builder.takeError());
    return nullptr;
  }
  auto machine = builder->createTargetMachine();
  if (!machine) {
    *why = "cannot create the target machine: " + ErrorText(machine.takeError());
    return nullptr;
  }
  return std::move(*machine);
}

llvm::orc::JITDylib* Session::CreatePlatformDylib(const std::string& name, std::string* why) {
  auto dylib = jit_->createJITDylib(name);
  if (!dylib) {
    *why = ErrorText(dylib.takeError());
    return nullptr;
  }
  return &*dylib;
}

llvm::orc::JITDylib& Session::CreateBareDylib(const std::string& name) {
  return session().createBareJITDylib(name);
}

std::string Session::RemoveDylib(llvm::orc::JITDylib& dylib) {
  if (llvm::Error err = session().removeJITDylib(dylib)) return ErrorText(std::move(err));
  return "";
}

}  // namespace ffijit::orc
