// libffi call path of the interpreter: ffi_prep_cif once per function, ffi_call per call.
//
// libffi has no 16-bit float type, so an f16/bf16 argument or by-value result cannot be described
// to it and is refused at registration. An f16/bf16 result written through an out-pointer (status
// convention, several results) is only a pointer to libffi and is accepted.
#include "interpreter/libffi_call.h"

#include <ffi.h>

#include <cstring>
#include <memory>
#include <vector>

#include "ffijit/error.h"

namespace ffijit {

struct LibffiCall {
  ffi_cif cif;
  std::vector<ffi_type*> arg_types;
  // TVMFFIByteArray / TVMFFIAny as libffi structs: two 8-byte INTEGER members.
  ffi_type pair_type;
  ffi_type* pair_elements[3];
  // Where each native parameter (then each out-pointer) was placed.
  std::vector<AbiLocation> locations;
  ffi_type* return_type;
};

namespace {

ffi_type* ScalarType(Conversion c, ffi_type* pair) {
  switch (c) {
    case Conversion::kBool:
    case Conversion::kU8:
      return &ffi_type_uint8;
    case Conversion::kI8:
      return &ffi_type_sint8;
    case Conversion::kI16:
      return &ffi_type_sint16;
    case Conversion::kU16:
      return &ffi_type_uint16;
    case Conversion::kI32:
      return &ffi_type_sint32;
    case Conversion::kU32:
    case Conversion::kDataType:  // a 4-byte struct of INTEGER class: passed like a uint32
      return &ffi_type_uint32;
    case Conversion::kI64:
      return &ffi_type_sint64;
    case Conversion::kU64:
    case Conversion::kDevice:  // an 8-byte struct of INTEGER class: passed like a uint64
      return &ffi_type_uint64;
    case Conversion::kF32:
      return &ffi_type_float;
    case Conversion::kF64:
      return &ffi_type_double;
    case Conversion::kBytes:
      return pair;
    case Conversion::kF16:
    case Conversion::kBF16:
      throw TypeError(
          "libffi has no 16-bit float type: cannot pass an f16/bf16 argument or return one by "
          "value (through an out-pointer it can)");
    case Conversion::kOpaquePtr:
    case Conversion::kStr:
    case Conversion::kTensor:
    case Conversion::kObject:
    case Conversion::kAnyView:
      return &ffi_type_pointer;
  }
  return &ffi_type_pointer;
}

}  // namespace

LibffiCall* PrepareLibffiCall(const CallPlan& plan) {
  auto call = std::make_unique<LibffiCall>();
  call->pair_elements[0] = &ffi_type_uint64;
  call->pair_elements[1] = &ffi_type_uint64;
  call->pair_elements[2] = nullptr;
  call->pair_type = ffi_type{};
  call->pair_type.type = FFI_TYPE_STRUCT;
  call->pair_type.elements = call->pair_elements;
  for (const NativeParam& p : plan.params) {
    call->arg_types.push_back(ScalarType(p.conversion, &call->pair_type));
    call->locations.push_back(p.abi);
  }
  for (const ResultSlot& r : plan.results) {
    if (r.by_return) continue;
    call->arg_types.push_back(&ffi_type_pointer);
    call->locations.push_back(r.out_abi);
  }
  switch (plan.return_kind) {
    case ReturnKind::kVoid:
      call->return_type = &ffi_type_void;
      break;
    case ReturnKind::kStatus:
      call->return_type = &ffi_type_sint32;
      break;
    case ReturnKind::kGprPair:
      call->return_type = &call->pair_type;
      break;
    case ReturnKind::kGpr:
    case ReturnKind::kSse:
      call->return_type = ScalarType(plan.results[0].conversion, &call->pair_type);
      break;
  }
  ffi_status status =
      ffi_prep_cif(&call->cif, FFI_DEFAULT_ABI, static_cast<unsigned>(call->arg_types.size()),
                   call->return_type, call->arg_types.data());
  if (status != FFI_OK) {
    throw RuntimeError("ffi_prep_cif failed (status " + std::to_string(status) + ") for `" +
                       plan.declaration + "`");
  }
  return call.release();
}

void DestroyLibffiCall(LibffiCall* call) {
  delete call;
}

void CallLibffi(const LibffiCall* call, void* target, uint64_t* frame,
                uint64_t ret[platform::kRetWords]) {
  const size_t n = call->locations.size();
  void* small[16];
  std::unique_ptr<void*[]> big;
  void** values = small;
  if (n > 16) {
    big.reset(new void*[n]);
    values = big.get();
  }
  for (size_t i = 0; i < n; ++i) {
    values[i] = &frame[platform::FrameIndex(platform::kHost, call->locations[i])];
  }
  // libffi widens integer returns to ffi_arg; 16 bytes hold every return type used here.
  uint64_t rvalue[2] = {0, 0};
  ffi_call(const_cast<ffi_cif*>(&call->cif), FFI_FN(target), rvalue, values);
  ret[platform::kRetGpr] = rvalue[0];
  ret[platform::kRetGpr + 1] = rvalue[1];
  ret[platform::kRetFpr] = rvalue[0];
  ret[platform::kRetFpr + 1] = rvalue[1];
}

}  // namespace ffijit
