// SIP leaves out of raw order (IREE maps a leaf to its raw value by index): arguments reach the
// native parameter their raw index names, results land in the slot their raw index names, and
// errors name the packed argument, alike on every executor.
#include <string>

#include "catch_error.h"
#include "ffijit/container.h"
#include "ffijit/reflect/metadata.h"
#include "jit/interp_test_util.h"

namespace ffijit::testing {
namespace {

using ffijit_tests::CatchError;

Signature FromSip(const char* raw, const char* sip) {
  return ParseMetadata(std::string(R"({"fv":"1","f":")") + raw + R"(","sip":")" + sip + "\"}",
                       MetadataFormat::kSip);
}

extern "C" {
// Raw results (i32, f64); the SIP returns them as [raw 1, raw 0].
void results_swapped(int32_t* r0, double* r1) {
  *r0 = 7;
  *r1 = 2.5;
}
// Raw arguments (i64, f64); the SIP takes them as (raw 1, raw 0).
double args_swapped(int64_t n, double x) {
  return static_cast<double>(n) * 100.0 + x;
}
// Raw arguments (i64, i32, f64), results (i32, i64). The SIP: a = [raw 0, raw 2], b = raw 1
// (leaves 0, 2, 1); results [raw 1, raw 0].
void mixed(int64_t p0, int32_t p1, double p2, int32_t* r0, int64_t* r1) {
  *r0 = p1;
  *r1 = p0 * 1000 + static_cast<int64_t>(p2 * 10);
}
}

class SipLeafOrderTest : public ::testing::TestWithParam<CallPath> {};

TEST_P(SipLeafOrderTest, ResultsLandInTheirSlots) {
  Signature sig = FromSip("I1!R11!S3!t6S3!t2", "I1!R12!S9!k0_1k1_0");
  EXPECT_EQ(CanonicalString(sig), "() -> slist<f64,i32> [result leaves 1,0]");
  Function f = Bind("results_swapped", results_swapped, sig, GetParam());
  Array r = Call(f, {}).cast<Array>();
  ASSERT_EQ(r.size(), 2);
  EXPECT_EQ(r[0].type_index(), kTVMFFIFloat);
  EXPECT_EQ(r[0].cast<double>(), 2.5);
  EXPECT_EQ(r[1].type_index(), kTVMFFIInt);
  EXPECT_EQ(r[1].cast<int64_t>(), 7);
}

TEST_P(SipLeafOrderTest, ArgumentsReachTheirParameters) {
  Signature sig = FromSip("I11!S3!t7S3!t2R6!S3!t2", "I12!S9!k0_1k1_0R3!_0");
  EXPECT_EQ(CanonicalString(sig), "(f64, i64) -> f64 [arg leaves 1,0]");
  Function f = Bind("args_swapped", args_swapped, sig, GetParam());
  EXPECT_EQ(Call(f, {1.5, 3}).cast<double>(), 301.5);
  // The error names the packed argument, not the native parameter.
  Error e = CallError(f, {1.5, "x"});
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_NE(e.message().find("argument #1"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("Expected `i64`"), std::string::npos) << e.message();
  // Both arguments wrong: the first in native order (argument #1, raw index 0) is reported, on
  // every executor.
  Error both = CallError(f, {"y", "x"});
  EXPECT_EQ(both.message(), e.message());
}

TEST_P(SipLeafOrderTest, NestedArgumentsAndResults) {
  // a = [raw 0, raw 2], b = raw 1; results [raw 1, raw 0].
  const SipSignature sip = SipSignature::FromIndexPaths(
      {{std::string("a"), int64_t{0}}, {std::string("b")}, {std::string("a"), int64_t{1}}},
      {{int64_t{1}}, {int64_t{0}}});
  Signature sig = Combine(ParseRaw("I16!S3!t7S3!t6S3!t2R11!S3!t6S3!t7"), sip);
  EXPECT_EQ(CanonicalString(sig),
            "(a: slist<i64,f64>, b: i32) -> slist<i64,i32> [arg leaves 0,2,1] "
            "[result leaves 1,0]");
  Function f = Bind("mixed", mixed, sig, GetParam());
  Array r = Call(f, {Array({Any(int64_t{10}), Any(2.5)}), 7}).cast<Array>();
  ASSERT_EQ(r.size(), 2);
  EXPECT_EQ(r[0].cast<int64_t>(), 10025);
  EXPECT_EQ(r[1].cast<int64_t>(), 7);
  EXPECT_EQ(DescribeFunction(f),
            "mixed(a: slist<i64,f64>, b: i32) -> slist<i64,i32>\n"
            "  convention: plain, returns: void, registers: 4 gpr + 1 sse, stack slots: 0\n"
            "  arg #0 slist<i64,f64> (keyword `a`)\n"
            "    param 0: int64_t <- #0[0] i64 @ gpr[0]\n"
            "    param 2: double <- #0[1] f64 @ sse[0]\n"
            "  arg #1 i32 (keyword `b`)\n"
            "    param 1: int32_t <- #1 i32 @ gpr[1]\n"
            "  result #0[1]: int32_t i32 (out-pointer @ gpr[2])\n"
            "  result #0[0]: int64_t i64 (out-pointer @ gpr[3])\n");
}

INSTANTIATE_TEST_SUITE_P(Paths, SipLeafOrderTest, AllCallPaths(), PathName);

// An order that is not a permutation of the leaves is refused at registration.
TEST(SipLeafOrder, MalformedOrderIsRefused) {
  Signature sig = Sig({S(ScalarKind::kI64), S(ScalarKind::kF64)}, {S(ScalarKind::kF64)});
  sig.arg_leaf_order = {1, 1};
  Error e = CatchError([&] { Bind("args_swapped", args_swapped, sig); });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(),
            "malformed signature: arg_leaf_order is not a permutation of 0..1 (entry 1 is 1)");
  sig.arg_leaf_order = {0};
  e = CatchError([&] { Bind("args_swapped", args_swapped, sig); });
  EXPECT_EQ(e.message(), "malformed signature: arg_leaf_order has 1 entries for 2 argument leaves");
  sig.arg_leaf_order.clear();
  sig.result_leaf_order = {1};
  e = CatchError([&] { Bind("args_swapped", args_swapped, sig); });
  EXPECT_EQ(e.message(),
            "malformed signature: result_leaf_order is not a permutation of 0..0 (entry 0 is 1)");
}

#if FFIJIT_HAVE_LLVM
// A callback passes its C parameters to the packed function in order: a permutation is refused.
TEST(SipLeafOrder, CallbacksRefuseArgumentsOutOfOrder) {
  Function packed = Function::FromTyped([](double x, int64_t n) { return x + n; });
  Error e = CatchError([&] {
    NativeCallback cb(packed, FromSip("I11!S3!t7S3!t2R6!S3!t2", "I12!S9!k0_1k1_0R3!_0"),
                      JitEngine::Default());
  });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(),
            "Cannot make a native callback `callback(f64, i64) -> f64`: its arguments are out of "
            "native order; callbacks pass C parameters in order");
}
#endif

}  // namespace
}  // namespace ffijit::testing
