// Registering C++ functions whose signatures ffijit deduces from their types
// (ffijit::Register("name", &fn)), then calling them with plain C++ arguments.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "ffijit/ffijit.h"
#include "ffijit/jit/register.h"

namespace {

int64_t Add(int64_t a, int64_t b) {
  return a + b;
}
double Hypot(double x, double y) {
  return std::sqrt(x * x + y * y);
}
bool IsEven(int32_t n) {
  return n % 2 == 0;
}
uint8_t Brighten(uint8_t level, float factor) {
  float v = static_cast<float>(level) * factor;
  return static_cast<uint8_t>(v > 255.0f ? 255.0f : v);
}
const char* Greeting(bool formal) {  // a string result comes back as an owned String copy
  return formal ? "Good evening" : "hi";
}
void Nothing() {}  // no result: the packed call returns None

int failures = 0;

void Expect(bool ok, const std::string& what) {
  std::printf("  %s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

// Runs `call`, expecting an ffijit::Error of `kind`; prints it.
template <typename F>
void ExpectError(const char* kind, F call) {
  try {
    call();
    Expect(false, std::string("expected a ") + kind);
  } catch (const ffijit::Error& e) {
    std::printf("  -> %s: %s\n", e.kind().c_str(), e.message().c_str());
    if (e.kind() != kind) ++failures;
  }
}

}  // namespace

int main() {
  using ffijit::Function;

  // Register: the name is both the global name and the name errors mention. The signature comes
  // from the C++ type: int64_t -> i64, double -> f64, bool -> i1, uint8_t -> u8, ...
  Function add = ffijit::Register("cpp.add", &Add);
  Function hypot = ffijit::Register("cpp.hypot", &Hypot);
  Function is_even = ffijit::Register("cpp.is_even", &IsEven);
  Function greeting = ffijit::Register("cpp.greeting", &Greeting);
  Function nothing = ffijit::Register("cpp.nothing", &Nothing);
  // Parameter names are not part of a C++ type; give them to allow keywords and clearer errors.
  ffijit::RegisterOptions named;
  named.arg_names = {"level", "factor"};
  Function brighten = ffijit::Register("cpp.brighten", &Brighten, named);

  std::printf("deduced signatures:\n");
  for (const Function* f : {&add, &hypot, &is_even, &greeting, &nothing, &brighten}) {
    std::string plan = ffijit::DescribeFunction(*f);
    std::printf("  %s\n", plan.substr(0, plan.find('\n')).c_str());
  }

  // Calling: C++ arguments are boxed into TVMFFIAny, the result comes back as ffijit::Any.
  std::printf("calls:\n");
  Expect(add(40, 2).cast<int64_t>() == 42, "cpp.add(40, 2) == 42");
  Expect(hypot(3.0, 4).cast<double>() == 5.0, "cpp.hypot(3.0, 4) == 5.0 (an int converts to f64)");
  Expect(is_even(10).cast<bool>() && !is_even(7).cast<bool>(), "cpp.is_even(10), !cpp.is_even(7)");
  Expect(greeting(true).cast<std::string>() == "Good evening", "cpp.greeting(true)");
  Expect(nothing().is_none(), "cpp.nothing() is None");
  Expect(brighten(100, 1.5).cast<int64_t>() == 150, "cpp.brighten(100, 1.5) == 150");
  ffijit::Any level = 200, factor = 9.0;  // keyword values are borrowed views of these
  Expect(ffijit::CallWithKeywords(brighten, {}, {{"factor", factor}, {"level", level}})
                 .cast<int64_t>() == 255,
         "cpp.brighten(factor=9.0, level=200) == 255");

  // The registry hands out the same function to anyone who asks by name.
  Function found = ffijit::GetGlobalFunctionOrThrow("cpp.add");
  Expect(found.get() == add.get() && found(1, 2).cast<int64_t>() == 3, "lookup of cpp.add");

  // Wrong calls are errors naming the function, its signature and the argument.
  std::printf("errors:\n");
  ExpectError("ValueError", [&] { brighten(300, 1.0); });  // 300 does not fit u8
  ExpectError("TypeError", [&] { is_even(2.0); });         // no silent float -> int
  ExpectError("TypeError", [&] { add(1); });               // wrong arity
  ExpectError("RuntimeError", [&] { ffijit::Register("cpp.add", &Add); });  // name taken

  for (const char* name :
       {"cpp.add", "cpp.hypot", "cpp.is_even", "cpp.greeting", "cpp.nothing", "cpp.brighten"}) {
    ffijit::RemoveGlobalFunction(name);
  }
  std::printf(failures == 0 ? "done\n" : "FAILED\n");
  return failures == 0 ? 0 : 1;
}
