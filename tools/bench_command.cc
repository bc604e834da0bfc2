// `ffijit bench`: times a native call through the jit, interp and libffi paths; prints a table.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <ostream>
#include <string>
#include <vector>

#include "command.h"
#include "ffijit/jit/bridge.h"
#include "json_values.h"
#include "native_call.h"

namespace ffijit::tool {
namespace {

constexpr const char* kUsage =
    "usage: ffijit bench LIB SYMBOL --sig METADATA|@FILE [--format json|raw|sip|declaration]\n"
    "                    [--seconds S] [--status] [--progress] [--] [ARG|NAME=ARG...]\n"
    "       ffijit bench LIB NAME [--seconds S] [--progress] [--] [ARG...]\n\n"
    "Binds SYMBOL as `ffijit call` does (see ffijit call --help for the metadata, the options\n"
    "and the arguments) and times the call through every path a dynamic symbol has:\n"
    "  jit     the compiled thunk\n"
    "  interp  the interpreter and its register stub\n"
    "  libffi  the interpreter calling through libffi\n"
    "Prints, per path, the median ns/call of several repetitions and the ratio to jit. A path\n"
    "that cannot take the signature is listed as unavailable.\n\n"
    "Without --sig, NAME is a TVM FFI function of the module LIB (see ffijit call --help): it\n"
    "is packed already, so there is one path, `packed`, timed through TVMFFIFunctionCall.\n\n"
    "  --seconds S  the time budget of the whole run (default 1)\n"
    "  --progress   show progress on stderr even when it is not a terminal\n";

constexpr int kRepetitions = 5;

using Clock = std::chrono::steady_clock;

// The arguments as raw views, for calling in a loop with no conversion.
class Caller {
 public:
  Caller(const Function& func, const CallArgs& args) : func_(func) {
    for (const Any& a : args.positional) positional_.push_back(a.raw());
    for (const auto& [name, value] : args.keywords) {
      names_.push_back(name.c_str());
      values_.push_back(value.raw());
    }
  }

  // Seconds taken by n calls; throws Failure if one fails.
  double Time(int64_t n) {
    const auto start = Clock::now();
    for (int64_t i = 0; i < n; ++i) {
      TVMFFIAny result{};
      const int status =
          names_.empty()
              ? TVMFFIFunctionCall(func_.get(), positional_.data(),
                                   static_cast<int32_t>(positional_.size()), &result)
              : FFIJITCallWithKeywords(
                    func_.get(), positional_.data(), static_cast<int32_t>(positional_.size()),
                    names_.data(), values_.data(), static_cast<int32_t>(values_.size()), &result);
      if (status != 0) throw CallFailure(Error::MoveFromRaised());
      details::ReleaseAny(&result);
    }
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

 private:
  const Function& func_;
  std::vector<TVMFFIAny> positional_;
  std::vector<const char*> names_;
  std::vector<TVMFFIAny> values_;
};

struct Row {
  Path path;
  Function func;
  std::string unavailable;  // why the path cannot run this call, or ""
  double ns_per_call = 0;
};

// One line on stderr rewritten in place ("\r[2/3] interp: repetition 4/5").
class Progress {
 public:
  Progress(bool enabled, std::ostream& err) : enabled_(enabled), err_(err) {}
  // Also on an error, so that its message starts on a clean line.
  ~Progress() { Clear(); }
  void Show(const std::string& text) {
    if (!enabled_) return;
    err_ << "\r" << text << std::string(text.size() < kWidth ? kWidth - text.size() : 0, ' ')
         << std::flush;
    shown_ = true;
  }
  void Clear() {
    if (!shown_) return;
    err_ << "\r" << std::string(kWidth, ' ') << "\r" << std::flush;
    shown_ = false;
  }

 private:
  static constexpr size_t kWidth = 50;
  bool enabled_;
  bool shown_ = false;
  std::ostream& err_;
};

// Median ns/call of kRepetitions timed batches (fewer when one call alone eats the budget).
double Measure(Caller& caller, double budget, const std::string& label, Progress& progress) {
  // Calibrate: grow the batch until it takes a measurable time.
  int64_t n = 1;
  double seconds = caller.Time(n);
  while (seconds < 2e-3 && n < (int64_t{1} << 32)) {
    n *= 4;
    seconds = caller.Time(n);
  }
  const double per_call = std::max(seconds / static_cast<double>(n), 1e-10);
  const int repetitions =
      static_cast<int>(std::clamp(budget / per_call, 1.0, double{kRepetitions}));
  const double batch = std::min(budget / repetitions / per_call, 1e12);
  const int64_t calls = std::max<int64_t>(1, static_cast<int64_t>(batch));
  std::vector<double> samples;
  for (int r = 0; r < repetitions; ++r) {
    progress.Show(label + ": repetition " + std::to_string(r + 1) + "/" +
                  std::to_string(repetitions));
    samples.push_back(caller.Time(calls) / static_cast<double>(calls) * 1e9);
  }
  std::sort(samples.begin(), samples.end());
  const size_t mid = samples.size() / 2;
  return samples.size() % 2 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2;
}

void PrintTable(const std::vector<Row>& rows, std::ostream& out) {
  const Row& jit = rows.front();
  char line[256];
  std::snprintf(line, sizeof(line), "%-8s %12s %10s\n", "path", "ns/call", "vs jit");
  out << line;
  for (const Row& row : rows) {
    if (!row.unavailable.empty()) {
      out << PathName(row.path) << std::string(9 - std::string(PathName(row.path)).size(), ' ')
          << "unavailable: " << row.unavailable << "\n";
      continue;
    }
    char ratio[32] = "-";
    if (jit.unavailable.empty() && jit.ns_per_call > 0) {
      std::snprintf(ratio, sizeof(ratio), "%.2fx", row.ns_per_call / jit.ns_per_call);
    }
    std::snprintf(line, sizeof(line), "%-8s %12.2f %10s\n", PathName(row.path), row.ns_per_call,
                  ratio);
    out << line;
  }
}

// `ffijit bench LIB NAME` without --sig: one path, the module's own packed function.
int BenchPacked(const CallRequest& request, std::ostream& out, std::ostream& err) {
  const Function func = LoadPackedFunction(request);
  const CallArgs call_args = ParsePackedArguments(request.args);
  CrashGuard guard("bench");
  const std::string result = FormatJson(AnyToJson(Invoke(func, call_args)));
  Progress progress(request.progress || isatty(STDERR_FILENO), err);
  Caller caller(func, call_args);
  progress.Show("[1/1] packed: calibrating");
  const double ns = Measure(caller, request.seconds, "[1/1] packed", progress);
  progress.Clear();
  out << "call:   " << request.symbol << " (TVM FFI function of " << request.library << ")\n";
  out << "result: " << result << "\n";
  char line[256];
  std::snprintf(line, sizeof(line), "%-8s %12s\n%-8s %12.2f\n", "path", "ns/call", "packed", ns);
  out << line;
  return kExitOk;
}

}  // namespace

int RunBench(const std::vector<std::string>& args, std::istream&, std::ostream& out,
             std::ostream& err) {
  try {
    const CallRequest request = ParseRequest(args, /*bench=*/true);
    if (request.help) {
      out << kUsage;
      return kExitOk;
    }
    if (request.packed) return BenchPacked(request, out, err);
    void* target = LoadSymbol(request.library, request.symbol);
    const Signature sig = LoadSignature(request);
    const CallArgs call_args = ParseArguments(request.args, sig);

    std::vector<Row> rows;
    for (Path path : {Path::kJit, Path::kInterp, Path::kLibffi}) {
      Row row{path, Function(), "", 0};
      try {
        std::string jit_failure;
        row.func = BindPath(request, target, sig, path, &jit_failure);
        row.unavailable = jit_failure;
      } catch (const Failure& failure) {
        // The interpreter takes every signature that binds at all: its failure ends the run.
        if (path == Path::kInterp) throw;
        row.unavailable = failure.message;
      }
      rows.push_back(std::move(row));
    }

    CrashGuard guard("bench");
    // One checked call per path first: a failing call ends the run before any timing.
    std::string result;
    for (const Row& row : rows) {
      if (!row.unavailable.empty()) continue;
      const Any value = Invoke(row.func, call_args);
      if (result.empty()) result = FormatJson(AnyToJson(value));
    }
    int available = 0;
    for (const Row& row : rows) available += row.unavailable.empty();
    const double budget = request.seconds / available;
    Progress progress(request.progress || isatty(STDERR_FILENO), err);
    for (size_t i = 0; i < rows.size(); ++i) {
      Row& row = rows[i];
      if (!row.unavailable.empty()) continue;
      Caller caller(row.func, call_args);
      const std::string label = "[" + std::to_string(i + 1) + "/" + std::to_string(rows.size()) +
                                "] " + PathName(row.path);
      progress.Show(label + ": calibrating");
      row.ns_per_call = Measure(caller, budget, label, progress);
    }
    progress.Clear();

    out << "call:   " << DeclarationString(request.symbol, sig)
        << (request.status ? " [status]" : "") << "\n";
    out << "result: " << result << "\n";
    PrintTable(rows, out);
    return kExitOk;
  } catch (const Failure& failure) {
    err << "ffijit bench: " << failure.message << "\n";
    if (failure.code == kExitUsage) err << "(see ffijit bench --help)\n";
    return failure.code;
  }
}

}  // namespace ffijit::tool
