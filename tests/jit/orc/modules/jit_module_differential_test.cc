// The differential suite on inlined hot thunks: random signatures (tests/jit/orc/random_case.h)
// whose native is LLVM IR, so the hot tier copies its body into the thunk. For each signature this
// file writes a "recorder" native of exactly the IR type the thunk calls (the platform layer's
// NativeIrSignature): it stores the bits of every parameter into a global of its JIT module,
// writes armed bytes through each out-pointer and returns armed bits read from module globals.
// The globals are the module's own (exported), so the inlined copy uses them by address and every
// tier's recording lands in the same place. Each random call runs on the interpreter, the cold
// thunk and the hot inlined thunk, which must agree on status, result or error, and the argument
// bits the native saw (the comparison of tests/jit/orc/differential.h).
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "differential.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/jit_module.h"
#include "ffijit/jit/register.h"
#include "interpreter/bound_function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Type.h"
#include "llvm/Support/raw_ostream.h"
#include "orc/codegen/abi_ir.h"
#include "platform/abi.h"
#include "random_case.h"
#include "recorder.h"

namespace ffijit::testing {
namespace {

using platform::IrType;

// The module globals every recorder shares (exported: module-internal state would keep the
// native out of line, see guide 12.10).
constexpr const char* kCallsGlobal = "ffijit_diff_calls";        // i64: calls since arming
constexpr const char* kWordsGlobal = "ffijit_diff_words";        // i64 x 2 per parameter
constexpr const char* kReturnGlobal = "ffijit_diff_ret";         // [gpr0, gpr1, fpr0] as i64
constexpr const char* kOutGlobal = "ffijit_diff_out";            // kOutBytes per out-pointer
constexpr const char* kOutLengthGlobal = "ffijit_diff_out_len";  // i64 per out-pointer
constexpr size_t kOutBytes = 16;

std::string NativeName(size_t index) {
  return "ffijit_diff_case" + std::to_string(index);
}

// The LLVM IR text of a platform IR type (as a parameter: a byval pair with its attributes), as
// LLVM prints the type the code generators use for it.
std::string IrText(IrType type) {
  if (type == IrType::kByvalPair) return "ptr byval({ i64, i64 }) align 8";
  llvm::LLVMContext context;
  std::string text;
  llvm::raw_string_ostream out(text);
  orc::ToLlvmType(context, type)->print(out);
  return out.str();
}

// Writes one recorder function's body, numbering its SSA values.
class RecorderWriter {
 public:
  RecorderWriter(const CallPlan& plan, std::string name, size_t word_slots, size_t out_slots)
      : plan_(plan), name_(std::move(name)), word_slots_(word_slots), out_slots_(out_slots) {}

  std::string Write() {
    // The IR parameters of each native parameter, then one pointer per out-pointer: the same
    // list NativeIrSignature gives, grouped per native parameter.
    std::vector<std::vector<IrType>> groups;
    for (const NativeParam& param : plan_.params) {
      groups.emplace_back();
      platform::ParamIrTypes(platform::kHost, param, &groups.back());
    }
    std::vector<IrType> flat;
    for (const auto& group : groups) flat.insert(flat.end(), group.begin(), group.end());
    size_t outs = 0;
    for (const ResultSlot& slot : plan_.results) {
      if (slot.by_return) continue;
      flat.push_back(IrType::kPtr);
      ++outs;
    }
    const IrType ret = platform::ReturnIrType(platform::kHost, plan_);
    flat.push_back(ret);
    if (flat != platform::NativeIrSignature(platform::kHost, plan_)) {
      throw std::logic_error("the recorder's IR parameters differ from NativeIrSignature");
    }
    flat.pop_back();

    std::string params;
    for (size_t i = 0; i < flat.size(); ++i) {
      params += (i ? ", " : "") + IrText(flat[i]) + " %a" + std::to_string(i);
    }
    body_ << "define " << IrText(ret) << " @" << name_ << "(" << params << ") nounwind {\n";
    body_ << "entry:\n";
    // Every parameter's bits, word by word.
    size_t arg = 0;
    for (size_t n = 0; n < groups.size(); ++n) {
      std::vector<std::string> words;
      for (IrType type : groups[n]) {
        std::vector<std::string> w = Words(type, "%a" + std::to_string(arg++));
        words.insert(words.end(), w.begin(), w.end());
      }
      if (words.size() > 2) throw std::logic_error("a parameter of more than two words");
      for (size_t w = 0; w < words.size(); ++w) {
        body_ << "  store i64 " << words[w] << ", ptr "
              << Slot(kWordsGlobal, word_slots_, 2 * n + w) << "\n";
      }
    }
    const std::string calls = Fresh(), more = Fresh();
    body_ << "  " << calls << " = load i64, ptr @" << kCallsGlobal << "\n";
    body_ << "  " << more << " = add i64 " << calls << ", 1\n";
    body_ << "  store i64 " << more << ", ptr @" << kCallsGlobal << "\n";
    // The armed bytes through each out-pointer (a null one is skipped, as a native would).
    for (size_t r = 0; r < outs; ++r) {
      const std::string out = "%a" + std::to_string(arg++);
      const std::string is_null = Fresh(), length = Fresh();
      const std::string write = "write" + std::to_string(r), next = "next" + std::to_string(r);
      body_ << "  " << is_null << " = icmp eq ptr " << out << ", null\n";
      body_ << "  br i1 " << is_null << ", label %" << next << ", label %" << write << "\n";
      body_ << write << ":\n";
      body_ << "  " << length << " = load i64, ptr " << Slot(kOutLengthGlobal, out_slots_, r)
            << "\n";
      body_ << "  call void @llvm.memcpy.p0.p0.i64(ptr " << out << ", ptr getelementptr inbounds (["
            << out_slots_ * kOutBytes << " x i8], ptr @" << kOutGlobal << ", i64 0, i64 "
            << r * kOutBytes << "), i64 " << length << ", i1 false)\n";
      body_ << "  br label %" << next << "\n";
      body_ << next << ":\n";
    }
    Return(ret);
    body_ << "}\n\n";
    return body_.str();
  }

 private:
  std::string Fresh() { return "%v" + std::to_string(next_value_++); }

  // A constant pointer to element `index` of the i64 array global `global` of `slots` elements.
  static std::string Slot(const char* global, size_t slots, size_t index) {
    return "getelementptr inbounds ([" + std::to_string(slots) + " x i64], ptr @" + global +
           ", i64 0, i64 " + std::to_string(index) + ")";
  }

  std::string Instruction(const std::string& text) {
    const std::string value = Fresh();
    body_ << "  " << value << " = " << text << "\n";
    return value;
  }

  // The 64-bit words `value` (of IR type `type`) carries: its bits, zero-extended.
  std::vector<std::string> Words(IrType type, const std::string& value) {
    switch (type) {
      case IrType::kI64:
        return {value};
      case IrType::kI8:
      case IrType::kI16:
      case IrType::kI32:
        return {Instruction("zext " + IrText(type) + " " + value + " to i64")};
      case IrType::kF32:
        return {Instruction("zext i32 " + Instruction("bitcast float " + value + " to i32") +
                            " to i64")};
      case IrType::kF64:
        return {Instruction("bitcast double " + value + " to i64")};
      case IrType::kPtr:
        return {Instruction("ptrtoint ptr " + value + " to i64")};
      case IrType::kI64Pair:
      case IrType::kI64Array2:
        return {Instruction("extractvalue " + IrText(type) + " " + value + ", 0"),
                Instruction("extractvalue " + IrText(type) + " " + value + ", 1")};
      case IrType::kByvalPair: {
        const std::string high =
            Instruction("getelementptr inbounds i64, ptr " + value + ", i64 1");
        return {Instruction("load i64, ptr " + value), Instruction("load i64, ptr " + high)};
      }
      case IrType::kVoid:
        break;
    }
    throw std::logic_error("a parameter of IR type void");
  }

  // Returns the armed bits as `type`.
  void Return(IrType type) {
    auto armed = [&](size_t index) {
      return Instruction("load i64, ptr " + Slot(kReturnGlobal, 3, index));
    };
    const std::string t = IrText(type);
    std::string value;  // computed before the `ret` line is written
    switch (type) {
      case IrType::kVoid:
        body_ << "  ret void\n";
        return;
      case IrType::kI64:
        value = armed(0);
        break;
      case IrType::kI8:
      case IrType::kI16:
      case IrType::kI32:
        value = Instruction("trunc i64 " + armed(0) + " to " + t);
        break;
      case IrType::kF32:
        value = Instruction("bitcast i32 " + Instruction("trunc i64 " + armed(2) + " to i32") +
                            " to float");
        break;
      case IrType::kF64:
        value = Instruction("bitcast i64 " + armed(2) + " to double");
        break;
      case IrType::kPtr:
        value = Instruction("inttoptr i64 " + armed(0) + " to ptr");
        break;
      case IrType::kI64Pair:
      case IrType::kI64Array2: {
        const std::string low = armed(0), high = armed(1);
        const std::string first = Instruction("insertvalue " + t + " poison, i64 " + low + ", 0");
        value = Instruction("insertvalue " + t + " " + first + ", i64 " + high + ", 1");
        break;
      }
      case IrType::kByvalPair:
        throw std::logic_error("a result of IR type byval");
    }
    body_ << "  ret " << t << " " << value << "\n";
  }

  const CallPlan& plan_;
  const std::string name_;
  const size_t word_slots_, out_slots_;
  std::ostringstream body_;
  int next_value_ = 0;
};

size_t OutPointers(const CallPlan& plan) {
  size_t n = 0;
  for (const ResultSlot& slot : plan.results) n += slot.by_return ? 0 : 1;
  return n;
}

// One module of recorders, NativeName(i) for plans[i], and the globals they share.
std::string RecorderModule(const std::vector<CallPlan>& plans) {
  size_t word_slots = 2, out_slots = 1;
  for (const CallPlan& plan : plans) {
    word_slots = std::max(word_slots, 2 * plan.params.size());
    out_slots = std::max(out_slots, OutPointers(plan));
  }
  std::ostringstream ir;
  ir << "@" << kCallsGlobal << " = global i64 0\n";
  ir << "@" << kWordsGlobal << " = global [" << word_slots << " x i64] zeroinitializer\n";
  ir << "@" << kReturnGlobal << " = global [3 x i64] zeroinitializer\n";
  ir << "@" << kOutGlobal << " = global [" << out_slots * kOutBytes << " x i8] zeroinitializer\n";
  ir << "@" << kOutLengthGlobal << " = global [" << out_slots << " x i64] zeroinitializer\n";
  ir << "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)\n\n";
  for (size_t i = 0; i < plans.size(); ++i) {
    ir << RecorderWriter(plans[i], NativeName(i), word_slots, out_slots).Write();
  }
  return ir.str();
}

// The recorders' globals in the loaded module.
class RecorderGlobals {
 public:
  explicit RecorderGlobals(const JitModule& mod)
      : calls_(Find<uint64_t>(mod, kCallsGlobal)),
        words_(Find<uint64_t>(mod, kWordsGlobal)),
        ret_(Find<uint64_t>(mod, kReturnGlobal)),
        out_(Find<uint8_t>(mod, kOutGlobal)),
        out_length_(Find<uint64_t>(mod, kOutLengthGlobal)) {}

  void Arm(const CallPlan& plan, const CaseGenerator::NativeResults& native) {
    *calls_ = 0;
    std::memset(words_, 0, 2 * plan.params.size() * sizeof(uint64_t));
    ret_[0] = native.ret_gpr0;
    ret_[1] = native.ret_gpr1;
    ret_[2] = native.ret_fpr0;
    size_t r = 0;
    for (size_t i = 0; i < plan.results.size(); ++i) {
      if (plan.results[i].by_return) continue;
      const std::vector<uint8_t>& bytes = native.out.at(i);
      if (bytes.size() > kOutBytes) throw std::logic_error("armed out-pointer bytes too long");
      std::memcpy(out_ + r * kOutBytes, bytes.data(), bytes.size());
      out_length_[r++] = bytes.size();
    }
  }

  // Fills `outcome` with what the recorder saw since Arm.
  void Take(const CallPlan& plan, CallOutcome* outcome) const {
    outcome->called = *calls_ != 0;
    if (*calls_ > 1) outcome->arguments = "(called " + std::to_string(*calls_) + " times) ";
    if (!outcome->called) return;
    std::vector<std::array<uint64_t, 2>> words;
    for (size_t n = 0; n < plan.params.size(); ++n)
      words.push_back({words_[2 * n], words_[2 * n + 1]});
    outcome->arguments += DescribeParameterWords(plan, words);
  }

 private:
  template <typename T>
  static T* Find(const JitModule& mod, const char* name) {
    void* address = mod.Lookup(name);
    if (address == nullptr) throw std::logic_error(std::string("the module lacks ") + name);
    return static_cast<T*>(address);
  }

  uint64_t* calls_;
  uint64_t* words_;
  uint64_t* ret_;
  uint8_t* out_;
  uint64_t* out_length_;
};

// Captures the JIT log while alive (why a native stayed out of line).
class LogCapture {
 public:
  LogCapture() {
    SetJitLogSink([this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mutex_);
      lines_ += line + "\n";
    });
  }
  ~LogCapture() { SetJitLogSink(nullptr); }
  std::string TakeText() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(lines_);
  }

 private:
  std::mutex mutex_;
  std::string lines_;
};

BoundFunction* Bound(const Function& f) {
  return reinterpret_cast<BoundFunction*>(f.get());
}

// The signatures reach every way a value travels to and from the native: each placement class
// (but kMemory, which no type uses), each return kind, f32 parameters, out-pointers.
void ExpectEveryPlacement(const std::vector<CallPlan>& plans) {
  std::set<AbiClass> classes;
  std::set<ReturnKind> returns;
  bool f32 = false, out_pointer = false;
  for (const CallPlan& plan : plans) {
    for (const NativeParam& param : plan.params) {
      classes.insert(param.abi.cls);
      f32 = f32 || param.conversion == Conversion::kF32;
    }
    returns.insert(plan.return_kind);
    out_pointer = out_pointer || OutPointers(plan) > 0;
  }
  for (AbiClass cls : {AbiClass::kGpr, AbiClass::kSse, AbiClass::kGprPair, AbiClass::kStack,
                       AbiClass::kStackPair}) {
    EXPECT_EQ(classes.count(cls), 1u)
        << "no parameter of placement class " << static_cast<int>(cls);
  }
  for (ReturnKind kind : {ReturnKind::kVoid, ReturnKind::kGpr, ReturnKind::kSse,
                          ReturnKind::kGprPair, ReturnKind::kStatus}) {
    EXPECT_EQ(returns.count(kind), 1u) << "no plan of return kind " << static_cast<int>(kind);
  }
  EXPECT_TRUE(f32);
  EXPECT_TRUE(out_pointer);
}

// `signatures` random signatures, `calls` random calls each, on the interpreter, the cold thunk
// and the inlined hot thunk of one IR native per signature.
void RunInlinedRandomCases(uint64_t seed, int signatures, int calls) {
  // Declared before the functions, so it outlives their hot thunks; room for all of them.
  JitEngineOptions options;
  options.max_hot_thunks = static_cast<int64_t>(signatures) + 16;
  JitEngine hot_engine(options);

  CaseGenerator gen(seed);
  int64_t unlowerable = 0;
  const std::vector<Signature> sigs = gen.LowerableSignatures(signatures, &unlowerable);
  EXPECT_LT(unlowerable, signatures) << "the generator mostly makes callable signatures";
  std::vector<CallPlan> plans;
  for (size_t i = 0; i < sigs.size(); ++i) plans.push_back(Lower(sigs[i], NativeName(i)));
  ExpectEveryPlacement(plans);
  JitModule mod = JitModule::Create("differential recorders");
  mod.AddIR(RecorderModule(plans), "recorders.ll");
  RecorderGlobals recorder(mod);

  std::vector<Function> cold, hot;
  {
    ScopedJitOptions never({JitPolicy::kNever, 0});
    LogCapture log;
    for (size_t i = 0; i < sigs.size(); ++i) {
      cold.push_back(mod.MakeNative(NativeName(i), sigs[i]));
      hot.push_back(mod.MakeNative(NativeName(i), sigs[i]));
    }
    CompileResults results = JitEngine::Default().CompileNow(cold);
    EXPECT_EQ(results.installed, static_cast<int64_t>(sigs.size()));
    for (size_t i = 0; i < sigs.size(); ++i) {
      EXPECT_TRUE(IsJitCompiled(cold[i])) << CanonicalString(sigs[i]);
      EXPECT_FALSE(IsHotCompiled(cold[i])) << CanonicalString(sigs[i]);
      EXPECT_NO_THROW(hot_engine.CompileHotNow(hot[i])) << CanonicalString(sigs[i]);
      // Every recorder is of the thunk's own IR type and uses only exported globals: nothing
      // keeps it out of line, so each must be inlined (the log says why when not).
      const std::string why = log.TakeText();
      EXPECT_TRUE(IsHotInlined(hot[i])) << CanonicalString(sigs[i]) << "\n" << why;
    }
  }

  int64_t failures = 0, cases = 0, reached = 0;
  for (size_t s = 0; s < sigs.size(); ++s) {
    BoundFunction* cold_fn = Bound(cold[s]);
    BoundFunction* hot_fn = Bound(hot[s]);
    const CallPlan& plan = *cold_fn->plan;
    auto run = [&](TVMFFISafeCallType entry, BoundFunction* fn, std::vector<TVMFFIAny>& args,
                   const CaseGenerator::NativeResults& native) {
      recorder.Arm(plan, native);
      CallOutcome outcome = CallPacked(entry, fn, args);
      recorder.Take(plan, &outcome);
      return outcome;
    };
    for (int c = 0; c < calls; ++c) {
      ObjectPool pool;
      std::vector<TVMFFIAny> args = gen.RandomArguments(sigs[s], 0.6, pool);
      const CaseGenerator::NativeResults native = gen.RandomResults(plan);
      std::vector<NamedOutcome> runs = {
          {"interpreter", run(&InterpreterSafeCall, cold_fn, args, native)},
          {"cold thunk ", run(cold_fn->cell.safe_call, cold_fn, args, native)},
          {"hot inlined", run(hot_fn->cell.safe_call, hot_fn, args, native)}};
      reached += runs[0].second.called ? 1 : 0;
      ExpectAgree("seed " + std::to_string(seed) + " signature " + std::to_string(s) + " (" +
                      CanonicalString(sigs[s]) + ") call " + std::to_string(c),
                  plan, runs, &failures);
      ++cases;
    }
  }
  EXPECT_EQ(failures, 0) << "of " << cases << " cases";
  EXPECT_EQ(cases, static_cast<int64_t>(signatures) * calls);
  // Both paths are exercised: calls that reach the native and calls refused before it.
  EXPECT_GT(reached, cases / 4);
  EXPECT_LT(reached, cases);
}

TEST(InlinedDifferential, RandomSignaturesAndArgumentsOnTheInlinedHotTier) {
  const auto start = std::chrono::steady_clock::now();
  RunInlinedRandomCases(20261124, 250, 12);
  std::printf("250 signatures x 12 calls on three tiers: %.2f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace
}  // namespace ffijit::testing
