// Pointers, strings, bytes, tensors, DataType/Device by value, objects and any, on both paths.
#include <cstring>
#include <string>

#include "jit/interp_test_util.h"

namespace ffijit::testing {
namespace {

extern "C" {
int64_t ptr_value(void* p) {
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(p));
}
void* ptr_echo(void* p) {
  return p;
}
int64_t str_length(const char* s) {
  return s == nullptr ? -1 : static_cast<int64_t>(std::strlen(s));
}
int g_str_pair_calls = 0;
int64_t str_pair_length(const char* a, const char* b) {
  ++g_str_pair_calls;
  return static_cast<int64_t>(std::strlen(a) * 100 + std::strlen(b));
}
const char* str_greeting(int64_t which) {
  return which == 0 ? nullptr : "hello, a string longer than seven bytes";
}
// Checks the bytes: returns size * 1000 + the sum of the bytes modulo 1000.
int64_t bytes_digest(TVMFFIByteArray b) {
  int64_t sum = 0;
  for (size_t i = 0; i < b.size; ++i) sum += static_cast<unsigned char>(b.data[i]);
  return static_cast<int64_t>(b.size) * 1000 + sum % 1000;
}
TVMFFIByteArray bytes_make(int64_t n) {
  static const char kData[] = "0123456789abcdef";
  return TVMFFIByteArray{kData, static_cast<size_t>(n)};
}
// A DLDataType and a DLDevice by value, and an i64 after them: all three in registers.
int64_t dev_dtype(DLDevice dev, DLDataType dtype, int64_t k) {
  return dev.device_type * 1000000 + dev.device_id * 10000 + dtype.code * 1000 + dtype.bits * 10 +
         dtype.lanes + k * 100000000;
}
DLDataType dtype_echo(DLDataType t) {
  return t;
}
DLDevice device_echo(DLDevice d) {
  return d;
}
// The first element of a float32 tensor plus its element count.
double tensor_first(DLTensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return static_cast<const float*>(t->data)[0] + static_cast<double>(n);
}
int64_t object_type(TVMFFIObject* obj) {
  return obj == nullptr ? -1 : obj->type_index;
}
TVMFFIObject* object_echo(TVMFFIObject* obj) {
  if (obj != nullptr) TVMFFIObjectIncRef(obj);  // hands over one reference
  return obj;
}
int64_t any_type(const TVMFFIAny* any) {
  return any->type_index * 100 + any->v_int64 % 100;
}
}

class ValueTest : public ::testing::TestWithParam<CallPath> {};

TEST_P(ValueTest, OpaquePointerAndNone) {
  Function f =
      Bind("p", ptr_value, Sig({T(TypeKind::kOpaquePtr)}, {S(ScalarKind::kI64)}), GetParam());
  int x = 0;
  EXPECT_EQ(Call(f, {static_cast<void*>(&x)}).cast<int64_t>(), reinterpret_cast<intptr_t>(&x));
  EXPECT_EQ(Call(f, {nullptr}).cast<int64_t>(), 0);
  EXPECT_EQ(CallError(f, {1}).message(),
            "Mismatched type on argument #0 when calling: `p(ptr) -> i64`. Expected `ptr` but got "
            "`int`");
  Function echo =
      Bind("e", ptr_echo, Sig({T(TypeKind::kOpaquePtr)}, {T(TypeKind::kOpaquePtr)}), GetParam());
  EXPECT_EQ(Call(echo, {static_cast<void*>(&x)}).cast<void*>(), &x);
  EXPECT_EQ(Call(echo, {nullptr}).type_index(), kTVMFFINone);
}

TEST_P(ValueTest, StringsInEveryForm) {
  Function f = Bind("len", str_length, Sig({T(TypeKind::kStr)}, {S(ScalarKind::kI64)}), GetParam());
  EXPECT_EQ(Call(f, {"short"}).cast<int64_t>(), 5);    // SmallStr
  EXPECT_EQ(Call(f, {"1234567"}).cast<int64_t>(), 7);  // SmallStr, full
  EXPECT_EQ(Call(f, {std::string("a longer string object")}).cast<int64_t>(), 22);  // Str
  EXPECT_EQ(Call(f, {""}).cast<int64_t>(), 0);
  EXPECT_EQ(CallRaw(f, {RawStr("raw c string")}).cast<int64_t>(), 12);
  EXPECT_EQ(
      CallError(f, {nullptr}).message(),
      "Mismatched type on argument #0 when calling: `len(str) -> i64`. Expected `str` but got "
      "`None`");
  EXPECT_EQ(CallError(f, {Any(Bytes("b"))}).kind(), "TypeError");
  EXPECT_EQ(
      CallRawError(f, {RawStr(nullptr)}).message(),
      "Mismatched type on argument #0 when calling: `len(str) -> i64`. Expected `str` but got "
      "`None`");
}

// A Str or SmallStr carries its length; a `const char*` native would stop at a NUL inside, so
// such a string is refused (ValueError), never cut short, on every path and wherever the NUL is.
TEST_P(ValueTest, StringWithANulInsideIsRefusedNotCutShort) {
  Function f = Bind("len2", str_pair_length,
                    Sig({T(TypeKind::kStr), T(TypeKind::kStr)}, {S(ScalarKind::kI64)}), GetParam(),
                    {"a", "b"});
  auto message = [](int position, size_t at, size_t size) {
    return "Invalid value on argument #" + std::to_string(position) +
           " when calling: `len2(a: str, b: str) -> i64`. The str contains a NUL character (at "
           "byte " +
           std::to_string(at) + " of " + std::to_string(size) +
           "), which a `str` parameter (a C string) would cut short; pass bytes to a `bytes` "
           "parameter instead";
  };
  std::string long_text(40, 'x');  // a Str object, longer than the thunks' short strings
  std::string long_nul = long_text;
  long_nul[37] = '\0';
  struct Case {
    std::string text;
    size_t at;
  } cases[] = {
      {std::string("\0bc", 3), 0},          // SmallStr, first byte
      {std::string("ab\0cd", 5), 2},        // SmallStr, middle
      {std::string("abc\0", 4), 3},         // SmallStr, last byte
      {std::string("abcdef\0", 7), 6},      // SmallStr of 7, last byte
      {std::string("a\0cdefg", 7), 1},      // SmallStr of 7, second byte
      {std::string("\0", 1), 0},            // SmallStr, a lone NUL
      {std::string("\0bcdefgh", 8), 0},     // Str, first byte
      {std::string("abcdefg\0", 8), 7},     // Str, last byte
      {long_nul, 37},                       // Str of 40, near the end
      {std::string(long_text + '\0'), 40},  // Str, last byte
  };
  g_str_pair_calls = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.at);
    Any bad{c.text};
    ASSERT_EQ(bad.type_index(), c.text.size() <= 7 ? kTVMFFISmallStr : kTVMFFIStr);
    Error first = CallError(f, {bad, "ok"});
    EXPECT_EQ(first.kind(), "ValueError");
    EXPECT_EQ(first.message(), message(0, c.at, c.text.size()));
    Error second = CallError(f, {long_text, bad});
    EXPECT_EQ(second.kind(), "ValueError");
    EXPECT_EQ(second.message(), message(1, c.at, c.text.size()));
  }
  EXPECT_EQ(g_str_pair_calls, 0) << "the native never runs with a string cut short";
  // Strings without a NUL inside still pass, in every form and length.
  EXPECT_EQ(Call(f, {"abcdefg", long_text}).cast<int64_t>(), 740);
  EXPECT_EQ(Call(f, {"", std::string("abcdefgh")}).cast<int64_t>(), 8);
  EXPECT_EQ(CallRaw(f, {RawStr("raw"), RawStr("")}).cast<int64_t>(), 300);
  EXPECT_EQ(g_str_pair_calls, 3);

  // A nullable `str` refuses one too; a `bytes` parameter carries a length and takes it.
  auto nullable = std::make_shared<Type>(*T(TypeKind::kStr));
  nullable->nullable = true;
  Function n = Bind("len", str_length, Sig({nullable}, {S(ScalarKind::kI64)}), GetParam());
  EXPECT_EQ(CallError(n, {std::string("ab\0cd", 5)}).kind(), "ValueError");
  EXPECT_EQ(Call(n, {"abcd"}).cast<int64_t>(), 4);
  Function d =
      Bind("d", bytes_digest, Sig({T(TypeKind::kBytes)}, {S(ScalarKind::kI64)}), GetParam());
  EXPECT_EQ(Call(d, {std::string("a\0b", 3)}).cast<int64_t>(), 3000 + 97 + 98);
  EXPECT_EQ(Call(d, {long_nul}).cast<int64_t>(), 40000 + (39 * 120) % 1000);
}

// A string reached through a structure is held to the same rule, its label the element's.
TEST_P(ValueTest, StringWithANulInsideAStructureIsRefused) {
  Function f = Bind("pair", str_pair_length,
                    Sig({Type::Sequence(TypeKind::kSList, {T(TypeKind::kStr), T(TypeKind::kStr)})},
                        {S(ScalarKind::kI64)}),
                    GetParam(), {"p"});
  EXPECT_EQ(Call(f, {Array{Any("ab"), Any(std::string(20, 'y'))}}).cast<int64_t>(), 220);
  Error e = CallError(f, {Array{Any("ab"), Any(std::string("yy\0yyyyyyyy", 11))}});
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(),
            "Invalid value on argument #0[1] when calling: `pair(p: slist<str,str>) -> i64`. The "
            "str contains a NUL character (at byte 2 of 11), which a `str` parameter (a C string) "
            "would cut short; pass bytes to a `bytes` parameter instead");
}

TEST_P(ValueTest, NullableStringAcceptsNone) {
  auto nullable = std::make_shared<Type>(*T(TypeKind::kStr));
  nullable->nullable = true;
  Function f = Bind("len", str_length, Sig({nullable}, {S(ScalarKind::kI64)}), GetParam());
  EXPECT_EQ(Call(f, {nullptr}).cast<int64_t>(), -1);
  EXPECT_EQ(Call(f, {"abc"}).cast<int64_t>(), 3);
}

TEST_P(ValueTest, StringResultIsAnOwnedCopyOrNone) {
  Function f = Bind("g", str_greeting, Sig({S(ScalarKind::kI64)}, {T(TypeKind::kStr)}), GetParam());
  EXPECT_EQ(Call(f, {1}).cast<std::string>(), "hello, a string longer than seven bytes");
  EXPECT_EQ(Call(f, {0}).type_index(), kTVMFFINone);
}

TEST_P(ValueTest, BytesInEveryFormAndAsResult) {
  Function f =
      Bind("d", bytes_digest, Sig({T(TypeKind::kBytes)}, {S(ScalarKind::kI64)}), GetParam());
  EXPECT_EQ(Call(f, {"ab"}).cast<int64_t>(), 2000 + 97 + 98);
  std::string big(100, 'z');
  EXPECT_EQ(Call(f, {big}).cast<int64_t>(), 100000 + (122 * 100) % 1000);
  const char raw[] = {'x', '\0', 'y'};
  TVMFFIByteArray array{raw, 3};
  EXPECT_EQ(CallRaw(f, {RawPtr(kTVMFFIByteArrayPtr, &array)}).cast<int64_t>(), 3000 + 120 + 121);
  EXPECT_EQ(CallRaw(f, {RawStr("raw")}).cast<int64_t>(), 3000 + (114 + 97 + 119) % 1000);
  EXPECT_EQ(CallError(f, {7}).message(),
            "Mismatched type on argument #0 when calling: `d(bytes) -> i64`. Expected `bytes` but "
            "got `int`");
  EXPECT_EQ(CallRawError(f, {RawPtr(kTVMFFIByteArrayPtr, nullptr)}).kind(), "TypeError");
  EXPECT_EQ(CallRawError(f, {RawStr(nullptr)}).kind(), "TypeError");
  Function make =
      Bind("m", bytes_make, Sig({S(ScalarKind::kI64)}, {T(TypeKind::kBytes)}), GetParam());
  Any r = Call(make, {12});
  EXPECT_EQ(details::ViewChars(r.raw()), "0123456789ab");
}

TEST_P(ValueTest, BytesPairSpillsToTheStackWhole) {
  // Five i64 take rdi..r8; the 16-byte bytes struct does not fit in r9 alone: it goes on the stack.
  Function f = Bind(
      "d",
      +[](int64_t, int64_t, int64_t, int64_t, int64_t a5, TVMFFIByteArray b) {
        return bytes_digest(b) + a5 * 1000000;
      },
      Sig({S(ScalarKind::kI64), S(ScalarKind::kI64), S(ScalarKind::kI64), S(ScalarKind::kI64),
           S(ScalarKind::kI64), T(TypeKind::kBytes)},
          {S(ScalarKind::kI64)}),
      GetParam());
  EXPECT_EQ(Call(f, {0, 0, 0, 0, 3, "hi"}).cast<int64_t>(), 3000000 + 2000 + 104 + 105);
}

// What follows a spilled pair: System V gives the integer register left free to the next integer
// (r9 here); AArch64 gives the pair x5:x6 and the next integer x7. With seven integers first the
// pair no longer fits on either: AArch64 then closes x7 too (AAPCS64 C.13), so the next integer
// goes to the stack, while the vector registers stay open on both.
TEST_P(ValueTest, WhatFollowsASpilledBytesPair) {
  Function after = Bind(
      "a",
      +[](int64_t, int64_t, int64_t, int64_t, int64_t a4, TVMFFIByteArray b, int64_t next) {
        return bytes_digest(b) + a4 * 1000000 + next * 100000000;
      },
      Sig({S(ScalarKind::kI64), S(ScalarKind::kI64), S(ScalarKind::kI64), S(ScalarKind::kI64),
           S(ScalarKind::kI64), T(TypeKind::kBytes), S(ScalarKind::kI64)},
          {S(ScalarKind::kI64)}),
      GetParam());
  EXPECT_EQ(Call(after, {0, 0, 0, 0, 3, "hi", 7}).cast<int64_t>(),
            700000000 + 3000000 + 2000 + 104 + 105);
  Function closed = Bind(
      "c",
      +[](int64_t a0, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t a6, TVMFFIByteArray b,
          int64_t next, double d) {
        return static_cast<double>(bytes_digest(b) + a0 + a6 * 1000000 + next * 100000000) + d;
      },
      Sig({S(ScalarKind::kI64), S(ScalarKind::kI64), S(ScalarKind::kI64), S(ScalarKind::kI64),
           S(ScalarKind::kI64), S(ScalarKind::kI64), S(ScalarKind::kI64), T(TypeKind::kBytes),
           S(ScalarKind::kI64), S(ScalarKind::kF64)},
          {S(ScalarKind::kF64)}),
      GetParam());
  EXPECT_EQ(Call(closed, {5, 0, 0, 0, 0, 0, 4, "hey", 9, 0.5}).cast<double>(),
            900000000.0 + 4000000 + 3000 + 104 + 101 + 121 + 5 + 0.5);
}

TEST_P(ValueTest, DataTypeAndDeviceByValueOrFromStrings) {
  Function f = Bind("dd", dev_dtype,
                    Sig({T(TypeKind::kDevice), T(TypeKind::kDataType), S(ScalarKind::kI64)},
                        {S(ScalarKind::kI64)}),
                    GetParam());
  EXPECT_EQ(Call(f, {Device(kDLCUDA, 3), DataType::Float(32), 2}).cast<int64_t>(),
            200000000 + 2 * 1000000 + 3 * 10000 + 2 * 1000 + 320 + 1);
  EXPECT_EQ(Call(f, {"cuda:1", "int8", 0}).cast<int64_t>(), 2 * 1000000 + 10000 + 0 + 80 + 1);
  Error bad_device = CallError(f, {"nowhere:9", "int8", 0});
  EXPECT_EQ(bad_device.kind(), "ValueError");
  EXPECT_EQ(bad_device.message(),
            "Invalid value on argument #0 when calling: `dd(Device, DataType, i64) -> i64`. "
            "Expected `Device` but got \"nowhere:9\"");
  Error bad_dtype = CallError(f, {"cpu", "float33x", 0});
  EXPECT_EQ(bad_dtype.kind(), "ValueError");
  EXPECT_EQ(CallError(f, {"cpu", 5, 0}).message(),
            "Mismatched type on argument #1 when calling: `dd(Device, DataType, i64) -> i64`. "
            "Expected `DataType` but got `int`");
  Function dt =
      Bind("t", dtype_echo, Sig({T(TypeKind::kDataType)}, {T(TypeKind::kDataType)}), GetParam());
  DLDataType back = Call(dt, {DataType::UInt(16, 4)}).cast<DLDataType>();
  EXPECT_EQ(back.code, kDLUInt);
  EXPECT_EQ(back.bits, 16);
  EXPECT_EQ(back.lanes, 4);
  Function dv =
      Bind("v", device_echo, Sig({T(TypeKind::kDevice)}, {T(TypeKind::kDevice)}), GetParam());
  DLDevice d = Call(dv, {Device(kDLCUDA, 7)}).cast<DLDevice>();
  EXPECT_EQ(d.device_type, kDLCUDA);
  EXPECT_EQ(d.device_id, 7);
}

TEST_P(ValueTest, TensorsCheckedForDtypeRankAndDims) {
  Function f =
      Bind("first", tensor_first,
           Sig({Type::NDArray(ScalarKind::kF32, 2, {-1, 3})}, {S(ScalarKind::kF64)}), GetParam());
  Tensor t = Tensor::Empty({2, 3}, DataType::Float(32));
  static_cast<float*>(t.data())[0] = 0.5f;
  EXPECT_EQ(Call(f, {t}).cast<double>(), 6.5);
  EXPECT_EQ(
      CallRaw(f, {RawPtr(kTVMFFIDLTensorPtr, const_cast<DLTensor*>(t.dl_tensor()))}).cast<double>(),
      6.5);

  Error dtype = CallError(f, {Tensor::Empty({2, 3}, DataType::Float(64))});
  EXPECT_EQ(dtype.kind(), "ValueError");
  EXPECT_EQ(dtype.message(),
            "Mismatched tensor on argument #0 when calling: `first(ndarray<f32,[?,3]>) -> f64`. "
            "Expected `ndarray<f32,[?,3]>` but got an ndarray of float64 with shape (2, 3)");
  Error rank = CallError(f, {Tensor::Empty({6}, DataType::Float(32))});
  EXPECT_EQ(rank.message(),
            "Mismatched tensor on argument #0 when calling: `first(ndarray<f32,[?,3]>) -> f64`. "
            "Expected `ndarray<f32,[?,3]>` but got an ndarray of float32 with ndim 1");
  Error dim = CallError(f, {Tensor::Empty({3, 2}, DataType::Float(32))});
  EXPECT_EQ(dim.kind(), "ValueError");
  EXPECT_EQ(CallError(f, {1.0}).message(),
            "Mismatched type on argument #0 when calling: `first(ndarray<f32,[?,3]>) -> f64`. "
            "Expected `ndarray<f32,[?,3]>` but got `float`");
  // A dynamic dim accepts any extent; unknown rank and element accept any tensor.
  EXPECT_EQ(Call(f, {Tensor::Empty({9, 3}, DataType::Float(32))}).cast<double>(), 27.0);
  Function any_tensor =
      Bind("first", tensor_first,
           Sig({Type::NDArray(ScalarKind::kAny, -1, {})}, {S(ScalarKind::kF64)}), GetParam());
  EXPECT_EQ(Call(any_tensor, {Tensor::Empty({4}, DataType::Float(32))}).cast<double>(), 4.0);
}

TEST_P(ValueTest, ObjectsOfATypeOrAnyObject) {
  Function any_obj =
      Bind("o", object_type, Sig({Type::Object()}, {S(ScalarKind::kI64)}), GetParam());
  Array array{1, 2};
  EXPECT_EQ(Call(any_obj, {array}).cast<int64_t>(), kTVMFFIArray);
  EXPECT_EQ(
      CallError(any_obj, {nullptr}).message(),
      "Mismatched type on argument #0 when calling: `o(object) -> i64`. Expected `object` but "
      "got `None`");
  EXPECT_EQ(CallError(any_obj, {3}).kind(), "TypeError");

  Function arrays = Bind("a", object_type,
                         Sig({Type::Object("ffi.Array", true)}, {S(ScalarKind::kI64)}), GetParam());
  EXPECT_EQ(Call(arrays, {array}).cast<int64_t>(), kTVMFFIArray);
  EXPECT_EQ(Call(arrays, {nullptr}).cast<int64_t>(), -1);
  EXPECT_EQ(CallError(arrays, {Map{{"k", 1}}}).message(),
            "Mismatched type on argument #0 when calling: `a(object<ffi.Array>?) -> i64`. Expected "
            "`object<ffi.Array>?` but got `ffi.Map`");

  Function echo = Bind("e", object_echo, Sig({Type::Object()}, {Type::Object()}), GetParam());
  Any back = Call(echo, {array});
  EXPECT_EQ(back.type_index(), kTVMFFIArray);
  EXPECT_EQ(back.raw().v_obj, array.get());
  EXPECT_EQ(FFIJITHeaderStrongCount(array.get()), 2u);  // `array` and `back`: nothing leaked
}

// An object of a type a module allocated (the handle is unused).
ObjectRef MakeOfType(int32_t type_index) {
  TVMFFIObjectHandle handle = nullptr;
  CheckCall(FFIJITObjectCreateOpaqueOfType(nullptr, type_index, nullptr, &handle));
  return ObjectRef(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle)));
}

// What a module's static initialiser does for `key` under `parent`.
int32_t ModuleAllocType(const std::string& key, int32_t parent, int32_t child_slots) {
  TVMFFIByteArray bytes{key.data(), key.size()};
  int32_t depth = TVMFFIGetTypeInfo(parent)->type_depth + 1;
  int32_t index = TVMFFITypeGetOrAllocIndex(&bytes, -1, depth, child_slots, 1, parent);
  EXPECT_GE(index, kTVMFFIDynObjectBegin) << key;
  return index;
}

TEST_P(ValueTest, ObjectsOfModuleTypesBoundBeforeAndAfterTheModuleRegisters) {
  const std::string p = "vt" + std::to_string(static_cast<int>(GetParam()));
  const TypePtr i64 = S(ScalarKind::kI64);
  // Bound before the module registers its types: the key must not be pinned to an index.
  Function early =
      Bind("early", object_type, Sig({Type::Object(p + ".Derived")}, {i64}), GetParam());
  Function early_result =
      Bind("echo", object_echo, Sig({Type::Object()}, {Type::Object(p + ".Derived")}), GetParam());
  int32_t base = ModuleAllocType(p + ".Base", kTVMFFIObject, 2);
  int32_t derived = ModuleAllocType(p + ".Derived", base, 1);
  int32_t leaf = ModuleAllocType(p + ".Leaf", derived, 0);
  int32_t deep = ModuleAllocType(p + ".Deep", leaf, 0);
  int32_t other = ModuleAllocType(p + ".Other", base, 0);
  // The module's layout holds: Derived and Leaf in Base's slots, Deep overflowed.
  EXPECT_EQ(derived, base + 1);
  EXPECT_EQ(leaf, base + 2);
  EXPECT_GT(deep, base + 2);
  EXPECT_EQ(TVMFFIGetTypeInfo(derived)->type_depth, 2);
  EXPECT_EQ(TVMFFIGetTypeInfo(derived)->FFIJIT_TYPE_ANCESTORS[1]->type_index, base);
  Function late =
      Bind("late", object_type, Sig({Type::Object(p + ".Derived", true)}, {i64}), GetParam());

  Array array{1};
  for (const Function& f : {early, late}) {
    EXPECT_EQ(Call(f, {MakeOfType(derived)}).cast<int64_t>(), derived);
    EXPECT_EQ(Call(f, {MakeOfType(leaf)}).cast<int64_t>(), leaf);
    EXPECT_EQ(Call(f, {MakeOfType(deep)}).cast<int64_t>(), deep);
    EXPECT_EQ(CallError(f, {MakeOfType(base)}).kind(), "TypeError");
    EXPECT_EQ(CallError(f, {array}).kind(), "TypeError");
  }
  EXPECT_EQ(CallError(early, {MakeOfType(other)}).message(),
            "Mismatched type on argument #0 when calling: `early(object<" + p +
                ".Derived>) -> i64`. Expected `object<" + p + ".Derived>` but got `" + p +
                ".Other`");
  EXPECT_EQ(Call(late, {nullptr}).cast<int64_t>(), -1);

  ObjectRef leaf_object = MakeOfType(leaf);
  EXPECT_EQ(Call(early_result, {leaf_object}).raw().v_obj, leaf_object.get());
  Error wrong_result = CallError(early_result, {MakeOfType(other)});
  EXPECT_EQ(wrong_result.kind(), "RuntimeError");
  EXPECT_NE(wrong_result.message().find("object<" + p + ".Derived>"), std::string::npos)
      << wrong_result.message();

  // A type no module registers: nothing is an instance, and the key stays free.
  Function never = Bind("never", object_type, Sig({Type::Object(p + ".Never")}, {i64}), GetParam());
  EXPECT_EQ(CallError(never, {MakeOfType(base)}).kind(), "TypeError");
  std::string never_key = p + ".Never";
  TVMFFIByteArray never_bytes{never_key.data(), never_key.size()};
  int32_t found = -1;
  EXPECT_EQ(TVMFFITypeKeyToIndex(&never_bytes, &found), -1);
  EXPECT_EQ(Error::MoveFromRaised().kind(), "InternalError");
}

TEST_P(ValueTest, TypedObjectResultIsChecked) {
  Function echo =
      Bind("e", object_echo, Sig({Type::Object()}, {Type::Object("ffi.Array")}), GetParam());
  Map map{{"k", 1}};
  Error e = CallError(echo, {map});
  EXPECT_EQ(e.kind(), "RuntimeError");
  EXPECT_EQ(FFIJITHeaderStrongCount(map.get()), 1u);  // the handed-over reference was released
}

TEST_P(ValueTest, AnyIsABorrowedView) {
  Function f =
      Bind("any", any_type, Sig({T(TypeKind::kUnknown)}, {S(ScalarKind::kI64)}), GetParam());
  EXPECT_EQ(Call(f, {42}).cast<int64_t>(), 142);
  EXPECT_EQ(Call(f, {nullptr}).cast<int64_t>(), 0);
  EXPECT_EQ(Call(f, {true}).cast<int64_t>(), 201);
}

INSTANTIATE_TEST_SUITE_P(Paths, ValueTest, AllCallPaths(), PathName);

}  // namespace
}  // namespace ffijit::testing
