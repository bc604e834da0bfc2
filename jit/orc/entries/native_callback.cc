// NativeCallback: boxes a native call's parameters, calls the packed function, unboxes the result.
#include <algorithm>
#include <cstring>
#include <vector>

#include "ffijit/any.h"
#include "ffijit/error.h"
#include "ffijit/object.h"
#include "interpreter/float16.h"
#include "interpreter/marshal.h"
#include "orc/codegen/abi_ir.h"
#include "orc/codegen/callback_codegen.h"
#include "orc/tiers/jit_engine_impl.h"

namespace ffijit {

struct details::NativeCallbackState {
  TVMFFIObjectHandle function = nullptr;  // one strong reference
  CallPlan plan;
  details::JitEngineImpl* impl = nullptr;
  orc::UnitCompiler* compiler = nullptr;
  orc::CodeUnit* unit = nullptr;
  // Told of a plain-convention callback's error, left raised, that the caller cannot see.
  void (*unreported)(void* data, const char* declaration) = nullptr;
  void* unreported_data = nullptr;
};

namespace {

// The low bytes of a register word that an integer conversion's type defines, extended to 64 bits
// (the caller may leave the upper bits of a narrow argument undefined).
int64_t Narrow(Conversion c, uint64_t word) {
  const ConversionInfo& info = InfoOf(c);
  switch (info.bytes) {
    case 1:
      return info.is_signed ? static_cast<int8_t>(word)
                            : static_cast<int64_t>(static_cast<uint8_t>(word));
    case 2:
      return info.is_signed ? static_cast<int16_t>(word)
                            : static_cast<int64_t>(static_cast<uint16_t>(word));
    case 4:
      return info.is_signed ? static_cast<int32_t>(word)
                            : static_cast<int64_t>(static_cast<uint32_t>(word));
    default:
      return static_cast<int64_t>(word);
  }
}

TVMFFIAny Pointer(int32_t type_index, uint64_t word) {
  TVMFFIAny any{};
  if (word != 0) {
    any.type_index = type_index;
    any.v_uint64 = word;
  }
  return any;
}

// Boxes one native parameter (borrowed views: they live for the packed call only).
TVMFFIAny BoxParam(const CallPlan& plan, size_t index, const uint64_t* word,
                   TVMFFIByteArray* bytes) {
  const NativeParam& p = plan.params[index];
  TVMFFIAny any{};
  switch (p.conversion) {
    case Conversion::kBool:
      any.type_index = kTVMFFIBool;
      any.v_int64 = (word[0] & 0xff) != 0;
      return any;
    case Conversion::kI8:
    case Conversion::kI16:
    case Conversion::kI32:
    case Conversion::kI64:
    case Conversion::kU8:
    case Conversion::kU16:
    case Conversion::kU32:
      any.type_index = kTVMFFIInt;
      any.v_int64 = Narrow(p.conversion, word[0]);
      return any;
    case Conversion::kU64:
      if (word[0] > static_cast<uint64_t>(INT64_MAX)) {
        throw ValueError("Callback `" + plan.declaration + "` got argument #" +
                         std::to_string(index) + " = " + std::to_string(word[0]) +
                         ", which does not fit an Int");
      }
      any.type_index = kTVMFFIInt;
      any.v_int64 = static_cast<int64_t>(word[0]);
      return any;
    case Conversion::kF64:
      any.type_index = kTVMFFIFloat;
      any.v_uint64 = word[0];
      return any;
    case Conversion::kF32: {
      float f;
      uint32_t bits = static_cast<uint32_t>(word[0]);
      std::memcpy(&f, &bits, sizeof f);
      any.type_index = kTVMFFIFloat;
      any.v_float64 = f;
      return any;
    }
    case Conversion::kF16:
      any.type_index = kTVMFFIFloat;
      any.v_float64 = FFIJITF16BitsToDouble(static_cast<uint16_t>(word[0]));
      return any;
    case Conversion::kBF16:
      any.type_index = kTVMFFIFloat;
      any.v_float64 = FFIJITBF16BitsToDouble(static_cast<uint16_t>(word[0]));
      return any;
    case Conversion::kOpaquePtr:
      return Pointer(kTVMFFIOpaquePtr, word[0]);
    case Conversion::kStr:
      return Pointer(kTVMFFIRawStr, word[0]);
    case Conversion::kTensor:
      return Pointer(kTVMFFIDLTensorPtr, word[0]);
    case Conversion::kBytes:
      bytes->data = reinterpret_cast<const char*>(word[0]);
      bytes->size = word[1];
      any.type_index = kTVMFFIByteArrayPtr;
      any.v_ptr = bytes;
      return any;
    case Conversion::kDataType: {
      uint32_t bits = static_cast<uint32_t>(word[0]);
      any.type_index = kTVMFFIDataType;
      std::memcpy(&any.v_dtype, &bits, sizeof bits);
      return any;
    }
    case Conversion::kDevice:
      any.type_index = kTVMFFIDevice;
      any.v_uint64 = word[0];
      return any;
    case Conversion::kObject:
      if (word[0] != 0) {
        any.v_obj = reinterpret_cast<TVMFFIObject*>(word[0]);
        any.type_index = any.v_obj->type_index;
      }
      return any;
    case Conversion::kAnyView:
      if (word[0] != 0) any = *reinterpret_cast<const TVMFFIAny*>(word[0]);
      return any;
  }
  return any;
}

// Converts a returned value for result `index` with the call contract's rules.
// ValueError: the packed function returned a value that breaks the validity contract.
[[noreturn]] void ThrowMalformedResult(const CallPlan& plan, size_t index, const TVMFFIAny& value) {
  throw ValueError("Callback `" + plan.declaration + "` returned a malformed value for result #" +
                   std::to_string(index) + ": " +
                   details::AnyDefectText(value, details::FindAnyDefect(value)));
}

uint64_t UnboxResult(const CallPlan& plan, size_t index, const TVMFFIAny& value) {
  const ResultSlot& slot = plan.results[index];
  NativeParam as_param;
  as_param.conversion = slot.conversion;
  uint64_t out[2] = {0, 0};
  switch (ConvertValue(as_param, &value, out)) {
    case ConvertStatus::kOk:
      return out[0];
    case ConvertStatus::kBadRange:
      throw ValueError("Callback `" + plan.declaration + "` returned " +
                       std::to_string(value.v_int64) + " for result #" + std::to_string(index) +
                       ", which does not fit `" + slot.type_text + "`");
    case ConvertStatus::kBadString:
      throw ValueError("Callback `" + plan.declaration + "` returned a string for result #" +
                       std::to_string(index) + " that is not a valid `" + slot.type_text + "`");
    case ConvertStatus::kMalformed:
      ThrowMalformedResult(plan, index, value);
    default:
      throw TypeError("Callback `" + plan.declaration + "` returned `" +
                      details::AnyTypeName(value) + "` for result #" + std::to_string(index) +
                      ", expected `" + slot.type_text + "`");
  }
}

void StoreNative(Conversion c, uint64_t word, void* out) {
  std::memcpy(out, &word,
              std::min<size_t>(InfoOf(c).bytes, sizeof word));  // little-endian: the low bytes
}

// Owns the packed call's result Any.
struct OwnedResult {
  TVMFFIAny any{};
  ~OwnedResult() {
    // A NULL object (a malformed result) holds no reference.
    if (any.type_index >= kTVMFFIStaticObjectBegin && any.v_obj != nullptr) {
      TVMFFIObjectDecRef(any.v_obj);
    }
  }
};

// false: the packed function failed, and its error is still raised, untouched: the very error
// object reaches whoever takes it (a Python caller finds the original exception by it).
bool Invoke(details::NativeCallbackState* state, const uint64_t* words, uint64_t* returned) {
  const CallPlan& plan = state->plan;
  const size_t num_params = plan.params.size();
  // A comparator's or visitor's few arguments live on the stack: a heap allocation per call
  // was a measurable share of a callback's cost. Longer lists take the heap.
  constexpr size_t kInline = 8;
  TVMFFIAny inline_args[kInline];
  TVMFFIByteArray inline_bytes[kInline];
  std::vector<TVMFFIAny> heap_args;
  std::vector<TVMFFIByteArray> heap_bytes;
  TVMFFIAny* args = inline_args;
  TVMFFIByteArray* bytes = inline_bytes;
  if (num_params > kInline) {
    heap_args.resize(num_params);
    heap_bytes.resize(num_params);
    args = heap_args.data();
    bytes = heap_bytes.data();
  }
  for (size_t i = 0; i < num_params; ++i) args[i] = BoxParam(plan, i, words + 2 * i, &bytes[i]);
  OwnedResult result;
  if (TVMFFIFunctionCall(state->function, args, static_cast<int32_t>(num_params), &result.any) !=
      0) {
    return false;
  }
  const size_t num_results = plan.results.size();
  if (num_results == 0) return true;
  // Out-pointers follow the argument parameters, in result order (by_return results have none).
  auto deliver = [&](size_t r, const TVMFFIAny& value) {
    uint64_t word = UnboxResult(plan, r, value);
    if (plan.results[r].by_return) {
      returned[0] = word;
      return;
    }
    size_t native = num_params;
    for (size_t before = 0; before < r; ++before) native += plan.results[before].by_return ? 0 : 1;
    if (void* out = reinterpret_cast<void*>(words[2 * native]); out != nullptr) {
      StoreNative(plan.results[r].conversion, word, out);
    }
  };
  if (num_results == 1) {
    deliver(0, result.any);
    return true;
  }
  if (details::FindAnyDefect(result.any) != details::AnyDefect::kNone) {
    ThrowMalformedResult(plan, 0, result.any);
  }
  if (result.any.type_index != kTVMFFIArray) {
    throw TypeError("Callback `" + plan.declaration + "` must return an Array of " +
                    std::to_string(num_results) + " results, got `" +
                    details::AnyTypeName(result.any) + "`");
  }
  const auto* cell = reinterpret_cast<const FFIJITArrayCell*>(result.any.v_obj + 1);
  // Its elements are read through `data`: the store must hold together first.
  if (const ArrayStoreDefect defect = FindArrayStoreDefect(result.any.v_obj);
      defect != ArrayStoreDefect::kNone) {
    throw ValueError("Callback `" + plan.declaration + "` returned a malformed Array of results: " +
                     ArrayStoreDefectText(result.any, defect));
  }
  if (cell->size != static_cast<int64_t>(num_results)) {
    throw ValueError("Callback `" + plan.declaration + "` must return " +
                     std::to_string(num_results) + " results, got an Array of " +
                     std::to_string(cell->size));
  }
  for (size_t r = 0; r < num_results; ++r) deliver(r, cell->data[r]);
  return true;
}

// The generated code's entry: never lets an exception reach the native caller's frames.
int InvokeFromNative(void* opaque, const uint64_t* words, uint64_t* returned) {
  returned[0] = returned[1] = 0;
  auto* state = static_cast<details::NativeCallbackState*>(opaque);
  try {
    if (Invoke(state, words, returned)) return 0;
  } catch (const Error& e) {
    e.SetRaised();
  } catch (const std::exception& e) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", e.what());
  }
  returned[0] = returned[1] = 0;  // a plain-convention caller sees a zero result
  if (state->plan.return_kind != ReturnKind::kStatus && state->unreported != nullptr) {
    state->unreported(state->unreported_data, state->plan.declaration.c_str());
  }
  return -1;
}

}  // namespace

namespace orc {
SymbolTable CallbackRuntimeSymbols() {
  return {{kCallbackInvokeSymbol, reinterpret_cast<void*>(&InvokeFromNative)}};
}
}  // namespace orc

namespace orc {

void MakeNativeCallback(const Function& function_ref, const Signature& signature, JitEngine& engine,
                        void** pointer, details::NativeCallbackState** out) {
  TVMFFIObjectHandle function = function_ref.get();
  auto* obj = static_cast<TVMFFIObject*>(function);
  if (obj == nullptr || obj->type_index != kTVMFFIFunction) {
    throw TypeError("NativeCallback needs a Function object");
  }
  auto state = std::make_unique<details::NativeCallbackState>();
  state->plan = Lower(signature, "callback");
  std::string reason = orc::CallbackUnsupportedReason(state->plan);
  if (!reason.empty()) {
    throw TypeError("Cannot make a native callback `" + state->plan.declaration + "`: " + reason);
  }
  state->impl = details::JitEngineAccess::Of(engine);
  std::string why;
  state->compiler = state->impl->Compiler(&why);
  if (state->compiler == nullptr) throw RuntimeError("Cannot make a native callback: " + why);
  details::NativeCallbackState* raw = state.get();
  std::vector<orc::CompileRequest> requests;
  requests.push_back({"", [raw](llvm::Module& module, const std::string& symbol) {
                        return orc::EmitCallback(raw->plan, raw, module, symbol);
                      }});
  orc::AddAbiCheck(&raw->plan, &requests.back());
  orc::CompiledSymbol compiled = state->compiler->Compile(std::move(requests))[0];
  if (compiled.address == nullptr) {
    throw RuntimeError("Cannot make a native callback `" + state->plan.declaration +
                       "`: " + compiled.failure);
  }
  state->unit = compiled.unit;
  state->function = function;
  TVMFFIObjectIncRef(function);
  state->impl->CallbackCreated();
  *pointer = compiled.address;
  *out = state.release();
}

void SetUnreportedErrorHandler(details::NativeCallbackState* state,
                               void (*handler)(void* data, const char* declaration), void* data) {
  state->unreported = handler;
  state->unreported_data = data;
}

void DestroyNativeCallback(details::NativeCallbackState* state) {
  state->compiler->Release(state->unit);
  state->impl->CallbackDestroyed();
  TVMFFIObjectDecRef(state->function);
  delete state;
}

}  // namespace orc

NativeCallback::NativeCallback(const Function& function, const Signature& signature,
                               JitEngine& engine) {
  orc::MakeNativeCallback(function, signature, engine, &pointer_, &state_);
}

void NativeCallback::SetUnreportedErrorHandler(void (*handler)(void* data, const char* declaration),
                                               void* data) {
  orc::SetUnreportedErrorHandler(state_, handler, data);
}

NativeCallback::~NativeCallback() {
  orc::DestroyNativeCallback(state_);
}

}  // namespace ffijit
