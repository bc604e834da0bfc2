// Structured arguments and keyword calls. An sdict, slist or stuple argument arrives as one packed
// Map or Array and is flattened, slot by slot, into consecutive native parameters; `named`
// arguments can be passed by keyword through CallWithKeywords. Several results come back as an
// Array (the native writes them through trailing out-pointers).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "ffijit/ffijit.h"
#include "ffijit/jit/register.h"

namespace {

// Two points, each a dict {"x": f64, "y": f64}: four native doubles.
double Distance2(double x0, double y0, double x1, double y1) {
  return (x1 - x0) * (x1 - x0) + (y1 - y0) * (y1 - y0);
}
constexpr const char* kDistance2 =
    R"({"a":[["sdict",["x","f64"],["y","f64"]],["sdict",["x","f64"],["y","f64"]]],"r":["f64"]})";

// A point [x, y] (an slist) turned by quarter turns; two results through out-pointers.
void Rotate(double x, double y, int32_t quarter_turns, double* out_x, double* out_y) {
  for (int32_t i = 0; i < ((quarter_turns % 4) + 4) % 4; ++i) {
    double t = x;
    x = -y;
    y = t;
  }
  *out_x = x;
  *out_y = y;
}
constexpr const char* kRotate =
    R"({"a":[["named","point",["slist","f64","f64"]],["named","quarter_turns","i32"]],)"
    R"("r":["f64","f64"]})";

// A record (label, <ignored>, count): null marks a tuple slot the native never sees.
int64_t LabelWeight(const char* label, int64_t count) {
  return static_cast<int64_t>(std::strlen(label)) * count;
}
constexpr const char* kLabelWeight = R"({"a":[["stuple","str",null,"i64"]],"r":["i64"]})";

int failures = 0;

void Expect(bool ok, const char* what) {
  std::printf("  %s %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) ++failures;
}

template <typename F>
void ExpectError(const char* kind, F call) {
  try {
    call();
    Expect(false, "an error was expected");
  } catch (const ffijit::Error& e) {
    std::printf("  -> %s: %s\n", e.kind().c_str(), e.message().c_str());
    if (e.kind() != kind) ++failures;
  }
}

ffijit::Function Make(const char* name, void* fn, const char* metadata) {
  return ffijit::MakeFunction(name, fn, metadata, ffijit::MetadataFormat::kJson);
}

}  // namespace

int main() {
  using ffijit::Any;
  using ffijit::Array;
  using ffijit::Map;

  ffijit::Function distance2 = Make("distance2", reinterpret_cast<void*>(&Distance2), kDistance2);
  ffijit::Function rotate = Make("rotate", reinterpret_cast<void*>(&Rotate), kRotate);
  ffijit::Function weight =
      Make("label_weight", reinterpret_cast<void*>(&LabelWeight), kLabelWeight);

  // The call plan shows where each native parameter comes from: #0["x"] is key "x" of argument 0.
  std::printf("%s\n", ffijit::DescribeFunction(distance2).c_str());

  std::printf("structures:\n");
  Map a{{"x", 1.0}, {"y", 2.0}};
  Map b{{"y", 6.0}, {"x", 4.0}};  // keys are looked up by name: their order does not matter
  Expect(distance2(a, b).cast<double>() == 25.0, "distance2({x:1, y:2}, {y:6, x:4}) == 25");
  Expect(weight(Array{"abc", "anything at all", 2}).cast<int64_t>() == 6,
         "label_weight((\"abc\", <ignored>, 2)) == 6");

  std::printf("keywords and several results:\n");
  Any point = Array{1.0, 0.0}, turns = 1;
  Array turned = ffijit::CallWithKeywords(rotate, {}, {{"quarter_turns", turns}, {"point", point}})
                     .cast<Array>();
  Expect(turned.size() == 2 && turned[0].cast<double>() == 0.0 && turned[1].cast<double>() == 1.0,
         "rotate(quarter_turns=1, point=[1, 0]) == [0, 1]");
  Array back =
      ffijit::CallWithKeywords(rotate, {point}, {{"quarter_turns", Any(-1)}}).cast<Array>();
  Expect(back[0].cast<double>() == 0.0 && back[1].cast<double>() == -1.0,
         "rotate([1, 0], quarter_turns=-1) == [0, -1] (positional, then keyword)");
  Expect(rotate(point, 2).cast<Array>()[0].cast<double>() == -1.0,
         "rotate([1, 0], 2) == [-1, 0] (a plain positional call)");

  std::printf("errors name the argument and the path inside it:\n");
  ExpectError("KeyError", [&] { distance2(a, Map{{"x", 4.0}}); });
  ExpectError("TypeError", [&] { distance2(a, Map{{"x", 4.0}, {"y", "six"}}); });
  ExpectError("ValueError", [&] { rotate(Array{1.0, 2.0, 3.0}, 1); });
  ExpectError("KeyError", [&] { ffijit::CallWithKeywords(rotate, {point}, {{"turns", turns}}); });
  ExpectError("TypeError", [&] {
    ffijit::CallWithKeywords(rotate, {point, turns}, {{"point", point}});
  });

  std::printf(failures == 0 ? "done\n" : "FAILED\n");
  return failures == 0 ? 0 : 1;
}
