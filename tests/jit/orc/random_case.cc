// Seeded random signatures, argument lists and native results for the differential suite.
#include "random_case.h"

#include <cstring>
#include <limits>

#include "ffijit/c_ext.h"
#include "ffijit/error.h"

namespace ffijit::testing {

TVMFFIAny Int(int64_t v) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIInt;
  a.v_int64 = v;
  return a;
}
TVMFFIAny BoolValue(bool v) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIBool;
  a.v_int64 = v;
  return a;
}
TVMFFIAny FloatValue(double v) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIFloat;
  a.v_float64 = v;
  return a;
}
TVMFFIAny NoneValue() {
  return TVMFFIAny{};
}
namespace {

const char* const kTexts[] = {"", "x", "seven77", "eight888", "a longer string than that"};

void Check(int status, const char* what) {
  if (status != 0) {
    TVMFFIObjectHandle error = nullptr;
    TVMFFIErrorMoveFromRaised(&error);
    if (error) TVMFFIObjectDecRef(error);
    throw std::runtime_error(std::string("test setup failed: ") + what);
  }
}

TVMFFIAny PtrValue(uint64_t bits) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIOpaquePtr;
  a.v_uint64 = bits;
  return a;
}

bool IsIntegerKind(ScalarKind k) {
  switch (k) {
    case ScalarKind::kI8:
    case ScalarKind::kI16:
    case ScalarKind::kI32:
    case ScalarKind::kI64:
    case ScalarKind::kU8:
    case ScalarKind::kU16:
    case ScalarKind::kU32:
    case ScalarKind::kU64:
      return true;
    default:
      return false;
  }
}

// The Int range a packed value must fall in for an integer kind.
void IntRange(ScalarKind k, int64_t* lo, int64_t* hi) {
  switch (k) {
    case ScalarKind::kI8:
      *lo = INT8_MIN;
      *hi = INT8_MAX;
      return;
    case ScalarKind::kI16:
      *lo = INT16_MIN;
      *hi = INT16_MAX;
      return;
    case ScalarKind::kI32:
      *lo = INT32_MIN;
      *hi = INT32_MAX;
      return;
    case ScalarKind::kU8:
      *lo = 0;
      *hi = UINT8_MAX;
      return;
    case ScalarKind::kU16:
      *lo = 0;
      *hi = UINT16_MAX;
      return;
    case ScalarKind::kU32:
      *lo = 0;
      *hi = UINT32_MAX;
      return;
    case ScalarKind::kU64:
      *lo = 0;
      *hi = INT64_MAX;
      return;
    default:
      *lo = INT64_MIN;
      *hi = INT64_MAX;
      return;
  }
}

DLDataType ElementType(ScalarKind k) {
  switch (k) {
    case ScalarKind::kF32:
      return DLDataType{kDLFloat, 32, 1};
    case ScalarKind::kF16:
      return DLDataType{kDLFloat, 16, 1};
    case ScalarKind::kI64:
      return DLDataType{kDLInt, 64, 1};
    case ScalarKind::kU8:
      return DLDataType{kDLUInt, 8, 1};
    default:
      return DLDataType{kDLInt, 32, 1};
  }
}

const ScalarKind kScalarKinds[] = {
    ScalarKind::kF32, ScalarKind::kF16, ScalarKind::kF64, ScalarKind::kBF16, ScalarKind::kI8,
    ScalarKind::kI16, ScalarKind::kI32, ScalarKind::kI64, ScalarKind::kU8,   ScalarKind::kU16,
    ScalarKind::kU32, ScalarKind::kU64, ScalarKind::kI1};

}  // namespace

// ---- ObjectPool ----

ObjectPool::~ObjectPool() {
  for (TVMFFIAny& a : owned_) TVMFFIObjectDecRef(a.v_obj);
}

TVMFFIAny ObjectPool::Keep(TVMFFIAny owned) {
  if (owned.type_index >= kTVMFFIStaticObjectBegin) owned_.push_back(owned);
  return owned;
}

TVMFFIAny ObjectPool::String(const std::string& text) {
  TVMFFIByteArray bytes{text.data(), text.size()};
  TVMFFIAny out{};
  Check(TVMFFIStringFromByteArray(&bytes, &out), "string");
  return Keep(out);
}

TVMFFIAny ObjectPool::Bytes(const std::string& data) {
  TVMFFIByteArray bytes{data.data(), data.size()};
  TVMFFIAny out{};
  Check(TVMFFIBytesFromByteArray(&bytes, &out), "bytes");
  return Keep(out);
}

TVMFFIAny ObjectPool::Array(const std::vector<TVMFFIAny>& items) {
  TVMFFIObjectHandle handle = nullptr;
  Check(FFIJITArrayCreate(items.data(), static_cast<int64_t>(items.size()), &handle), "array");
  TVMFFIAny out{};
  out.type_index = kTVMFFIArray;
  out.v_obj = static_cast<TVMFFIObject*>(handle);
  return Keep(out);
}

TVMFFIAny ObjectPool::Map(const std::vector<std::string>& keys,
                          const std::vector<TVMFFIAny>& values) {
  std::vector<TVMFFIAny> key_values;
  for (const std::string& k : keys) key_values.push_back(String(k));
  TVMFFIObjectHandle handle = nullptr;
  Check(
      FFIJITMapCreate(key_values.data(), values.data(), static_cast<int64_t>(keys.size()), &handle),
      "map");
  TVMFFIAny out{};
  out.type_index = kTVMFFIMap;
  out.v_obj = static_cast<TVMFFIObject*>(handle);
  return Keep(out);
}

TVMFFIAny ObjectPool::Tensor(DLDataType dtype, const std::vector<int64_t>& shape) {
  TVMFFIObjectHandle handle = nullptr;
  Check(FFIJITTensorCreateEmpty(shape.data(), static_cast<int32_t>(shape.size()), dtype,
                                DLDevice{kDLCPU, 0}, &handle),
        "tensor");
  TVMFFIAny out{};
  out.type_index = kTVMFFITensor;
  out.v_obj = static_cast<TVMFFIObject*>(handle);
  return Keep(out);
}

TVMFFIAny ObjectPool::RawStr(const std::string& text) {
  strings_.push_back(std::make_unique<std::string>(text));
  TVMFFIAny a{};
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = strings_.back()->c_str();
  return a;
}

TVMFFIAny ObjectPool::ByteArrayPtr(const std::string& data) {
  strings_.push_back(std::make_unique<std::string>(data));
  byte_arrays_.push_back(std::make_unique<TVMFFIByteArray>(
      TVMFFIByteArray{strings_.back()->data(), strings_.back()->size()}));
  TVMFFIAny a{};
  a.type_index = kTVMFFIByteArrayPtr;
  a.v_ptr = byte_arrays_.back().get();
  return a;
}

// ---- Signatures ----

TypePtr CaseGenerator::RandomType(int depth) {
  int64_t pick = Uniform(0, depth > 0 ? 15 : 19);
  if (pick <= 6) return Type::Scalar(kScalarKinds[Uniform(0, 12)]);
  switch (pick) {
    case 7: {
      const ScalarKind elements[] = {ScalarKind::kF32, ScalarKind::kI64, ScalarKind::kAny,
                                     ScalarKind::kU8};
      int32_t rank = static_cast<int32_t>(Uniform(-1, 3));
      std::vector<int64_t> dims;
      for (int32_t i = 0; i < rank; ++i) dims.push_back(Chance(0.5) ? Uniform(1, 4) : -1);
      return Type::NDArray(elements[Uniform(0, 3)], rank, dims);
    }
    case 8:
      return Type::Simple(TypeKind::kStr);
    case 9:
      return Type::Simple(TypeKind::kBytes);
    case 10:
      return Type::Simple(TypeKind::kOpaquePtr);
    case 11:
      return Type::Simple(TypeKind::kDataType);
    case 12:
      return Type::Simple(TypeKind::kDevice);
    case 13: {
      const char* keys[] = {"", "ffi.Array", "ffi.String"};
      return Type::Object(keys[Uniform(0, 2)], Chance(0.3));
    }
    case 14:
      return Type::Simple(TypeKind::kUnknown);
    case 15:
      return Chance(0.5) ? Type::List(Type::Scalar(ScalarKind::kI64))
                         : Type::Dict(Type::Simple(TypeKind::kStr), Type::Scalar(ScalarKind::kF64));
    default: {
      int64_t n = Uniform(1, 3);
      std::vector<TypePtr> elements;
      for (int64_t i = 0; i < n; ++i) elements.push_back(RandomType(depth + 1));
      if (pick == 16) return Type::Sequence(TypeKind::kSList, elements);
      if (pick == 17) return Type::Sequence(TypeKind::kSTuple, elements);
      std::vector<std::string> keys;
      for (int64_t i = 0; i < n; ++i) keys.push_back("k" + std::to_string(i));
      return Type::SDict(keys, elements);
    }
  }
}

TypePtr CaseGenerator::RandomResultType(int depth) {
  int64_t pick = Uniform(0, depth < 2 ? 20 : 17);
  if (pick <= 12) return Type::Scalar(kScalarKinds[pick]);
  if (pick >= 18) {
    const int64_t n = Uniform(0, 3);
    std::vector<TypePtr> elements;
    for (int64_t i = 0; i < n; ++i) {
      elements.push_back(pick != 20 && Chance(0.15) ? nullptr : RandomResultType(depth + 1));
    }
    if (pick == 18) return Type::Sequence(TypeKind::kSList, elements);
    if (pick == 19) return Type::Sequence(TypeKind::kSTuple, elements);
    std::vector<std::string> keys;
    for (int64_t i = 0; i < n; ++i) keys.push_back("r" + std::to_string(i));
    return Type::SDict(keys, elements);
  }
  switch (pick) {
    case 13:
      return Type::Simple(TypeKind::kOpaquePtr);
    case 14:
      return Type::Simple(TypeKind::kStr);
    case 15:
      return Type::Simple(TypeKind::kBytes);
    case 16:
      return Type::Simple(TypeKind::kDataType);
    default:
      return Type::Simple(TypeKind::kDevice);
  }
}

Signature CaseGenerator::RandomSignature() {
  Signature sig;
  int64_t n = Uniform(0, 12);
  for (int64_t i = 0; i < n; ++i) sig.args.push_back(RandomType(0));
  sig.convention = Chance(0.2) ? CallConvention::kStatus : CallConvention::kPlain;
  int64_t results = Uniform(0, 3);
  for (int64_t i = 0; i < results; ++i) sig.results.push_back(RandomResultType());
  return sig;
}

std::vector<Signature> CaseGenerator::LowerableSignatures(int count, int64_t* unlowerable) {
  std::vector<Signature> sigs;
  while (static_cast<int>(sigs.size()) < count) {
    Signature sig = RandomSignature();
    try {
      Lower(sig, "probe");
    } catch (const Error&) {
      ++*unlowerable;
      continue;
    }
    sigs.push_back(std::move(sig));
  }
  return sigs;
}

// ---- Arguments ----

TVMFFIAny CaseGenerator::RightValue(const Type& type, ObjectPool& pool) {
  switch (type.kind) {
    case TypeKind::kScalar: {
      ScalarKind k = type.scalar;
      if (k == ScalarKind::kI1) return Chance(0.5) ? BoolValue(Chance(0.5)) : Int(Uniform(-3, 3));
      if (IsIntegerKind(k)) {
        if (Chance(0.15)) return BoolValue(Chance(0.5));
        int64_t lo, hi;
        IntRange(k, &lo, &hi);
        switch (Uniform(0, 3)) {
          case 0:
            return Int(lo);
          case 1:
            return Int(hi);
          default:
            return Int(Uniform(lo, hi));
        }
      }
      // Floats: doubles of every magnitude (rounding cases), big integers, bools.
      switch (Uniform(0, 5)) {
        case 0:
          return Int(static_cast<int64_t>(Bits()));
        case 1:
          return BoolValue(Chance(0.5));
        case 2: {
          double d;
          uint64_t bits = Bits();
          std::memcpy(&d, &bits, sizeof d);
          return FloatValue(d);
        }
        case 3:
          return FloatValue(1.0 + std::ldexp(static_cast<double>(Uniform(0, 4096)), -12));
        default:
          return FloatValue(std::ldexp(static_cast<double>(Uniform(-100000, 100000)),
                                       static_cast<int>(Uniform(-30, 30))));
      }
    }
    case TypeKind::kNDArray: {
      DLDataType dtype = type.scalar == ScalarKind::kAny ? ElementType(kScalarKinds[Uniform(0, 12)])
                                                         : ElementType(type.scalar);
      int32_t rank = type.rank >= 0 ? type.rank : static_cast<int32_t>(Uniform(0, 3));
      std::vector<int64_t> shape;
      for (int32_t i = 0; i < rank; ++i) {
        bool fixed =
            type.rank >= 0 && static_cast<size_t>(i) < type.dims.size() && type.dims[i] >= 0;
        shape.push_back(fixed ? type.dims[i] : Uniform(0, 4));
      }
      TVMFFIAny tensor = pool.Tensor(dtype, shape);
      if (Chance(0.5)) return tensor;
      TVMFFIAny view{};
      view.type_index = kTVMFFIDLTensorPtr;
      view.v_ptr = tensor.v_obj + 1;
      return view;
    }
    case TypeKind::kStr: {
      std::string text = kTexts[Uniform(0, 4)];
      return Chance(0.3) ? pool.RawStr(text) : pool.String(text);
    }
    case TypeKind::kBytes: {
      std::string data = kTexts[Uniform(0, 4)];
      switch (Uniform(0, 3)) {
        case 0:
          return pool.Bytes(data);
        case 1:
          return pool.ByteArrayPtr(data);
        case 2:
          return pool.RawStr(data);
        default:
          return pool.String(data);
      }
    }
    case TypeKind::kOpaquePtr:
      return Chance(0.2) ? NoneValue() : PtrValue(Bits() | 1);
    case TypeKind::kDataType: {
      if (Chance(0.3)) return pool.String(Chance(0.5) ? "float32" : "int8");
      TVMFFIAny a{};
      a.type_index = kTVMFFIDataType;
      a.v_dtype = DLDataType{static_cast<uint8_t>(Uniform(0, 2)),
                             static_cast<uint8_t>(8 << Uniform(0, 3)), 1};
      return a;
    }
    case TypeKind::kDevice: {
      if (Chance(0.3)) return pool.String(Chance(0.5) ? "cuda:1" : "cpu");
      TVMFFIAny a{};
      a.type_index = kTVMFFIDevice;
      a.v_device = DLDevice{Chance(0.5) ? kDLCPU : kDLCUDA, static_cast<int32_t>(Uniform(0, 3))};
      return a;
    }
    case TypeKind::kObject:
      if (type.nullable && Chance(0.2)) return NoneValue();
      if (type.name == "ffi.String") return pool.String(kTexts[4]);
      if (type.name == "ffi.Array" || Chance(0.5)) return pool.Array({Int(1), Int(2)});
      return pool.String(kTexts[3]);
    case TypeKind::kUnknown:
      return Chance(0.5) ? Int(Uniform(-5, 5)) : pool.String(kTexts[Uniform(0, 4)]);
    case TypeKind::kList:
      return pool.Array({Int(Uniform(0, 9))});
    case TypeKind::kDict:
      return pool.Map({"a"}, {FloatValue(0.5)});
    case TypeKind::kSList:
    case TypeKind::kSTuple: {
      std::vector<TVMFFIAny> items;
      for (const TypePtr& e : type.elements)
        items.push_back(e ? RightValue(*e, pool) : NoneValue());
      return pool.Array(items);
    }
    case TypeKind::kSDict: {
      std::vector<TVMFFIAny> values;
      for (const TypePtr& e : type.elements) values.push_back(RightValue(*e, pool));
      return pool.Map(type.keys, values);
    }
    case TypeKind::kNamed:
      return RightValue(*type.elements[0], pool);
  }
  return NoneValue();
}

TVMFFIAny CaseGenerator::WrongValue(const Type& type, ObjectPool& pool) {
  // A wrong tag fits every type except `any`.
  if (type.kind == TypeKind::kUnknown) return RightValue(type, pool);
  if (Chance(0.35)) {
    switch (Uniform(0, 3)) {
      case 0:
        return NoneValue();
      case 1:
        return PtrValue(8);
      case 2:
        return pool.Map({"zz"}, {Int(1)});
      default:
        return Int(7);
    }
  }
  switch (type.kind) {
    case TypeKind::kScalar:
      if (IsIntegerKind(type.scalar) && type.scalar != ScalarKind::kI64) {
        int64_t lo, hi;
        IntRange(type.scalar, &lo, &hi);
        if (Chance(0.5) && hi < INT64_MAX) return Int(hi + 1 + Uniform(0, 1000));
        if (lo > INT64_MIN) return Int(lo - 1 - Uniform(0, 1000));
      }
      return Chance(0.5) ? pool.String(kTexts[1]) : FloatValue(0.5);
    case TypeKind::kNDArray: {
      DLDataType dtype = type.scalar == ScalarKind::kAny ? ElementType(ScalarKind::kF32)
                                                         : ElementType(type.scalar);
      std::vector<int64_t> shape;
      int32_t rank = type.rank >= 0 ? type.rank : 1;
      for (int32_t i = 0; i < rank; ++i) {
        bool fixed =
            type.rank >= 0 && static_cast<size_t>(i) < type.dims.size() && type.dims[i] >= 0;
        shape.push_back(fixed ? type.dims[i] : 2);
      }
      switch (Uniform(0, 3)) {
        case 0:
          if (type.scalar != ScalarKind::kAny) dtype.bits = dtype.bits == 8 ? 16 : 8;
          break;
        case 1:
          if (type.rank >= 0) shape.push_back(1);
          break;
        case 2:
          for (size_t i = 0; i < shape.size(); ++i) {
            if (type.dims.size() > i && type.dims[i] >= 0) {
              shape[i] += 1;
              break;
            }
          }
          break;
        default: {
          TVMFFIAny null_view{};
          null_view.type_index = kTVMFFIDLTensorPtr;
          return null_view;
        }
      }
      TVMFFIAny tensor = pool.Tensor(dtype, shape);
      if (Chance(0.5)) return tensor;
      TVMFFIAny view{};
      view.type_index = kTVMFFIDLTensorPtr;
      view.v_ptr = tensor.v_obj + 1;
      return view;
    }
    case TypeKind::kDataType:
      return pool.String(Chance(0.5) ? "notatype" : "float-3");
    case TypeKind::kDevice:
      return pool.String(Chance(0.5) ? "nodev:1" : "cuda:x");
    case TypeKind::kObject:
      return type.name == "ffi.String" ? pool.Array({}) : Int(3);
    case TypeKind::kStr: {
      // A NUL inside (first, middle or last byte), which the native's C string would end at: a
      // SmallStr or a Str object, both refused.
      std::string text = kTexts[Uniform(1, 4)];
      text[static_cast<size_t>(Uniform(0, static_cast<int64_t>(text.size()) - 1))] = '\0';
      return pool.String(text);
    }
    case TypeKind::kSList:
    case TypeKind::kSTuple: {
      std::vector<TVMFFIAny> items;
      for (const TypePtr& e : type.elements)
        items.push_back(e ? RightValue(*e, pool) : NoneValue());
      if (Chance(0.4) && !type.elements.empty()) {
        size_t i = static_cast<size_t>(Uniform(0, static_cast<int64_t>(items.size()) - 1));
        if (type.elements[i]) items[i] = WrongValue(*type.elements[i], pool);
      } else if (Chance(0.5)) {
        items.push_back(Int(0));
      } else if (!items.empty()) {
        items.pop_back();
      }
      return pool.Array(items);
    }
    case TypeKind::kSDict: {
      std::vector<std::string> keys = type.keys;
      std::vector<TVMFFIAny> values;
      for (const TypePtr& e : type.elements) values.push_back(RightValue(*e, pool));
      if (Chance(0.5)) {
        size_t i = static_cast<size_t>(Uniform(0, static_cast<int64_t>(values.size()) - 1));
        values[i] = WrongValue(*type.elements[i], pool);
      } else {
        keys.pop_back();
        values.pop_back();
      }
      return pool.Map(keys, values);
    }
    default:
      return Int(11);
  }
}

std::vector<TVMFFIAny> CaseGenerator::RandomArguments(const Signature& sig, double p_right,
                                                      ObjectPool& pool) {
  std::vector<TVMFFIAny> args;
  for (const TypePtr& t : sig.args) args.push_back(RightValue(*t, pool));
  if (Chance(p_right)) return args;
  if (args.empty() || Chance(0.1)) {
    if (Chance(0.5) || args.empty()) {
      args.push_back(Int(1));
    } else {
      args.pop_back();
    }
    return args;
  }
  size_t i = static_cast<size_t>(Uniform(0, static_cast<int64_t>(args.size()) - 1));
  args[i] = WrongValue(*sig.args[i], pool);
  return args;
}

// ---- Native results ----

CaseGenerator::NativeResults CaseGenerator::RandomResults(const CallPlan& plan) {
  NativeResults r;
  auto value_bytes = [&](Conversion c, uint64_t* lo, uint64_t* hi) {
    *hi = 0;
    if (c == Conversion::kStr) {
      *lo = Chance(0.1) ? 0 : reinterpret_cast<uintptr_t>(kTexts[Uniform(0, 4)]);
    } else if (c == Conversion::kBytes) {
      const char* text = kTexts[Uniform(1, 4)];
      *lo = reinterpret_cast<uintptr_t>(text);
      *hi = static_cast<uint64_t>(Uniform(0, static_cast<int64_t>(std::strlen(text))));
    } else if (c == Conversion::kBool) {
      // A C bool is 0 or 1 in its byte; the rest of the register is undefined.
      *lo = (Bits() & ~uint64_t{0xff}) | static_cast<uint64_t>(Chance(0.5));
    } else if (c == Conversion::kU64 && Chance(0.7)) {
      *lo = Bits() >> 1;  // mostly representable; otherwise the ValueError path
    } else {
      *lo = Bits();
    }
  };
  for (size_t i = 0; i < plan.results.size(); ++i) {
    const ResultSlot& slot = plan.results[i];
    uint64_t lo, hi;
    value_bytes(slot.conversion, &lo, &hi);
    std::vector<uint8_t> out(16, 0);
    if (slot.by_return) {
      if (plan.return_kind == ReturnKind::kSse) {
        r.ret_fpr0 = lo;
      } else {
        r.ret_gpr0 = lo;
        r.ret_gpr1 = hi;
      }
    } else {
      // A native writes exactly its type's bytes.
      size_t width = 8;
      switch (slot.conversion) {
        case Conversion::kBool:
        case Conversion::kI8:
        case Conversion::kU8:
          width = 1;
          break;
        case Conversion::kI16:
        case Conversion::kU16:
        case Conversion::kF16:
        case Conversion::kBF16:
          width = 2;
          break;
        case Conversion::kI32:
        case Conversion::kU32:
        case Conversion::kF32:
        case Conversion::kDataType:
          width = 4;
          break;
        case Conversion::kBytes:
          width = 16;
          break;
        default:
          break;
      }
      std::memcpy(out.data(), &lo, width < 8 ? width : 8);
      if (width == 16) std::memcpy(out.data() + 8, &hi, 8);
    }
    r.out.push_back(std::move(out));
  }
  if (plan.return_kind == ReturnKind::kStatus) {
    r.ret_gpr0 =
        Chance(0.85) ? (Bits() & ~uint64_t{0xffffffff}) : static_cast<uint64_t>(Uniform(1, 9));
  }
  return r;
}

}  // namespace ffijit::testing
