// JitEngine: the thunk cache, batch compile and install, the hot tier's per-function thunks, the
// background compile thread.
#include <cstdlib>
#include <map>
#include <utility>

#include "llvm/IR/Module.h"
#include "orc/codegen/abi_ir.h"
#include "orc/codegen/callback_codegen.h"
#include "orc/codegen/inline_native.h"
#include "orc/codegen/thunk_codegen.h"
#include "orc/modules/jit_module.h"
#include "orc/tiers/jit_engine_impl.h"

namespace ffijit {

using orc::HotThunk;
using orc::ThunkEntry;
using orc::TierState;

namespace orc {

TierState* TierStateOf(TVMFFIObjectHandle function, BoundFunction** bound, std::string* why) {
  auto* obj = static_cast<TVMFFIObject*>(function);
  if (obj == nullptr || obj->type_index != kTVMFFIFunction) {
    *why = "not a Function object";
    return nullptr;
  }
  // Any other Function object is shorter than a BoundFunction and must not be read further.
  if (!IsBoundFunction(obj)) {
    *why = "not a function made by ffijit's registration";
    return nullptr;
  }
  auto* fn = static_cast<BoundFunction*>(function);
  AdoptPendingTier(fn);
  if (fn->release_tier_state != &ReleaseTierState || fn->tier_state == nullptr) {
    *why = "the function was registered interpret-only";
    return nullptr;
  }
  *bound = fn;
  return static_cast<TierState*>(fn->tier_state);
}

bool CountsCalls(const BoundFunction* fn) {
  return static_cast<const TierState*>(fn->tier_state)->hot_after > 0;
}

std::string ThunkKey(const CallPlan& plan, bool count_calls) {
  std::string key = kThunkCodegenVersion;
  key += count_calls ? "|counted" : "|uncounted";
  key += plan.convention == CallConvention::kStatus ? "|status|" : "|plain|";
  key += plan.canonical;
  // Object type indices are baked into the code; dynamic ones may differ between processes.
  for (const NativeParam& p : plan.params) {
    if (p.conversion == Conversion::kObject) {
      // Two appends, not "|" + to_string(): GCC 12 at -O3 flags that form with a false -Wrestrict.
      key += '|';
      key += std::to_string(__atomic_load_n(&p.object_type_index, __ATOMIC_ACQUIRE));
    }
  }
  return key;
}

}  // namespace orc

details::JitEngineImpl::JitEngineImpl(JitEngineOptions options) : options_(std::move(options)) {}

void details::JitEngineImpl::StopWorker() {
  std::deque<BoundFunction*> abandoned;
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    stopping_ = true;
    abandoned.swap(queue_);
    for (BoundFunction* fn : hot_queue_) abandoned.push_back(fn);
    hot_queue_.clear();
  }
  queue_cv_.notify_all();
  idle_cv_.notify_all();
  // Not from the worker itself (a log sink that exits, say): it stops after its batch anyway.
  if (worker_.joinable() && worker_.get_id() != std::this_thread::get_id()) worker_.join();
  for (BoundFunction* fn : abandoned) TVMFFIObjectDecRef(fn);
}

details::JitEngineImpl::~JitEngineImpl() {
  StopWorker();
  // Entries still used by live functions would dangle: the contract is that the engine outlives
  // them. Drop what is left so the code is freed with the LLJIT.
  for (auto& [key, entry] : cache_) {
    delete entry;
  }
}

orc::UnitCompiler* details::JitEngineImpl::Compiler(std::string* why) {
  std::lock_guard<std::mutex> lock(compiler_mutex_);
  if (!compiler_tried_) {
    compiler_tried_ = true;
    orc::SymbolTable symbols = orc::ThunkRuntimeSymbols();
    for (auto& symbol : orc::CallbackRuntimeSymbols()) symbols.push_back(symbol);
    compiler_ = orc::UnitCompiler::Create(symbols, options_.cache_dir, &compiler_error_);
    if (!compiler_) LogJit("ffijit: JIT unavailable: " + compiler_error_);
    if (compiler_ && stop_at_exit) {
      for (orc::CodeGenLevel level : {orc::CodeGenLevel::kFast, orc::CodeGenLevel::kOptimized}) {
        compiler_->WarmUp(level);
      }
      static JitEngineImpl* stopped_at_exit = this;
      std::atexit([] { stopped_at_exit->StopWorker(); });
    }
  }
  if (!compiler_ && why) *why = "JIT unavailable: " + compiler_error_;
  return compiler_.get();
}

orc::UnitCompiler* details::JitEngineImpl::CreatedCompiler() const {
  std::lock_guard<std::mutex> lock(compiler_mutex_);
  return compiler_.get();
}

void details::JitEngineImpl::Install(BoundFunction* fn, ThunkEntry* entry) {
  auto* state = static_cast<TierState*>(fn->tier_state);
  ThunkEntry* expected = nullptr;
  if (!state->entry.compare_exchange_strong(expected, entry, std::memory_order_acq_rel)) {
    ReleaseEntry(entry);  // another compile got there first; keep its thunk
    return;
  }
  // The count the thunk runs down to ask for the hot tier (0 when it never goes hot: its thunk
  // does not count). The interpreter, which the thunk falls back to for rare forms, counts on the
  // same field; its report then asks for the hot tier too (tiering.cc's OnHot), never for a
  // second cold compile.
  fn->calls_until_hot.store(state->hot_after, std::memory_order_relaxed);
  // From the interpreter entry, or the stencil thunk (an explicit CompileNow), only: a hot-tier
  // thunk installed meanwhile stays.
  auto* call = reinterpret_cast<std::atomic<TVMFFISafeCallType>*>(&fn->cell.safe_call);
  TVMFFISafeCallType current = &InterpreterSafeCall;
  if (!call->compare_exchange_strong(current, entry->thunk, std::memory_order_release,
                                     std::memory_order_relaxed) &&
      state->early.entry != nullptr) {
    current = state->early.entry;
    call->compare_exchange_strong(current, entry->thunk, std::memory_order_release,
                                  std::memory_order_relaxed);
  }
  installs_.fetch_add(1, std::memory_order_relaxed);
}

bool details::JitEngineImpl::TryInstallCached(BoundFunction* fn) {
  std::string key = orc::ThunkKey(*fn->plan, orc::CountsCalls(fn));
  ThunkEntry* entry;
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(key);
    if (it == cache_.end()) return false;
    entry = it->second;
    entry->users++;
  }
  cache_hits_.fetch_add(1, std::memory_order_relaxed);
  Install(fn, entry);
  return true;
}

std::vector<std::string> details::JitEngineImpl::CompileAndInstall(
    const std::vector<BoundFunction*>& fns) {
  std::vector<std::string> why(fns.size());
  std::vector<ThunkEntry*> ready(fns.size(), nullptr);
  std::map<std::string, std::vector<size_t>> missing;  // key -> functions needing it
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    for (size_t i = 0; i < fns.size(); ++i) {
      std::string key = orc::ThunkKey(*fns[i]->plan, orc::CountsCalls(fns[i]));
      if (auto it = cache_.find(key); it != cache_.end()) {
        it->second->users++;
        ready[i] = it->second;
      } else if (auto failed = failed_.find(key); failed != failed_.end()) {
        why[i] = failed->second;
      } else {
        missing[key].push_back(i);
      }
    }
  }
  for (size_t i = 0; i < fns.size(); ++i) {
    if (ready[i]) {
      cache_hits_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  if (!missing.empty()) {
    std::string compiler_why;
    orc::UnitCompiler* compiler = Compiler(&compiler_why);
    std::vector<std::string> keys;
    std::vector<orc::CompileRequest> requests;
    for (auto& [key, users] : missing) {
      const CallPlan* plan = fns[users.front()]->plan;  // kept alive by the caller's reference
      orc::ThunkOptions options;
      options.count_calls = orc::CountsCalls(fns[users.front()]);  // the same for every user
      keys.push_back(key);
      orc::CompileRequest request{key,
                                  [plan, options](llvm::Module& module, const std::string& symbol) {
                                    return orc::EmitThunk(*plan, module, symbol, options);
                                  }};
      orc::AddAbiCheck(plan, &request);
      requests.push_back(std::move(request));
    }
    std::vector<orc::CompiledSymbol> compiled;
    if (compiler) {
      compiled = compiler->Compile(std::move(requests));
    } else {
      compiled.resize(keys.size());
      for (auto& c : compiled) c.failure = compiler_why;
    }
    for (size_t k = 0; k < keys.size(); ++k) {
      const std::vector<size_t>& users = missing[keys[k]];
      orc::CompiledSymbol& result = compiled[k];
      ThunkEntry* entry = nullptr;
      bool duplicate = false;
      {
        std::lock_guard<std::mutex> lock(cache_mutex_);
        if (result.address == nullptr) {
          failed_[keys[k]] = result.failure;
        } else if (auto it = cache_.find(keys[k]); it != cache_.end()) {
          entry = it->second;  // compiled meanwhile by another caller: share that one
          duplicate = true;
        } else {
          entry = new ThunkEntry{keys[k], reinterpret_cast<TVMFFISafeCallType>(result.address),
                                 result.unit, 0, this};
          cache_.emplace(keys[k], entry);
        }
        if (entry) entry->users += static_cast<int64_t>(users.size());
      }
      if (duplicate) compiler->Release(result.unit);
      if (!entry) {
        fallbacks_.fetch_add(1, std::memory_order_relaxed);
        LogJit("ffijit: `" + fns[users.front()]->plan->declaration +
               "` stays interpreted: " + result.failure);
        for (size_t i : users) why[i] = result.failure;
        continue;
      }
      for (size_t i : users) ready[i] = entry;
    }
  }
  for (size_t i = 0; i < fns.size(); ++i) {
    if (ready[i]) Install(fns[i], ready[i]);
  }
  return why;
}

void details::JitEngineImpl::ReleaseEntry(ThunkEntry* entry) {
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (--entry->users > 0) return;
    cache_.erase(entry->key);
  }
  // The last function using this thunk is gone: no call can be running in it any more.
  if (orc::UnitCompiler* compiler = CreatedCompiler()) compiler->Release(entry->unit);
  delete entry;
}

std::string details::JitEngineImpl::CompileHotAndInstall(BoundFunction* fn) {
  auto* state = static_cast<TierState*>(fn->tier_state);
  if (state->hot.load(std::memory_order_acquire) != nullptr) return "";
  // Reserve a slot first, so concurrent compiles cannot overshoot the cap.
  if (hot_live_.fetch_add(1, std::memory_order_acq_rel) >= options_.max_hot_thunks) {
    hot_live_.fetch_sub(1, std::memory_order_acq_rel);
    hot_refused_.fetch_add(1, std::memory_order_relaxed);
    return "the hot tier's cap of " + std::to_string(options_.max_hot_thunks) +
           " thunks (JitEngineOptions::max_hot_thunks) is reached";
  }
  auto give_back = [&](const std::string& why) {
    hot_live_.fetch_sub(1, std::memory_order_acq_rel);
    return why;
  };
  std::string why;
  orc::UnitCompiler* compiler = Compiler(&why);
  if (!compiler) return give_back(why);
  const CallPlan* plan = fn->plan;  // kept alive by the caller's reference
  void* target = fn->target;
  TVMFFIObject* native_module = fn->owner;  // kept alive by fn
  // A native of LLVM IR (a JIT module's) is compiled into the thunk's module, for LLVM to inline.
  struct InlineAttempt {
    std::string bitcode, function;
    orc::LinkedNative linked;
    bool linked_ok = false, inlined = false;
    std::string why;  // why the native is called out of line
  } attempt;
  const bool have_ir =
      orc::FindNativeIR(native_module, target, &attempt.bitcode, &attempt.function);
  auto compile = [&](bool inline_native) {
    // No cache key: the code holds this process's addresses (the native's, its module's).
    std::vector<orc::CompileRequest> request;
    request.push_back({"", [&, inline_native](llvm::Module& module, const std::string& symbol) {
                         orc::ThunkOptions options = orc::HotThunkOptions(target);
                         if (inline_native) {
                           attempt.linked_ok = orc::LinkNativeForInlining(
                               *plan, module, attempt.bitcode, attempt.function, &attempt.linked,
                               &attempt.why);
                           if (attempt.linked_ok) {
                             options.native = attempt.linked.adapter;
                           } else if (attempt.linked.module_changed) {
                             return attempt.why;  // compiled again without the native's IR
                           }
                         }
                         return orc::EmitThunk(*plan, module, symbol, options);
                       }});
    if (inline_native) {
      request.back().link_with = orc::ModuleLinkOrder(native_module);
      request.back().inspect = [&](const llvm::Module& module) {
        // Inlined: neither the native's copy nor the adapter is left to be called.
        attempt.inlined = attempt.linked_ok &&
                          module.getFunction(attempt.linked.native_name) == nullptr &&
                          module.getFunction(attempt.linked.adapter_name) == nullptr;
        if (attempt.linked_ok && !attempt.inlined) {
          attempt.why = "LLVM did not inline it (the thunk calls a copy of it)";
        }
      };
    }
    return std::move(compiler->Compile(std::move(request), orc::CodeGenLevel::kOptimized)[0]);
  };
  orc::CompiledSymbol compiled = compile(have_ir);
  if (have_ir && compiled.address == nullptr) {
    // Never a wrong call: whatever went wrong with the native's IR, the ordinary hot thunk.
    attempt.why = compiled.failure;
    attempt.inlined = false;
    compiled = compile(false);
  }
  if (have_ir && !attempt.inlined && compiled.address != nullptr) {
    LogJit("ffijit: `" + plan->declaration +
           "`: the hot-tier thunk calls its native out of line: " + attempt.why);
  }
  auto* hot = new HotThunk{reinterpret_cast<TVMFFISafeCallType>(compiled.address), compiled.unit,
                           this, native_module, have_ir && attempt.inlined};
  if (native_module != nullptr) TVMFFIObjectIncRef(native_module);
  HotThunk* expected = nullptr;
  if (!state->hot.compare_exchange_strong(expected, hot, std::memory_order_acq_rel)) {
    ReleaseHot(hot);  // another compile got there first
    return "";
  }
  hot_compiled_.fetch_add(1, std::memory_order_relaxed);
  if (hot->native_inlined) hot_inlined_.fetch_add(1, std::memory_order_relaxed);
  // The last tier: whichever entry is current, later calls run this one.
  SetSafeCall(fn, hot->thunk);
  installs_.fetch_add(1, std::memory_order_relaxed);
  return "";
}

void details::JitEngineImpl::ReleaseHot(HotThunk* hot) {
  // The function is gone (or never ran this code): no call can be inside it.
  if (orc::UnitCompiler* compiler = CreatedCompiler()) compiler->Release(hot->unit);
  hot_live_.fetch_sub(1, std::memory_order_acq_rel);
  // After the code that uses the module's addresses is gone; may free the module.
  if (hot->native_module != nullptr) TVMFFIObjectDecRef(hot->native_module);
  delete hot;
}

void details::JitEngineImpl::EnqueueHot(BoundFunction* fn) {
  auto* state = static_cast<TierState*>(fn->tier_state);
  if (state->hot.load(std::memory_order_acquire) != nullptr) return;
  if (state->hot_requested.exchange(true, std::memory_order_acq_rel)) return;
  TVMFFIObjectIncRef(fn);
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    if (stopping_) {
      TVMFFIObjectDecRef(fn);
      return;
    }
    hot_queue_.push_back(fn);
    if (!worker_.joinable()) worker_ = std::thread([this] { WorkerLoop(); });
  }
  queue_cv_.notify_one();
}

void details::JitEngineImpl::Enqueue(BoundFunction* fn) {
  auto* state = static_cast<TierState*>(fn->tier_state);
  if (state->queued.exchange(true, std::memory_order_acq_rel)) return;
  TVMFFIObjectIncRef(fn);
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    if (stopping_) {
      state->queued.store(false, std::memory_order_release);
      TVMFFIObjectDecRef(fn);
      return;
    }
    queue_.push_back(fn);
    if (!worker_.joinable()) worker_ = std::thread([this] { WorkerLoop(); });
  }
  queue_cv_.notify_one();
}

void details::JitEngineImpl::WorkerLoop() {
  std::unique_lock<std::mutex> lock(queue_mutex_);
  while (true) {
    queue_cv_.wait(lock, [this] { return stopping_ || !queue_.empty() || !hot_queue_.empty(); });
    if (stopping_) return;
    // Everything queued so far compiles as one batch (one module for the new signatures); the
    // hot tier's thunks after it, one module each (each is freed with its function).
    std::vector<BoundFunction*> batch(queue_.begin(), queue_.end());
    std::vector<BoundFunction*> hot(hot_queue_.begin(), hot_queue_.end());
    queue_.clear();
    hot_queue_.clear();
    busy_ = true;
    lock.unlock();
    if (!batch.empty()) CompileAndInstall(batch);
    for (BoundFunction* fn : batch) {
      static_cast<TierState*>(fn->tier_state)->queued.store(false, std::memory_order_release);
      TVMFFIObjectDecRef(fn);  // may destroy fn: no lock held
    }
    for (BoundFunction* fn : hot) {
      CompileHotAndInstall(fn);
      TVMFFIObjectDecRef(fn);
    }
    lock.lock();
    busy_ = false;
    idle_cv_.notify_all();
  }
}

void details::JitEngineImpl::WaitIdle() {
  std::unique_lock<std::mutex> lock(queue_mutex_);
  idle_cv_.wait(lock,
                [this] { return stopping_ || (queue_.empty() && hot_queue_.empty() && !busy_); });
}

JitStats details::JitEngineImpl::Stats() const {
  JitStats stats;
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    stats.live_thunks = static_cast<int64_t>(cache_.size());
  }
  if (orc::UnitCompiler* compiler = CreatedCompiler()) {
    orc::UnitCounters counters = compiler->Counters();
    stats.live_units = counters.live_units;
    stats.units_created = counters.units_created;
    stats.units_removed = counters.units_removed;
    stats.modules_compiled = counters.modules_compiled;
    stats.thunks_compiled = counters.functions_compiled;
    stats.disk_hits = counters.disk_hits;
    stats.object_bytes_live = counters.object_bytes_live;
    stats.cache_errors = counters.cache_errors;
  }
  stats.cache_hits = cache_hits_.load(std::memory_order_relaxed);
  stats.installs = installs_.load(std::memory_order_relaxed);
  stats.fallbacks = fallbacks_.load(std::memory_order_relaxed);
  stats.live_callbacks = live_callbacks.load(std::memory_order_relaxed);
  stats.hot_thunks_live = hot_live_.load(std::memory_order_relaxed);
  stats.hot_compiled = hot_compiled_.load(std::memory_order_relaxed);
  stats.hot_refused = hot_refused_.load(std::memory_order_relaxed);
  stats.hot_inlined = hot_inlined_.load(std::memory_order_relaxed);
  orc::AddStencilStats(&stats);
  return stats;
}

// ---- The public JitEngine ----

namespace {

// The message CompileNow reports (and throws) for a function left on the interpreter.
std::string StaysInterpreted(const std::string& why) {
  return "the function stays interpreted: " + why;
}

}  // namespace

JitEngine::JitEngine(JitEngineOptions options)
    : impl_(new details::JitEngineImpl(std::move(options))) {}
JitEngine::~JitEngine() = default;

void details::JitEngineImplDelete::operator()(JitEngineImpl* impl) const {
  delete impl;
}

void JitEngine::CompileNow(const Function& function) {
  CompileResults results = CompileNow(std::vector<Function>{function});
  if (results.installed != 1) throw RuntimeError(results.reasons[0]);
}

CompileResults JitEngine::CompileNow(const std::vector<Function>& functions) {
  CompileResults out;
  out.reasons.resize(functions.size());
  std::vector<BoundFunction*> fns;
  std::vector<size_t> positions;  // of fns[i] in `functions`
  for (size_t i = 0; i < functions.size(); ++i) {
    BoundFunction* fn = nullptr;
    std::string reason;
    TierState* state = orc::TierStateOf(functions[i].get(), &fn, &reason);
    if (!state) {
      out.reasons[i] = StaysInterpreted(reason);
      continue;
    }
    if (state->entry.load(std::memory_order_acquire) != nullptr) {
      out.installed++;  // already compiled
      continue;
    }
    fns.push_back(fn);
    positions.push_back(i);
  }
  std::vector<std::string> results = impl_->CompileAndInstall(fns);
  for (size_t i = 0; i < fns.size(); ++i) {
    // Installed now, or by a concurrent compile of the same function.
    auto* state = static_cast<TierState*>(fns[i]->tier_state);
    if (state->entry.load(std::memory_order_acquire) != nullptr) {
      out.installed++;
    } else {
      out.reasons[positions[i]] = StaysInterpreted(results[i]);
    }
  }
  return out;
}

void JitEngine::CompileHotNow(const Function& function) {
  BoundFunction* fn = nullptr;
  std::string reason;
  TierState* state = orc::TierStateOf(function.get(), &fn, &reason);
  if (!state) throw RuntimeError("the function has no hot-tier thunk: " + reason);
  reason = impl_->CompileHotAndInstall(fn);
  if (!reason.empty()) throw RuntimeError("the function has no hot-tier thunk: " + reason);
}

void JitEngine::WaitIdle() {
  impl_->WaitIdle();
}

JitStats JitEngine::Stats() const {
  return impl_->Stats();
}

bool JitAvailable() {
  return true;
}

FFIJITTier OrcTierOf(BoundFunction* fn) {
  // The last tier installed wins: each is installed after the ones below it.
  const auto* state = static_cast<const TierState*>(fn->tier_state);
  if (const HotThunk* hot = state->hot.load(std::memory_order_acquire)) {
    return hot->native_inlined ? kFFIJITTierHotInlined : kFFIJITTierHot;
  }
  if (state->entry.load(std::memory_order_acquire) != nullptr) return kFFIJITTierLlvm;
  return state->early.entry != nullptr ? kFFIJITTierStencil : kFFIJITTierInterpreted;
}

}  // namespace ffijit
