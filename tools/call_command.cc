// `ffijit call`: call an exported C function through ffijit with JSON arguments, print the result.
#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "json_values.h"
#include "native_call.h"

namespace ffijit::tool {
namespace {

constexpr const char* kUsage =
    "usage: ffijit call LIB SYMBOL --sig METADATA|@FILE [--format json|raw|sip|declaration]\n"
    "                   [--tier jit|interp|libffi] [--status] [--] [ARG|NAME=ARG...]\n"
    "       ffijit call LIB SYMBOL --sig METADATA|@FILE [--format F] [--tier T] [--status]\n"
    "                   --describe\n"
    "       ffijit call LIB NAME [--] [ARG...]\n\n"
    "Loads the shared library LIB (a bare name such as libm.so.6 goes through the normal dlopen\n"
    "search), binds its C function SYMBOL with the signature METADATA (the iree.abi JSON, a raw\n"
    "signature or a SIP reflection dict; @FILE reads it from a file), calls it and prints the\n"
    "result as JSON on stdout.\n\n"
    "Without --sig, LIB is a TVM FFI module and NAME one of its functions (the library exports\n"
    "it as `__tvm_ffi_NAME`, already packed): the library is loaded as ffijit loads modules\n"
    "(context symbols, __tvm_ffi__library_ctx, __tvm_ffi__library_bin) and the function called\n"
    "with the positional ARGs as they are.\n\n"
    "  --format F   the metadata format (default: detected)\n"
    "  --tier T     jit: a compiled thunk (the default; falls back to the interpreter, with a\n"
    "               note on stderr, when the JIT cannot compile the signature), interp: the\n"
    "               interpreter, libffi: the interpreter calling through libffi\n"
    "  --status     the function follows the status convention: it returns int (0 = success),\n"
    "               writes its results through trailing out-pointers and raises its errors\n"
    "               with TVMFFIErrorSetRaised\n"
    "  --describe   call nothing: print the bound function's call plan, then the line\n"
    "               `  tier: NAME` naming the tier its calls run on (the guide's section 7.2\n"
    "               lists the names); takes no ARG\n\n"
    "Each ARG is one JSON value (@FILE reads it from a file): integers are Int, other numbers\n"
    "Float (NaN, Infinity, -Infinity as whole words), true/false Bool, null None, strings Str\n"
    "(also DataType \"float32\" and Device \"cuda:1\"), lists Array and objects Map (for slist,\n"
    "stuple and sdict arguments). Three objects are special: {\"ndarray\": [[1, 2], [3, 4]],\n"
    "\"dtype\": \"f32\"} is a CPU tensor (dtypes i1/bool, i8..i64, u8..u64, f16, bf16, f32, f64;\n"
    "without \"dtype\", the argument's element type from the signature, else i64, f64 or i1\n"
    "from the data), {\"bytes\": \"..\"} is Bytes and {\"ptr\": \"0x..\"} a pointer.\n"
    "NAME=ARG passes a named argument by keyword. Options and arguments may mix; after --\n"
    "every word is an argument.\n\n"
    "Results print the same way; a tensor as {\"ndarray\": ..., \"dtype\": ..., \"shape\": ...},\n"
    "a pointer as \"0x...\". Exit codes: see ffijit --help.\n";

}  // namespace

int RunCall(const std::vector<std::string>& args, std::istream&, std::ostream& out,
            std::ostream& err) {
  try {
    const CallRequest request = ParseRequest(args, /*bench=*/false);
    if (request.help) {
      out << kUsage;
      return kExitOk;
    }
    if (request.packed) {
      const Function func = LoadPackedFunction(request);
      const CallArgs call_args = ParsePackedArguments(request.args);
      std::string text;
      {
        CrashGuard guard("call");
        text = FormatJson(AnyToJson(Invoke(func, call_args)));
      }
      out << text << "\n";
      return kExitOk;
    }
    void* target = LoadSymbol(request.library, request.symbol);
    const Signature sig = LoadSignature(request);
    const CallArgs call_args = ParseArguments(request.args, sig);
    std::string jit_failure;
    const Function func = BindPath(request, target, sig, request.tier, &jit_failure);
    if (!jit_failure.empty()) {
      err << "ffijit call: note: the JIT cannot compile `" << DeclarationString(request.symbol, sig)
          << "`, using the interpreter: " << jit_failure << "\n";
    }
    if (request.describe) {
      out << DescribeFunction(func) << "  tier: " << TierName(Tier(func)) << "\n";
      return kExitOk;
    }
    std::string text;
    {
      // The result may point into native memory (a tensor's data), so it is read under the guard.
      CrashGuard guard("call");
      const Any result = Invoke(func, call_args);
      text = FormatJson(AnyToJson(result));
    }
    out << text << "\n";
    return kExitOk;
  } catch (const Failure& failure) {
    err << "ffijit call: " << failure.message << "\n";
    if (failure.code == kExitUsage) err << "(see ffijit call --help)\n";
    return failure.code;
  }
}

}  // namespace ffijit::tool
