// C++17 consumer of an installed ffijit's jit library: registers a native function, calls it
// through the interpreter and (when the installed ffijit has LLVM) through its compiled thunk, and
// catches an ffijit::Error thrown inside libffijit_jit.so; a TypedFunction calls it directly.
#include <cstdint>
#include <cstdio>
#include <string>

#include "ffijit/ffijit.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "ffijit/jit/typed_function.h"
#include "ffijit/registry.h"

namespace {

int64_t Scale(int64_t value, int32_t factor) {
  return value * factor;
}

int Fail(const char* what) {
  std::fprintf(stderr, "consumer (jit): %s\n", what);
  return 1;
}

}  // namespace

int main() {
  ffijit::ScopedJitOptions never({ffijit::JitPolicy::kNever, 0});
  ffijit::Function scale = ffijit::Register("consumer.scale", &Scale);
  ffijit::Function found = ffijit::GetGlobalFunctionOrThrow("consumer.scale");
  if (found(int64_t{21}, 2).cast<int64_t>() != 42) return Fail("interpreted call");
  if (ffijit::IsJitCompiled(scale)) return Fail("compiled under kNever");

  std::string tier = "interpreter";
  try {
    ffijit::JitEngine::Default().CompileNow(scale);
    if (!ffijit::JitAvailable()) return Fail("compiled without a JIT");
    if (!ffijit::IsJitCompiled(scale)) return Fail("CompileNow did not install the thunk");
    tier = "JIT thunk";
  } catch (const ffijit::Error& e) {  // thrown in libffijit_jit.so, caught here
    if (ffijit::JitAvailable()) return Fail(e.what());
    if (e.kind() != "RuntimeError") return Fail("wrong error kind without LLVM");
  }
  if (found(int64_t{-7}, 6).cast<int64_t>() != -42) return Fail("call after CompileNow");

  try {
    found("seven", 6);
    return Fail("a string was accepted for an int64_t");
  } catch (const ffijit::Error& e) {
    if (e.kind() != "TypeError") return Fail(e.what());
  }
  ffijit::TypedFunction<int64_t(int64_t, int32_t)> typed(found);
  if (!typed.is_direct()) return Fail("TypedFunction of the exact types is not direct");
  if (typed(5, -3) != -15) return Fail("direct typed call");
  ffijit::TypedFunction<int64_t(int64_t, int64_t)> wider(found);
  if (wider.is_direct() || wider(5, 3) != 15) return Fail("packed typed call");
  ffijit::RemoveGlobalFunction("consumer.scale");
  std::printf("consumer (jit): scale(-7, 6) = -42 through the %s; the JIT is %savailable\n",
              tier.c_str(), ffijit::JitAvailable() ? "" : "not ");
  return 0;
}
