// Lowering: sources, paths, keywords, conversions, and the placement of a CallPlan by each
// platform's rules (x86-64 System V and AArch64 AAPCS64, both checked on every host).
#include "call_plan.h"
#include "interp_test_util.h"
#include "platform/abi.h"

namespace ffijit::testing {
namespace {

// The plan as `abi` places it, whatever the host.
CallPlan LowerOn(const platform::PlatformAbi& abi, const Signature& sig) {
  CallPlan plan = Lower(sig, "f");
  platform::AssignAbi(plan, abi);
  return plan;
}

TEST(Lower, ScalarsFillGprAndSseThenTheStackInOrder) {
  std::vector<TypePtr> args;
  for (int i = 0; i < 8; ++i) args.push_back(S(ScalarKind::kI32));
  for (int i = 0; i < 9; ++i) args.push_back(S(ScalarKind::kF32));
  CallPlan plan = LowerOn(platform::kX86_64SysV, Sig(args, {S(ScalarKind::kF64)}));
  ASSERT_EQ(plan.params.size(), 17u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(plan.params[i].abi.cls, AbiClass::kGpr);
    EXPECT_EQ(plan.params[i].abi.slot, i);
  }
  EXPECT_EQ(plan.params[6].abi.cls, AbiClass::kStack);
  EXPECT_EQ(plan.params[6].abi.slot, 0);
  EXPECT_EQ(plan.params[7].abi.slot, 1);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(plan.params[8 + i].abi.cls, AbiClass::kSse);
    EXPECT_EQ(plan.params[8 + i].abi.slot, i);
  }
  EXPECT_EQ(plan.params[16].abi.cls, AbiClass::kStack);
  EXPECT_EQ(plan.params[16].abi.slot, 2);
  EXPECT_EQ(plan.num_gpr, 6);
  EXPECT_EQ(plan.num_sse, 8);
  EXPECT_EQ(plan.num_stack, 3);
  EXPECT_EQ(plan.return_kind, ReturnKind::kSse);
}

TEST(Lower, BytesTakeARegisterPairOrGoWholeToTheStack) {
  CallPlan fits = LowerOn(platform::kX86_64SysV,
                          Sig({S(ScalarKind::kI64), T(TypeKind::kBytes)}, {T(TypeKind::kBytes)}));
  EXPECT_EQ(fits.params[1].abi.cls, AbiClass::kGprPair);
  EXPECT_EQ(fits.params[1].abi.slot, 1);
  EXPECT_EQ(fits.return_kind, ReturnKind::kGprPair);
  std::vector<TypePtr> args(5, S(ScalarKind::kI64));
  args.push_back(T(TypeKind::kBytes));
  args.push_back(S(ScalarKind::kI64));
  CallPlan spills = LowerOn(platform::kX86_64SysV, Sig(args, {}));
  EXPECT_EQ(spills.params[5].abi.cls, AbiClass::kStackPair);
  EXPECT_EQ(spills.params[5].abi.slot, 0);
  // The register left free is still used by a later scalar (System V; not so on AArch64).
  EXPECT_EQ(spills.params[6].abi.cls, AbiClass::kGpr);
  EXPECT_EQ(spills.params[6].abi.slot, 5);
  EXPECT_EQ(spills.num_stack, 2);
}

TEST(Lower, DeviceAndDataTypeAreOneRegisterEach) {
  CallPlan plan = LowerOn(platform::kX86_64SysV,
                          Sig({T(TypeKind::kDevice), T(TypeKind::kDataType), S(ScalarKind::kI64)},
                              {T(TypeKind::kDevice)}));
  EXPECT_EQ(plan.params[0].conversion, Conversion::kDevice);
  EXPECT_EQ(plan.params[0].abi.cls, AbiClass::kGpr);
  EXPECT_EQ(plan.params[1].conversion, Conversion::kDataType);
  EXPECT_EQ(plan.params[1].abi.slot, 1);
  EXPECT_EQ(plan.params[2].abi.slot, 2);
  EXPECT_EQ(plan.return_kind, ReturnKind::kGpr);
}

TEST(LowerAarch64, EightIntegerAndEightVectorRegistersThenEightByteStackSlots) {
  std::vector<TypePtr> args;
  for (int i = 0; i < 9; ++i) args.push_back(S(ScalarKind::kI8));
  for (int i = 0; i < 9; ++i) args.push_back(S(ScalarKind::kF16));
  CallPlan plan = LowerOn(platform::kAarch64, Sig(args, {S(ScalarKind::kBF16)}));
  ASSERT_EQ(plan.params.size(), 18u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(plan.params[i].abi.cls, AbiClass::kGpr);
    EXPECT_EQ(plan.params[i].abi.slot, i);
    EXPECT_EQ(plan.params[9 + i].abi.cls, AbiClass::kSse);
    EXPECT_EQ(plan.params[9 + i].abi.slot, i);
  }
  // Narrow integers and f16 alike take a whole 8-byte slot once the registers are used up (Linux;
  // Apple's arm64 would pack them).
  EXPECT_EQ(plan.params[8].abi.cls, AbiClass::kStack);
  EXPECT_EQ(plan.params[8].abi.slot, 0);
  EXPECT_EQ(plan.params[17].abi.cls, AbiClass::kStack);
  EXPECT_EQ(plan.params[17].abi.slot, 1);
  EXPECT_EQ(plan.num_gpr, 8);
  EXPECT_EQ(plan.num_sse, 8);
  EXPECT_EQ(plan.num_stack, 2);
  EXPECT_EQ(plan.return_kind, ReturnKind::kSse);
}

// AAPCS64 C.13: a composite that does not fit in the x registers left goes whole to the stack and
// closes the x registers: a later integer goes to the stack too (System V would use the register).
TEST(LowerAarch64, BytesTakeTwoXRegistersOrSpillAndCloseTheRest) {
  CallPlan fits = LowerOn(platform::kAarch64,
                          Sig({S(ScalarKind::kI64), T(TypeKind::kBytes)}, {T(TypeKind::kBytes)}));
  EXPECT_EQ(fits.params[1].abi.cls, AbiClass::kGprPair);
  EXPECT_EQ(fits.params[1].abi.slot, 1);
  EXPECT_EQ(fits.return_kind, ReturnKind::kGprPair);
  std::vector<TypePtr> args(7, S(ScalarKind::kI64));
  args.push_back(T(TypeKind::kBytes));
  args.push_back(S(ScalarKind::kI64));
  args.push_back(S(ScalarKind::kF64));
  CallPlan spills =
      LowerOn(platform::kAarch64, Sig(args, {S(ScalarKind::kI32), S(ScalarKind::kI32)}));
  EXPECT_EQ(spills.params[6].abi.cls, AbiClass::kGpr);
  EXPECT_EQ(spills.params[6].abi.slot, 6);
  EXPECT_EQ(spills.params[7].abi.cls, AbiClass::kStackPair);
  EXPECT_EQ(spills.params[7].abi.slot, 0);
  EXPECT_EQ(spills.params[8].abi.cls, AbiClass::kStack);  // x7 stays unused
  EXPECT_EQ(spills.params[8].abi.slot, 2);
  EXPECT_EQ(spills.params[9].abi.cls, AbiClass::kSse);  // the v registers are not closed
  EXPECT_EQ(spills.params[9].abi.slot, 0);
  // Out-pointers are pointers: on the stack too, after the arguments.
  EXPECT_EQ(spills.results[0].out_abi.cls, AbiClass::kStack);
  EXPECT_EQ(spills.results[0].out_abi.slot, 3);
  EXPECT_EQ(spills.results[1].out_abi.slot, 4);
  EXPECT_EQ(spills.num_gpr, 7);
  EXPECT_EQ(spills.num_stack, 5);
  // The same signature on x86-64: x7 has no equivalent, but the register left is used again.
  CallPlan sysv = LowerOn(platform::kX86_64SysV, Sig(args, {}));
  EXPECT_EQ(sysv.params[6].abi.cls, AbiClass::kStack);
}

TEST(LowerAarch64, TheIrTypesAreTheOnesClangEmits) {
  // A register pair and a spilled pair are both [2 x i64] (never byval, never two scalars); on
  // x86-64 two i64 in registers and a byval copy on the stack.
  std::vector<TypePtr> args(7, S(ScalarKind::kI64));
  args.push_back(T(TypeKind::kBytes));
  args.insert(args.begin(), T(TypeKind::kBytes));
  args.push_back(S(ScalarKind::kF32));
  using platform::IrType;
  CallPlan a64 = LowerOn(platform::kAarch64, Sig(args, {T(TypeKind::kDevice)}));
  std::vector<IrType> want(1, IrType::kI64Array2);
  for (int i = 0; i < 7; ++i) want.push_back(IrType::kI64);
  want.push_back(IrType::kI64Array2);
  want.push_back(IrType::kF32);
  want.push_back(IrType::kI64);  // DLDevice returned in x0
  EXPECT_EQ(platform::NativeIrSignature(platform::kAarch64, a64), want);
  CallPlan sysv = LowerOn(platform::kX86_64SysV, Sig(args, {T(TypeKind::kDevice)}));
  std::vector<IrType> sysv_want = {IrType::kI64, IrType::kI64};
  for (int i = 0; i < 7; ++i) sysv_want.push_back(IrType::kI64);
  sysv_want.push_back(IrType::kByvalPair);
  sysv_want.push_back(IrType::kF32);
  sysv_want.push_back(IrType::kI64);
  EXPECT_EQ(platform::NativeIrSignature(platform::kX86_64SysV, sysv), sysv_want);
}

// A platform without an ABI layer keeps every value in its own frame word for libffi.
TEST(LowerGeneric, EveryValueInItsOwnFrameWord) {
  CallPlan plan = LowerOn(platform::kGeneric,
                          Sig({S(ScalarKind::kI32), T(TypeKind::kBytes), S(ScalarKind::kF64)},
                              {S(ScalarKind::kI32), S(ScalarKind::kF32)}));
  EXPECT_EQ(plan.params[0].abi.cls, AbiClass::kStack);
  EXPECT_EQ(plan.params[1].abi.cls, AbiClass::kStackPair);
  EXPECT_EQ(plan.params[1].abi.slot, 1);
  EXPECT_EQ(plan.params[2].abi.slot, 3);
  EXPECT_EQ(plan.results[0].out_abi.slot, 4);
  EXPECT_EQ(plan.results[1].out_abi.slot, 5);
  EXPECT_EQ(plan.num_gpr, 0);
  EXPECT_EQ(plan.num_stack, 6);
  EXPECT_EQ(platform::FrameIndex(platform::kGeneric, plan.params[2].abi), 3);
  EXPECT_EQ(platform::FrameIndex(platform::kAarch64, AbiLocation{AbiClass::kSse, 2}), 10);
  EXPECT_EQ(platform::FrameIndex(platform::kX86_64SysV, AbiLocation{AbiClass::kSse, 2}), 8);
  EXPECT_EQ(platform::FrameIndex(platform::kAarch64, AbiLocation{AbiClass::kStack, 1}), 17);
}

TEST(Lower, StructuresRecordTheirPath) {
  auto inner = Type::Sequence(TypeKind::kSTuple, {S(ScalarKind::kF64), T(TypeKind::kStr)});
  auto dict = Type::SDict({"x", "inner"}, {S(ScalarKind::kI64), inner});
  CallPlan plan = Lower(Sig({S(ScalarKind::kI8), Type::Named("d", dict)}, {}), "f");
  ASSERT_EQ(plan.args.size(), 2u);
  EXPECT_EQ(plan.args[1].keyword, "d");
  EXPECT_EQ(plan.args[1].first_param, 1);
  EXPECT_EQ(plan.args[1].num_params, 3);
  const NativeParam& s = plan.params[3];
  EXPECT_EQ(s.position, 1);
  EXPECT_EQ(s.conversion, Conversion::kStr);
  ASSERT_EQ(s.path_size, 2);
  const PathStep& first = plan.path_steps[s.path_begin];
  const PathStep& second = plan.path_steps[s.path_begin + 1];
  EXPECT_EQ(first.kind, PathStep::kMapKey);
  EXPECT_EQ(first.key, "inner");
  EXPECT_EQ(second.kind, PathStep::kArrayIndex);
  EXPECT_EQ(second.index, 1);
  EXPECT_EQ(second.expected_size, 2);
  EXPECT_EQ(second.container_type, "stuple<f64,str>");
  EXPECT_EQ(plan.KeywordPosition("d"), 1);
  EXPECT_EQ(plan.KeywordPosition("x"), -1);
  EXPECT_TRUE(plan.has_keywords());
}

// The plan's texts: the declaration names the function, the canonical form (the thunk cache key) is
// the Signature's, and every argument and parameter states its type as errors quote it.
TEST(Lower, DeclarationCanonicalAndTypeTexts) {
  auto tuple = Type::Sequence(TypeKind::kSTuple, {S(ScalarKind::kF64), T(TypeKind::kStr)});
  for (CallConvention convention : {CallConvention::kPlain, CallConvention::kStatus}) {
    Signature sig = Sig({Type::Named("n", S(ScalarKind::kI64)), tuple, T(TypeKind::kStr)},
                        {S(ScalarKind::kF32)}, convention);
    CallPlan plan = Lower(sig, "fn");
    EXPECT_EQ(plan.canonical, CanonicalString(sig));
    EXPECT_EQ(plan.declaration, "fn" + DeclarationString("", sig));
    ASSERT_EQ(plan.args.size(), 3u);
    EXPECT_EQ(plan.args[0].type_text, "i64");
    EXPECT_EQ(plan.args[1].type_text, "stuple<f64,str>");
    EXPECT_EQ(plan.args[2].type_text, "str");
    ASSERT_EQ(plan.params.size(), 4u);
    EXPECT_EQ(plan.params[0].type_text, "i64");
    EXPECT_EQ(plan.params[1].type_text, "f64");
    EXPECT_EQ(plan.params[2].type_text, "str");
    EXPECT_EQ(plan.params[3].type_text, "str");
  }
  EXPECT_EQ(Lower(Sig({}, {}, CallConvention::kStatus), "g").canonical, "() -> None [status]");
}

TEST(Lower, ResultsByReturnOrOutPointer) {
  CallPlan one = Lower(Sig({}, {S(ScalarKind::kI32)}), "f");
  EXPECT_TRUE(one.results[0].by_return);
  EXPECT_EQ(one.return_kind, ReturnKind::kGpr);
  CallPlan two = LowerOn(platform::kX86_64SysV,
                         Sig({S(ScalarKind::kF64)}, {S(ScalarKind::kI32), S(ScalarKind::kF32)}));
  EXPECT_EQ(two.return_kind, ReturnKind::kVoid);
  EXPECT_FALSE(two.results[0].by_return);
  EXPECT_EQ(two.results[0].out_abi.cls, AbiClass::kGpr);
  EXPECT_EQ(two.results[0].out_abi.slot, 0);
  EXPECT_EQ(two.results[1].out_abi.slot, 1);
  CallPlan status = Lower(Sig({}, {S(ScalarKind::kI32)}, CallConvention::kStatus), "f");
  EXPECT_EQ(status.return_kind, ReturnKind::kStatus);
  EXPECT_FALSE(status.results[0].by_return);
}

TEST(Lower, TensorChecksAndObjects) {
  CallPlan plan = Lower(
      Sig({Type::NDArray(ScalarKind::kBF16, 2, {-1, 4}), Type::Object("ffi.Array")}, {}), "f");
  const TensorCheck& t = plan.params[0].tensor;
  EXPECT_TRUE(t.check_dtype);
  EXPECT_EQ(t.dtype.code, kDLBfloat);
  EXPECT_EQ(t.dtype.bits, 16);
  EXPECT_EQ(t.rank, 2);
  EXPECT_EQ(t.dims, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(plan.params[1].object_type_index, kTVMFFIArray);
  EXPECT_EQ(plan.canonical,
            CanonicalString(Sig(
                {Type::NDArray(ScalarKind::kBF16, 2, {-1, 4}), Type::Object("ffi.Array")}, {})));
}

// A structure result is its leaves, depth first, in out-pointers (one leaf: returned), and the
// shape that rebuilds it, preorder.
TEST(Lower, StructureResultsAreLeavesAndAShape) {
  auto inner = Type::Sequence(TypeKind::kSTuple, {S(ScalarKind::kF64), nullptr});
  auto dict = Type::SDict({"k", "t"}, {S(ScalarKind::kI32), inner});
  CallPlan plan = Lower(Sig({}, {S(ScalarKind::kI64), dict}), "f");
  ASSERT_EQ(plan.results.size(), 3u);
  EXPECT_EQ(plan.results[0].label, "#0");
  EXPECT_EQ(plan.results[1].label, "#1[\"k\"]");
  EXPECT_EQ(plan.results[2].label, "#1[\"t\"][0]");
  EXPECT_EQ(plan.results[2].conversion, Conversion::kF64);
  for (const ResultSlot& r : plan.results) EXPECT_FALSE(r.by_return);
  std::string shape;
  for (const ResultNode& n : plan.result_shape) {
    shape += "LGAM"[n.kind];
    shape += std::to_string(n.size);
    for (const std::string& k : n.keys) shape += k;
  }
  EXPECT_EQ(shape, "A2L0M2ktL0A2L0G0");
  EXPECT_TRUE(plan.packs_results());

  CallPlan one = Lower(Sig({}, {Type::Sequence(TypeKind::kSList, {S(ScalarKind::kI64)})}), "g");
  ASSERT_EQ(one.results.size(), 1u);
  EXPECT_TRUE(one.results[0].by_return);
  EXPECT_EQ(one.result_shape.size(), 2u);
  EXPECT_TRUE(one.packs_results());

  // Without a structure there is no shape: one result as itself, several as an Array.
  CallPlan flat = Lower(Sig({}, {S(ScalarKind::kI64), S(ScalarKind::kI64)}), "h");
  EXPECT_TRUE(flat.result_shape.empty());
  EXPECT_EQ(flat.results[1].label, "#1");
}

TEST(Lower, PlanToStringShowsEveryDecision) {
  CallPlan plan = Lower(
      Sig({Type::Named("a", S(ScalarKind::kI64)), S(ScalarKind::kF64)}, {S(ScalarKind::kF64)}),
      "add");
  EXPECT_EQ(PlanToString(plan),
            "add(a: i64, f64) -> f64\n"
            "  convention: plain, returns: sse, registers: 1 gpr + 1 sse, stack slots: 0\n"
            "  arg #0 i64 (keyword `a`)\n"
            "    param 0: int64_t <- #0 i64 @ gpr[0]\n"
            "  arg #1 f64\n"
            "    param 1: double <- #1 f64 @ sse[0]\n"
            "  result #0: double f64 (returned)\n");
}

}  // namespace
}  // namespace ffijit::testing
