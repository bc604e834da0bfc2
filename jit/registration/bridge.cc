// The C registration API (ffijit/jit/bridge.h) and the call-with-keywords entry point.
#include "ffijit/jit/bridge.h"

#include <algorithm>
#include <new>
#include <string>
#include <vector>

#include "ffijit/error.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "ffijit/reflect/metadata.h"
#include "ffijit/registry.h"
#include "interpreter/bound_function.h"
#include "registration/register_internal.h"

namespace ffijit {
namespace {

using details::RequireNonNull;

// The C API's format codes are MetadataFormat's numbers; its names are reflect's.
static_assert(static_cast<int>(MetadataFormat::kAuto) == kFFIJITFormatAuto &&
              static_cast<int>(MetadataFormat::kJson) == kFFIJITFormatJson &&
              static_cast<int>(MetadataFormat::kRaw) == kFFIJITFormatRaw &&
              static_cast<int>(MetadataFormat::kSip) == kFFIJITFormatSip &&
              static_cast<int>(MetadataFormat::kDeclaration) == kFFIJITFormatDeclaration);

MetadataFormat FormatOf(int format) {
  if (format >= kFFIJITFormatAuto && format <= kFFIJITFormatDeclaration) {
    return static_cast<MetadataFormat>(format);
  }
  std::string expected;
  for (int code = kFFIJITFormatAuto; code <= kFFIJITFormatDeclaration; ++code) {
    expected += (code == kFFIJITFormatAuto          ? ""
                 : code == kFFIJITFormatDeclaration ? " or "
                                                    : ", ") +
                std::to_string(code) + " " + MetadataFormatName(static_cast<MetadataFormat>(code));
  }
  throw ValueError("unknown metadata format " + std::to_string(format) + " (expected " + expected +
                   ")");
}

RegisterOptions OptionsOf(int flags) {
  constexpr int kKnown =
      kFFIJITStatusConvention | kFFIJITAllowOverride | kFFIJITInterpretOnly | kFFIJITUseLibffi;
  if (flags & ~kKnown) throw ValueError("unknown registration flags " + std::to_string(flags));
  RegisterOptions options;
  options.convention =
      (flags & kFFIJITStatusConvention) ? CallConvention::kStatus : CallConvention::kPlain;
  options.allow_override = (flags & kFFIJITAllowOverride) != 0;
  options.interpret_only = (flags & kFFIJITInterpretOnly) != 0;
  return options;
}

// A new reference to the caller's `func`, for the C++ API that takes `const Function&`.
Function Borrowed(TVMFFIObjectHandle func) {
  TVMFFIObjectIncRef(func);
  return Function::Adopt(func);
}

// FFIJITMakeFunction/FFIJITRegister's function: kFFIJITUseLibffi is the one flag RegisterOptions
// does not carry.
Function MakeFromC(const char* name, void* fn, const char* metadata, int format, int flags) {
  const uint32_t extra = (flags & kFFIJITUseLibffi) ? kBoundUseLibffi : 0u;
  return MakeFunctionWithFlags(name, fn, ParseMetadata(metadata, FormatOf(format)),
                               OptionsOf(flags), extra);
}

// How a front end may pass a top-level argument straight: only an argument that is one native
// parameter read without a structure path has a kind. Output storage has none: it comes back as
// a result, so it must outlive the call (a DLTensor lent for the call would not).
int32_t ArgumentKindOf(const CallPlan& plan, const PackedArg& arg, int32_t position) {
  if (arg.num_params != 1) return kFFIJITArgumentOther;
  for (const ResultNode& node : plan.result_shape) {
    if (node.kind == ResultNode::kArgument && node.index == position) return kFFIJITArgumentOther;
  }
  const NativeParam& param = plan.params[static_cast<size_t>(arg.first_param)];
  if (param.path_size != 0) return kFFIJITArgumentOther;
  const ConversionInfo& info = InfoOf(param.conversion);
  if (param.conversion == Conversion::kBool || info.is_integer) return kFFIJITArgumentInteger;
  if (info.is_float) return kFFIJITArgumentFloat;
  if (param.conversion == Conversion::kTensor) return kFFIJITArgumentTensor;
  if (param.conversion == Conversion::kOpaquePtr) return kFFIJITArgumentPointer;
  return kFFIJITArgumentOther;
}

// "#1 (`b`)" or "#1".
std::string ArgumentName(const CallPlan& plan, size_t position) {
  std::string out = "#" + std::to_string(position);
  if (!plan.args[position].keyword.empty()) out += " (`" + plan.args[position].keyword + "`)";
  return out;
}

// Binds positional and keyword values to the plan's packed positions, then calls.
int CallBound(TVMFFIObjectHandle func, const CallPlan& plan, const TVMFFIAny* args,
              int32_t num_args, const char* const* kw_names, const TVMFFIAny* kw_values,
              int32_t num_kwargs, TVMFFIAny* result) {
  const size_t arity = plan.args.size();
  if (static_cast<size_t>(num_args) > arity) {
    return FFIJITRaiseArityError(static_cast<const BoundFunction*>(func), num_args + num_kwargs);
  }
  std::vector<TVMFFIAny> bound(arity);
  std::vector<bool> given(arity, false);
  for (int32_t i = 0; i < num_args; ++i) {
    bound[static_cast<size_t>(i)] = args[i];
    given[static_cast<size_t>(i)] = true;
  }
  for (int32_t k = 0; k < num_kwargs; ++k) {
    RequireNonNull(kw_names[k], "FFIJITCallWithKeywords", "kw_names[i]");
    const int32_t position = plan.KeywordPosition(kw_names[k]);
    if (position < 0) {
      throw KeyError("Unknown keyword argument `" + std::string(kw_names[k]) + "` when calling: `" +
                     plan.declaration + "`");
    }
    const auto p = static_cast<size_t>(position);
    if (given[p]) {
      throw TypeError("Duplicate value for argument " + ArgumentName(plan, p) + " when calling: `" +
                      plan.declaration + "`");
    }
    bound[p] = kw_values[k];
    given[p] = true;
  }
  for (size_t p = 0; p < arity; ++p) {
    if (!given[p]) {
      throw TypeError("Missing argument " + ArgumentName(plan, p) + " when calling: `" +
                      plan.declaration + "`");
    }
  }
  return TVMFFIFunctionCall(func, bound.data(), static_cast<int32_t>(arity), result);
}

// What FFIJITMakeNativeCallback's keep-alive Function owns: the callback (and through it a
// reference to the wrapped Function), which the Function's calls are forwarded to.
struct CallbackKeepalive {
  NativeCallback callback;
  TVMFFIObjectHandle function;
};

int CallKeptFunction(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  // TVMFFIFunctionCall's `args` is not const in the ABI, but it only reads them.
  return TVMFFIFunctionCall(static_cast<CallbackKeepalive*>(self)->function,
                            const_cast<TVMFFIAny*>(args), num_args, result);
}

void DeleteKeepalive(void* self) {
  delete static_cast<CallbackKeepalive*>(self);
}

}  // namespace
}  // namespace ffijit

using namespace ffijit;

extern "C" {

int FFIJITCompileNow(TVMFFIObjectHandle func) {
  return GuardCBoundary([&] {
    RequireNonNull(func, "FFIJITCompileNow", "func");
    try {
      JitEngine::Default().CompileNow(Borrowed(func));
    } catch (const Error& e) {
      throw RuntimeError("FFIJITCompileNow: " + e.message());
    }
  });
}

int FFIJITFunctionTier(TVMFFIObjectHandle func, int* out) {
  return GuardCBoundary([&] {
    RequireNonNull(func, "FFIJITFunctionTier", "func");
    RequireNonNull(out, "FFIJITFunctionTier", "out");
    try {
      *out = Tier(Borrowed(func));
    } catch (const Error& e) {
      throw Error(e.kind(), "FFIJITFunctionTier: " + e.message());
    }
  });
}

int FFIJITIsJitCompiled(TVMFFIObjectHandle func, int* out) {
  return GuardCBoundary([&] {
    RequireNonNull(func, "FFIJITIsJitCompiled", "func");
    RequireNonNull(out, "FFIJITIsJitCompiled", "out");
    *out = IsJitCompiled(Borrowed(func)) ? 1 : 0;
  });
}

int FFIJITMakeFunction(void* fn, const char* metadata, int format, int flags, const char* name,
                       TVMFFIObjectHandle* out) {
  return GuardCBoundary([&] {
    RequireNonNull(metadata, "FFIJITMakeFunction", "metadata");
    RequireNonNull(out, "FFIJITMakeFunction", "out");
    *out = MakeFromC(name ? name : "<anonymous>", fn, metadata, format, flags).release();
  });
}

int FFIJITRegister(void* fn, const char* metadata, int format, int flags, const char* global_name,
                   TVMFFIObjectHandle* out) {
  return GuardCBoundary([&] {
    RequireNonNull(metadata, "FFIJITRegister", "metadata");
    RequireNonNull(global_name, "FFIJITRegister", "global_name");
    Function func = MakeFromC(global_name, fn, metadata, format, flags);
    SetGlobalFunction(global_name, func, (flags & kFFIJITAllowOverride) != 0);
    if (out != nullptr) *out = func.release();
  });
}

int FFIJITCallWithKeywords(TVMFFIObjectHandle func, const TVMFFIAny* args, int32_t num_args,
                           const char* const* kw_names, const TVMFFIAny* kw_values,
                           int32_t num_kwargs, TVMFFIAny* result) {
  int status = 0;
  const int guard = GuardCBoundary([&] {
    RequireNonNull(func, "FFIJITCallWithKeywords", "func");
    RequireNonNull(result, "FFIJITCallWithKeywords", "result");
    if (num_args < 0 || num_kwargs < 0) {
      throw ValueError("FFIJITCallWithKeywords: negative argument count");
    }
    if (num_args > 0) RequireNonNull(args, "FFIJITCallWithKeywords", "args");
    if (num_kwargs > 0) {
      RequireNonNull(kw_names, "FFIJITCallWithKeywords", "kw_names");
      RequireNonNull(kw_values, "FFIJITCallWithKeywords", "kw_values");
    }
    const auto* obj = static_cast<const TVMFFIObject*>(func);
    if (!IsBoundFunction(obj)) {
      if (num_kwargs != 0) {
        throw TypeError("FFIJITCallWithKeywords: this function takes no keyword arguments");
      }
      status = TVMFFIFunctionCall(func, const_cast<TVMFFIAny*>(args), num_args, result);
      return;
    }
    const CallPlan& plan = *static_cast<const BoundFunction*>(func)->plan;
    status = CallBound(func, plan, args, num_args, kw_names, kw_values, num_kwargs, result);
  });
  return guard != 0 ? guard : status;
}

int FFIJITDescribeFunction(TVMFFIObjectHandle func, TVMFFIAny* out) {
  return GuardCBoundary([&] {
    RequireNonNull(func, "FFIJITDescribeFunction", "func");
    RequireNonNull(out, "FFIJITDescribeFunction", "out");
    if (!IsBoundFunction(static_cast<const TVMFFIObject*>(func))) {
      throw TypeError("FFIJITDescribeFunction: not a function made by FFIJITMakeFunction/Register");
    }
    std::string text = PlanToString(*static_cast<const BoundFunction*>(func)->plan);
    TVMFFIByteArray bytes{text.data(), text.size()};
    CheckCall(TVMFFIStringFromByteArray(&bytes, out));
  });
}

int FFIJITDescribeArguments(TVMFFIObjectHandle func, FFIJITFunctionInfo* info,
                            FFIJITArgumentInfo* args, int32_t capacity) {
  return GuardCBoundary([&] {
    RequireNonNull(func, "FFIJITDescribeArguments", "func");
    RequireNonNull(info, "FFIJITDescribeArguments", "info");
    if (capacity < 0) throw ValueError("FFIJITDescribeArguments: negative capacity");
    if (capacity > 0) RequireNonNull(args, "FFIJITDescribeArguments", "args");
    if (!IsBoundFunction(static_cast<const TVMFFIObject*>(func))) {
      throw TypeError(
          "FFIJITDescribeArguments: not a function made by FFIJITMakeFunction/Register");
    }
    const CallPlan& plan = *static_cast<const BoundFunction*>(func)->plan;
    info->name = plan.function_name.c_str();
    info->declaration = plan.declaration.c_str();
    info->status_convention = plan.convention == CallConvention::kStatus ? 1 : 0;
    info->num_args = static_cast<int32_t>(plan.args.size());
    const size_t count = std::min(plan.args.size(), static_cast<size_t>(capacity));
    for (size_t i = 0; i < count; ++i) {
      args[i].kind = ArgumentKindOf(plan, plan.args[i], static_cast<int32_t>(i));
      args[i].keyword = plan.args[i].keyword.c_str();
    }
  });
}

int FFIJITMakeNativeCallback(TVMFFIObjectHandle func, const char* metadata, int format, int flags,
                             void** out_fnptr, TVMFFIObjectHandle* out_keepalive) {
  return GuardCBoundary([&] {
    RequireNonNull(func, "FFIJITMakeNativeCallback", "func");
    RequireNonNull(metadata, "FFIJITMakeNativeCallback", "metadata");
    RequireNonNull(out_fnptr, "FFIJITMakeNativeCallback", "out_fnptr");
    RequireNonNull(out_keepalive, "FFIJITMakeNativeCallback", "out_keepalive");
    if (static_cast<const TVMFFIObject*>(func)->type_index != kTVMFFIFunction) {
      throw TypeError("FFIJITMakeNativeCallback: `func` is not an ffi.Function");
    }
    if ((flags & ~kFFIJITStatusConvention) != 0) {
      throw ValueError("FFIJITMakeNativeCallback: unknown flags " +
                       std::to_string(flags & ~kFFIJITStatusConvention) +
                       " (a callback takes only kFFIJITStatusConvention)");
    }
    Signature signature = ParseMetadata(metadata, FormatOf(format));
    if (flags & kFFIJITStatusConvention) signature.convention = CallConvention::kStatus;
    TVMFFIObjectIncRef(func);
    Function function = Function::Adopt(func);
    auto* keepalive = new CallbackKeepalive{NativeCallback(function, signature), func};
    TVMFFIObjectHandle handle = nullptr;
    if (TVMFFIFunctionCreate(keepalive, &CallKeptFunction, &DeleteKeepalive, &handle) != 0) {
      delete keepalive;
      throw Error::MoveFromRaised();
    }
    *out_fnptr = keepalive->callback.pointer();
    *out_keepalive = handle;
  });
}

}  // extern "C"
