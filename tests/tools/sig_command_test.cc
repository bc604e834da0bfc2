// `ffijit sig` and the tool's dispatch, run as a subprocess through the shell.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "ffijit/c_api.h"

namespace {

struct ToolRun {
  int status = -1;
  std::string out;  // stdout and stderr, in order
};

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs `ffijit <args>` with `stdin_text` on its stdin.
ToolRun Ffijit(const std::string& args, const std::string& stdin_text = "") {
  const std::string cmd = "printf '%s' " + ShellQuote(stdin_text) + " | " + FFIJIT_TOOL_RUNNER +
                          " " + ShellQuote(FFIJIT_TOOL_PATH) + " " + args + " 2>&1";
  ToolRun run;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return run;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) run.out.append(buf, n);
  const int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TEST(FfijitTool, HelpListsCommandsAndExitCodes) {
  const ToolRun run = Ffijit("--help");
  EXPECT_EQ(run.status, 0);
  EXPECT_NE(run.out.find("  sig [--format json|raw|sip|declaration] [METADATA|-]"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("  2  the metadata could not be parsed"), std::string::npos) << run.out;
  EXPECT_EQ(Ffijit("").status, 1);
  const ToolRun unknown = Ffijit("frobnicate");
  EXPECT_EQ(unknown.status, 1);
  EXPECT_NE(unknown.out.find("unknown command 'frobnicate'"), std::string::npos);
}

TEST(FfijitTool, VersionNamesTheTvmFfiAbiRevision) {
  const ToolRun run = Ffijit("--version");
  EXPECT_EQ(run.status, 0);
  EXPECT_EQ(run.out.rfind("ffijit 0.", 0), 0u) << run.out;
  // The revision, its commit and version (its row of cmake/tvm_ffi_revisions.txt), and its sizes.
  const std::string abi_line =
      "TVM FFI ABI " FFIJIT_TVM_FFI_ABI_NAME " (apache/tvm-ffi " FFIJIT_TVM_FFI_ABI_COMMIT
      ", " FFIJIT_TVM_FFI_ABI_VERSION_TEXT "): object header 24 bytes, error cell " +
      std::to_string(sizeof(TVMFFIErrorCell)) + " bytes, type info 72 bytes, " +
      std::to_string(FFIJIT_TVM_FFI_NUM_C_API_FUNCTIONS) + " C functions\n";
  EXPECT_NE(run.out.find(abi_line), std::string::npos) << run.out;
#if FFIJIT_TVM_FFI_HAS_ERROR_CAUSE_CHAIN
  EXPECT_NE(run.out.find("error cell 72 bytes, type info 72 bytes, 38 C functions"),
            std::string::npos)
      << run.out;
#else
  EXPECT_NE(run.out.find("error cell 56 bytes, type info 72 bytes, 30 C functions"),
            std::string::npos)
      << run.out;
#endif
#if FFIJIT_TVM_FFI_HAS_GET_VERSION
  // TVMFFIGetVersion's answer, which is the revision's version.
  EXPECT_NE(run.out.find("TVM FFI version " FFIJIT_TVM_FFI_ABI_VERSION_TEXT "\n"),
            std::string::npos)
      << run.out;
#endif
}

TEST(FfijitSig, RawArgumentPrintsEveryForm) {
  const ToolRun run = Ffijit("sig " + ShellQuote("I15!B11!d-1d128d64R15!B11!t6d-1d8d64"));
  EXPECT_EQ(run.status, 0);
  EXPECT_EQ(run.out,
            "format:    raw\n"
            "canonical: (ndarray<f32,[?,128,64]>) -> ndarray<i32,[?,8,64]>\n"
            "json:      {\"a\":[[\"ndarray\",\"f32\",3,null,128,64]],\"r\":[[\"ndarray\",\"i32\",3,"
            "null,8,64]],\"v\":1}\n"
            "raw:       I15!B11!d-1d128d64R15!B11!t6d-1d8d64\n"
            "readable:  (Buffer<float32[?x128x64]>) -> (Buffer<sint32[?x8x64]>)\n"
            "decl:      sync func @f(%input0: tensor<?x128x64xf32>) -> (%output0: "
            "tensor<?x8x64xi32>)\n");
}

TEST(FfijitSig, JsonFromStdinWithoutRawForm) {
  const ToolRun run = Ffijit("sig -", "{\"a\": [[\"named\", \"x\", \"i32\"]], \"r\": []}\n");
  EXPECT_EQ(run.status, 0);
  EXPECT_EQ(run.out,
            "format:    json\n"
            "canonical: (x: i32) -> None\n"
            "json:      {\"a\":[[\"named\",\"x\",\"i32\"]],\"r\":[],\"v\":1}\n"
            "raw:       (none: raw signature: argument #0 (`x: i32`) has no raw form)\n"
            "decl:      sync func @f(%x: i32) -> ()\n");
  EXPECT_EQ(Ffijit("sig", "{\"a\":[],\"r\":[]}").status, 0);  // no argument: stdin too
}

TEST(FfijitSig, SipDictPrintsSignatureAndStructure) {
  const ToolRun run =
      Ffijit("sig --format=sip " +
             ShellQuote(R"({"f":"I11!S3!t6S3!t2R6!S3!t7","fv":"1","sip":"I12!S9!k0_0k1_1R3!_0"})"));
  EXPECT_EQ(run.status, 0);
  EXPECT_EQ(run.out,
            "format:    sip\n"
            "canonical: (i32, f64) -> i64\n"
            "json:      {\"a\":[\"i32\",\"f64\"],\"r\":[\"i64\"],\"v\":1}\n"
            "raw:       I11!S3!t6S3!t2R6!S3!t7\n"
            "readable:  (sint32, float64) -> (sint64)\n"
            "decl:      sync func @f(%input0: i32, %input1: f64) -> (%output0: i64)\n"
            "sip:       I12!S9!k0_0k1_1R3!_0\n"
            "sip inputs (IREE readable):\n:[\n  0=raw(0),\n  1=raw(1),\n],\n"
            "sip results (IREE readable):\n=raw(0),\n");
}

// Leaves out of raw order: the raw form is the native's (in native order) and, with the SIP, reads
// back to the same signature; JSON and declaration cannot state the order and say so.
TEST(FfijitSig, SipOutOfRawOrderRoundTrips) {
  const ToolRun run = Ffijit(
      "sig " + ShellQuote(R"({"f":"I11!S3!t6S3!t2R1!","fv":"1","sip":"I12!S9!k0_1k1_0R1!"})"));
  EXPECT_EQ(run.status, 0);
  EXPECT_EQ(run.out,
            "format:    sip\n"
            "canonical: (f64, i32) -> None [arg leaves 1,0]\n"
            "json:      (none: json: the iree.abi JSON has no way to say that the argument leaves "
            "are out of native order)\n"
            "raw:       I11!S3!t6S3!t2R1!\n"
            "readable:  (sint32, float64) -> ()\n"
            "decl:      (none: declaration: a declaration has no way to say that the argument "
            "leaves are out of native order)\n"
            "sip:       I12!S9!k0_1k1_0R1!\n"
            "sip inputs (IREE readable):\n:[\n  0=raw(1),\n  1=raw(0),\n],\n"
            "sip results (IREE readable):\n");
  const ToolRun results = Ffijit(
      "sig " + ShellQuote(R"({"f":"I1!R11!S3!t6S3!t2","fv":"1","sip":"I1!R12!S9!k0_1k1_0"})"));
  EXPECT_EQ(results.status, 0);
  EXPECT_NE(results.out.find("canonical: () -> slist<f64,i32> [result leaves 1,0]\n"
                             "json:      (none: json: the iree.abi JSON has no way to say that "
                             "the result leaves are out of native order)\n"),
            std::string::npos)
      << results.out;
}

// IREE's declaration, bare or in its reflection dict: detected, named as it was, round-tripped.
TEST(FfijitSig, DeclarationPrintsEveryFormUnderItsOwnName) {
  const std::string decl =
      "sync func @exportEncodings(%input0: tensor<?x8x8x3xf32> {iree.abi.encoding = "
      "tensor<?x8x8x3xi32>}) -> (%output0: tensor<?x8x8x3xf32> {iree.abi.encoding = "
      "tensor<?x8x8x3xi32>})";
  const std::string expected =
      "format:    declaration\n"
      "canonical: (ndarray<i32,[?,8,8,3]>) -> ndarray<i32,[?,8,8,3]>\n"
      "json:      {\"a\":[[\"ndarray\",\"i32\",4,null,8,8,3]],\"r\":[[\"ndarray\",\"i32\",4,null,"
      "8,8,3]],\"v\":1}\n"
      "raw:       I16!B12!t6d-1d8d8d3R16!B12!t6d-1d8d8d3\n"
      "readable:  (Buffer<sint32[?x8x8x3]>) -> (Buffer<sint32[?x8x8x3]>)\n"
      "decl:      sync func @exportEncodings(%input0: tensor<?x8x8x3xi32>) -> (%output0: "
      "tensor<?x8x8x3xi32>)\n";
  for (const char* args : {"sig", "sig --format declaration", "sig -"}) {
    const ToolRun run = Ffijit(args, decl + "\n");
    EXPECT_EQ(run.status, 0) << args;
    EXPECT_EQ(run.out, expected) << args;
  }
  const std::string dict =
      "{\"iree.abi.declaration\": \"" + decl + "\", \"iree.abi.model\": \"coarse-fences\"}";
  const ToolRun from_dict = Ffijit("sig", dict);
  EXPECT_EQ(from_dict.status, 0);
  EXPECT_EQ(from_dict.out, expected);
  // The printed declaration reads back to the same signature.
  const ToolRun again =
      Ffijit("sig " + ShellQuote("sync func @exportEncodings(%input0: tensor<?x8x8x3xi32>) -> "
                                 "(%output0: tensor<?x8x8x3xi32>)"));
  EXPECT_EQ(again.out, expected);
  // async: the two fences are ptr arguments, which have no raw form.
  const ToolRun async = Ffijit("sig " + ShellQuote("async func @main(%input0: index) -> ()"));
  EXPECT_EQ(async.status, 0);
  EXPECT_NE(async.out.find("canonical: (i64, ptr, ptr) -> None\n"), std::string::npos) << async.out;
  EXPECT_NE(async.out.find("decl:      async func @main(%input0: i64) -> ()\n"), std::string::npos)
      << async.out;
  // The iree.abi reflection dict.
  const ToolRun abi = Ffijit("sig " + ShellQuote(R"({"iree.abi":"{\"a\":[\"i32\"],\"r\":[]}"})"));
  EXPECT_EQ(abi.status, 0);
  EXPECT_EQ(abi.out.rfind("format:    json\ncanonical: (i32) -> None\n", 0), 0u) << abi.out;
}

TEST(FfijitSig, BareSipPrintsStructureOnly) {
  for (const char* args : {"sig", "sig --format sip"}) {
    const ToolRun run = Ffijit(args, "I31!S27!k0D17!K4!bar_1K4!foo_0k1_2R3!_0\n");
    EXPECT_EQ(run.status, 0) << args;
    EXPECT_NE(run.out.find("structure only"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find(":[\n  0:{\n    bar=raw(1),\n    foo=raw(0),\n  },\n  1=raw(2),\n],\n"),
              std::string::npos)
        << run.out;
  }
}

TEST(FfijitSig, BadMetadataExitsTwoWithTheParserMessage) {
  const ToolRun raw = Ffijit("sig " + ShellQuote("I99!S3!t6R1!xxxxxxxx"));
  EXPECT_EQ(raw.status, 2);
  EXPECT_EQ(raw.out,
            "ffijit sig: ValueError: raw signature: at offset 1: span length 99 runs past the end "
            "of input (20 bytes)\n");
  const ToolRun json = Ffijit("sig --format json", R"({"a":[["ndarray","f32",3,4]],"r":[]})");
  EXPECT_EQ(json.status, 2);
  EXPECT_NE(json.out.find("json: at offset 23: rank 3 disagrees with the 1 dim listed"),
            std::string::npos)
      << json.out;
  const ToolRun sip = Ffijit("sig --format sip " + ShellQuote("I3!_0R1!x"));
  EXPECT_EQ(sip.status, 2);
  EXPECT_NE(sip.out.find("sip: at offset"), std::string::npos) << sip.out;
  EXPECT_EQ(Ffijit("sig", "").status, 2);
  const ToolRun free_text =
      Ffijit("sig --format declaration " + ShellQuote("some.python.thing(types_are_overrated)"));
  EXPECT_EQ(free_text.status, 2);
  EXPECT_EQ(free_text.out.rfind("ffijit sig: ValueError: declaration: at offset 0: expected `sync "
                                "func @NAME(...) -> (...)`",
                                0),
            0u)
      << free_text.out;
  const ToolRun decl = Ffijit("sig " + ShellQuote("sync func @f(%input0: i4) -> ()"));
  EXPECT_EQ(decl.status, 2);
  EXPECT_EQ(decl.out,
            "ffijit sig: ValueError: declaration: at offset 22: unsupported integer width 4 "
            "(`i4`): no C type holds it; ffijit reads signed widths 1, 8, 16, 32, 64 and unsigned "
            "8, 16, 32, 64\n");
}

TEST(FfijitSig, UsageErrorsExitOne) {
  EXPECT_EQ(Ffijit("sig --format xml I1!R1!").status, 1);
  EXPECT_EQ(Ffijit("sig --format").status, 1);
  EXPECT_EQ(Ffijit("sig --frobnicate").status, 1);
  const ToolRun two = Ffijit("sig I1!R1! I1!R1!");
  EXPECT_EQ(two.status, 1);
  EXPECT_NE(two.out.find("more than one METADATA argument"), std::string::npos);
  const ToolRun help = Ffijit("sig --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.out.rfind("usage: ffijit sig", 0), 0u);
}

}  // namespace
