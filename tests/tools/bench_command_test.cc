// `ffijit bench` tests: every path in the table, progress on stderr only, errors; never timing.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "tool_run.h"

namespace ffijit::testing {
namespace {

const char kCos[] = R"({"a":["f64"],"r":["f64"]})";

// `ffijit bench <lib> <symbol> --sig <sig> --seconds 0.03 <rest>`.
ToolResult Bench(const std::string& lib, const std::string& symbol, const std::string& sig,
                 const std::string& rest) {
  return RunTool("bench " + Quote(lib) + " " + Quote(symbol) + " --sig " + Quote(sig) +
                 " --seconds 0.03 " + rest);
}

// A table row: the path, ns/call, and the ratio to jit ("-" in a build without the JIT).
bool HasTimedRow(const std::string& out, const std::string& path) {
  return std::regex_search(
      out, std::regex("(^|\n)" + path + " +[0-9]+\\.[0-9]{2} +([0-9]+\\.[0-9]{2}x|-)\n"));
}

TEST(FfijitBench, TimesEveryPath) {
  const ToolResult run = Bench("libm.so.6", "cos", kCos, "0.5");
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out.rfind("call:   cos(f64) -> f64\nresult: 0.8775825618903728\n", 0), 0u)
      << run.out;
  EXPECT_TRUE(std::regex_search(run.out, std::regex("\npath +ns/call +vs jit\n"))) << run.out;
#if FFIJIT_TOOL_HAS_JIT
  EXPECT_TRUE(std::regex_search(run.out, std::regex("\njit +[0-9]+\\.[0-9]{2} +1\\.00x\n")))
      << run.out;
#else
  EXPECT_NE(run.out.find("\njit      unavailable: "), std::string::npos) << run.out;
#endif
  EXPECT_TRUE(HasTimedRow(run.out, "interp")) << run.out;
  EXPECT_TRUE(HasTimedRow(run.out, "libffi")) << run.out;
  // Not a terminal and no --progress: stderr stays empty.
  EXPECT_EQ(run.err, "");
}

TEST(FfijitBench, ProgressGoesToStderrOnly) {
  const ToolResult run = Bench("libm.so.6", "cos", kCos, "--progress 0.5");
  EXPECT_EQ(run.status, 0) << run.err;
  for (const char* step : {"\r[1/3] jit: ", "\r[2/3] interp: ", "\r[3/3] libffi: "}) {
    if (!FFIJIT_TOOL_HAS_JIT && std::string(step) == "\r[1/3] jit: ") continue;
    EXPECT_NE(run.err.find(step), std::string::npos) << step;
    EXPECT_EQ(run.out.find(step), std::string::npos) << step;
  }
  EXPECT_EQ(run.out.find('\r'), std::string::npos);
}

TEST(FfijitBench, StructuresAndKeywords) {
  const ToolResult dict =
      Bench(FFIJIT_TOOL_TESTLIB, "weigh",
            R"({"a":[["sdict",["x","f64"],["y","f64"]],["stuple","i64","str"]],"r":["f64"]})",
            Quote(R"({"x": 1.5, "y": 2})") + " " + Quote(R"([3, "abcd"])"));
  EXPECT_EQ(dict.status, 0) << dict.err;
  EXPECT_NE(dict.out.find("result: 13.0\n"), std::string::npos) << dict.out;
  EXPECT_TRUE(HasTimedRow(dict.out, "libffi")) << dict.out;
  const ToolResult keywords = Bench(
      FFIJIT_TOOL_TESTLIB, "affine",
      R"({"a":[["named","x","i64"],["named","scale","i64"],["named","offset","i64"]],"r":["i64"]})",
      "3 offset=1 scale=10");
  EXPECT_EQ(keywords.status, 0) << keywords.err;
  EXPECT_NE(
      keywords.out.find("call:   affine(x: i64, scale: i64, offset: i64) -> i64\nresult: 31\n"),
      std::string::npos)
      << keywords.out;
  EXPECT_TRUE(HasTimedRow(keywords.out, "interp")) << keywords.out;
}

TEST(FfijitBench, PathThatCannotTakeTheSignatureIsUnavailable) {
  // libffi has no 16-bit float type.
  const ToolResult run =
      Bench(FFIJIT_TOOL_TESTLIB, "half_twice", R"({"a":["f16"],"r":["f64"]})", "1.5");
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("result: 3.0\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\nlibffi   unavailable: cannot bind `half_twice` as `(f16) -> f64` for "
                         "the libffi path: TypeError: libffi has no 16-bit float type"),
            std::string::npos)
      << run.out;
  EXPECT_TRUE(HasTimedRow(run.out, "interp")) << run.out;
}

TEST(FfijitBench, TimesATvmFfiFunctionOnItsOnePath) {
  const ToolResult run =
      RunTool("bench " + Quote(FFIJIT_TOOL_TVM_MODULE) + " add_one 1 --seconds 0.03");
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out.rfind(std::string("call:   add_one (TVM FFI function of ") +
                              FFIJIT_TOOL_TVM_MODULE + ")\nresult: 2\npath          ns/call\n",
                          0),
            0u)
      << run.out;
  EXPECT_TRUE(std::regex_search(run.out, std::regex("\npacked +[0-9]+\\.[0-9]{2}\n"))) << run.out;
  EXPECT_EQ(run.err, "");
  const ToolResult missing =
      RunTool("bench " + Quote(FFIJIT_TOOL_EMPTY_MODULE) + " add_one 1 --seconds 0.03");
  EXPECT_EQ(missing.status, 4);
  EXPECT_NE(missing.err.find("no such function"), std::string::npos) << missing.err;
}

TEST(FfijitBench, ErrorsExitAsForCall) {
  const ToolResult args = Bench("libm.so.6", "cos", kCos, Quote(R"("x")"));
  EXPECT_EQ(args.status, 5);
  EXPECT_EQ(args.out, "");
  EXPECT_EQ(args.err,
            "ffijit bench: TypeError: Mismatched type on argument #0 when calling: "
            "`cos(f64) -> f64`. Expected `f64` but got `str`\n");
  const ToolResult fails = Bench(FFIJIT_TOOL_TESTLIB, "checked_div",
                                 R"({"a":["i64","i64"],"r":["i64"]})", "--status 1 0");
  EXPECT_EQ(fails.status, 6);
  EXPECT_EQ(fails.err, "ffijit bench: ValueError: checked_div: division by zero\n");
  const ToolResult crash = Bench(FFIJIT_TOOL_TESTLIB, "crash_now", R"({"a":[],"r":[]})", "");
  EXPECT_EQ(crash.status, 6);
  EXPECT_EQ(crash.err, "ffijit bench: the native call crashed (SIGSEGV)\n");
  EXPECT_EQ(Bench("libffijit_no_such_library.so", "f", kCos, "0.5").status, 3);
  EXPECT_EQ(Bench("libm.so.6", "no_such_symbol", kCos, "0.5").status, 4);
  EXPECT_EQ(Bench("libm.so.6", "cos", "I99!", "0.5").status, 2);
  EXPECT_EQ(Bench("libm.so.6", "cos", kCos, "--seconds 0 0.5").status, 1);
  EXPECT_EQ(Bench("libm.so.6", "cos", kCos, "--tier jit 0.5").status, 1);
  const ToolResult help = RunTool("bench --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.out.rfind("usage: ffijit bench LIB SYMBOL", 0), 0u);
}

}  // namespace
}  // namespace ffijit::testing
