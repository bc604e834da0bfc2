// Thunk argument checks: whether each argument arrives in a form the call block converts, and
// the value-validity contract (details::FindAnyDefect) as generated code.
#include <bit>
#include <cassert>
#include <cstdint>

#include "llvm/IR/IRBuilder.h"
#include "orc/codegen/thunk_emitter.h"

namespace ffijit::orc {

// The scalar checks are written as "these bits are zero". On the cold tier such bits are ORed
// into one word per width, which the next Flush compares once: at -O0 a compare of its own costs
// each check a setcc and an and (i64_f64_i32_f32_ptr: 1.13x handwritten with the compares, 1.08x
// with the words). The hot tier compares; its optimizer chooses the instructions.
void ThunkEmitter::RequireZero(llvm::Value* bits) {
  if (options_.optimized) {
    Require(b_.CreateICmpEQ(bits, llvm::ConstantInt::get(bits->getType(), 0)));
    return;
  }
  llvm::Value*& word = bits->getType() == i64_ ? nonzero_if_bad64_ : nonzero_if_bad32_;
  word = word == nullptr ? bits : b_.CreateOr(word, bits);
}
void ThunkEmitter::RequireTagIs(llvm::Value* tag, int32_t index) {
  RequireZero(b_.CreateXor(tag, b_.getInt32(static_cast<uint32_t>(index))));
}
// An Int or a Bool (tags 1 and 2): tag - 1, unsigned, is 0 or 1.
void ThunkEmitter::RequireIntOrBool(llvm::Value* tag) {
  static_assert(kTVMFFIBool == kTVMFFIInt + 1);
  RequireZero(b_.CreateLShr(b_.CreateSub(tag, b_.getInt32(kTVMFFIInt)), b_.getInt32(1)));
}
// The Int `v` is in the conversion's range [min, max], whose size is a power of two 2^k:
// (v - min), unsigned, has no bit at k or above. Nothing for i64, where every Int fits.
void ThunkEmitter::RequireFits(Conversion c, llvm::Value* v) {
  const ConversionInfo& info = InfoOf(c);
  const uint64_t span = static_cast<uint64_t>(info.max) - static_cast<uint64_t>(info.min) + 1;
  if (span == 0) return;
  assert(std::has_single_bit(span) && "integer ranges are 2^k values");
  llvm::Value* offset = info.min == 0 ? v : b_.CreateSub(v, b_.getInt64(info.min));
  RequireZero(b_.CreateLShr(offset, b_.getInt64(std::countr_zero(span))));
}
// The words folded into ok_.
void ThunkEmitter::MergeZeroWords() {
  llvm::Value* bad = nonzero_if_bad64_;
  if (nonzero_if_bad32_ != nullptr) {
    llvm::Value* wide = b_.CreateZExt(nonzero_if_bad32_, i64_);
    bad = bad == nullptr ? wide : b_.CreateOr(bad, wide);
  }
  nonzero_if_bad32_ = nonzero_if_bad64_ = nullptr;
  if (bad != nullptr) Require(b_.CreateICmpEQ(bad, b_.getInt64(0)));
}

// Leaves for the fallback unless everything checked so far holds: what follows may dereference
// what those checks validated.
void ThunkEmitter::Flush() {
  MergeZeroWords();
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(ok_); c && c->isOne()) return;
  auto* next = NewBlock();
  CondBr(ok_, next, fallback_);
  b_.SetInsertPoint(next);
  ok_ = b_.getTrue();
}

// Adds to ok_ whether parameter `index` arrives in one of the forms the call block converts.
void ThunkEmitter::CheckParam(int32_t index) {
  const NativeParam& p = plan_.params[static_cast<size_t>(index)];
  const Conversion c = p.conversion;
  llvm::Value* value = ValueOf(index, true);
  if (c == Conversion::kAnyView) {
    RequireWellFormedAny(value);
    return;
  }
  llvm::Value* tag = b_.CreateLoad(i32_, value);
  llvm::Value* payload = AtOffset(value, kAnyValueOffset);
  if (c == Conversion::kBool) {
    RequireIntOrBool(tag);
  } else if (IsIntegerConversion(c)) {
    RequireIntOrBool(tag);
    RequireFits(c, b_.CreateLoad(i64_, payload));
  } else if (IsFloatConversion(c)) {
    // Int, Bool or Float; but the cold tier takes an f32/f64 inline only as a Float: converting
    // an Int too would cost every call a conversion and a select at -O0 (the fallback does it).
    if (options_.optimized || !IsNativeFloat(c)) {
      Require(TagIn(tag, kTVMFFIInt, 3));
    } else {
      RequireTagIs(tag, kTVMFFIFloat);
    }
  } else if (c == Conversion::kOpaquePtr) {
    // OpaquePtr (4) or None (0): the only tags with no bit but bit 2 set.
    RequireZero(b_.CreateAnd(tag, b_.getInt32(~uint32_t{kTVMFFIOpaquePtr})));
  } else if (c == Conversion::kStr) {
    // A NULL RawStr is the fallback's to accept (nullable) or reject. The object form's check
    // implies its tag (a wrong tag reads the zero stand-in's header). A string with a NUL inside
    // (a RawStr cannot hold one) is the fallback's to refuse: the native would see it cut short.
    llvm::Value* raw =
        b_.CreateAnd(TagIs(tag, kTVMFFIRawStr), b_.CreateIsNotNull(b_.CreateLoad(i64_, payload)));
    Require(b_.CreateOr(b_.CreateOr(raw, WellFormedSmall(tag, value, kTVMFFISmallStr)),
                        ObjectHeaderIs(tag, payload, kTVMFFIStr)));
    RequireNoNulInside(tag, value, payload);
  } else if (c == Conversion::kBytes) {
    llvm::Value* array = b_.CreateAnd(TagIs(tag, kTVMFFIByteArrayPtr),
                                      b_.CreateIsNotNull(b_.CreateLoad(i64_, payload)));
    llvm::Value* small = b_.CreateOr(WellFormedSmall(tag, value, kTVMFFISmallStr),
                                     WellFormedSmall(tag, value, kTVMFFISmallBytes));
    llvm::Value* object = b_.CreateAnd(TagIn(tag, kTVMFFIStr, 2), ObjectHeaderIsTag(tag, payload));
    Require(b_.CreateOr(b_.CreateOr(array, small), object));
  } else if (c == Conversion::kTensor) {
    llvm::Value* tensor = nullptr;
    if (options_.optimized) {
      tensor = checked_tensors_[index] = BranchToTensor(tag, payload);
    } else {
      // The cold tier takes a Tensor object inline, a DLTensorPtr through the fallback: picking
      // between the two forms at -O0 costs every call a second test and two selects in the
      // chain of each dtype/rank/shape load (tensor: 1.27x handwritten with both, 1.00x with
      // the object alone). The dtype and rank of a wrong form read the zero stand-in.
      llvm::Value* object = ReadableObject(tag, payload, kTVMFFITensor);
      Require(b_.CreateICmpEQ(Load(i32_, object, kObjectTypeIndexOffset),
                              b_.getInt32(static_cast<uint32_t>(kTVMFFITensor))));
      tensor = AtOffset(object, kObjectCellOffset);
    }
    RequireWellFormedTensor(p.tensor, tensor);
    CheckTensor(p.tensor, tensor);
  } else if (c == Conversion::kDataType) {
    RequireTagIs(tag, kTVMFFIDataType);
  } else if (c == Conversion::kDevice) {
    RequireTagIs(tag, kTVMFFIDevice);
  } else if (c == Conversion::kObject) {
    // Subtypes and None take the fallback, which asks the type registry.
    // A key no type has yet (the index is read once, here): always the fallback's.
    const int32_t want = __atomic_load_n(&p.object_type_index, __ATOMIC_ACQUIRE);
    // The header check implies an object tag (a non-object tag reads the stand-in's zero).
    Require(want == kTVMFFIObject          ? ObjectHeaderIsTag(tag, payload)
            : want == kUnresolvedTypeIndex ? b_.getFalse()
                                           : ObjectHeaderIs(tag, payload, want));
  }
}

// ---- The value-validity contract (details::FindAnyDefect), the one place thunks emit it ----
//
// Each helper adds to ok_ that the forms the conversion accepts inline are well-formed; a value
// that is not takes the fallback, whose interpreter raises the contract's error. The common case
// costs one compare of the object header against the tag: a NULL object reads a zero header
// through the stand-in, which no object tag equals. Subtypes (a header that differs from the tag)
// take the fallback too, which walks the type table.

// Whether the object in `payload` exists and its header type index is `type_index`. Loads only
// through an object the tag says is one, and through the zero stand-in otherwise.
llvm::Value* ThunkEmitter::ObjectHeaderIs(llvm::Value* tag, llvm::Value* payload,
                                          int32_t type_index) {
  llvm::Value* object = ReadableObject(tag, payload, type_index);
  return b_.CreateICmpEQ(Load(i32_, object, kObjectTypeIndexOffset),
                         b_.getInt32(static_cast<uint32_t>(type_index)));
}
// The object in `payload` when the tag is `type_index` and the object non-NULL; otherwise the
// zero stand-in (whose header is 0, and whose cell reads as a tensor of rank 0 with no dtype).
llvm::Value* ThunkEmitter::ReadableObject(llvm::Value* tag, llvm::Value* payload,
                                          int32_t type_index) {
  llvm::Value* pointer = b_.CreateLoad(ptr_, payload);
  llvm::Value* readable = b_.CreateAnd(TagIs(tag, type_index), b_.CreateIsNotNull(pointer));
  return b_.CreateSelect(readable, pointer, Zeros(kObjectCellOffset + sizeof(DLTensor)));
}
// The same against the tag itself: an object tag, object non-NULL, header == tag. (The tag test
// stays in the result: None's tag 0 equals the stand-in's zero header.)
llvm::Value* ThunkEmitter::ObjectHeaderIsTag(llvm::Value* tag, llvm::Value* payload) {
  llvm::Value* pointer = b_.CreateLoad(ptr_, payload);
  llvm::Value* is_object = b_.CreateICmpSGE(tag, b_.getInt32(kTVMFFIStaticObjectBegin));
  llvm::Value* object =
      b_.CreateSelect(b_.CreateAnd(is_object, b_.CreateIsNotNull(pointer)), pointer, Zeros());
  return b_.CreateAnd(is_object, b_.CreateICmpEQ(Load(i32_, object, kObjectTypeIndexOffset), tag));
}
// Whether the value is the inline form `small_tag` and well-formed: at most 7 bytes, and for a
// SmallStr a NUL eighth byte. One compare: (length | eighth byte << 3) <= 7.
llvm::Value* ThunkEmitter::WellFormedSmall(llvm::Value* tag, llvm::Value* value,
                                           int32_t small_tag) {
  llvm::Value* length = Load(i32_, value, kAnySmallLenOffset);
  if (small_tag == kTVMFFISmallStr) {
    llvm::Value* last = b_.CreateZExt(Load(i8_, value, kAnySmallLastByteOffset), i32_);
    length = b_.CreateOr(length, b_.CreateShl(last, 3));
  }
  return b_.CreateAnd(TagIs(tag, small_tag), b_.CreateICmpULE(length, b_.getInt32(7)));
}
// Whether a SmallStr's small_str_len bytes hold no NUL, without a branch: the bytes at and past
// the length are set, then the classic has-a-zero-byte test runs on the word.
llvm::Value* ThunkEmitter::SmallStrNulFree(llvm::Value* value) {
  llvm::Value* word = Load(i64_, value, kAnyValueOffset);
  llvm::Value* length = b_.CreateZExt(Load(i32_, value, kAnySmallLenOffset), i64_);
  llvm::Value* shift = b_.CreateShl(length, b_.getInt64(3));  // < 64: the form check held
  llvm::Value* past_end = module_.getDataLayout().isLittleEndian()
                              ? b_.CreateShl(b_.getInt64(~uint64_t{0}), shift)
                              : b_.CreateLShr(b_.getInt64(~uint64_t{0}), shift);
  word = b_.CreateOr(word, past_end);
  llvm::Value* zero_bytes = b_.CreateAnd(
      b_.CreateAnd(b_.CreateSub(word, b_.getInt64(0x0101010101010101ull)), b_.CreateNot(word)),
      b_.getInt64(0x8080808080808080ull));
  return b_.CreateICmpEQ(zero_bytes, b_.getInt64(0));
}
// A string accepted by the form check holds no NUL inside, which would end the native's C string
// early: a Str object's bytes by libc's memchr, a SmallStr's word in line (a RawStr cannot hold
// one). Once the checks so far hold, so the object is known to be a Str and the small length to
// fit; a branch per form, so each form pays only for its own test.
void ThunkEmitter::RequireNoNulInside(llvm::Value* tag, llvm::Value* value, llvm::Value* payload) {
  Flush();
  auto* scan = NewBlock();
  auto* not_object = NewBlock();
  auto* small = NewBlock();
  auto* next = NewBlock();
  b_.CreateCondBr(TagIs(tag, kTVMFFIStr), scan, not_object);
  b_.SetInsertPoint(scan);
  llvm::Value* object = b_.CreateLoad(ptr_, payload);
  llvm::Value* data = Load(ptr_, object, kObjectCellOffset);
  llvm::Value* size = Load(i64_, object, kObjectCellOffset + 8);
  llvm::Value* nul = CallHelper("memchr", ptr_, {ptr_, i32_, i64_}, {data, b_.getInt32(0), size});
  CondBr(b_.CreateIsNull(nul), next, fallback_);
  b_.SetInsertPoint(not_object);
  b_.CreateCondBr(TagIs(tag, kTVMFFISmallStr), small, next);
  b_.SetInsertPoint(small);
  CondBr(SmallStrNulFree(value), next, fallback_);
  b_.SetInsertPoint(next);
}
// A DLTensor (or the zero stand-in) has ndim >= 0 and a shape when ndim > 0. With a checked
// rank, ndim == rank settles the sign: only a positive rank needs the shape test.
void ThunkEmitter::RequireWellFormedTensor(const TensorCheck& check, llvm::Value* tensor) {
  llvm::Value* shape_present = b_.CreateIsNotNull(Load(ptr_, tensor, kTensorShapeOffset));
  if (check.rank > 0) {
    Require(shape_present);
    return;
  }
  if (check.rank == 0) return;
  llvm::Value* ndim = Load(i32_, tensor, kTensorNdimOffset);
  Require(b_.CreateAnd(b_.CreateICmpSGE(ndim, b_.getInt32(0)),
                       b_.CreateOr(b_.CreateICmpEQ(ndim, b_.getInt32(0)), shape_present)));
}
// The whole contract for an `any` parameter (every form passes), out of line.
void ThunkEmitter::RequireWellFormedAny(llvm::Value* value) {
  Require(b_.CreateICmpEQ(CallHelper(kAnyDefectSymbol, i32_, {ptr_}, {value}), b_.getInt32(0)));
}

// The optimized tier's form test for a tensor argument: a predicted branch on the tag (a Tensor
// object, the likely form, or a DLTensorPtr), each side checking its own form and leaving for the
// fallback when it fails. Selecting between the forms instead would chain the header load, the
// pick and every dtype/rank/shape load behind conditional moves. Returns the DLTensor.
llvm::Value* ThunkEmitter::BranchToTensor(llvm::Value* tag, llvm::Value* payload) {
  Flush();
  llvm::Value* pointer = b_.CreateLoad(ptr_, payload);
  auto* as_object = NewBlock();
  auto* object_present = NewBlock();
  auto* as_pointer = NewBlock();
  auto* join = NewBlock();
  CondBr(TagIs(tag, kTVMFFITensor), as_object, as_pointer);
  b_.SetInsertPoint(as_object);
  CondBr(b_.CreateIsNotNull(pointer), object_present, fallback_);
  b_.SetInsertPoint(object_present);
  llvm::Value* header = Load(i32_, pointer, kObjectTypeIndexOffset);
  llvm::Value* cell = AtOffset(pointer, kObjectCellOffset);
  CondBr(b_.CreateICmpEQ(header, b_.getInt32(kTVMFFITensor)), join, fallback_);
  b_.SetInsertPoint(as_pointer);
  CondBr(b_.CreateAnd(TagIs(tag, kTVMFFIDLTensorPtr), b_.CreateIsNotNull(pointer)), join,
         fallback_);
  b_.SetInsertPoint(join);
  llvm::PHINode* tensor = b_.CreatePHI(ptr_, 2);
  tensor->addIncoming(cell, object_present);
  tensor->addIncoming(pointer, as_pointer);
  return tensor;
}

// Adds the tensor's dtype, rank and static dims to ok_ (the shape is read once the rank is
// known to match).
void ThunkEmitter::CheckTensor(const TensorCheck& check, llvm::Value* tensor) {
  if (check.check_dtype) {
    uint32_t want = static_cast<uint32_t>(check.dtype.code) |
                    static_cast<uint32_t>(check.dtype.bits) << 8 | 1u << 16;
    Require(b_.CreateICmpEQ(Load(i32_, tensor, kTensorDtypeOffset), b_.getInt32(want)));
  }
  if (check.rank < 0) return;
  Require(b_.CreateICmpEQ(Load(i32_, tensor, kTensorNdimOffset),
                          b_.getInt32(static_cast<uint32_t>(check.rank))));
  bool any_static = false;
  for (int64_t d : check.dims) any_static |= d >= 0;
  if (!any_static) return;
  Flush();
  llvm::Value* shape = Load(ptr_, tensor, kTensorShapeOffset);
  for (size_t i = 0; i < check.dims.size(); ++i) {
    if (check.dims[i] < 0) continue;
    Require(b_.CreateICmpEQ(Load(i64_, shape, 8 * i),
                            b_.getInt64(static_cast<uint64_t>(check.dims[i]))));
  }
}

}  // namespace ffijit::orc
