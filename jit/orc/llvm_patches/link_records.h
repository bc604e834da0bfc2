// What linking an object into a JIT module records, for the module to act on after the link: its
// initialisers and finalisers in priority order, its symbols, where its .eh_frame went. A JITLink
// plugin keeps the .init_array/.ctors/.fini_array/.dtors sections alive and reads their fixed-up
// entries; the module runs them (modules/module_state.cc).
//
// Workaround for the ORC runtime (ELFNixPlatform) of LLVM 19 and 22 (both compiled:
// jit/CMakeLists.txt's FFIJIT_LLVM_PATCHES). Trigger: a JIT module object with static
// initialisers or finalisers, or with an .eh_frame. Symptom, were they left to the runtime:
// .fini_array entries never run (19 and 22: measured on 22 with the platform running the
// initialisers, Compilers/ObjectModuleTest.CxxInitialisersFinalisersAndExceptions misses "fini");
// on 19 also an initialiser that throws ends the process in std::terminate (the runtime runs
// initialisers where no exception can be caught; 22's lets it reach the loader), and an object's
// eh-frames stay registered with the unwinder after its code is freed (eh_frames.h; 22
// deregisters them itself, so nothing is recorded there). Can go when the platform runs
// finalisers (the initialisers must then still run in the order and with the clean-up
// modules/module_state.cc gives them).
#ifndef FFIJIT_JIT_ORC_LLVM_PATCHES_LINK_RECORDS_H_
#define FFIJIT_JIT_ORC_LLVM_PATCHES_LINK_RECORDS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"

namespace ffijit::orc {

// Names the symbol that stands for an object's initialisers: the loader puts one in the object's
// interface, so linking it (and finding its initialisers) can be requested by name; the plugin
// defines it on the first initialiser block.
inline constexpr const char* kInitAnchorPrefix = "__ffijit_init_anchor.";

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
  // Where its .eh_frame was placed (and registered with the unwinder by the ORC runtime, whose
  // LLVM 19 version never deregisters it: freeing the code must; eh_frames.h). Empty on LLVM 22.
  std::vector<const void*> eh_frames;
  std::vector<InitFunction> inits;
  std::vector<InitFunction> finis;
  std::unordered_map<std::string, SymbolInfo> symbols;
};

// Where the records of a dylib's links go (a JIT module).
class LinkRecordSink {
 public:
  virtual ~LinkRecordSink() = default;
  // Called (on any thread) when an object finished linking.
  virtual void Commit(LinkRecords records) = 0;
};

// The sink of `dylib`'s links, or null for code that is not a module's (thunks): left alone.
using FindLinkRecordSink = std::function<LinkRecordSink*(const llvm::orc::JITDylib& dylib)>;

std::shared_ptr<llvm::orc::ObjectLinkingLayer::Plugin> MakeLinkRecordsPlugin(
    FindLinkRecordSink find);

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_LLVM_PATCHES_LINK_RECORDS_H_
