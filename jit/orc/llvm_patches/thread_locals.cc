// Local-dynamic thread-locals rewritten for LLVM's JITLink (19 and 22), exec-model objects refused,
// each object's thread-local image placed and registered with the ORC runtime (see
// thread_locals.h).
#include "orc/llvm_patches/thread_locals.h"

#include <atomic>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "ffijit/error.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/ExecutionEngine/JITLink/x86_64.h"
#include "llvm/ExecutionEngine/Orc/ELFNixPlatform.h"
#include "llvm/Object/ELF.h"
#include "orc/llvm/llvm_compat.h"
#include "orc/llvm/session.h"

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
  return name.starts_with(".tdata") || name.starts_with(".tbss") || name == kThreadDataSection;
}

// The runtime's per-thread copies are new char[] (16-byte aligned), made from the image.
constexpr uint64_t kImageAlignment = 16;
static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ >= kImageAlignment);

// The thread-local images of every object linked, by the JIT address range they were copied
// from: registered with the ORC runtime, which keeps their addresses for ever, so they are never
// freed (nor reused by a later object). A JIT range freed by an unload may be given to a later
// object: its entry is replaced then.
struct Placement {
  uint64_t end;    // of the JIT range
  uint64_t image;  // where its start was copied
};
struct Images {
  std::mutex mutex;
  std::vector<std::unique_ptr<char[]>> blocks;
  std::map<uint64_t, Placement> by_start;
  // The thread-specific key every descriptor names: the first object's (see PlaceThreadData).
  std::optional<uint64_t> key;

  // The image address of JIT address `address`, or 0 when no linked object's data holds it.
  uint64_t Find(uint64_t address) {
    auto it = by_start.upper_bound(address);
    if (it == by_start.begin()) return 0;
    --it;
    return address < it->second.end ? it->second.image + (address - it->first) : 0;
  }
};
Images& RetainedImages() {
  static auto* images = new Images();  // the runtime refers to them until the process ends
  return *images;
}

llvm::Error LinkError(std::string text) {
  return llvm::make_error<llvm::StringError>(std::move(text), llvm::inconvertibleErrorCode());
}

// A name for a thread-local block in messages: the named symbol at its lowest offset (the first
// name breaks a tie), never an ELF mapping symbol such as AArch64's `$d`, which marks data and
// names no variable. The graph's symbol sets have no stable order, so the choice must not depend
// on it.
std::string BlockName(llvm::jitlink::LinkGraph& g, llvm::jitlink::Block& block) {
  const llvm::jitlink::Symbol* best = nullptr;
  for (const llvm::jitlink::Symbol* symbol : g.defined_symbols()) {
    if (&symbol->getBlock() != &block || !symbol->hasName() ||
        compat::SymbolName(*symbol).starts_with("$")) {
      continue;
    }
    if (best == nullptr || symbol->getOffset() < best->getOffset() ||
        (symbol->getOffset() == best->getOffset() &&
         compat::SymbolName(*symbol) < compat::SymbolName(*best))) {
      best = symbol;
    }
  }
  if (best != nullptr) return compat::SymbolName(*best).str();
  return "<anonymous thread-local in " + block.getSection().getName().str() + ">";
}

// Before pruning: every .tdata* and .tbss* section becomes part of one section the platform does
// not register, zero-filled blocks given explicit zeroes so that the layout keeps them together.
llvm::Error GatherThreadData(llvm::jitlink::LinkGraph& g) {
  std::vector<llvm::jitlink::Section*> sources;
  for (llvm::jitlink::Section& section : g.sections()) {
    if (section.getName() != kThreadDataSection && IsThreadLocalSection(section.getName())) {
      sources.push_back(&section);
    }
  }
  if (sources.empty()) return llvm::Error::success();
  llvm::jitlink::Section* gathered = g.findSectionByName(kThreadDataSection);
  if (gathered == nullptr) {
    using llvm::operator|;
    gathered =
        &g.createSection(kThreadDataSection, llvm::orc::MemProt::Read | llvm::orc::MemProt::Write);
  }
  for (llvm::jitlink::Section* source : sources) {
    for (llvm::jitlink::Block* block : source->blocks()) {
      if (block->getAlignment() > kImageAlignment) {
        return LinkError("thread-local variable " + Quote(BlockName(g, *block)) +
                         " is aligned to " + std::to_string(block->getAlignment()) +
                         " bytes; LLVM's ORC runtime copies thread-local data for each "
                         "thread only 16-byte aligned");
      }
      if (block->isZeroFill()) {
        llvm::MutableArrayRef<char> zeroes = g.allocateBuffer(block->getSize());
        std::memset(zeroes.data(), 0, zeroes.size());
        block->setMutableContent(zeroes);
      }
    }
    // Kept, empty: LinkGraph 19 numbers a new section by the count of sections, so removing one
    // would give a section JITLink creates later (its GOT, its TLS descriptors) the number of
    // an existing one, and the layout would interleave their blocks (the .eh_frame's among
    // them).
    g.mergeSections(*gathered, *source, /*PreserveSrcSection=*/true);
  }
  return llvm::Error::success();
}

// After the fixups: copies the object's thread-local data into a retained host block, points the
// TLS descriptors' data addresses there and registers the block with the runtime.
llvm::Error PlaceThreadData(llvm::jitlink::LinkGraph& g, llvm::orc::ExecutionSession& session,
                            llvm::orc::ExecutorAddr register_sections) {
  llvm::jitlink::Section* gathered = g.findSectionByName(kThreadDataSection);
  llvm::jitlink::Section* infos = g.findSectionByName("$__TLSINFO");
  std::optional<llvm::orc::ExecutorAddrRange> registered;
  Images& images = RetainedImages();
  {
    std::lock_guard lock(images.mutex);
    const llvm::jitlink::SectionRange range = gathered != nullptr
                                                  ? llvm::jitlink::SectionRange(*gathered)
                                                  : llvm::jitlink::SectionRange();
    if (range.getSize() != 0) {
      const uint64_t low = range.getStart().getValue() & ~(kImageAlignment - 1);
      const uint64_t high = range.getEnd().getValue();
      auto image = std::make_unique<char[]>(high - low);
      std::memset(image.get(), 0, high - low);
      for (llvm::jitlink::Block* block : gathered->blocks()) {
        if (block->isZeroFill()) continue;
        llvm::ArrayRef<char> content = block->getContent();
        std::memcpy(image.get() + (block->getAddress().getValue() - low), content.data(),
                    content.size());
      }
      const uint64_t start = reinterpret_cast<uint64_t>(image.get());
      auto it = images.by_start.lower_bound(low);
      if (it != images.by_start.begin() && std::prev(it)->second.end > low) --it;
      while (it != images.by_start.end() && it->first < high) it = images.by_start.erase(it);
      images.by_start[low] = Placement{high, start};
      images.blocks.push_back(std::move(image));
      registered = llvm::orc::ExecutorAddrRange(llvm::orc::ExecutorAddr(start),
                                                llvm::orc::ExecutorAddr(start + (high - low)));
    }
    // A descriptor ({key, data address}) refers to its variable with a pointer edge at offset 8;
    // the variable may be another object's (linked before, so placed). The key finds the
    // calling thread's copies, and the platform 19 makes a new one for every object: an object
    // using another's variable would get a second copy of it. Every descriptor names one key.
    std::vector<llvm::jitlink::Block*> descriptors;
    if (infos != nullptr) descriptors.assign(infos->blocks().begin(), infos->blocks().end());
    for (llvm::jitlink::Block* block : descriptors) {
      if (block->isZeroFill() || block->getSize() < 2 * sizeof(uint64_t)) {
        return LinkError("a thread-local descriptor has an unexpected layout");
      }
      llvm::MutableArrayRef<char> descriptor = block->getAlreadyMutableContent();
      if (!images.key) {
        uint64_t key = 0;
        std::memcpy(&key, descriptor.data(), sizeof(key));
        images.key = key;
      }
      std::memcpy(descriptor.data(), &*images.key, sizeof(uint64_t));
      for (llvm::jitlink::Edge& edge : block->edges()) {
        const llvm::jitlink::Symbol& target = edge.getTarget();
        const std::string name =
            target.hasName() ? compat::SymbolName(target).str() : "<anonymous>";
        const uint64_t placed =
            images.Find(target.getAddress().getValue() + static_cast<uint64_t>(edge.getAddend()));
        if (placed == 0) {
          return LinkError("thread-local variable " + Quote(name) +
                           " is not defined by JIT-linked code; LLVM's ORC runtime serves only "
                           "the thread-locals of objects in JIT modules");
        }
        if (block->isZeroFill() || edge.getOffset() + sizeof(uint64_t) > block->getSize()) {
          return LinkError("the thread-local descriptor of " + Quote(name) +
                           " has an unexpected layout");
        }
        std::memcpy(block->getAlreadyMutableContent().data() + edge.getOffset(), &placed,
                    sizeof(placed));
      }
    }
  }
  if (!registered) return llvm::Error::success();
  llvm::orc::ELFPerObjectSectionsToRegister sections;
  sections.ThreadDataSection = *registered;
  llvm::Error result = llvm::Error::success();
  if (llvm::Error err = session.callSPSWrapper<llvm::orc::shared::SPSError(
                            llvm::orc::shared::SPSELFPerObjectSectionsToRegister)>(
          register_sections, result, sections)) {
    llvm::consumeError(std::move(result));
    return err;
  }
  return result;
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
      return name.str() + ", which LLVM's JIT linker does not link: compile the object with " +
             "-fPIC and the default TLS dialect (general and local dynamic)";
    }
    return "";
  }
  if (name.starts_with("R_AARCH64_TLSLE_") || name.starts_with("R_AARCH64_TLSIE_")) {
    return exec_model;
  }
  if (name.starts_with("R_AARCH64_TLSGD_") || name.starts_with("R_AARCH64_TLSLD_") ||
      name.starts_with("R_AARCH64_TLS_")) {
    return name.str() + ", which LLVM's JIT linker does not link: compile the object with " +
           "-fPIC and the default TLS descriptors (-mtls-dialect=desc)";
  }
  return "";
}

class ThreadLocalPlugin final : public llvm::orc::ObjectLinkingLayer::Plugin {
 public:
  ThreadLocalPlugin(llvm::orc::ExecutionSession& session, llvm::orc::ExecutorAddr register_sections)
      : session_(session), register_sections_(register_sections) {}

  void modifyPassConfig(llvm::orc::MaterializationResponsibility&, llvm::jitlink::LinkGraph& graph,
                        llvm::jitlink::PassConfiguration& config) override {
    // Before the platform's own pass (added earlier), which then finds .tdata and .tbss empty.
    config.PostFixupPasses.insert(config.PostFixupPasses.begin(),
                                  [this](llvm::jitlink::LinkGraph& g) {
                                    return PlaceThreadData(g, session_, register_sections_);
                                  });
    std::optional<Anchor> anchor;
    {
      PendingAnchors& pending = Pending();
      std::lock_guard lock(pending.mutex);
      auto it = pending.by_name.find(graph.getName());
      if (it != pending.by_name.end()) {
        anchor = std::move(it->second);
        pending.by_name.erase(it);
      }
    }
    if (!anchor) {
      config.PrePrunePasses.push_back(GatherThreadData);
      return;
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
    // The anchor's block was found by its ELF section's name: gathered after that.
    config.PrePrunePasses.push_back(GatherThreadData);
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

 private:
  llvm::orc::ExecutionSession& session_;
  llvm::orc::ExecutorAddr register_sections_;
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
      // debug information, so those references are dropped instead of linked (R_*_NONE is 0 on
      // both architectures).
      const bool debug_offset =
          arch == llvm::Triple::x86_64
              ? type == llvm::ELF::R_X86_64_DTPOFF32 || type == llvm::ELF::R_X86_64_DTPOFF64
              : type == llvm::ELF::R_AARCH64_TLS_DTPREL64;
      if (!applies_to_loaded && debug_offset) {
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

std::shared_ptr<llvm::orc::ObjectLinkingLayer::Plugin> MakeThreadLocalPlugin(
    llvm::orc::ExecutionSession& session, llvm::orc::ExecutorAddr register_sections) {
  return std::make_shared<ThreadLocalPlugin>(session, register_sections);
}

}  // namespace ffijit::orc
