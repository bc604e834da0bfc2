// The copy-and-patch thunk tier: a function's packed entry point (TVMFFISafeCallType) made in
// microseconds by copying the stencils clang compiled at build time (stencils.c) and patching
// their holes -- the first tier, below the LLVM thunks. LLVM-free at run time.
//
// A stencil thunk obeys the CallPlan exactly as the LLVM thunks do: it converts the common forms
// of each argument inline (the same checks), and sends every other form and every error to the
// interpreter (the fallback), so errors have one source. It covers plans whose parameters sit in
// registers or the first stack slots (structure leaves included) and whose results are any kind,
// up to eight (the guide's section 7.8 lists it); StencilUnsupportedReason says why any other plan
// is not.
#ifndef FFIJIT_JIT_STENCILS_THUNKS_STENCIL_TIER_H_
#define FFIJIT_JIT_STENCILS_THUNKS_STENCIL_TIER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/plugin_export.h"
#include "ffijit/c_api.h"
#include "ffijit/jit/jit.h"
#include "plan/call_plan.h"
#include "stencils/link/stencil_types.h"

namespace ffijit {
struct BoundFunction;
}

namespace ffijit::stencils {

// Whether this build has stencils for its architecture (x86-64 and AArch64 Linux with the JIT).
bool StencilsAvailable();

// "" when MakeStencilThunk can make a thunk for `plan`, else why not.
std::string StencilUnsupportedReason(const CallPlan& plan);

// One function's stencil thunk: its code (the native's address is patched in).
struct StencilThunk;

struct Piece;
// Appends fn's thunk to *out: its entry (unless `with_entry` is false: a caller that calls the
// chain itself sets up what the entry would), one stencil per parameter and out-pointer and the
// call (each falling through to the next), then the fallback stencil, whose index it returns.
// LinkTargets::kNone and *why when the plan is unsupported.
size_t AppendThunkPieces(const BoundFunction* fn, bool count_calls, bool with_entry,
                         std::vector<Piece>* out, std::string* why);
// The value of a thunk stencil's hole other than the pieces' own (stencil_link.h).
bool ThunkHoleValue(const BoundFunction* fn, bool count_calls, Hole hole, uint64_t* value);

// Makes fn's thunk (fn's plan and target; `count_calls`: it counts calls down at
// BoundFunction::calls_until_hot and falls back on the call that reaches zero, which reports it
// to the hot-count hook). nullptr and *why when the plan is unsupported or memory fails.
StencilThunk* MakeStencilThunk(const BoundFunction* fn, bool count_calls, std::string* why);
TVMFFISafeCallType StencilThunkEntry(const StencilThunk* thunk);
// Size of the code (bytes copied and patched).
size_t StencilThunkSize(const StencilThunk* thunk);
// Frees the code; no call may be running in it (the function is gone).
void ReleaseStencilThunk(StencilThunk* thunk);

// The stencil tier's step of the attach hook, run first by both attach hooks (libffijit_jit's
// before the LLVM plugin loads, jit/orc's after): unless `options` say kNever or no stencils, makes
// fn's thunk if its plan is covered and installs it, counting HotAfterCalls(options). True
// when installed: fn's tier state is then a PendingTier holding the thunk (the plugin adopts it
// when the count asks for the hot tier), and fn takes no cold tier.
FFIJIT_JIT_PLUGIN_API bool AttachStencilTier(BoundFunction* fn, const JitOptions& options);

// Called by the fallback of a counting thunk once its count has run out (the tiering installs it:
// how a function on its stencil thunk asks for the hot tier).
using HotCountHook = void (*)(void* handle);
FFIJIT_JIT_PLUGIN_API void SetStencilHotCountHook(HotCountHook hook);

struct StencilCounters {
  int64_t made = 0;       // thunks made
  int64_t live = 0;       // thunks not yet released
  int64_t fallbacks = 0;  // calls that left a stencil thunk for the interpreter
};
FFIJIT_JIT_PLUGIN_API StencilCounters Counters();

}  // namespace ffijit::stencils

#endif  // FFIJIT_JIT_STENCILS_THUNKS_STENCIL_TIER_H_
