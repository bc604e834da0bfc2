// The platform-ABI layer: per platform, register counts, the interpreter's call frame, where each
// native parameter and result goes, and the LLVM IR types the code generators pass it as.
//
// In the spirit of LuaJIT's lj_ccall: where a native's arguments and results go is decided here
// and nowhere else. Lowering (AssignAbi), the interpreter and its assembly stub, the libffi path,
// the thunk and the callback code generators all read this header. (The stencils' own chain
// between stencils is a preserve_none convention of theirs, stated in
// stencils/generate/stencil_chain.h.) Each platform's rules live in one file
// (abi_x86_64.cc, abi_aarch64.cc); every platform's rules compile on every host, so the placement
// of either platform is testable anywhere, while the host's is what calls use.
#ifndef FFIJIT_JIT_PLATFORM_ABI_H_
#define FFIJIT_JIT_PLATFORM_ABI_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "base/plugin_export.h"
#include "plan/call_plan.h"

namespace ffijit::platform {

enum class Arch : uint8_t {
  kX86_64SysV,  // x86-64 System V (Linux, the BSDs): rdi..r9, xmm0..xmm7
  kAarch64,     // Linux AArch64 (AAPCS64): x0..x7, v0..v7
  kGeneric,     // any other platform: no register knowledge, calls go through libffi
};

// A platform's register file and the interpreter's call frame for it. The frame the stub reads is
// [0, num_gpr) integer argument registers, [num_gpr, num_gpr + num_fpr) vector argument registers
// (each a 64-bit word whose low bits hold the value), then the 8-byte stack argument slots.
struct PlatformAbi {
  Arch arch;
  const char* name;
  int32_t num_gpr;
  int32_t num_fpr;
  constexpr int32_t fpr_base() const { return num_gpr; }
  constexpr int32_t stack_base() const { return num_gpr + num_fpr; }
};

inline constexpr PlatformAbi kX86_64SysV{Arch::kX86_64SysV, "x86-64 System V", 6, 8};
inline constexpr PlatformAbi kAarch64{Arch::kAarch64, "AArch64 AAPCS64", 8, 8};
// Every value gets its own frame word(s) as if on the stack; libffi does the real placement.
inline constexpr PlatformAbi kGeneric{Arch::kGeneric, "generic (libffi)", 0, 0};

// The platform this library was compiled for, and whether it has an interpreter register stub
// (call_stub_*.S). Without one, every interpreted call goes through libffi and the JIT is refused
// with kNoPlatformReason.
#if defined(__x86_64__) && defined(__ELF__) && !defined(_WIN32)
#define FFIJIT_HAVE_CALL_STUB 1
inline constexpr const PlatformAbi& kHost = kX86_64SysV;
#elif defined(__aarch64__) && defined(__linux__)
#define FFIJIT_HAVE_CALL_STUB 1
inline constexpr const PlatformAbi& kHost = kAarch64;
#else
#define FFIJIT_HAVE_CALL_STUB 0
inline constexpr const PlatformAbi& kHost = kGeneric;
#endif
inline constexpr bool kHaveCallStub = FFIJIT_HAVE_CALL_STUB != 0;
inline constexpr const char* kNoPlatformReason =
    "ffijit has no platform ABI for this target (only x86-64 System V and Linux AArch64): calls "
    "run interpreted through libffi";

// The interpreter's frame: where the host stub reads the register and stack words.
inline constexpr int kFrameStackBase = kHost.stack_base();
// The stub's result words: [0], [1] the integer result registers (rax:rdx / x0:x1), [2], [3] the
// vector result registers (xmm0, xmm1 / d0, d1).
inline constexpr int kRetGpr = 0;
inline constexpr int kRetFpr = 2;
inline constexpr int kRetWords = 4;

// The frame word index of a location on `abi` (the first word of a pair).
FFIJIT_JIT_PLUGIN_API int64_t FrameIndex(const PlatformAbi& abi, const AbiLocation& loc);
// Whether a location spans two frame words (a 16-byte composite).
FFIJIT_JIT_PLUGIN_API bool IsTwoWords(AbiClass cls);

// Places every parameter and out-pointer of `plan` by `abi`'s rules, fills its register and stack
// counts and return_kind.
void AssignAbi(CallPlan& plan, const PlatformAbi& abi);
// Functions compilers call from ordinary objects for the host that no shared library exports
// (on AArch64, libgcc's outline atomics), by name: the JIT defines them for the code it loads
// (loader_helpers.cc). Empty where there are none (x86-64).
FFIJIT_JIT_PLUGIN_API std::vector<std::pair<const char*, void*>> HostLoaderHelpers();
// Per-platform rules (abi_x86_64.cc, abi_aarch64.cc, abi.cc for the generic one).
void AssignAbiX86_64SysV(CallPlan& plan);
void AssignAbiAarch64(CallPlan& plan);
void AssignAbiGeneric(CallPlan& plan);
// How the plan's native returns, the same on every platform (a float in the first vector register,
// a 16-byte pair in two integer registers, anything else in one, or a status, or nothing).
ReturnKind ReturnKindOf(const CallPlan& plan);

// The IR types generated code passes and returns native values as. A platform-neutral vocabulary
// the code generators map one-to-one onto llvm::Type (jit/orc/abi_ir.cc), so which type a value
// travels as is decided here, per platform, and nowhere else.
enum class IrType : uint8_t {
  kVoid,
  kI8,
  kI16,
  kI32,
  kI64,
  kF32,
  kF64,        // also f16/bf16 parameters: their bits in the low bits of a vector register
  kPtr,        // out-pointers
  kI64Pair,    // { i64, i64 } (a 16-byte result in two integer registers)
  kI64Array2,  // [2 x i64] (AArch64: a 16-byte composite, all-or-nothing in two x registers)
  kByvalPair,  // ptr byval({ i64, i64 }) align 8 (x86-64: a 16-byte struct copied to the stack)
};

// The IR parameters one native parameter is passed as on `abi` (one, or two for an x86-64
// register pair), appended to `out`.
FFIJIT_JIT_PLUGIN_API void ParamIrTypes(const PlatformAbi& abi, const NativeParam& param,
                                        std::vector<IrType>* out);
// The IR type a float parameter of `conversion` is passed as, on every platform with IR types.
IrType FloatParamIrType(Conversion conversion);
// The IR type of the value returned (plan.return_kind and the first result's conversion).
FFIJIT_JIT_PLUGIN_API IrType ReturnIrType(const PlatformAbi& abi, const CallPlan& plan);
// The whole native function type: every parameter, then the out-pointers; the return type last.
FFIJIT_JIT_PLUGIN_API std::vector<IrType> NativeIrSignature(const PlatformAbi& abi,
                                                            const CallPlan& plan);

// The interpreter's register stubs for the host (call_stub_<arch>.S). `regs` is the frame
// ([0, kFrameStackBase) register words), `stack` its num_stack slots, `ret` kRetWords words.
#if FFIJIT_HAVE_CALL_STUB
extern "C" void ffijit_call_stub(const void* target, const uint64_t* regs, const uint64_t* stack,
                                 uint64_t num_stack, uint64_t* ret);
// The same without stack arguments: the common case, with no copy loop.
extern "C" void ffijit_call_stub_regs(const void* target, const uint64_t* regs, uint64_t* ret);
#endif

}  // namespace ffijit::platform

#endif  // FFIJIT_JIT_PLATFORM_ABI_H_
