// The JITLink plugin recording initialisers, finalisers, symbols and eh-frames of each object
// linked into a JIT module (link_records.h: the LLVM 19 defects it stands in for, and when it can
// go).
#include "orc/llvm_patches/link_records.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/Orc/Shared/ObjectFormats.h"
#include "orc/llvm/llvm_compat.h"
#include "orc/llvm_patches/eh_frames.h"

namespace ffijit::orc {
namespace {

using llvm::orc::SymbolStringPtr;

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

// Keeps initialiser and finaliser sections alive and records their entries after fixup.
class InitFiniPlugin final : public llvm::orc::ObjectLinkingLayer::Plugin {
 public:
  explicit InitFiniPlugin(FindLinkRecordSink find) : find_(std::move(find)) {}

  void modifyPassConfig(llvm::orc::MaterializationResponsibility& mr,
                        llvm::jitlink::LinkGraph& graph,
                        llvm::jitlink::PassConfiguration& config) override {
    (void)graph;
    if (find_(mr.getTargetJITDylib()) == nullptr) return;  // not a module's code
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
    if (LinkRecordSink* sink = find_(mr.getTargetJITDylib())) sink->Commit(std::move(records));
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
    // Address -> a function there, for messages: the first name of those at the address (the
    // graph's symbol sets have no stable order), never an ELF mapping symbol such as `$x`.
    std::unordered_map<uint64_t, std::string> names;
    for (llvm::jitlink::Symbol* symbol : g.defined_symbols()) {
      if (!symbol->hasName()) continue;
      const std::string name = compat::SymbolName(*symbol).str();
      if (symbol->isCallable() && name[0] != '$') {
        auto [at, fresh] = names.emplace(symbol->getAddress().getValue(), name);
        if (!fresh && name < at->second) at->second = name;
      }
      if (symbol->getScope() != llvm::jitlink::Scope::Local) {
        records->symbols[name] = SymbolInfo{symbol->getSize(), symbol->isCallable()};
      }
    }
    uint64_t sequence = 0;
    for (llvm::jitlink::Section& section : g.sections()) {
      if (kDeregisterEhFrames && section.getName() == ".eh_frame" && !section.empty()) {
        llvm::jitlink::SectionRange range(section);
        if (range.getSize() != 0) records->eh_frames.push_back(range.getStart().toPtr<void*>());
      }
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

  FindLinkRecordSink find_;
  std::mutex mutex_;
  std::unordered_map<llvm::orc::MaterializationResponsibility*, LinkRecords> in_flight_;
};

}  // namespace

std::shared_ptr<llvm::orc::ObjectLinkingLayer::Plugin> MakeLinkRecordsPlugin(
    FindLinkRecordSink find) {
  return std::make_shared<InitFiniPlugin>(std::move(find));
}

}  // namespace ffijit::orc
