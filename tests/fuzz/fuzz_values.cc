// libFuzzer target: hostile TVMFFIAny arrays against registered functions, interpreter vs JIT.
//
// Each input picks a function (of a dozen signatures, each registered twice: interpreted and
// JIT-compiled) and builds its argument array from random tags, payloads, inline lengths, NULLs
// and objects whose headers may disagree with their tags. Pointers are only ever NULL or point at
// real objects, strings and tensors (memory a caller lies about is outside the validity contract).
// Both tiers must answer alike: the same result, or the same error kind and message; any crash or
// sanitizer report is a finding.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ffijit/container.h"
#include "ffijit/error.h"
#include "ffijit/ffijit.h"
#include "ffijit/jit/jit.h"
#include "ffijit/jit/register.h"
#include "ffijit/reflect/signature.h"
#include "ffijit/tensor.h"

namespace {

using ffijit::Any;
using ffijit::Function;
using ffijit::ScalarKind;
using ffijit::Signature;
using ffijit::Type;
using ffijit::TypeKind;

// The natives read only what a well-formed conversion guarantees.
int64_t TakeI64(int64_t a) {
  return a;
}
int64_t TakeI32F64(int32_t a, double b) {
  return a + static_cast<int64_t>(b == b ? 1 : 0);
}
int64_t TakeStr(const char* s) {
  return s == nullptr ? -1 : static_cast<int64_t>(std::strlen(s));
}
int64_t TakeBytes(TVMFFIByteArray b) {
  int64_t sum = static_cast<int64_t>(b.size);
  for (size_t i = 0; i < b.size; ++i) sum += static_cast<unsigned char>(b.data[i]);
  return sum;
}
int64_t TakeTensor(DLTensor* t) {
  int64_t sum = t->ndim;
  for (int32_t i = 0; i < t->ndim; ++i) sum += t->shape[i];
  return sum;
}
int64_t TakeObject(TVMFFIObject* o) {
  return o == nullptr ? -1 : o->type_index;
}
int64_t TakeAny(const TVMFFIAny* a) {
  return a->type_index;
}
int64_t TakeTwo(int64_t a, int64_t b) {
  return a * 3 + b;
}
int64_t TakeStrAndObject(const char* s, TVMFFIObject* o) {
  return static_cast<int64_t>(std::strlen(s)) * 1000 + o->type_index;
}
int64_t TakeDtypeDevice(DLDataType t, DLDevice d) {
  // A device type is any 32-bit value a caller sends (DLPack's list grows), so it is read as one:
  // as the C++ enum an unknown value would be undefined behaviour in this native, not in ffijit.
  int32_t device_type = 0;
  std::memcpy(&device_type, &d.device_type, sizeof(device_type));
  return t.code * 100000 + t.bits * 100 + int64_t{device_type} * 10 + d.device_id;
}
int64_t TakePtr(void* p) {
  return p == nullptr ? 0 : 1;
}

struct Pair {
  Function interp, jit;
};

struct World {
  std::vector<Pair> functions;
  std::vector<Any> objects;  // keeps the pool alive
  std::vector<TVMFFIObject*> pool;
  std::vector<DLTensor> tensors;
  std::vector<int64_t> shape = {2, 3, 4};
  TVMFFIByteArray byte_array{"bytes\0in", 8};
  TVMFFIObject* rvalue_slot = nullptr;
};

Signature Sig(std::vector<ffijit::TypePtr> args) {
  Signature sig;
  sig.args = std::move(args);
  sig.results = {Type::Scalar(ScalarKind::kI64)};
  return sig;
}

template <typename F>
void Add(World& w, F* fn, Signature sig) {
  ffijit::RegisterOptions interp_options;
  interp_options.interpret_only = true;
  ffijit::RegisterOptions jit_options;
  Pair pair{ffijit::MakeFunction("fuzz.f", reinterpret_cast<void*>(fn), sig, interp_options),
            ffijit::MakeFunction("fuzz.f", reinterpret_cast<void*>(fn), sig, jit_options)};
  ffijit::JitEngine::Default().CompileNow(pair.jit);
  w.functions.push_back(std::move(pair));
}

World& TheWorld() {
  static World* world = [] {
    auto* w = new World();
    auto i64 = Type::Scalar(ScalarKind::kI64);
    Add(*w, &TakeI64, Sig({i64}));
    Add(*w, &TakeI32F64, Sig({Type::Scalar(ScalarKind::kI32), Type::Scalar(ScalarKind::kF64)}));
    Add(*w, &TakeStr, Sig({Type::Simple(TypeKind::kStr)}));
    Add(*w, &TakeBytes, Sig({Type::Simple(TypeKind::kBytes)}));
    Add(*w, &TakeTensor, Sig({Type::NDArray(ScalarKind::kAny, -1, {})}));
    Add(*w, &TakeTensor, Sig({Type::NDArray(ScalarKind::kF32, 2, {2, -1})}));
    Add(*w, &TakeObject, Sig({Type::Object()}));
    Add(*w, &TakeObject, Sig({Type::Object("ffi.Array")}));
    Add(*w, &TakeObject, Sig({Type::Object("", true)}));
    Add(*w, &TakeAny, Sig({Type::Simple(TypeKind::kUnknown)}));
    Add(*w, &TakeTwo, Sig({Type::Sequence(TypeKind::kSList, {i64, i64})}));
    Add(*w, &TakeTwo, Sig({Type::SDict({"a", "b"}, {i64, i64})}));
    Add(*w, &TakeStrAndObject, Sig({Type::Simple(TypeKind::kStr), Type::Object()}));
    Add(*w, &TakeDtypeDevice,
        Sig({Type::Simple(TypeKind::kDataType), Type::Simple(TypeKind::kDevice)}));
    Add(*w, &TakePtr, Sig({Type::Simple(TypeKind::kOpaquePtr)}));

    w->objects.push_back(Any(ffijit::String("a heap string of some length")));
    w->objects.push_back(Any(ffijit::Bytes(std::string("heap bytes\0with a NUL", 21))));
    w->objects.push_back(Any(ffijit::Array({Any(int64_t{1}), Any(int64_t{2})})));
    w->objects.push_back(Any(ffijit::Array({Any(int64_t{7})})));
    w->objects.push_back(Any(ffijit::Array({Any(ffijit::String("nested string")), Any(1.5)})));
    w->objects.push_back(Any(w->functions[0].interp));
    w->objects.push_back(Any(ffijit::Tensor::Empty({2, 3}, ffijit::DataType("float32"))));
    for (Any& a : w->objects) {
      // Short strings are inline (SmallStr), not objects: only heap objects join the pool.
      if (a.raw().type_index >= kTVMFFIStaticObjectBegin) w->pool.push_back(a.raw().v_obj);
    }
    TVMFFIAny keys[2] = {}, values[2] = {};
    keys[0].type_index = kTVMFFIRawStr;
    keys[0].v_c_str = "a";
    keys[1].type_index = kTVMFFIRawStr;
    keys[1].v_c_str = "b";
    values[0].type_index = values[1].type_index = kTVMFFIInt;
    values[0].v_int64 = 4;
    values[1].v_int64 = 5;
    TVMFFIObjectHandle map = nullptr;
    if (FFIJITMapCreate(keys, values, 2, &map) != 0) std::abort();
    w->pool.push_back(static_cast<TVMFFIObject*>(map));  // kept for the process
    w->rvalue_slot = w->pool[0];

    // Tensors: well-formed, shapeless, negative rank, scalar.
    DLTensor t{};
    t.dtype = DLDataType{kDLFloat, 32, 1};
    t.ndim = 2;
    t.shape = w->shape.data();
    w->tensors.push_back(t);
    t.shape = nullptr;
    w->tensors.push_back(t);
    t.ndim = -3;
    w->tensors.push_back(t);
    t.ndim = 0;
    w->tensors.push_back(t);
    t.ndim = 3;
    t.shape = w->shape.data();
    t.dtype = DLDataType{kDLInt, 8, 1};
    w->tensors.push_back(t);
    return w;
  }();
  return *world;
}

// Reads the input a byte (or eight) at a time; zeros once it runs out.
struct Reader {
  const uint8_t* data;
  size_t size;
  uint8_t Byte() {
    if (size == 0) return 0;
    --size;
    return *data++;
  }
  uint64_t Word() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | Byte();
    return v;
  }
};

const char* const kStrings[] = {"", "x", "float32", "cpu:0", "a longer raw string"};
const int32_t kTags[] = {kTVMFFINone,
                         kTVMFFIInt,
                         kTVMFFIBool,
                         kTVMFFIFloat,
                         kTVMFFIOpaquePtr,
                         kTVMFFIDataType,
                         kTVMFFIDevice,
                         kTVMFFIDLTensorPtr,
                         kTVMFFIRawStr,
                         kTVMFFIByteArrayPtr,
                         kTVMFFIObjectRValueRef,
                         kTVMFFISmallStr,
                         kTVMFFISmallBytes,
                         kTVMFFIObject,
                         kTVMFFIStr,
                         kTVMFFIBytes,
                         kTVMFFIFunction,
                         kTVMFFITensor,
                         kTVMFFIArray,
                         kTVMFFIMap,
                         kTVMFFIShape,
                         13,
                         -1,
                         4000};

TVMFFIAny MakeValue(World& w, Reader& r) {
  TVMFFIAny v{};
  const uint8_t pick = r.Byte();
  v.type_index = kTags[pick % (sizeof(kTags) / sizeof(kTags[0]))];
  const uint8_t form = r.Byte();
  switch (v.type_index) {
    case kTVMFFIDLTensorPtr:
      v.v_ptr = form % 6 == 0 ? nullptr : &w.tensors[form % w.tensors.size()];
      break;
    case kTVMFFIRawStr:
      v.v_c_str = form % 6 == 0 ? nullptr : kStrings[form % 5];
      break;
    case kTVMFFIByteArrayPtr:
      v.v_ptr = form % 2 == 0 ? nullptr : &w.byte_array;
      break;
    case kTVMFFIObjectRValueRef:
      v.v_ptr = form % 2 == 0 ? nullptr : &w.rvalue_slot;
      break;
    case kTVMFFISmallStr:
    case kTVMFFISmallBytes:
      v.v_uint64 = r.Word();
      v.small_str_len = form % 3 == 0 ? r.Byte() : form % 8;
      if (form & 0x80) v.v_bytes[7] = 0;
      break;
    default:
      if (v.type_index >= kTVMFFIStaticObjectBegin) {
        // NULL, or any pool object: its header may disagree with the tag.
        v.v_obj = form % 5 == 0 ? nullptr : w.pool[form % w.pool.size()];
      } else {
        v.v_uint64 = r.Word();
      }
      break;
  }
  return v;
}

struct Outcome {
  int status;
  TVMFFIAny result;
  std::string error;
};

Outcome Call(const Function& f, std::vector<TVMFFIAny>& args) {
  Outcome out{0, {}, ""};
  out.status =
      TVMFFIFunctionCall(f.get(), args.data(), static_cast<int32_t>(args.size()), &out.result);
  if (out.status != 0) {
    ffijit::Error e = ffijit::Error::MoveFromRaised();
    out.error = e.kind() + ": " + e.message();
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World& w = TheWorld();
  Reader r{data, size};
  const Pair& fn = w.functions[r.Byte() % w.functions.size()];
  size_t arity = r.Byte() % 4;
  std::vector<TVMFFIAny> args;
  for (size_t i = 0; i < arity; ++i) args.push_back(MakeValue(w, r));
  std::vector<TVMFFIAny> args_copy = args;  // an RValueRef may be moved from
  Outcome a = Call(fn.interp, args);
  w.rvalue_slot = w.pool[0];
  Outcome b = Call(fn.jit, args_copy);
  w.rvalue_slot = w.pool[0];
  if (a.status != b.status || a.error != b.error) std::abort();
  if (a.status == 0) {
    if (a.result.type_index != kTVMFFIInt || b.result.type_index != kTVMFFIInt ||
        a.result.v_int64 != b.result.v_int64) {
      std::abort();
    }
  }
  return 0;
}
