// Host entries in the LLVM build: an entry's code compiled into its own code unit at the light
// level and freed with its last entry. Where the host's `self` holds the function, one code serves
// every function of a signature (looked up by signature, model and flags); else it is one
// function's.
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ffijit/error.h"
#include "interpreter/bound_function.h"
#include "llvm/IR/Module.h"
#include "orc/codegen/host_entry_codegen.h"
#include "orc/codegen/thunk_codegen.h"
#include "orc/tiers/jit_engine_impl.h"
#include "plan/host_entry_internal.h"

namespace ffijit::details {
namespace {

struct EntryCode {
  orc::UnitCompiler* compiler = nullptr;
  orc::CodeUnit* unit = nullptr;
  void* address = nullptr;
  std::string key;  // empty: one function's code, not in the shared table
  int64_t entries = 0;
};

// Codes shared by a signature's functions, by key; an entry holds one count of its code.
std::mutex g_shared_mutex;
std::unordered_map<std::string, EntryCode*>& SharedCodes() {
  static auto* codes = new std::unordered_map<std::string, EntryCode*>();  // never destroyed
  return *codes;
}

void ReleaseEntryCode(void* opaque) {
  auto* code = static_cast<EntryCode*>(opaque);
  if (!code->key.empty()) {
    std::lock_guard lock(g_shared_mutex);
    if (--code->entries > 0) return;
    SharedCodes().erase(code->key);
  }
  code->compiler->Release(code->unit);
  delete code;
}

// The model as bytes of the key: two models with the same fields make the same code. Field by
// field, so that padding never enters the key.
std::string ModelKey(const FFIJITHostModel& m, int flags) {
  std::string key;
  auto add = [&key](const auto& value) {
    key.append(reinterpret_cast<const char*>(&value), sizeof value);
  };
  add(flags);
  for (int32_t offset :
       {m.type_offset, m.float_value_offset, m.device_value_offset, m.dtype_value_offset,
        m.plain_refcount, m.tensor_slot_size, m.self_function_offset, m.str_flags_offset,
        m.str_length_offset, m.str_inline_data_offset, m.self_name_offset}) {
    add(offset);
  }
  add(m.str_inline_mask);
  for (const void* address : {m.int_type, m.float_type, m.str_type, m.device_type, m.dtype_type,
                              m.none, m.true_value, m.false_value}) {
    add(address);
  }
  for (const void* function :
       {reinterpret_cast<const void*>(m.int_value), reinterpret_cast<const void*>(m.error_occurred),
        reinterpret_cast<const void*>(m.clear_error), reinterpret_cast<const void*>(m.str_data),
        reinterpret_cast<const void*>(m.pointer_to_any),
        reinterpret_cast<const void*>(m.borrow_tensor),
        reinterpret_cast<const void*>(m.release_tensor), reinterpret_cast<const void*>(m.new_int),
        reinterpret_cast<const void*>(m.new_float), reinterpret_cast<const void*>(m.new_ref),
        reinterpret_cast<const void*>(m.box_result), reinterpret_cast<const void*>(m.raise_error),
        reinterpret_cast<const void*>(m.release_lock),
        reinterpret_cast<const void*>(m.acquire_lock), reinterpret_cast<const void*>(m.fallback),
        static_cast<const void*>(m.lock_holder), static_cast<const void*>(m.lock_calls),
        static_cast<const void*>(m.held_work), reinterpret_cast<const void*>(m.run_held_work)}) {
    add(function);
  }
  return key;
}

EntryCode* FindShared(const std::string& key) {
  std::lock_guard lock(g_shared_mutex);
  auto it = SharedCodes().find(key);
  if (it == SharedCodes().end()) return nullptr;
  it->second->entries++;
  return it->second;
}

}  // namespace

FFIJITHostEntry* CompileHostEntry(const BoundFunction* fn, const FFIJITHostModel& model,
                                  int flags) {
  const CallPlan& plan = *fn->plan;
  const std::string refused =
      "FFIJITHostEntryCompile: no host entry for `" + plan.declaration + "`: ";
  std::string why = HostEntryUnsupportedReason(plan);
  if (!why.empty()) throw RuntimeError(refused + why);
  const auto start = std::chrono::steady_clock::now();
  auto finish = [&](EntryCode* code) {
    auto entry = std::make_unique<FFIJITHostEntry>();
    entry->address = code->address;
    entry->code = code;
    entry->release_code = &ReleaseEntryCode;
    entry->compile_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
    return entry.release();
  };
  const bool shared = model.self_function_offset >= 0;
  // The thunk's key covers the plan's canonical signature; host entries take no object
  // parameters, whose type indices it would add.
  const std::string key =
      shared ? orc::ThunkKey(plan, false) + "|host entry|" + ModelKey(model, flags) : "";
  if (shared) {
    if (EntryCode* code = FindShared(key)) return finish(code);
  }
  orc::UnitCompiler* compiler = JitEngineAccess::Of(JitEngine::Default())->Compiler(&why);
  if (compiler == nullptr) throw RuntimeError(refused + why);
  // No cache key: the code holds this process's addresses.
  std::vector<orc::CompileRequest> request;
  // The hot-tier thunk inside the entry, for LLVM to inline and fold the TVMFFIAny array away;
  // shared code's thunk loads the native from the handle.
  request.push_back({"", [&](llvm::Module& module, const std::string& symbol) {
                       const std::string thunk_symbol = symbol + ".thunk";
                       std::string failed =
                           orc::EmitThunk(plan, module, thunk_symbol,
                                          orc::HotThunkOptions(shared ? nullptr : fn->target));
                       if (!failed.empty()) return failed;
                       llvm::Function* thunk = module.getFunction(thunk_symbol);
                       thunk->setLinkage(llvm::GlobalValue::InternalLinkage);
                       thunk->addFnAttr(llvm::Attribute::AlwaysInline);
                       return orc::EmitHostEntry(plan, fn, model, flags, thunk, module, symbol);
                     }});
  orc::CompiledSymbol compiled =
      compiler->Compile(std::move(request), orc::CodeGenLevel::kLight)[0];
  if (compiled.address == nullptr) throw RuntimeError(refused + compiled.failure);
  auto* code = new EntryCode{compiler, compiled.unit, compiled.address, key, 1};
  if (shared) {
    std::lock_guard lock(g_shared_mutex);
    auto [it, inserted] = SharedCodes().emplace(key, code);
    if (!inserted) {  // another thread compiled the same code meanwhile: use the first
      compiler->Release(code->unit);
      delete code;
      code = it->second;
      code->entries++;
    }
  }
  return finish(code);
}

}  // namespace ffijit::details
