// CPU tensors from and to JSON nested lists (see ndarray_json.h).
#include "ndarray_json.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ffijit/error.h"

namespace ffijit::tool {
namespace {

using json = nlohmann::ordered_json;

struct DtypeName {
  const char* name;
  uint8_t code;
  uint8_t bits;
};
// Signature-model names; the first entry of a (code, bits) pair is the one results print.
constexpr DtypeName kDtypes[] = {
    {"i1", FFIJIT_DL_BOOL_CODE, 8},
    {"bool", FFIJIT_DL_BOOL_CODE, 8},
    {"i8", kDLInt, 8},
    {"i16", kDLInt, 16},
    {"i32", kDLInt, 32},
    {"i64", kDLInt, 64},
    {"u8", kDLUInt, 8},
    {"u16", kDLUInt, 16},
    {"u32", kDLUInt, 32},
    {"u64", kDLUInt, 64},
    {"f16", kDLFloat, 16},
    {"bf16", kDLBfloat, 16},
    {"f32", kDLFloat, 32},
    {"f64", kDLFloat, 64},
};

const DtypeName* FindDtype(DLDataType dtype) {
  if (dtype.lanes != 1) return nullptr;
  for (const DtypeName& d : kDtypes) {
    if (d.code == dtype.code && d.bits == dtype.bits) return &d;
  }
  return nullptr;
}

DLDataType DtypeFromName(const json& name) {
  if (!name.is_string()) throw ValueError("ndarray \"dtype\" must be a string, got " + name.dump());
  const std::string text = name.get<std::string>();
  for (const DtypeName& d : kDtypes) {
    if (text == d.name) return DLDataType{d.code, d.bits, 1};
  }
  try {
    const DLDataType parsed = ParseDataType(text);  // DLPack spellings: "float32", "int64", ...
    if (FindDtype(parsed) != nullptr) return parsed;
  } catch (const Error&) {
  }
  std::string known;
  for (const DtypeName& d : kDtypes) known += std::string(known.empty() ? "" : ", ") + d.name;
  throw ValueError("unknown ndarray dtype \"" + Excerpt(text) + "\" (expected one of " + known +
                   ")");
}

// IEEE-style binary formats narrower than float: f16 (5 exponent bits, 10 mantissa bits) and
// bf16 (8, 7). One rounding, to nearest even, straight from the double.
uint16_t DoubleToSmallFloat(double x, int exp_bits, int mant_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int emin = 1 - bias;
  const uint32_t exp_all = (1u << exp_bits) - 1;
  const uint32_t sign = std::signbit(x) ? 1u << (exp_bits + mant_bits) : 0u;
  if (std::isnan(x))
    return static_cast<uint16_t>(sign | exp_all << mant_bits | 1u << (mant_bits - 1));
  const double a = std::fabs(x);
  if (std::isinf(a)) return static_cast<uint16_t>(sign | exp_all << mant_bits);
  if (a < std::ldexp(1.0, emin)) {
    // Subnormal: a count of the smallest step; 2^mant_bits is the smallest normal's encoding.
    const double steps = std::nearbyint(std::ldexp(a, mant_bits - emin));
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(steps));
  }
  int e = 0;
  std::frexp(a, &e);
  int exponent = e - 1;  // a is in [2^exponent, 2^(exponent+1))
  double mantissa =
      std::nearbyint(std::ldexp(a, mant_bits - exponent)) - std::ldexp(1.0, mant_bits);
  if (mantissa == std::ldexp(1.0, mant_bits)) {
    ++exponent;
    mantissa = 0;
  }
  if (exponent > bias) return static_cast<uint16_t>(sign | exp_all << mant_bits);
  return static_cast<uint16_t>(sign | static_cast<uint32_t>(exponent + bias) << mant_bits |
                               static_cast<uint32_t>(mantissa));
}

double SmallFloatToDouble(uint16_t bits, int exp_bits, int mant_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint32_t exp_all = (1u << exp_bits) - 1;
  const bool negative = (bits >> (exp_bits + mant_bits)) & 1u;
  const uint32_t exponent = (bits >> mant_bits) & exp_all;
  const uint32_t mantissa = bits & ((1u << mant_bits) - 1);
  double value;
  if (exponent == exp_all) {
    value = mantissa ? NAN : INFINITY;
  } else if (exponent == 0) {
    value = std::ldexp(static_cast<double>(mantissa), 1 - bias - mant_bits);
  } else {
    value = std::ldexp(static_cast<double>(mantissa | 1u << mant_bits),
                       static_cast<int>(exponent) - bias - mant_bits);
  }
  return negative ? -value : value;
}

template <typename T>
void Store(void* dst, T value) {
  std::memcpy(dst, &value, sizeof(value));
}
template <typename T>
T Load(const void* src) {
  T value;
  std::memcpy(&value, src, sizeof(value));
  return value;
}

// "[1][0]" for error messages.
std::string IndexText(const std::vector<int64_t>& index) {
  std::string out;
  for (int64_t i : index) out += "[" + std::to_string(i) + "]";
  return out;
}

class TensorWriter {
 public:
  TensorWriter(DLDataType dtype, const char* dtype_name, char* data)
      : dtype_(dtype), dtype_name_(dtype_name), next_(data) {}

  void Fill(const json& value, const std::vector<int64_t>& shape) {
    if (index_.size() < shape.size()) {
      const auto want = shape[index_.size()];
      if (!value.is_array() || static_cast<int64_t>(value.size()) != want) {
        throw ValueError("ragged ndarray: element " + Where() + " should be a list of " +
                         std::to_string(want) +
                         " elements, like the first one at its depth, but is " + Describe(value));
      }
      index_.push_back(0);
      for (const json& item : value) {
        Fill(item, shape);
        ++index_.back();
      }
      index_.pop_back();
      return;
    }
    if (value.is_array()) {
      throw ValueError("ragged ndarray: element " + Where() +
                       " should be a number, like the first one at its depth, but is " +
                       Describe(value));
    }
    Write(value);
    next_ += dtype_.bits / 8;
  }

 private:
  std::string Where() const { return index_.empty() ? "(the whole value)" : IndexText(index_); }

  static std::string Describe(const json& value) {
    if (value.is_array()) {
      return "a list of " + std::to_string(value.size()) +
             (value.size() == 1 ? " element" : " elements");
    }
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
  }

  [[noreturn]] void Misfit(const json& value) const {
    throw ValueError("ndarray element " + Where() + " = " + Describe(value) +
                     " does not fit dtype " + dtype_name_);
  }

  void Write(const json& value) {
    if (!value.is_number() && !value.is_boolean()) {
      throw ValueError("ndarray element " + Where() + " = " + Describe(value) + " is not a number");
    }
    if (dtype_.code == kDLFloat || dtype_.code == kDLBfloat) {
      const double d = value.is_boolean() ? (value.get<bool>() ? 1.0 : 0.0) : value.get<double>();
      if (dtype_.bits == 64) return Store(next_, d);
      if (dtype_.bits == 32) return Store(next_, static_cast<float>(d));
      return Store(next_, dtype_.code == kDLBfloat ? DoubleToSmallFloat(d, 8, 7)
                                                   : DoubleToSmallFloat(d, 5, 10));
    }
    if (value.is_number_float()) Misfit(value);
    // An integer as sign and magnitude, then checked against the dtype's range.
    const bool negative =
        value.is_number_integer() && !value.is_number_unsigned() && value.get<int64_t>() < 0;
    const uint64_t magnitude = value.is_boolean() ? (value.get<bool>() ? 1u : 0u)
                               : negative         ? 0 - static_cast<uint64_t>(value.get<int64_t>())
                               : value.is_number_unsigned()
                                   ? value.get<uint64_t>()
                                   : static_cast<uint64_t>(value.get<int64_t>());
    const int bits = dtype_.bits;
    uint64_t max_positive, max_negative;
    if (dtype_.code == FFIJIT_DL_BOOL_CODE) {
      max_positive = 1;
      max_negative = 0;
    } else if (dtype_.code == kDLUInt) {
      max_positive = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
      max_negative = 0;
    } else {
      max_positive = (uint64_t{1} << (bits - 1)) - 1;
      max_negative = uint64_t{1} << (bits - 1);
    }
    if (negative ? magnitude > max_negative : magnitude > max_positive) Misfit(value);
    const uint64_t word = negative ? 0 - magnitude : magnitude;  // two's complement
    switch (bits) {
      case 8:
        return Store(next_, static_cast<uint8_t>(word));
      case 16:
        return Store(next_, static_cast<uint16_t>(word));
      case 32:
        return Store(next_, static_cast<uint32_t>(word));
      default:
        return Store(next_, word);
    }
  }

  DLDataType dtype_;
  const char* dtype_name_;
  char* next_;
  std::vector<int64_t> index_;
};

// The dtype for data given without one: i1 if every leaf is a bool, i64 if every leaf is an
// integer (or bool), f64 otherwise (also when there is no leaf at all).
DLDataType InferDtype(const json& value) {
  bool all_bool = true, all_int = true;
  int64_t leaves = 0;
  std::vector<const json*> pending = {&value};
  while (!pending.empty()) {
    const json* v = pending.back();
    pending.pop_back();
    if (v->is_array()) {
      for (const json& item : *v) pending.push_back(&item);
    } else {
      ++leaves;
      all_bool = all_bool && v->is_boolean();
      all_int = all_int && (v->is_boolean() || v->is_number_integer());
    }
  }
  if (leaves > 0 && all_bool) return DLDataType{FFIJIT_DL_BOOL_CODE, 8, 1};
  if (leaves > 0 && all_int) return DLDataType{kDLInt, 64, 1};
  return DLDataType{kDLFloat, 64, 1};
}

json ReadElement(const char* p, DLDataType dtype) {
  switch (dtype.code) {
    case FFIJIT_DL_BOOL_CODE:
      return json(Load<uint8_t>(p) != 0);
    case kDLInt:
      switch (dtype.bits) {
        case 8:
          return json(Load<int8_t>(p));
        case 16:
          return json(Load<int16_t>(p));
        case 32:
          return json(Load<int32_t>(p));
        default:
          return json(Load<int64_t>(p));
      }
    case kDLUInt:
      switch (dtype.bits) {
        case 8:
          return json(Load<uint8_t>(p));
        case 16:
          return json(Load<uint16_t>(p));
        case 32:
          return json(Load<uint32_t>(p));
        default:
          return json(Load<uint64_t>(p));
      }
    case kDLBfloat:
      return json(SmallFloatToDouble(Load<uint16_t>(p), 8, 7));
    default:
      if (dtype.bits == 16) return json(SmallFloatToDouble(Load<uint16_t>(p), 5, 10));
      if (dtype.bits == 32) return json(static_cast<double>(Load<float>(p)));
      return json(Load<double>(p));
  }
}

// Addresses as integers: an empty tensor may have a NULL base that is never dereferenced.
json ReadNested(const DLTensor& t, uintptr_t base, int32_t depth) {
  if (depth == t.ndim) return ReadElement(reinterpret_cast<const char*>(base), t.dtype);
  json list = json::array();
  const int64_t stride = t.strides != nullptr ? t.strides[depth] : [&] {
    int64_t s = 1;
    for (int32_t d = depth + 1; d < t.ndim; ++d) s *= t.shape[d];
    return s;
  }();
  const int64_t step = stride * (t.dtype.bits / 8);
  for (int64_t i = 0; i < t.shape[depth]; ++i) {
    list.push_back(ReadNested(t, base + static_cast<uintptr_t>(i * step), depth + 1));
  }
  return list;
}

}  // namespace

Tensor JsonToTensor(const json& spec) {
  for (const auto& [key, unused] : spec.items()) {
    if (key != "ndarray" && key != "dtype") {
      throw ValueError("unknown key \"" + key +
                       "\" in an ndarray value (expected \"ndarray\" and "
                       "optionally \"dtype\")");
    }
  }
  const json& data = spec.at("ndarray");
  const DLDataType dtype =
      spec.contains("dtype") ? DtypeFromName(spec.at("dtype")) : InferDtype(data);
  std::vector<int64_t> shape;
  for (const json* level = &data; level->is_array(); level = &level->front()) {
    shape.push_back(static_cast<int64_t>(level->size()));
    if (level->empty()) break;
  }
  Tensor tensor = Tensor::Empty(shape, dtype);
  TensorWriter writer(dtype, FindDtype(dtype)->name, static_cast<char*>(tensor.data()));
  writer.Fill(data, shape);
  return tensor;
}

json TensorToJson(const Tensor& tensor) {
  const DLTensor& t = *tensor.dl_tensor();
  const DtypeName* name = FindDtype(t.dtype);
  json out;
  out["ndarray"] = nullptr;
  out["dtype"] = name != nullptr ? std::string(name->name) : DataTypeToString(t.dtype);
  out["shape"] = tensor.shape();
  if (RawDeviceType(t.device) != kDLCPU) {
    out["device"] = DeviceToString(t.device);
    return out;
  }
  bool empty = false;
  for (int32_t d = 0; d < t.ndim; ++d) empty = empty || t.shape[d] == 0;
  if (name != nullptr && t.ndim <= 64 && (t.data != nullptr || empty)) {
    out["ndarray"] = ReadNested(t, reinterpret_cast<uintptr_t>(t.data) + t.byte_offset, 0);
  }
  return out;
}

}  // namespace ffijit::tool
