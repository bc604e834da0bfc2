// The stencil tier alone, without the library, LLVM or a sysroot: jit/stencils/ compiled with this
// file, which stands in for the interpreter (a fallback that answers a sentinel) and builds plans
// by hand. Made to cross-compile for AArch64 and run under qemu-user (see CMakeLists.txt); also a
// CTest on the host. Checks conversions inline, fallbacks for wrong forms and ranges, stack
// arguments, float registers and results, on whichever architecture it runs.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "interpreter/bound_function.h"
#include "platform/abi.h"
#include "stencils/thunks/stencil_tier.h"

namespace ffijit {
bool CallPlan::has_keywords() const {
  return false;
}
}  // namespace ffijit

// Stand-ins: every fallback answers 77, so a test tells a converted call from a fallback.
int ffijit::InterpreterSafeCall(void*, const TVMFFIAny*, int32_t, TVMFFIAny*) {
  return 77;
}
extern "C" {
int FFIJITBoxResult(const ffijit::BoundFunction*, int32_t, const uint64_t*, TVMFFIAny*) {
  return 78;
}
int FFIJITBoxResults(const ffijit::BoundFunction*, const uint64_t (*)[2], TVMFFIAny*,
                     const TVMFFIAny*) {
  return 79;
}
int FFIJITPropagateStatus(const ffijit::BoundFunction*, int32_t status) {
  return status;
}
const TVMFFIAny* FFIJITResolvePath(const ffijit::BoundFunction*, int32_t, const TVMFFIAny*) {
  return nullptr;
}
// The runtime's subtype query (the value-validity check of `any` parameters): exact types only.
int FFIJITObjectIsInstance(int32_t object_type_index, int32_t target_type_index) {
  return object_type_index == target_type_index;
}
}

namespace {

using ffijit::AbiClass;
using ffijit::CallPlan;
using ffijit::Conversion;
using ffijit::ReturnKind;

int failures = 0;
#define CHECK(cond)                                         \
  do {                                                      \
    if (!(cond)) {                                          \
      std::printf("FAILED line %d: %s\n", __LINE__, #cond); \
      ++failures;                                           \
    }                                                       \
  } while (0)

// A plan of scalar parameters placed as the host platform would (its integer and vector argument
// registers in order, the rest on the stack in order) returning `ret` (kI64, kF64 or kF32).
CallPlan Plan(const std::vector<Conversion>& params, Conversion ret) {
  const int num_gpr_regs = ffijit::platform::kHost.num_gpr;
  CallPlan plan;
  int gpr = 0, sse = 0, stack = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    ffijit::PackedArg arg;
    arg.first_param = static_cast<int32_t>(i);
    arg.num_params = 1;
    plan.args.push_back(arg);
    ffijit::NativeParam p;
    p.position = static_cast<int32_t>(i);
    p.conversion = params[i];
    const bool is_float = params[i] == Conversion::kF64 || params[i] == Conversion::kF32;
    if (is_float && sse < 8) {
      p.abi = {AbiClass::kSse, sse++};
    } else if (!is_float && gpr < num_gpr_regs) {
      p.abi = {AbiClass::kGpr, gpr++};
    } else {
      p.abi = {AbiClass::kStack, stack++};
    }
    plan.params.push_back(p);
  }
  plan.num_stack = stack;
  ffijit::ResultSlot r;
  r.conversion = ret;
  r.by_return = true;
  plan.results.push_back(r);
  plan.return_kind = ret == Conversion::kI64 ? ReturnKind::kGpr : ReturnKind::kSse;
  return plan;
}

TVMFFIAny Int(int64_t v) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIInt;
  a.v_int64 = v;
  return a;
}
TVMFFIAny Float(double v) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIFloat;
  a.v_float64 = v;
  return a;
}

int64_t Sum3(int64_t a, int32_t b, int8_t c) {
  return a * 100 + b * 10 + c;
}
double Many(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g, int64_t h,
            int64_t i, int32_t j, double k, float l, double m, double n, double o, double p,
            double q, double r, double s, float t) {
  return static_cast<double>(a + b + c + d + e + f + g + h) * 1000 + static_cast<double>(i) * 100 +
         j * 10 + k + l + m + n + o + p + q + r + s * 2 + t * 4;
}
float Half(float x, uint16_t n) {
  return x / n;
}

struct Thunk {
  ffijit::BoundFunction fn{};
  CallPlan plan;
  ffijit::stencils::StencilThunk* thunk = nullptr;
  Thunk(CallPlan p, void* target) : plan(std::move(p)) {
    fn.target = target;
    fn.plan = &plan;
    std::string why;
    thunk = ffijit::stencils::MakeStencilThunk(&fn, false, &why);
    if (thunk == nullptr) std::printf("no thunk: %s\n", why.c_str());
    CHECK(thunk != nullptr);
  }
  ~Thunk() { ffijit::stencils::ReleaseStencilThunk(thunk); }
  int Call(std::vector<TVMFFIAny> args, TVMFFIAny* result) {
    *result = TVMFFIAny{};
    if (thunk == nullptr) return -2;
    return ffijit::stencils::StencilThunkEntry(thunk)(&fn, args.data(),
                                                      static_cast<int32_t>(args.size()), result);
  }
};

}  // namespace

int main() {
  TVMFFIAny r;
  {
    Thunk t(Plan({Conversion::kI64, Conversion::kI32, Conversion::kI8}, Conversion::kI64),
            reinterpret_cast<void*>(&Sum3));
    CHECK(t.Call({Int(1), Int(-2), Int(-3)}, &r) == 0 && r.type_index == kTVMFFIInt &&
          r.v_int64 == 100 - 20 - 3);
    CHECK(t.Call({Int(1), Int(-2), Int(128)}, &r) == 77);              // i8 out of range
    CHECK(t.Call({Int(1), Int(int64_t{1} << 31), Int(1)}, &r) == 77);  // i32 out of range
    CHECK(t.Call({Int(1), Float(2), Int(1)}, &r) == 77);               // wrong form
    CHECK(t.Call({Int(1), Int(2)}, &r) == 77);                         // arity
  }
  {
    std::vector<Conversion> params(9, Conversion::kI64);
    params.push_back(Conversion::kI32);
    for (int i = 0; i < 8; ++i) params.push_back(Conversion::kF64);
    params[11] = Conversion::kF32;
    params.push_back(Conversion::kF64);
    params.push_back(Conversion::kF32);
    Thunk t(Plan(params, Conversion::kF64), reinterpret_cast<void*>(&Many));
    CHECK(t.plan.num_stack > 0);
    std::vector<TVMFFIAny> args;
    for (int i = 0; i < 10; ++i) args.push_back(Int(i + 1));
    for (int i = 0; i < 10; ++i) args.push_back(i % 2 ? Int(i) : Float(i + 0.5));
    CHECK(t.Call(args, &r) == 0);
    const double want = Many(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0.5, 1, 2.5, 3, 4.5, 5, 6.5, 7, 8.5, 9);
    CHECK(r.type_index == kTVMFFIFloat && r.v_float64 == want);
    args[19] = Int(INT64_MAX);  // converts (rounded), inline
    CHECK(t.Call(args, &r) == 0);
    args[9] = Int(int64_t{1} << 40);  // i32 on the stack out of range
    CHECK(t.Call(args, &r) == 77);
  }
  {
    Thunk t(Plan({Conversion::kF32, Conversion::kU16}, Conversion::kF32),
            reinterpret_cast<void*>(&Half));
    CHECK(t.Call({Float(3.0), Int(2)}, &r) == 0 && r.type_index == kTVMFFIFloat &&
          r.v_float64 == 1.5);
    CHECK(t.Call({Float(3.0), Int(-1)}, &r) == 77);
    CHECK(t.Call({Float(3.0), Int(65536)}, &r) == 77);
  }
  std::printf("%s: %d failures\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
