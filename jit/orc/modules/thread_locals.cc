// Local-dynamic thread-locals rewritten for LLVM 19's JITLink, exec-model objects refused (see
// thread_locals.h).
#include "orc/modules/thread_locals.h"

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include "ffijit/error.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/ExecutionEngine/JITLink/x86_64.h"
#include "llvm/Object/ELF.h"
#include "orc/modules/object_check.h"

namespace ffijit::orc {
namespace {

using ElfFile = llvm::object::ELFFile<llvm::object::ELF64LE>;
using Rela = ElfFile::Elf_Rela;

// Where the anchor variable lives: its section's name and its offset there (JITLink makes one
// block of each ELF section).
struct Anchor {
  std::string section;
  uint64_t offset = 0;
};

// Objects being linked whose local-dynamic references were rewritten, by link name.
struct PendingAnchors {
  std::mutex mutex;
  std::map<std::string, Anchor> by_name;
};
PendingAnchors& Pending() {
  static auto* pending = new PendingAnchors();  // plugins outlive every static
  return *pending;
}

bool IsThreadLocalSection(llvm::StringRef name) {
  return name.starts_with(".tdata") || name.starts_with(".tbss");
}

// Why the thread-local relocation `type` cannot be linked into loaded code and what to do
// instead; "" when it can.
std::string UnloadableModel(llvm::Triple::ArchType arch, uint32_t type) {
  const bool x86 = arch == llvm::Triple::x86_64;
  const llvm::StringRef name = llvm::object::getELFRelocationTypeName(
      x86 ? llvm::ELF::EM_X86_64 : llvm::ELF::EM_AARCH64, type);
  const std::string exec_model =
      name.str() +
      ", which assumes the static TLS block of a program's start-up; code loaded later has "
      "none: compile the object with -fPIC";
  if (x86) {
    if (type == llvm::ELF::R_X86_64_TPOFF32 || type == llvm::ELF::R_X86_64_TPOFF64 ||
        type == llvm::ELF::R_X86_64_GOTTPOFF) {
      return exec_model;
    }
    if (type == llvm::ELF::R_X86_64_DTPOFF64 || type == llvm::ELF::R_X86_64_DTPMOD64 ||
        type == llvm::ELF::R_X86_64_GOTPC32_TLSDESC || type == llvm::ELF::R_X86_64_TLSDESC_CALL) {
      return name.str() + ", which LLVM 19's JIT linker does not link: compile the object with " +
             "-fPIC and the default TLS dialect (general and local dynamic)";
    }
    return "";
  }
  if (name.starts_with("R_AARCH64_TLSLE_") || name.starts_with("R_AARCH64_TLSIE_")) {
    return exec_model;
  }
  if (name.starts_with("R_AARCH64_TLSGD_") || name.starts_with("R_AARCH64_TLSLD_") ||
      name.starts_with("R_AARCH64_TLS_")) {
    return name.str() + ", which LLVM 19's JIT linker does not link: compile the object with " +
           "-fPIC and the default TLS descriptors (-mtls-dialect=desc)";
  }
  return "";
}

class ThreadLocalPlugin final : public llvm::orc::ObjectLinkingLayer::Plugin {
 public:
  void modifyPassConfig(llvm::orc::MaterializationResponsibility&, llvm::jitlink::LinkGraph& graph,
                        llvm::jitlink::PassConfiguration& config) override {
    std::optional<Anchor> anchor;
    {
      PendingAnchors& pending = Pending();
      std::lock_guard lock(pending.mutex);
      auto it = pending.by_name.find(graph.getName());
      if (it == pending.by_name.end()) return;
      anchor = std::move(it->second);
      pending.by_name.erase(it);
    }
    auto anchor_block = std::make_shared<llvm::jitlink::Block*>(nullptr);
    config.PrePrunePasses.push_back([anchor,
                                     anchor_block](llvm::jitlink::LinkGraph& g) -> llvm::Error {
      if (llvm::jitlink::Section* section = g.findSectionByName(anchor->section)) {
        for (llvm::jitlink::Block* block : section->blocks()) {
          if (anchor->offset <= block->getSize()) *anchor_block = block;
        }
      }
      if (*anchor_block == nullptr) {
        return llvm::make_error<llvm::StringError>("the thread-local section " + anchor->section +
                                                       " of a local-dynamic reference "
                                                       "is missing",
                                                   llvm::inconvertibleErrorCode());
      }
      return llvm::Error::success();
    });
    // Addresses are final here and the fixups not yet written: V - fixup + addend becomes
    // V - anchor + addend, the variable's offset in the object's thread-local block.
    config.PreFixupPasses.push_back(
        [anchor, anchor_block](llvm::jitlink::LinkGraph& g) -> llvm::Error {
          const uint64_t base = ((*anchor_block)->getAddress() + anchor->offset).getValue();
          for (llvm::jitlink::Block* block : g.blocks()) {
            for (llvm::jitlink::Edge& edge : block->edges()) {
              if (edge.getKind() != llvm::jitlink::x86_64::Delta32 &&
                  edge.getKind() != llvm::jitlink::x86_64::PCRel32) {
                continue;
              }
              const llvm::jitlink::Symbol& target = edge.getTarget();
              if (!target.isDefined() ||
                  !IsThreadLocalSection(target.getBlock().getSection().getName())) {
                continue;
              }
              const uint64_t fixup = (block->getAddress() + edge.getOffset()).getValue();
              edge.setAddend(edge.getAddend() + static_cast<int64_t>(fixup - base));
            }
          }
          return llvm::Error::success();
        });
  }
  llvm::Error notifyFailed(llvm::orc::MaterializationResponsibility&) override {
    return llvm::Error::success();
  }
  llvm::Error notifyRemovingResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey) override {
    return llvm::Error::success();
  }
  void notifyTransferringResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey,
                                   llvm::orc::ResourceKey) override {}
};

}  // namespace

void PrepareThreadLocals(std::string& bytes, const std::string& file, const llvm::Triple& host,
                         std::string* link_name) {
  const llvm::Triple::ArchType arch = host.getArch();
  if (arch != llvm::Triple::x86_64 && arch != llvm::Triple::aarch64) return;
  auto elf = ElfFile::create(llvm::StringRef(bytes.data(), bytes.size()));
  if (!elf) {
    llvm::consumeError(elf.takeError());
    return;  // CheckObject accepted it: JITLink reports what it cannot read
  }
  auto sections = elf->sections();
  if (!sections) {
    llvm::consumeError(sections.takeError());
    return;
  }
  struct Patch {
    size_t at;  // of the relocation record in `bytes`
    uint32_t type;
    uint32_t symbol;
  };
  std::vector<Patch> patches;
  std::optional<uint32_t> anchor_symbol;
  Anchor anchor;
  for (const auto& section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_RELA) continue;
    auto symtab = elf->getSection(section.sh_link);
    auto relas = elf->relas(section);
    if (!symtab || !relas) {
      if (!symtab) llvm::consumeError(symtab.takeError());
      if (!relas) llvm::consumeError(relas.takeError());
      continue;
    }
    auto symbols = elf->symbols(*symtab);
    if (!symbols) {
      llvm::consumeError(symbols.takeError());
      continue;
    }
    auto symbol_name = [&](uint32_t index) -> std::string {
      if (index >= symbols->size()) return "#" + std::to_string(index);
      const auto& symbol = (*symbols)[index];
      if (symbol.getType() == llvm::ELF::STT_SECTION && symbol.st_shndx < sections->size()) {
        auto name = elf->getSectionName((*sections)[symbol.st_shndx]);
        if (name) return name->str();
        llvm::consumeError(name.takeError());
      }
      auto name = symbol.getName(*elf->getStringTableForSymtab(**symtab));
      if (!name) {
        llvm::consumeError(name.takeError());
        return "#" + std::to_string(index);
      }
      return name->str();
    };
    const bool applies_to_loaded = section.sh_info < sections->size() &&
                                   ((*sections)[section.sh_info].sh_flags & llvm::ELF::SHF_ALLOC);
    for (const Rela& rela : *relas) {
      const uint32_t type = rela.getType(false);
      const uint32_t symbol = rela.getSymbol(false);
      const size_t at = static_cast<size_t>(reinterpret_cast<const char*>(&rela) - bytes.data());
      // Debug information locates a thread-local by its offset in the block; nothing here reads
      // debug information, so those references are dropped instead of linked.
      if (!applies_to_loaded && arch == llvm::Triple::x86_64 &&
          (type == llvm::ELF::R_X86_64_DTPOFF32 || type == llvm::ELF::R_X86_64_DTPOFF64)) {
        patches.push_back(Patch{at, llvm::ELF::R_X86_64_NONE, 0});
        continue;
      }
      const std::string unloadable = UnloadableModel(arch, type);
      if (!unloadable.empty()) {
        throw ValueError(file + ": thread-local variable " + Quote(symbol_name(symbol)) +
                         " is addressed with " + unloadable);
      }
      if (arch != llvm::Triple::x86_64) continue;
      if (type != llvm::ELF::R_X86_64_TLSLD && type != llvm::ELF::R_X86_64_DTPOFF32) continue;
      if (type == llvm::ELF::R_X86_64_TLSLD && !anchor_symbol) {
        if (symbol == 0 || symbol >= symbols->size() ||
            (*symbols)[symbol].st_shndx >= sections->size()) {
          throw ValueError(file + ": a local-dynamic thread-local reference names symbol " +
                           symbol_name(symbol) + ", which is not a thread-local variable here");
        }
        const auto& defined = (*symbols)[symbol];
        auto section_name = elf->getSectionName((*sections)[defined.st_shndx]);
        if (!section_name || !IsThreadLocalSection(*section_name)) {
          if (!section_name) llvm::consumeError(section_name.takeError());
          throw ValueError(file + ": a local-dynamic thread-local reference names " +
                           Quote(symbol_name(symbol)) + ", which is not in a thread-local section");
        }
        anchor_symbol = symbol;
        anchor.section = section_name->str();
        anchor.offset = defined.getType() == llvm::ELF::STT_SECTION ? 0 : defined.st_value;
      }
      patches.push_back(Patch{at, type, symbol});
    }
  }
  if (patches.empty()) return;
  bool needs_anchor = false;
  for (const Patch& patch : patches) needs_anchor |= patch.type != llvm::ELF::R_X86_64_NONE;
  if (needs_anchor && !anchor_symbol) {
    throw ValueError(file + ": a DTPOFF32 relocation without the local-dynamic reference " +
                     "(R_X86_64_TLSLD) it is an offset from");
  }
  for (const Patch& patch : patches) {
    Rela rela;
    std::memcpy(&rela, bytes.data() + patch.at, sizeof(rela));
    if (patch.type == llvm::ELF::R_X86_64_NONE) {
      rela.setSymbolAndType(0, llvm::ELF::R_X86_64_NONE, false);
    } else if (patch.type == llvm::ELF::R_X86_64_TLSLD) {
      rela.setSymbolAndType(*anchor_symbol, llvm::ELF::R_X86_64_TLSGD, false);
    } else {
      rela.setSymbolAndType(patch.symbol, llvm::ELF::R_X86_64_PC32, false);
    }
    std::memcpy(bytes.data() + patch.at, &rela, sizeof(rela));
  }
  if (!needs_anchor) return;
  static std::atomic<uint64_t> next{0};
  *link_name = file + "#tls" + std::to_string(next.fetch_add(1));
  PendingAnchors& pending = Pending();
  std::lock_guard lock(pending.mutex);
  pending.by_name[*link_name] = std::move(anchor);
}

void ForgetThreadLocals(const std::string& link_name) {
  PendingAnchors& pending = Pending();
  std::lock_guard lock(pending.mutex);
  pending.by_name.erase(link_name);
}

std::shared_ptr<llvm::orc::ObjectLinkingLayer::Plugin> MakeThreadLocalPlugin() {
  return std::make_shared<ThreadLocalPlugin>();
}

}  // namespace ffijit::orc
