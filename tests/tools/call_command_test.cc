// `ffijit call` tests: libm and a test library on every tier, and each error path's exit code.
#include <gtest/gtest.h>

#include <string>

#include "tool_run.h"

namespace ffijit::testing {
namespace {

const char kCos[] = R"({"a":["f64"],"r":["f64"]})";
const char kSum[] = R"({"a":[["ndarray","f32",2,null,null]],"r":["f64"]})";
const char kAnySum[] = R"({"a":[["ndarray",null,null]],"r":["f64"]})";
const char kAffine[] =
    R"({"a":[["named","x","i64"],["named","scale","i64"],["named","offset","i64"]],"r":["i64"]})";
const char kWeigh[] =
    R"({"a":[["sdict",["x","f64"],["y","f64"]],["stuple","i64","str"]],"r":["f64"]})";

// `ffijit call <lib> <symbol> --sig <sig> <rest>`; `rest` is passed to the shell as is.
ToolResult Call(const std::string& lib, const std::string& symbol, const std::string& sig,
                const std::string& rest = "") {
  return RunTool("call " + Quote(lib) + " " + Quote(symbol) + " --sig " + Quote(sig) + " " + rest);
}
ToolResult CallTest(const std::string& symbol, const std::string& sig,
                    const std::string& rest = "") {
  return Call(FFIJIT_TOOL_TESTLIB, symbol, sig, rest);
}

// stderr without the note a build without the JIT adds for the default tier, so that the
// expectations below hold in both builds.
std::string Errors(const ToolResult& run) {
  if (!FFIJIT_TOOL_HAS_JIT && run.err.rfind("ffijit call: note: the JIT cannot compile", 0) == 0) {
    return run.err.substr(run.err.find('\n') + 1);
  }
  return run.err;
}

// Exit 0, `expected` (plus a newline) on stdout, nothing on stderr.
void ExpectPrints(const ToolResult& run, const std::string& expected) {
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, expected + "\n");
  EXPECT_EQ(Errors(run), "");
}

// Exit `code`, nothing on stdout, and exactly `message` on stderr.
void ExpectFails(const ToolResult& run, int code, const std::string& message) {
  EXPECT_EQ(run.status, code) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(Errors(run), message + "\n");
}

// Exit `code`, nothing on stdout, stderr starting with `prefix`.
void ExpectFailsWith(const ToolResult& run, int code, const std::string& prefix) {
  EXPECT_EQ(run.status, code) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(Errors(run).rfind(prefix, 0), 0u) << run.err;
}

TEST(FfijitCall, LibmCosOnEveryTier) {
#if FFIJIT_TOOL_HAS_JIT
  ExpectPrints(Call("libm.so.6", "cos", kCos, "0.5"), "0.8775825618903728");
  ExpectPrints(Call("libm.so.6", "cos", kCos, "--tier jit 0.5"), "0.8775825618903728");
#else
  const ToolResult run = Call("libm.so.6", "cos", kCos, "0.5");
  EXPECT_EQ(run.out, "0.8775825618903728\n");
  EXPECT_NE(run.err.find("note: the JIT cannot compile `cos(f64) -> f64`, using the interpreter"),
            std::string::npos);
#endif
  ExpectPrints(Call("libm.so.6", "cos", kCos, "--tier interp 0.5"), "0.8775825618903728");
  ExpectPrints(Call("libm.so.6", "cos", kCos, "--tier=libffi 0.5"), "0.8775825618903728");
  // Integers convert to f64; floats print with round-trip precision.
  ExpectPrints(Call("libm.so.6", "cos", kCos, "0"), "1.0");
  ExpectPrints(Call("libm.so.6", "cos", kCos, "NaN"), "NaN");
}

TEST(FfijitCall, EveryMetadataFormatAndFile) {
  ExpectPrints(RunTool("call libm.so.6 cos --format raw --sig 'I6!S3!t2R6!S3!t2' 0.5"),
               "0.8775825618903728");
  const std::string sip = R"({"f":"I16!S3!t7S3!t7S3!t7R6!S3!t7","fv":"1",)"
                          R"("sip":"I32!D28!K2!x_0K6!scale_1K7!offset_2R3!_0"})";
  ExpectPrints(CallTest("affine", sip, "--format sip 3 offset=1 scale=10"), "31");
  TempFile file(std::string(kCos) + "\n");
  ExpectPrints(Call("libm.so.6", "cos", "@" + file.path(), "0.5"), "0.8775825618903728");
}

TEST(FfijitCall, TensorArguments) {
  ExpectPrints(
      CallTest("tensor_sum", kSum, Quote(R"({"ndarray": [[1, 2], [3, 4.5]], "dtype": "f32"})")),
      "10.5");
  // Without "dtype" the signature's element type applies...
  ExpectPrints(CallTest("tensor_sum", kSum, Quote(R"({"ndarray": [[1, 2], [3, 4.5]]})")), "10.5");
  // ... or, for an unconstrained ndarray, one inferred from the data (here i64).
  ExpectPrints(CallTest("tensor_sum", kAnySum, Quote(R"({"ndarray": [[1, 2], [3, 4]]})")), "10.0");
  ExpectPrints(
      CallTest("tensor_sum", kAnySum, Quote(R"({"ndarray": [[[250, 5]]], "dtype": "uint8"})")),
      "255.0");
  // An empty tensor, and a tensor read from a file.
  ExpectPrints(CallTest("tensor_sum", kAnySum, Quote(R"({"ndarray": [], "dtype": "f64"})")), "0.0");
  TempFile file(R"({"ndarray": [1, 2, 3], "dtype": "i32"})");
  ExpectPrints(CallTest("tensor_sum", kAnySum, Quote("@" + file.path())), "6.0");
}

TEST(FfijitCall, TensorResult) {
  ExpectPrints(CallTest("iota_f32", R"({"a":["i64"],"r":[["ndarray","f32",1,null]]})", "4"),
               R"({"ndarray":[0.0,1.0,2.0,3.0],"dtype":"f32","shape":[4]})");
}

// A SIP may map leaves out of raw order (IREE maps by index); every tier, libffi too, reads them
// so: divmod(a=5, b=17) -> [remainder 5, quotient 0].
TEST(FfijitCall, SipLeavesOutOfRawOrder) {
  const char* sip =
      R"({"f":"I11!S3!t7S3!t7R11!S3!t7S3!t7","fv":"1","sip":"I12!S9!k0_1k1_0R12!S9!k0_1k1_0"})";
  for (const char* tier : {"jit", "interp", "libffi"}) {
    ExpectPrints(CallTest("divmod", sip, std::string("--tier ") + tier + " 17 5"), "[5,0]");
  }
}

// A structure result prints as the structure: lists and tuples as JSON lists (a gap as null),
// dicts as JSON objects; one leaf (cos's return value) is a structure too.
TEST(FfijitCall, StructureResults) {
  for (const char* tier : {"jit", "interp", "libffi"}) {
    const std::string t = std::string("--tier ") + tier + " ";
    ExpectPrints(
        CallTest("divmod", R"({"a":["i64","i64"],"r":[["sdict",["q","i64"],["r","i64"]]]})",
                 t + "17 5"),
        R"({"q":3,"r":2})");
    ExpectPrints(
        CallTest("divmod", R"({"a":["i64","i64"],"r":[["stuple","i64",null,["slist","i64"]]]})",
                 t + "17 5"),
        "[3,null,[2]]");
    ExpectPrints(Call("libm.so.6", "cos", R"({"a":["f64"],"r":[["slist","f64"]]})", t + "0.5"),
                 "[0.8775825618903728]");
    ExpectPrints(
        CallTest("iota_f32", R"({"a":["i64"],"r":[["stuple",["ndarray","f32",1,null]]]})", t + "2"),
        R"([{"ndarray":[0.0,1.0],"dtype":"f32","shape":[2]}])");
  }
}

TEST(FfijitCall, ReflectedObjectsPrintTheirFields) {
  const char point[] = R"({"a":["i64","i64"],"r":[["object","testlib.Point"]]})";
  ExpectPrints(CallTest("make_point", point, "3 4"),
               R"({"object":"testlib.Point","fields":{"x":3,"y":4}})");
  // A subtype through the base's signature: ancestor fields first, a failing getter reported.
  const char point3[] = R"({"a":["i64","i64","i64"],"r":[["object","testlib.Point"]]})";
  ExpectPrints(CallTest("make_point3", point3, "1 2 3"),
               R"({"object":"testlib.Point3","fields":{"x":1,"y":2,"z":3,)"
               R"("secret":{"error":"ValueError: the secret is not readable"}}})");
}

TEST(FfijitCall, TensorRoundTripKeepsDtypeShapeAndValues) {
  const std::string same = R"({"a":[["object","ffi.Tensor"]],"r":[["ndarray",null,null]]})";
  const auto round_trip = [&](const std::string& value) {
    return CallTest("same_object", same, Quote(value));
  };
  ExpectPrints(round_trip(R"({"ndarray": [[1.5, 2], [3, 4]], "dtype": "float32"})"),
               R"({"ndarray":[[1.5,2.0],[3.0,4.0]],"dtype":"f32","shape":[2,2]})");
  ExpectPrints(round_trip(R"({"ndarray": [-128, 127], "dtype": "i8"})"),
               R"({"ndarray":[-128,127],"dtype":"i8","shape":[2]})");
  ExpectPrints(round_trip(R"({"ndarray": [0, 18446744073709551615], "dtype": "u64"})"),
               R"({"ndarray":[0,18446744073709551615],"dtype":"u64","shape":[2]})");
  ExpectPrints(round_trip(R"({"ndarray": [true, false]})"),
               R"({"ndarray":[true,false],"dtype":"i1","shape":[2]})");
  ExpectPrints(round_trip(R"({"ndarray": 7})"), R"({"ndarray":7,"dtype":"i64","shape":[]})");
  ExpectPrints(round_trip(R"({"ndarray": [[], []]})"),
               R"({"ndarray":[[],[]],"dtype":"f64","shape":[2,0]})");
  // f16 and bf16 round to nearest even, overflow to infinity and keep subnormals.
  ExpectPrints(round_trip(R"({"ndarray": [65519, 65520, 0.1, 3e-8, -1e-10], "dtype": "f16"})"),
               R"({"ndarray":[65504.0,Infinity,0.0999755859375,5.960464477539063e-08,-0.0],)"
               R"("dtype":"f16","shape":[5]})");
  ExpectPrints(round_trip(R"({"ndarray": [1e39, 3.14159, -2.5e-40], "dtype": "bf16"})"),
               R"({"ndarray":[Infinity,3.140625,-2.7550648847397363e-40],"dtype":"bf16",)"
               R"("shape":[3]})");
}

TEST(FfijitCall, StructuresStringsAndKeywords) {
  // The sdict's keys in any order; the stuple as a list.
  ExpectPrints(
      CallTest("weigh", kWeigh, Quote(R"({"y": 2, "x": 1.5})") + " " + Quote(R"([3, "abcd"])")),
      "13.0");
  ExpectPrints(CallTest("str_len", R"({"a":["str"],"r":["i64"]})", Quote(R"("hello")")), "5");
  ExpectPrints(CallTest("str_len", R"({"a":["str"],"r":["i64"]})", Quote(R"("")")), "0");
  ExpectPrints(CallTest("greeting", R"({"a":[],"r":["str"]})"), R"("hello, ffijit")");
  ExpectPrints(CallTest("affine", kAffine, "3 offset=1 scale=10"), "31");
  ExpectPrints(CallTest("affine", kAffine, "offset=-1 x=2 scale=5"), "9");
}

TEST(FfijitCall, ResultsAndOtherArgumentKinds) {
  ExpectPrints(CallTest("divmod", R"({"a":["i64","i64"],"r":["i64","i64"]})", "17 5"), "[3,2]");
  ExpectPrints(CallTest("checked_div", R"({"a":["i64","i64"],"r":["i64"]})", "--status 17 5"), "3");
  ExpectPrints(CallTest("dtype_bits", R"({"a":["DataType"],"r":["i32"]})", Quote(R"("float16")")),
               "16");
  ExpectPrints(CallTest("device_id", R"({"a":["Device"],"r":["i32"]})", Quote(R"("cuda:3")")), "3");
  ExpectPrints(CallTest("same_ptr", R"({"a":["ptr"],"r":["ptr"]})", Quote(R"({"ptr": "0x1234"})")),
               R"("0x1234")");
  ExpectPrints(CallTest("same_ptr", R"({"a":["ptr"],"r":["ptr"]})", "null"), "null");
  ExpectPrints(CallTest("not_u8", R"({"a":["u8"],"r":["u8"]})", "-- 15"), "240");
  ExpectPrints(CallTest("half_twice", R"({"a":["f16"],"r":["f64"]})", "1.5"), "3.0");
}

TEST(FfijitCall, MissingLibraryExitsThree) {
  const ToolResult run = Call("libffijit_no_such_library.so", "f", kCos, "0.5");
  ExpectFailsWith(run, 3, "ffijit call: cannot load library 'libffijit_no_such_library.so': ");
  EXPECT_NE(run.err.find("cannot open shared object file"), std::string::npos) << run.err;
}

TEST(FfijitCall, MissingSymbolExitsFour) {
  const ToolResult run = Call("libm.so.6", "no_such_symbol", kCos, "0.5");
  ExpectFailsWith(run, 4, "ffijit call: library 'libm.so.6' does not export 'no_such_symbol': ");
  EXPECT_NE(run.err.find("undefined symbol: no_such_symbol"), std::string::npos) << run.err;
}

TEST(FfijitCall, BadMetadataExitsTwo) {
  ExpectFailsWith(Call("libm.so.6", "cos", R"({"a":["f64"],"r":[f64]})", "0.5"), 2,
                  "ffijit call: ValueError: json: at offset ");
  ExpectFailsWith(Call("libm.so.6", "cos", "I99!S3!t2", "0.5"), 2,
                  "ffijit call: ValueError: raw signature: at offset 1: span length 99");
  ExpectFailsWith(Call("libm.so.6", "cos", "@/nonexistent/sig.json", "0.5"), 2,
                  "ffijit call: cannot read metadata file '/nonexistent/sig.json': ");
  // Parses, but cannot be bound to a native call on that path.
  ExpectFailsWith(CallTest("half_twice", R"({"a":["f16"],"r":["f64"]})", "--tier libffi 1.5"), 2,
                  "ffijit call: cannot bind `half_twice` as `(f16) -> f64` for the libffi path: "
                  "TypeError: libffi has no 16-bit float type");
}

TEST(FfijitCall, ArgumentsThatAreNotJsonExitFive) {
  const ToolResult word = Call("libm.so.6", "cos", kCos, "hello");
  ExpectFailsWith(
      word, 5,
      "ffijit call: ValueError: cannot read argument #0 as JSON: parse error at line 1, "
      "column 1: ");
  EXPECT_NE(word.err.find("(a string argument needs JSON quotes, e.g. '\"hello\"')"),
            std::string::npos)
      << word.err;
  ExpectFails(Call("libm.so.6", "cos", kCos, "100000000000000000000000"), 5,
              "ffijit call: ValueError: cannot read argument #0 as JSON: integer "
              "100000000000000000000000 does not fit in 64 bits");
  ExpectFails(Call("libm.so.6", "cos", kCos, std::string(100, '[') + std::string(100, ']')), 5,
              "ffijit call: ValueError: cannot read argument #0 as JSON: nesting deeper than 64 "
              "levels");
  ExpectFails(CallTest("weigh", kWeigh, Quote(R"({"x": 1, "x": 2})") + " " + Quote("[1, \"\"]")), 5,
              "ffijit call: ValueError: cannot read argument #0 as JSON: duplicate key \"x\" in an "
              "object");
  ExpectFailsWith(CallTest("affine", kAffine, "1 scale=oops offset=2"), 5,
                  "ffijit call: ValueError: cannot read keyword argument `scale` as JSON: ");
  ExpectFailsWith(Call("libm.so.6", "cos", kCos, "@/nonexistent/arg.json"), 5,
                  "ffijit call: cannot read argument #0 from '/nonexistent/arg.json': ");
}

TEST(FfijitCall, BadTensorValuesExitFive) {
  ExpectFails(CallTest("tensor_sum", kAnySum, Quote(R"({"ndarray": [[1, 2], [3]]})")), 5,
              "ffijit call: ValueError: argument #0: ragged ndarray: element [1] should be a list "
              "of 2 elements, like the first one at its depth, but is a list of 1 element");
  ExpectFails(CallTest("tensor_sum", kAnySum, Quote(R"({"ndarray": [1, [2]]})")), 5,
              "ffijit call: ValueError: argument #0: ragged ndarray: element [1] should be a "
              "number, like the first one at its depth, but is a list of 1 element");
  ExpectFailsWith(CallTest("tensor_sum", kAnySum, Quote(R"({"ndarray": [1], "dtype": "f99"})")), 5,
                  "ffijit call: ValueError: argument #0: unknown ndarray dtype \"f99\" (expected "
                  "one of i1, bool, i8, ");
  ExpectFails(CallTest("tensor_sum", kAnySum, Quote(R"({"ndarray": [1, 256], "dtype": "u8"})")), 5,
              "ffijit call: ValueError: argument #0: ndarray element [1] = 256 does not fit dtype "
              "u8");
  ExpectFails(CallTest("tensor_sum", kAnySum, Quote(R"({"ndarray": [1.5], "dtype": "i32"})")), 5,
              "ffijit call: ValueError: argument #0: ndarray element [0] = 1.5 does not fit dtype "
              "i32");
  ExpectFails(CallTest("tensor_sum", kAnySum, Quote(R"({"ndarray": ["x"]})")), 5,
              "ffijit call: ValueError: argument #0: ndarray element [0] = \"x\" is not a number");
}

TEST(FfijitCall, ArgumentsThatDoNotMatchTheSignatureExitFive) {
  ExpectFails(Call("libm.so.6", "cos", kCos, Quote(R"("x")")), 5,
              "ffijit call: TypeError: Mismatched type on argument #0 when calling: "
              "`cos(f64) -> f64`. Expected `f64` but got `str`");
  ExpectFails(Call("libm.so.6", "cos", kCos), 5,
              "ffijit call: TypeError: Mismatched number of arguments when calling: "
              "`cos(f64) -> f64`. Expected 1 but got 0 arguments");
  ExpectFails(CallTest("not_u8", R"({"a":["u8"],"r":["u8"]})", "300"), 5,
              "ffijit call: ValueError: Out of range value on argument #0 when calling: "
              "`not_u8(u8) -> u8`. 300 does not fit `u8`");
  ExpectFails(CallTest("tensor_sum", kSum, Quote(R"({"ndarray": [1, 2], "dtype": "f32"})")), 5,
              "ffijit call: ValueError: Mismatched tensor on argument #0 when calling: "
              "`tensor_sum(ndarray<f32,2>) -> f64`. Expected `ndarray<f32,2>` but got an ndarray "
              "of float32 with ndim 1");
  ExpectFails(CallTest("weigh", kWeigh, Quote(R"({"x": 1})") + " " + Quote(R"([1, "a"])")), 5,
              "ffijit call: KeyError: Missing key `y` on argument #0 when calling: "
              "`weigh(sdict<x:f64,y:f64>, stuple<i64,str>) -> f64`. Expected `sdict<x:f64,y:f64>`");
  ExpectFails(CallTest("affine", kAffine, "1 2 scale=3"), 5,
              "ffijit call: TypeError: Duplicate value for argument #1 (`scale`) when calling: "
              "`affine(x: i64, scale: i64, offset: i64) -> i64`");
  ExpectFails(CallTest("affine", kAffine, "1 2 3 shift=4"), 5,
              "ffijit call: KeyError: Unknown keyword argument `shift` when calling: "
              "`affine(x: i64, scale: i64, offset: i64) -> i64`");
  ExpectFails(CallTest("device_id", R"({"a":["Device"],"r":["i32"]})", Quote(R"("bogus:3")")), 5,
              "ffijit call: ValueError: Invalid value on argument #0 when calling: "
              "`device_id(Device) -> i32`. Expected `Device` but got \"bogus:3\"");
  // A JSON string with a NUL inside reaches a C string parameter on no tier, short or long.
  for (const char* tier : {"", "--tier interp ", "--tier libffi ", "--tier jit "}) {
#if !FFIJIT_TOOL_HAS_JIT
    if (std::string(tier) == "--tier jit ") continue;
#endif
    ExpectFails(
        CallTest("str_len", R"({"a":["str"],"r":["i64"]})", tier + Quote(R"("ab\u0000cd")")), 5,
        "ffijit call: ValueError: Invalid value on argument #0 when calling: "
        "`str_len(str) -> i64`. The str contains a NUL character (at byte 2 of 5), which "
        "a `str` parameter (a C string) would cut short; pass bytes to a `bytes` "
        "parameter instead");
    ExpectFails(CallTest("str_len", R"({"a":["str"],"r":["i64"]})",
                         tier + Quote(R"("a longer string with a NUL\u0000")")),
                5,
                "ffijit call: ValueError: Invalid value on argument #0 when calling: "
                "`str_len(str) -> i64`. The str contains a NUL character (at byte 26 of 27), "
                "which a `str` parameter (a C string) would cut short; pass bytes to a `bytes` "
                "parameter instead");
  }
}

TEST(FfijitCall, FailingNativeCallExitsSix) {
  ExpectFails(CallTest("checked_div", R"({"a":["i64","i64"],"r":["i64"]})", "--status 17 0"), 6,
              "ffijit call: ValueError: checked_div: division by zero");
  for (const char* tier : {"jit", "interp", "libffi"}) {
    ExpectFails(CallTest("crash_now", R"({"a":[],"r":[]})", std::string("--tier ") + tier), 6,
                "ffijit call: the native call crashed (SIGSEGV)");
  }
}

TEST(FfijitCall, UsageErrorsExitOne) {
  ExpectFailsWith(RunTool("call libm.so.6"), 1, "ffijit call: missing LIB and SYMBOL\n");
  ExpectFailsWith(Call("libm.so.6", "cos", kCos, "--tier fast 0.5"), 1,
                  "ffijit call: unknown tier 'fast' (expected jit, interp or libffi)\n");
  ExpectFailsWith(
      Call("libm.so.6", "cos", kCos, "--format xml 0.5"), 1,
      "ffijit call: unknown format 'xml' (expected auto, json, raw, sip or declaration)\n");
  ExpectFailsWith(Call("libm.so.6", "cos", kCos, "--seconds 1 0.5"), 1,
                  "ffijit call: unknown option '--seconds'\n");
  ExpectFailsWith(RunTool("call libm.so.6 cos --sig"), 1, "ffijit call: --sig needs a value\n");
  const ToolResult help = RunTool("call --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.out.rfind("usage: ffijit call LIB SYMBOL --sig METADATA|@FILE", 0), 0u);
}

// --describe binds as a call would and prints the plan, then the tier, instead of calling.
TEST(FfijitCall, DescribePrintsThePlanAndTheTier) {
  const std::string plan =
      "cos(f64) -> f64\n"
      "  convention: plain, returns: sse, registers: 0 gpr + 1 sse, stack slots: 0\n"
      "  arg #0 f64\n";
  for (const char* path : {"", "--tier jit", "--tier interp", "--tier libffi"}) {
    const ToolResult run = Call("libm.so.6", "cos", kCos, std::string(path) + " --describe");
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(Errors(run), "") << path;
    EXPECT_EQ(run.out.rfind(plan, 0), 0u) << path << "\n" << run.out;
    // The jit path compiles the cold tier's thunk (CompileNow); the others stay interpreted, as
    // does every path of a build without the JIT.
    const bool jit_path = std::string(path).empty() || std::string(path) == "--tier jit";
    const std::string tier = jit_path && FFIJIT_TOOL_HAS_JIT ? "llvm" : "interpreted";
    EXPECT_EQ(run.out.substr(run.out.rfind('\n', run.out.size() - 2) + 1), "  tier: " + tier + "\n")
        << path << "\n"
        << run.out;
  }
  ExpectFails(Call("libm.so.6", "cos", kCos, "--describe 0.5"), 1,
              "ffijit call: --describe calls nothing: it takes no ARG\n(see ffijit call --help)");
  ExpectFails(Call("libm.so.6", "cos", kCos, "--describe=yes"), 1,
              "ffijit call: --describe takes no value\n(see ffijit call --help)");
  ExpectFailsWith(RunTool("call " + Quote(FFIJIT_TOOL_TVM_MODULE) + " add_one --describe"), 1,
                  "ffijit call: --describe needs --sig");
  ExpectFailsWith(RunTool("bench libm.so.6 cos --sig " + Quote(kCos) + " --describe 0.5"), 1,
                  "ffijit bench: unknown option '--describe'");
  EXPECT_NE(RunTool("call --help").out.find("--describe"), std::string::npos);
}

// Without --sig: a TVM FFI module's function, already packed.
ToolResult CallModule(const std::string& lib, const std::string& name,
                      const std::string& rest = "") {
  return RunTool("call " + Quote(lib) + " " + Quote(name) + " " + rest);
}

TEST(FfijitCallModule, CallsATvmFfiFunctionWithoutASignature) {
  ExpectPrints(CallModule(FFIJIT_TOOL_TVM_MODULE, "add_one", "41"), "42");
  ExpectPrints(CallModule(FFIJIT_TOOL_TVM_MODULE, "__tvm_ffi_add_one", "1"), "2");
  ExpectPrints(CallModule(FFIJIT_TOOL_TVM_MODULE, "sum_f64",
                          Quote(R"({"ndarray": [[1, 2], [3, 4.5]], "dtype": "f64"})")),
               "10.5");
  ExpectFails(CallModule(FFIJIT_TOOL_TVM_MODULE, "fail", Quote("\"why\"")), 6,
              "ffijit call: ValueError: fail: why");
}

TEST(FfijitCallModule, ObjectsOfTheModulesReflectedTypesPrintTheirFields) {
  // The types and their fields were registered by the module's static initialiser.
  ExpectPrints(CallModule(FFIJIT_TOOL_REFLECTED_MODULE, "make_rect", "2 3"),
               R"({"object":"rm.Rect","fields":{"sides":4,"w":2,"h":3}})");
  // A subtype with no fields of its own prints its ancestors' fields; a type with no fields
  // prints its key only.
  ExpectPrints(CallModule(FFIJIT_TOOL_REFLECTED_MODULE, "make_square", "5"),
               R"({"object":"rm.Square","fields":{"sides":4,"w":5,"h":5}})");
  ExpectPrints(CallModule(FFIJIT_TOOL_REFLECTED_MODULE, "make_other"), R"({"object":"rm.Other"})");
}

TEST(FfijitCallModule, BadInputIsReportedClearly) {
  ExpectFails(CallModule(FFIJIT_TOOL_EMPTY_MODULE, "add_one", "1"), 4,
              std::string("ffijit call: no such function: library '") + FFIJIT_TOOL_EMPTY_MODULE +
                  "' exports no TVM FFI function `add_one` (symbol `__tvm_ffi_add_one`); without "
                  "--sig, SYMBOL names a TVM FFI function");
  ExpectFails(RunTool("call libm.so.6 cos 0.5"), 4,
              "ffijit call: no such function: library 'libm.so.6' exports no TVM FFI function "
              "`cos` (symbol `__tvm_ffi_cos`); without --sig, SYMBOL names a TVM FFI function");
  ExpectFailsWith(CallModule("/nonexistent/module.so", "f"), 3,
                  "ffijit call: cannot load library '/nonexistent/module.so' as a TVM FFI "
                  "module: InternalError: Failed to load dynamic shared library");
  ExpectFailsWith(CallModule(FFIJIT_TOOL_TVM_MODULE, "not_code"), 4,
                  std::string("ffijit call: library '") + FFIJIT_TOOL_TVM_MODULE +
                      "': TypeError: symbol `__tvm_ffi_not_code`");
  ExpectFails(CallModule(FFIJIT_TOOL_TVM_MODULE, "add_one", "x=1"), 5,
              "ffijit call: keyword argument `x`: a TVM FFI function takes positional arguments "
              "only (NAME=ARG needs --sig)");
  ExpectFailsWith(CallModule(FFIJIT_TOOL_TVM_MODULE, "add_one", "--tier interp 1"), 1,
                  "ffijit call: --tier needs --sig");
  ExpectFailsWith(CallModule(FFIJIT_TOOL_TVM_MODULE, "add_one", "--status 1"), 1,
                  "ffijit call: --status needs --sig");
  ExpectFails(CallModule(FFIJIT_TOOL_TVM_MODULE, "add_one", "1.5"), 6,
              "ffijit call: TypeError: add_one expects one int");
}

TEST(FfijitCall, HelpDocumentsTheCommandAndExitCodes) {
  const ToolResult run = RunTool("--help");
  EXPECT_EQ(run.status, 0);
  for (const char* line :
       {"  call LIB SYMBOL --sig METADATA|@FILE", "  bench LIB SYMBOL --sig METADATA|@FILE",
        "  3  the shared library could not be loaded",
        "  4  the library does not export the symbol",
        "  5  an argument is not valid JSON or does not match the signature",
        "  6  the native call failed"}) {
    EXPECT_NE(run.out.find(line), std::string::npos) << line << "\n" << run.out;
  }
}

}  // namespace
}  // namespace ffijit::testing
