// The interpreted marshaller: runs a function's InterpProgram per call and calls the target.
#include <cstring>
#include <memory>
#include <new>

#include "interpreter/bound_function.h"
#include "interpreter/interp_program.h"
#include "interpreter/libffi_call.h"
#include "interpreter/marshal.h"

#include "platform/abi.h"

namespace ffijit {
namespace {

constexpr int kSmallFrame = kFrameStackBase + 16;  // frames up to 16 stack slots stay on the stack
constexpr int kSmallResults = 8;                   // out-pointer buffers kept on the C stack

int RaiseOutOfMemory() {
  TVMFFIErrorSetRaisedFromCStr("MemoryError", "out of memory marshalling a call");
  return -1;
}

// Converts one parameter the general way (structure path, any conversion) into the frame.
__attribute__((noinline)) int ConvertGeneric(const BoundFunction* fn, const InterpOp& op,
                                             const TVMFFIAny* args, uint64_t* frame) {
  const NativeParam& p = fn->plan->params[static_cast<size_t>(op.param)];
  const TVMFFIAny* value = args + op.position;
  if (p.path_size != 0) {
    value = FFIJITResolvePath(fn, op.param, value);
    if (value == nullptr) return -1;
  }
  uint64_t word[2] = {0, 0};
  if (__builtin_expect(ConvertValue(p, value, word) != ConvertStatus::kOk, 0)) {
    // Converts again through the shared entry point, which raises the exact error.
    return FFIJITConvertParam(fn, op.param, value, word);
  }
  frame[op.dest] = word[0];
  if (op.words == 2) frame[op.dest + 1] = word[1];
  return 0;
}

// Boxes a value returned in a register; the common kinds inline, the rest through the shared
// (out-of-line) boxer.
inline int BoxReturned(const BoundFunction* fn, Conversion conversion, const uint64_t* raw,
                       TVMFFIAny* result) {
  switch (conversion) {
    case Conversion::kI64:
      result->type_index = kTVMFFIInt;
      result->zero_padding = 0;
      result->v_int64 = static_cast<int64_t>(raw[0]);
      return 0;
    case Conversion::kI32:
      result->type_index = kTVMFFIInt;
      result->zero_padding = 0;
      result->v_int64 = static_cast<int32_t>(static_cast<uint32_t>(raw[0]));
      return 0;
    case Conversion::kF64:
      result->type_index = kTVMFFIFloat;
      result->zero_padding = 0;
      std::memcpy(&result->v_float64, raw, sizeof(double));
      return 0;
    default:
      return FFIJITBoxResult(fn, 0, raw, result);
  }
}

// The validity contract inline: a Str's object exists and is a Str; a SmallStr fits and ends in
// NUL; and neither holds a NUL inside, which would cut the C string short. Anything else is the
// general path's to convert or reject.
inline bool StoreStr(const InterpOp& op, const TVMFFIAny* value, uint64_t* frame) {
  if (value->type_index == kTVMFFIStr) {
    const TVMFFIObject* obj = value->v_obj;
    if (__builtin_expect(obj == nullptr || obj->type_index != kTVMFFIStr, 0)) return false;
    if (__builtin_expect(StrObjectHasNul(obj), 0)) return false;
    frame[op.dest] = reinterpret_cast<uintptr_t>(CellOf<FFIJITBytesCell>(value->v_obj)->data);
    return true;
  }
  if (value->type_index == kTVMFFISmallStr) {
    if (__builtin_expect(
            value->small_str_len > 7 || value->v_bytes[7] != 0 || SmallStrHasNul(*value), 0))
      return false;
    frame[op.dest] = reinterpret_cast<uintptr_t>(value->v_bytes);
    return true;
  }
  return false;
}

// The validity contract inline: a Tensor's object exists and is a Tensor, and a tensor's shape
// exists when ndim > 0.
inline bool StoreTensor(const InterpOp& op, const TVMFFIAny* value, uint64_t* frame) {
  const DLTensor* t = nullptr;
  if (value->type_index == kTVMFFITensor) {
    const TVMFFIObject* obj = value->v_obj;
    if (__builtin_expect(obj != nullptr && obj->type_index == kTVMFFITensor, 1)) {
      t = CellOf<DLTensor>(value->v_obj);
    }
  } else if (value->type_index == kTVMFFIDLTensorPtr) {
    t = static_cast<const DLTensor*>(value->v_ptr);
  }
  if (__builtin_expect(t != nullptr, 1)) {
    uint32_t dtype;
    std::memcpy(&dtype, &t->dtype, sizeof dtype);
    // With a checked rank, ndim == rank settles the sign; the shape must exist when ndim > 0
    // (before the static dims read it).
    const bool matches = (!op.tensor_check_dtype || dtype == op.tensor_dtype) &&
                         (op.tensor_rank < 0 ? t->ndim >= 0 : t->ndim == op.tensor_rank) &&
                         (t->shape != nullptr || t->ndim == 0) &&
                         (!op.tensor_has_static_dim || TensorMatches(op.native->tensor, t));
    if (__builtin_expect(!matches, 0)) return false;
    frame[op.dest] = reinterpret_cast<uintptr_t>(t);
    return true;
  }
  return false;
}

// Stores an argument that already has the op's kind as the frame takes it; false leaves the
// argument to ConvertGeneric.
inline bool StoreFast(const InterpOp& op, const TVMFFIAny* value, uint64_t* frame) {
  switch (op.opcode) {
    case InterpOpcode::kInt64:
      if (__builtin_expect(value->type_index == kTVMFFIInt || value->type_index == kTVMFFIBool,
                           1)) {
        frame[op.dest] = static_cast<uint64_t>(value->v_int64);
        return true;
      }
      break;
    case InterpOpcode::kFloat64:
      if (__builtin_expect(value->type_index == kTVMFFIFloat, 1)) {
        std::memcpy(&frame[op.dest], &value->v_float64, sizeof(double));
        return true;
      }
      break;
    case InterpOpcode::kOpaquePtr:
      if (__builtin_expect(value->type_index == kTVMFFIOpaquePtr, 1)) {
        frame[op.dest] = reinterpret_cast<uintptr_t>(value->v_ptr);
        return true;
      }
      break;
    case InterpOpcode::kInt32:
      if (__builtin_expect((value->type_index == kTVMFFIInt || value->type_index == kTVMFFIBool) &&
                               value->v_int64 >= INT32_MIN && value->v_int64 <= INT32_MAX,
                           1)) {
        frame[op.dest] = static_cast<uint64_t>(value->v_int64);
        return true;
      }
      break;
    case InterpOpcode::kFloat32:
      if (__builtin_expect(value->type_index == kTVMFFIFloat, 1)) {
        const float f = static_cast<float>(value->v_float64);
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        frame[op.dest] = bits;
        return true;
      }
      break;
    case InterpOpcode::kStr:
      return StoreStr(op, value, frame);
    case InterpOpcode::kTensor:
      return StoreTensor(op, value, frame);
    case InterpOpcode::kDataType:
      if (__builtin_expect(value->type_index == kTVMFFIDataType, 1)) {
        uint32_t bits;
        std::memcpy(&bits, &value->v_dtype, sizeof bits);
        frame[op.dest] = bits;
        return true;
      }
      break;
    case InterpOpcode::kDevice:
      if (__builtin_expect(value->type_index == kTVMFFIDevice, 1)) {
        std::memcpy(&frame[op.dest], &value->v_device, sizeof(DLDevice));
        return true;
      }
      break;
    case InterpOpcode::kGeneric:
      break;
  }
  return false;
}

using OutBuffer = uint64_t[2];

// Out-pointer results: zeroed 16-byte buffers, one per result not returned by value, in `small`
// or, when more than fit, in `big`. Returns the buffers, nullptr when out of memory.
inline OutBuffer* BindOutBuffers(const InterpProgram& program, uint64_t* frame, OutBuffer* small,
                                 std::unique_ptr<OutBuffer[]>& big) {
  const int32_t num_results = program.num_results;
  OutBuffer* out = small;
  const bool by_return =
      program.return_kind != ReturnKind::kVoid && program.return_kind != ReturnKind::kStatus;
  if (!by_return && num_results > 0) {
    if (num_results > kSmallResults) {
      big.reset(new (std::nothrow) OutBuffer[static_cast<size_t>(num_results)]);
      if (big == nullptr) return nullptr;
      out = big.get();
    }
    for (int32_t r = 0; r < num_results; ++r) {
      out[r][0] = out[r][1] = 0;
      frame[program.out_dest[static_cast<size_t>(r)]] = reinterpret_cast<uintptr_t>(out[r]);
    }
  }
  return out;
}

// Calls the target with the frame's words; its return registers land in `ret`.
inline void CallTarget(const BoundFunction* fn, [[maybe_unused]] const InterpProgram& program,
                       uint64_t* frame, uint64_t* ret) {
#if FFIJIT_HAVE_CALL_STUB
  if (__builtin_expect(fn->libffi == nullptr, 1)) {
    if (program.num_stack == 0) {
      platform::ffijit_call_stub_regs(fn->target, frame, ret);
    } else {
      platform::ffijit_call_stub(fn->target, frame, frame + kFrameStackBase,
                                 static_cast<uint64_t>(program.num_stack), ret);
    }
  } else {
    CallLibffi(fn->libffi, fn->target, frame, ret);
  }
#else
  CallLibffi(fn->libffi, fn->target, frame, ret);
#endif
}

// Boxes what the call returned (in `ret`, or in the out-buffers) into `result`, or raises the
// error a status result reports.
inline int BoxCallResult(const BoundFunction* fn, const InterpProgram& program, const uint64_t* ret,
                         OutBuffer* out, const TVMFFIAny* args, TVMFFIAny* result) {
  const uint64_t* returned = nullptr;
  switch (program.return_kind) {
    case ReturnKind::kGpr:
    case ReturnKind::kGprPair:
      returned = ret + platform::kRetGpr;
      break;
    case ReturnKind::kSse:
      returned = ret + platform::kRetFpr;
      break;
    case ReturnKind::kStatus: {
      const auto status = static_cast<int32_t>(static_cast<uint32_t>(ret[platform::kRetGpr]));
      if (status != 0) return FFIJITPropagateStatus(fn, status);
      break;
    }
    case ReturnKind::kVoid:
      break;
  }
  if (__builtin_expect(program.packs_results, 0)) {
    // A structure whose one leaf came back by value: boxed from the out-buffer like the others.
    if (returned != nullptr) {
      out[0][0] = returned[0];
      out[0][1] = program.return_kind == ReturnKind::kGprPair ? returned[1] : 0;
    }
    return FFIJITBoxResults(fn, out, result, args);
  }
  if (returned != nullptr) return BoxReturned(fn, program.return_conversion, returned, result);
  if (program.num_results == 0) {
    *result = TVMFFIAny{};
    return 0;
  }
  return FFIJITBoxResult(fn, 0, out[0], result);
}

int Interpret(BoundFunction* fn, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  const InterpProgram& program = *fn->program;
  if (__builtin_expect(num_args != program.num_args, 0)) {
    return FFIJITRaiseArityError(fn, num_args);
  }
  // Uninitialized on purpose: every word the target reads is written below, and zeroing the
  // frame costs more than the rest of a small call.
  uint64_t small_frame[kSmallFrame];
  std::unique_ptr<uint64_t[]> big_frame;
  uint64_t* frame = small_frame;
  if (__builtin_expect(program.frame_words > kSmallFrame, 0)) {
    big_frame.reset(new (std::nothrow) uint64_t[static_cast<size_t>(program.frame_words)]);
    if (big_frame == nullptr) return RaiseOutOfMemory();
    frame = big_frame.get();
  }

  for (const InterpOp& op : program.ops) {
    if (StoreFast(op, args + op.position, frame)) continue;
    if (ConvertGeneric(fn, op, args, frame) != 0) return -1;
  }

  OutBuffer small_out[kSmallResults];
  std::unique_ptr<OutBuffer[]> big_out;
  OutBuffer* const out = BindOutBuffers(program, frame, small_out, big_out);
  if (out == nullptr) return RaiseOutOfMemory();

  uint64_t ret[platform::kRetWords];
  CallTarget(fn, program, frame, ret);
  return BoxCallResult(fn, program, ret, out, args, result);
}

}  // namespace

int InterpreterSafeCall(void* handle, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  auto* fn = static_cast<BoundFunction*>(handle);
  if (fn->on_hot != nullptr && fn->calls_until_hot.fetch_sub(1, std::memory_order_relaxed) == 1) {
    fn->on_hot(fn);
  }
  return Interpret(fn, args, num_args, result);
}

}  // namespace ffijit
