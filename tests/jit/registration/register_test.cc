// Registration (C++ and C), global names, lifetime, keyword calls, deduced signatures.
#include <functional>
#include <string>

#include "ffijit/jit/bridge.h"
#include "interpreter/bound_function.h"
#include "jit/interp_test_util.h"

namespace ffijit::testing {
namespace {

extern "C" {
int64_t add(int64_t a, int64_t b) {
  return a + b;
}
double scale(int64_t x, double k, int32_t bias) {
  return static_cast<double>(x) * k + bias;
}
}

// Takes the raised error of a failed C call.
Error Raised() {
  return Error::MoveFromRaised();
}

TEST(Register, DeducedSignatureAndGlobalName) {
  Function f = Register("test.add.deduced", &add);
  std::optional<Function> global = GetGlobalFunction("test.add.deduced");
  ASSERT_TRUE(global.has_value());
  EXPECT_EQ(global->get(), f.get());
  EXPECT_EQ((*global)(2, 40).cast<int64_t>(), 42);
  RemoveGlobalFunction("test.add.deduced");
  EXPECT_FALSE(GetGlobalFunction("test.add.deduced").has_value());
  EXPECT_EQ(f(1, 1).cast<int64_t>(), 2);  // still alive through `f`
}

TEST(Register, DuplicateNameNeedsOverride) {
  Function f = Register("test.add.dup", &add);
  try {
    Register("test.add.dup", &add);
    ADD_FAILURE() << "registered twice";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "RuntimeError");
    EXPECT_EQ(e.message(), "Global Function `test.add.dup` is already registered");
  }
  RegisterOptions options;
  options.allow_override = true;
  Function g = Register("test.add.dup", &scale, options);
  EXPECT_EQ(GetGlobalFunctionOrThrow("test.add.dup").get(), g.get());
  RemoveGlobalFunction("test.add.dup");
  try {
    RemoveGlobalFunction("test.add.dup");
    ADD_FAILURE() << "unregistered twice";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "KeyError");
  }
}

TEST(Register, MetadataTextAndGlobalNameOption) {
  RegisterOptions options;
  options.global_name = "test.scale.global";
  Function f =
      Register("scale", reinterpret_cast<void*>(&scale),
               R"({"a":["i64","f64","i32"],"r":["f64"],"v":1})", MetadataFormat::kJson, options);
  EXPECT_EQ(GetGlobalFunctionOrThrow("test.scale.global")(2, 1.5, 1).cast<double>(), 4.0);
  Error e = CallError(f, {1, "x", 1});
  EXPECT_EQ(e.message(),
            "Mismatched type on argument #1 when calling: `scale(i64, f64, i32) -> f64`. Expected "
            "`f64` but got `str`");
  RemoveGlobalFunction("test.scale.global");
}

TEST(Register, BadInputsAreClearErrors) {
  try {
    MakeFunction("null", nullptr, Sig({}, {}));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "cannot bind `null`: NULL target");
  }
  try {
    MakeFunction("bad", reinterpret_cast<void*>(&add), "{not json", MetadataFormat::kJson);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "ValueError");
  }
  RegisterOptions too_many;
  too_many.arg_names = {"a", "b", "c"};
  try {
    MakeFunction("add", &add, too_many);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "3 argument names for 2 arguments");
  }
  try {
    MakeFunction(
        "s", reinterpret_cast<void*>(&add),
        Sig({Type::Named("a", S(ScalarKind::kI64)), Type::Named("a", S(ScalarKind::kI64))}, {}));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "ValueError");
    EXPECT_EQ(e.message(), "malformed signature: keyword `a` appears twice");
  }
}

TEST(Register, LastReferenceFreesTheBinding) {
  Function f = MakeFunction("add", &add);
  TVMFFIObject* obj = f.get();
  EXPECT_TRUE(IsBoundFunction(obj));
  EXPECT_EQ(FFIJITHeaderStrongCount(obj), 1u);
  Register("test.add.lifetime", reinterpret_cast<void*>(&add), SignatureOf<decltype(&add)>());
  RemoveGlobalFunction("test.add.lifetime");
  // Under ASan/LSan a leaked plan or object fails the run; here: the object is a live Function.
  EXPECT_EQ(obj->type_index, kTVMFFIFunction);
}

TEST(Keywords, BindByNameInAnyOrder) {
  RegisterOptions options;
  options.arg_names = {"x", "k", "bias"};
  options.interpret_only = true;
  Function f = MakeFunction("scale", &scale, options);
  Any x = 3, k = 2.0, bias = 1;
  EXPECT_EQ(CallWithKeywords(f, {x}, {{"bias", bias}, {"k", k}}).cast<double>(), 7.0);
  EXPECT_EQ(CallWithKeywords(f, {}, {{"k", k}, {"x", x}, {"bias", bias}}).cast<double>(), 7.0);
  EXPECT_EQ(CallWithKeywords(f, {x, k, bias}, {}).cast<double>(), 7.0);
}

TEST(Keywords, UnknownDuplicateMissingAndTooMany) {
  RegisterOptions options;
  options.arg_names = {"x", "k", "bias"};
  Function f = MakeFunction("scale", &scale, options);
  Any x = 3, k = 2.0, bias = 1;
  const std::string decl = "`scale(x: i64, k: f64, bias: i32) -> f64`";
  try {
    CallWithKeywords(f, {x, k}, {{"bogus", bias}});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "KeyError");
    EXPECT_EQ(e.message(), "Unknown keyword argument `bogus` when calling: " + decl);
  }
  try {
    CallWithKeywords(f, {x, k}, {{"x", x}, {"bias", bias}});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
    EXPECT_EQ(e.message(), "Duplicate value for argument #0 (`x`) when calling: " + decl);
  }
  try {
    CallWithKeywords(f, {x}, {{"bias", bias}});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
    EXPECT_EQ(e.message(), "Missing argument #1 (`k`) when calling: " + decl);
  }
  try {
    CallWithKeywords(f, {x, k, bias, x}, {});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "Mismatched number of arguments when calling: " + decl +
                               ". Expected 3 but got 4 arguments");
  }
  // A keyword value of the wrong type is reported at its position.
  try {
    Any no = "no";
    CallWithKeywords(f, {x, k}, {{"bias", no}});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "Mismatched type on argument #2 when calling: " + decl +
                               ". Expected `i32` but got `str`");
  }
}

TEST(Keywords, PositionalOnlyArgumentsHaveNoKeyword) {
  Function f = MakeFunction("add", &add);
  Any one = 1;
  try {
    CallWithKeywords(f, {one}, {{"b", one}});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "KeyError");
  }
  // A Function made elsewhere accepts keyword-free calls only.
  Function packed = Function::FromPacked([](const AnyView*, int32_t n, Any* out) { *out = n; });
  EXPECT_EQ(CallWithKeywords(packed, {one, one}, {}).cast<int64_t>(), 2);
  try {
    CallWithKeywords(packed, {}, {{"a", one}});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
  }
}

TEST(BridgeC, RegisterCallDescribeRemove) {
  TVMFFIObjectHandle handle = nullptr;
  ASSERT_EQ(FFIJITRegister(reinterpret_cast<void*>(&add), "I11!S3!t7S3!t7R6!S3!t7",
                           kFFIJITFormatRaw, kFFIJITInterpretOnly, "test.c.add", &handle),
            0);
  Function f = Function::Adopt(handle);
  EXPECT_EQ(GetGlobalFunctionOrThrow("test.c.add")(20, 22).cast<int64_t>(), 42);
  TVMFFIAny text{};
  ASSERT_EQ(FFIJITDescribeFunction(f.get(), &text), 0);
  std::string plan = Any::Adopt(text).cast<std::string>();
  EXPECT_NE(plan.find("test.c.add(i64, i64) -> i64"), std::string::npos) << plan;
  EXPECT_NE(plan.find("gpr[1]"), std::string::npos) << plan;
  TVMFFIByteArray name{"test.c.add", 10};
  ASSERT_EQ(FFIJITFunctionRemoveGlobal(&name), 0);
  EXPECT_EQ(FFIJITFunctionRemoveGlobal(&name), -1);
  EXPECT_EQ(Raised().kind(), "KeyError");
}

// FFIJITIsJitCompiled's answer for `func`, checking that the call itself succeeded.
int IsCompiledFromC(TVMFFIObjectHandle func) {
  int compiled = -1;
  EXPECT_EQ(FFIJITIsJitCompiled(func, &compiled), 0);
  return compiled;
}

int64_t c_compiled(int16_t a, uint32_t b) {
  return a * static_cast<int64_t>(b);
}

// FFIJITCompileNow moves a function to its thunk from C, or says why it cannot.
TEST(BridgeC, CompileNowFromC) {
  const char* sig = R"({"a":["i16","u32"],"r":["i64"],"v":1})";
  TVMFFIObjectHandle handle = nullptr;
  {
    // Not even a stencil thunk until asked.
    ScopedJitOptions never({JitPolicy::kNever, 0});
    ASSERT_EQ(FFIJITMakeFunction(reinterpret_cast<void*>(&c_compiled), sig, kFFIJITFormatJson, 0,
                                 "c_compiled", &handle),
              0);
  }
  Function f = Function::Adopt(handle);
  EXPECT_EQ(IsCompiledFromC(f.get()), 0);
#if FFIJIT_HAVE_LLVM
  ASSERT_EQ(FFIJITCompileNow(f.get()), 0);
  EXPECT_EQ(IsCompiledFromC(f.get()), 1);
#else
  EXPECT_EQ(FFIJITCompileNow(f.get()), -1);
  EXPECT_EQ(Raised().message(),
            "FFIJITCompileNow: the function stays interpreted: this ffijit was built without LLVM "
            "(FFIJIT_ENABLE_JIT=OFF)");
  EXPECT_EQ(IsCompiledFromC(f.get()), 0);
#endif
  EXPECT_EQ(f(-3, 5).cast<int64_t>(), -15);

  TVMFFIObjectHandle interpreted = nullptr;
  ASSERT_EQ(FFIJITMakeFunction(reinterpret_cast<void*>(&c_compiled), sig, kFFIJITFormatJson,
                               kFFIJITInterpretOnly, "c_interpreted", &interpreted),
            0);
  Function g = Function::Adopt(interpreted);
  EXPECT_EQ(FFIJITCompileNow(g.get()), -1);
  Error e = Raised();
  EXPECT_EQ(e.kind(), "RuntimeError");
  EXPECT_EQ(e.message().rfind("FFIJITCompileNow: the function stays interpreted: ", 0), 0u);
  EXPECT_EQ(IsCompiledFromC(g.get()), 0);
  EXPECT_EQ(FFIJITCompileNow(nullptr), -1);
  EXPECT_EQ(Raised().message(), "FFIJITCompileNow: `func` must not be NULL");
  // Not a BoundFunction: never compiled, and the query itself succeeds.
  Function packed = Function::FromTyped([](int64_t x) { return x; });
  EXPECT_EQ(IsCompiledFromC(packed.get()), 0);
  // The query follows the 0/-1 convention: NULL arguments are a ValueError naming them.
  int compiled = 7;
  EXPECT_EQ(FFIJITIsJitCompiled(nullptr, &compiled), -1);
  EXPECT_EQ(Raised().message(), "FFIJITIsJitCompiled: `func` must not be NULL");
  EXPECT_EQ(compiled, 7);
  EXPECT_EQ(FFIJITIsJitCompiled(f.get(), nullptr), -1);
  Error missing_out = Raised();
  EXPECT_EQ(missing_out.kind(), "ValueError");
  EXPECT_EQ(missing_out.message(), "FFIJITIsJitCompiled: `out` must not be NULL");
}

// FFIJITFunctionTier's answer for `func`, checking that the call itself succeeded.
int TierFromC(TVMFFIObjectHandle func) {
  int tier = -1;
  EXPECT_EQ(FFIJITFunctionTier(func, &tier), 0);
  return tier;
}

// `add` made from C under `options` (the C flags carry no policy; the per-registration scope does).
Function AddFromC(const char* name, int flags, const JitOptions& options) {
  ScopedJitOptions scope(options);
  TVMFFIObjectHandle handle = nullptr;
  EXPECT_EQ(FFIJITMakeFunction(reinterpret_cast<void*>(&add), R"({"a":["i64","i64"],"r":["i64"]})",
                               kFFIJITFormatJson, flags, name, &handle),
            0);
  return Function::Adopt(handle);
}

// Every tier a function reaches without a JIT module, by policy and the forcing APIs (no count
// runs out: nothing compiles in the background). The hot tier with its native inlined needs a
// native of LLVM IR: tests/jit/orc/modules/jit_module_inline_test.cc.
TEST(BridgeC, FunctionTierFromC) {
  Function pinned = AddFromC("tier_pinned", kFFIJITInterpretOnly, JitOptions{});
  Function never = AddFromC("tier_never", 0, {JitPolicy::kNever, 0, 0});
  Function stencil = AddFromC("tier_stencil", 0, {JitPolicy::kAfterCalls, 100, 0});
  EXPECT_EQ(TierFromC(pinned.get()), kFFIJITTierInterpreted);
  EXPECT_EQ(TierFromC(never.get()), kFFIJITTierInterpreted);
  EXPECT_EQ(IsCompiledFromC(never.get()), 0);
#if FFIJIT_HAVE_STENCILS
  // (i64, i64) -> i64 is covered: the stencil thunk is installed at registration.
  EXPECT_EQ(TierFromC(stencil.get()), kFFIJITTierStencil);
  EXPECT_EQ(IsCompiledFromC(stencil.get()), 1);
#else
  EXPECT_EQ(TierFromC(stencil.get()), kFFIJITTierInterpreted);
#endif
  EXPECT_EQ(stencil(20, 22).cast<int64_t>(), 42);
#if FFIJIT_HAVE_LLVM
  ASSERT_EQ(FFIJITCompileNow(never.get()), 0);
  EXPECT_EQ(TierFromC(never.get()), kFFIJITTierLlvm);
  EXPECT_EQ(IsCompiledFromC(never.get()), 1);
  JitEngine::Default().CompileHotNow(never);
  EXPECT_EQ(TierFromC(never.get()), kFFIJITTierHot);
  EXPECT_EQ(IsCompiledFromC(never.get()), 1);
  EXPECT_EQ(Tier(never), kFFIJITTierHot);
  EXPECT_TRUE(IsHotCompiled(never));
  EXPECT_FALSE(IsHotInlined(never));  // a native of the process is called, not inlined
  // An explicit compile moves a function from its stencil thunk to the cold tier.
  ASSERT_EQ(FFIJITCompileNow(stencil.get()), 0);
  EXPECT_EQ(TierFromC(stencil.get()), kFFIJITTierLlvm);
  EXPECT_FALSE(IsHotCompiled(stencil));
#endif
  EXPECT_EQ(TierFromC(pinned.get()), kFFIJITTierInterpreted);
  for (const Function* f : {&pinned, &never, &stencil}) EXPECT_EQ((*f)(2, 3).cast<int64_t>(), 5);
}

// The error `body` throws, or a test failure.
Error ThrownBy(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "nothing thrown";
  return Error("", "");
}

TEST(BridgeC, FunctionTierRefusesWhatHasNoTier) {
  Function f = AddFromC("tier_bad_input", kFFIJITInterpretOnly, JitOptions{});
  int tier = 7;
  EXPECT_EQ(FFIJITFunctionTier(nullptr, &tier), -1);
  Error no_func = Raised();
  EXPECT_EQ(no_func.kind(), "ValueError");
  EXPECT_EQ(no_func.message(), "FFIJITFunctionTier: `func` must not be NULL");
  EXPECT_EQ(FFIJITFunctionTier(f.get(), nullptr), -1);
  Error no_out = Raised();
  EXPECT_EQ(no_out.kind(), "ValueError");
  EXPECT_EQ(no_out.message(), "FFIJITFunctionTier: `out` must not be NULL");
  // A packed function of another origin has no tier; *out is left alone.
  Function packed = Function::FromTyped([](int64_t x) { return x; });
  EXPECT_EQ(FFIJITFunctionTier(packed.get(), &tier), -1);
  Error foreign = Raised();
  EXPECT_EQ(foreign.kind(), "TypeError");
  EXPECT_EQ(foreign.message(),
            "FFIJITFunctionTier: the function has no tier: not a function made by ffijit's "
            "registration");
  EXPECT_EQ(tier, 7);
  EXPECT_EQ(IsCompiledFromC(packed.get()), 0);

  // The C++ forms say the same.
  Error cxx_foreign = ThrownBy([&] { Tier(packed); });
  EXPECT_EQ(cxx_foreign.kind(), "TypeError");
  EXPECT_EQ(cxx_foreign.message(),
            "the function has no tier: not a function made by ffijit's registration");
  Error cxx_null = ThrownBy([] { Tier(Function()); });
  EXPECT_EQ(cxx_null.kind(), "ValueError");
  EXPECT_EQ(cxx_null.message(), "the function has no tier: the Function is null");
  for (const Function& none : {packed, Function()}) {
    EXPECT_FALSE(IsJitCompiled(none));
    EXPECT_FALSE(IsHotCompiled(none));
    EXPECT_FALSE(IsHotInlined(none));
  }
}

TEST(BridgeC, TierNamesAreTheOnesPythonAndTheToolShow) {
  EXPECT_STREQ(TierName(kFFIJITTierInterpreted), "interpreted");
  EXPECT_STREQ(TierName(kFFIJITTierStencil), "stencil");
  EXPECT_STREQ(TierName(kFFIJITTierLlvm), "llvm");
  EXPECT_STREQ(TierName(kFFIJITTierHot), "hot");
  EXPECT_STREQ(TierName(kFFIJITTierHotInlined), "hot_inlined");
  for (int bad : {-1, 5}) {
    Error e = ThrownBy([bad] { TierName(static_cast<FFIJITTier>(bad)); });
    EXPECT_EQ(e.kind(), "ValueError");
    EXPECT_EQ(e.message(), "TierName: " + std::to_string(bad) + " is no FFIJITTier");
  }
}

TEST(BridgeC, BadArgumentsRaise) {
  TVMFFIObjectHandle handle = nullptr;
  EXPECT_EQ(FFIJITMakeFunction(reinterpret_cast<void*>(&add), nullptr, 0, 0, "x", &handle), -1);
  EXPECT_EQ(Raised().message(), "FFIJITMakeFunction: `metadata` must not be NULL");
  EXPECT_EQ(FFIJITMakeFunction(reinterpret_cast<void*>(&add), "I11!S3!t7S3!t7R6!S3!t7", 9, 0, "x",
                               &handle),
            -1);
  EXPECT_EQ(Raised().message(),
            "unknown metadata format 9 (expected 0 auto, 1 json, 2 raw, 3 sip or 4 declaration)");
  EXPECT_EQ(FFIJITMakeFunction(reinterpret_cast<void*>(&add), "I11!S3!t7S3!t7R6!S3!t7", 0, 64, "x",
                               &handle),
            -1);
  EXPECT_EQ(Raised().message(), "unknown registration flags 64");
  EXPECT_EQ(FFIJITMakeFunction(reinterpret_cast<void*>(&add), "garbage(", 0, 0, "x", &handle), -1);
  EXPECT_EQ(Raised().kind(), "ValueError");
  EXPECT_EQ(FFIJITRegister(reinterpret_cast<void*>(&add), "I11!S3!t7S3!t7R6!S3!t7", 0, 0, nullptr,
                           nullptr),
            -1);
  EXPECT_EQ(Raised().message(), "FFIJITRegister: `global_name` must not be NULL");
  EXPECT_EQ(handle, nullptr);
}

TEST(BridgeC, StatusFlagAndKeywordsThroughC) {
  TVMFFIObjectHandle handle = nullptr;
  ASSERT_EQ(
      FFIJITMakeFunction(reinterpret_cast<void*>(&add),
                         R"({"a":[["named","a","i64"],["named","b","i64"]],"r":["i64"],"v":1})",
                         kFFIJITFormatJson, 0, "add", &handle),
      0);
  Function f = Function::Adopt(handle);
  TVMFFIAny one{};
  one.type_index = kTVMFFIInt;
  one.v_int64 = 1;
  TVMFFIAny two = one;
  two.v_int64 = 2;
  const char* names[] = {"b"};
  TVMFFIAny result{};
  ASSERT_EQ(FFIJITCallWithKeywords(f.get(), &one, 1, names, &two, 1, &result), 0);
  EXPECT_EQ(result.v_int64, 3);
  EXPECT_EQ(FFIJITCallWithKeywords(f.get(), &one, 1, nullptr, &two, 1, &result), -1);
  EXPECT_EQ(Raised().message(), "FFIJITCallWithKeywords: `kw_names` must not be NULL");
  EXPECT_EQ(FFIJITCallWithKeywords(nullptr, &one, 1, nullptr, nullptr, 0, &result), -1);
  EXPECT_EQ(Raised().kind(), "ValueError");
}

// FFIJITDescribeArguments reads each top-level argument's kind and keyword from the CallPlan: a
// kind only for an argument that is one parameter read without a structure path.
TEST(BridgeC, DescribeArgumentsFromThePlan) {
  const char* sig =
      R"({"a":["i32","i1","u64",["named","k","f32"],["ndarray","f32",1,null],"ptr","str",)"
      R"(["sdict",["a","i64"]],["named","pair",["stuple","i64","i64"]]],"r":["i64"],"v":1})";
  TVMFFIObjectHandle handle = nullptr;
  ASSERT_EQ(
      FFIJITMakeFunction(reinterpret_cast<void*>(&add), sig, kFFIJITFormatJson,
                         kFFIJITInterpretOnly | kFFIJITStatusConvention, "described", &handle),
      0);
  Function f = Function::Adopt(handle);
  FFIJITFunctionInfo info{};
  ASSERT_EQ(FFIJITDescribeArguments(f.get(), &info, nullptr, 0), 0);
  EXPECT_STREQ(info.name, "described");
  EXPECT_EQ(std::string(info.declaration).rfind("described(i32, i1, u64, ", 0), 0u)
      << info.declaration;
  EXPECT_EQ(info.status_convention, 1);
  ASSERT_EQ(info.num_args, 9);
  FFIJITArgumentInfo args[9];
  // Fewer slots than arguments: only those are written.
  args[3].kind = -1;
  ASSERT_EQ(FFIJITDescribeArguments(f.get(), &info, args, 3), 0);
  EXPECT_EQ(args[3].kind, -1);
  ASSERT_EQ(FFIJITDescribeArguments(f.get(), &info, args, 9), 0);
  const int32_t kinds[9] = {kFFIJITArgumentInteger, kFFIJITArgumentInteger, kFFIJITArgumentInteger,
                            kFFIJITArgumentFloat,   kFFIJITArgumentTensor,  kFFIJITArgumentPointer,
                            kFFIJITArgumentOther,   kFFIJITArgumentOther,   kFFIJITArgumentOther};
  const char* keywords[9] = {"", "", "", "k", "", "", "", "", "pair"};
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(args[i].kind, kinds[i]) << "argument " << i;
    EXPECT_STREQ(args[i].keyword, keywords[i]) << "argument " << i;
  }
  EXPECT_EQ(info.status_convention, 1);

  Function packed = Function::FromTyped([](int64_t x) { return x; });
  EXPECT_EQ(FFIJITDescribeArguments(packed.get(), &info, args, 9), -1);
  Error e = Raised();
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(),
            "FFIJITDescribeArguments: not a function made by FFIJITMakeFunction/Register");
  EXPECT_EQ(FFIJITDescribeArguments(f.get(), nullptr, args, 9), -1);
  EXPECT_EQ(Raised().message(), "FFIJITDescribeArguments: `info` must not be NULL");
  EXPECT_EQ(FFIJITDescribeArguments(f.get(), &info, nullptr, 1), -1);
  EXPECT_EQ(Raised().message(), "FFIJITDescribeArguments: `args` must not be NULL");
  EXPECT_EQ(FFIJITDescribeArguments(f.get(), &info, args, -1), -1);
  EXPECT_EQ(Raised().message(), "FFIJITDescribeArguments: negative capacity");
}

}  // namespace
}  // namespace ffijit::testing
