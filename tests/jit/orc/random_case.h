// Seeded random signatures and packed argument lists (right and wrong) for the differential suite.
#ifndef FFIJIT_TESTS_ORC_RANDOM_CASE_H_
#define FFIJIT_TESTS_ORC_RANDOM_CASE_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ffijit/c_api.h"
#include "ffijit/reflect/signature.h"
#include "plan/call_plan.h"

namespace ffijit::testing {

// Packed values of the plain kinds, as a caller builds them.
TVMFFIAny Int(int64_t v);
TVMFFIAny BoolValue(bool v);
TVMFFIAny FloatValue(double v);
TVMFFIAny NoneValue();

// Objects made for a case; released when the pool dies.
class ObjectPool {
 public:
  ObjectPool() = default;
  ~ObjectPool();
  ObjectPool(const ObjectPool&) = delete;
  ObjectPool& operator=(const ObjectPool&) = delete;

  TVMFFIAny String(const std::string& text);  // SmallStr up to 7 bytes, else Str
  TVMFFIAny Bytes(const std::string& data);   // SmallBytes up to 7 bytes, else Bytes
  TVMFFIAny Array(const std::vector<TVMFFIAny>& items);
  TVMFFIAny Map(const std::vector<std::string>& keys, const std::vector<TVMFFIAny>& values);
  TVMFFIAny Tensor(DLDataType dtype, const std::vector<int64_t>& shape);
  // Borrowed forms with storage owned by the pool.
  TVMFFIAny RawStr(const std::string& text);
  TVMFFIAny ByteArrayPtr(const std::string& data);

 private:
  TVMFFIAny Keep(TVMFFIAny owned);
  std::vector<TVMFFIAny> owned_;
  std::vector<std::unique_ptr<std::string>> strings_;
  std::vector<std::unique_ptr<TVMFFIByteArray>> byte_arrays_;
};

class CaseGenerator {
 public:
  explicit CaseGenerator(uint64_t seed) : rng_(seed) {}

  // A signature of 0..12 arguments (scalars of every kind, pointers, strings, bytes, tensors,
  // DataType, Device, objects, any, slist/stuple/sdict nested up to two deep, list, dict) and
  // 0..3 value results, plain or status convention.
  Signature RandomSignature();
  // Arguments for `sig`: all acceptable with probability `p_right`, otherwise one (or the arity)
  // is wrong in a random way.
  std::vector<TVMFFIAny> RandomArguments(const Signature& sig, double p_right, ObjectPool& pool);
  // Values the recorder returns in the first two integer result registers (rax:rdx / x0:x1) and the
  // first vector result register (xmm0 / v0), and the out-pointer contents for `plan`.
  struct NativeResults {
    uint64_t ret_gpr0 = 0, ret_gpr1 = 0, ret_fpr0 = 0;
    std::vector<std::vector<uint8_t>> out;
  };
  NativeResults RandomResults(const CallPlan& plan);

  // `count` random signatures the lowering accepts; those it rejects (no case for the executors)
  // are skipped and counted in *unlowerable.
  std::vector<Signature> LowerableSignatures(int count, int64_t* unlowerable);

  std::mt19937_64& rng() { return rng_; }

 private:
  TypePtr RandomType(int depth);
  // A result: a flat kind, or (above `depth` 2 no more) an slist/stuple/sdict of results, tuple
  // and list slots sometimes gaps.
  TypePtr RandomResultType(int depth = 0);
  TVMFFIAny RightValue(const Type& type, ObjectPool& pool);
  TVMFFIAny WrongValue(const Type& type, ObjectPool& pool);
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  uint64_t Bits() { return rng_(); }

  std::mt19937_64 rng_;
};

}  // namespace ffijit::testing

#endif  // FFIJIT_TESTS_ORC_RANDOM_CASE_H_
