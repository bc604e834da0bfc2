// The global functions TVM FFI's runtime registers and its language bindings call: string, bytes,
// shape, array and map constructors and accessors, on TVM FFI 0.1 the List and Dict ones, the
// global-table functors, and on the seed revision the testing.* helpers (TVM FFI 0.1 moved those
// to libtvm_ffi_testing.so, which registers them itself). Registered while the runtime library
// loads. (Module globals live in modules/module.cc.)
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "container_internal.h"
#include "ffijit/c_env_api.h"
#include "ffijit/container.h"
#include "ffijit/function.h"
#include "ffijit/registry.h"
#include "ffijit/string.h"
#include "ffijit/tensor.h"
#include "internal.h"
#include "object_internal.h"
#include "string_internal.h"

namespace ffijit {
namespace {

void Register(const char* name, Function func) {
  SetGlobalFunction(name, func, true);
}

template <typename F>
void RegisterTyped(const char* name, F body) {
  Register(name, Function::FromTyped(std::move(body), name));
}

void RegisterPacked(const char* name, Function::PackedBody body) {
  Register(name, Function::FromPacked(std::move(body)));
}

// A global whose C safe_call is entered directly (no trampoline, std::function or Any in
// between): for the constructors and accessors bindings call per element. The handle it
// receives is the Function object, unused.
void RegisterSafeCall(const char* name, TVMFFISafeCallType safe_call) {
  Function func = Function::FromSafeCall(nullptr, safe_call, nullptr);
  auto* cell = reinterpret_cast<TVMFFIFunctionCell*>(func.get() + 1);
  __atomic_store_n(&cell->safe_call, safe_call, __ATOMIC_RELAXED);
  Register(name, func);
}

// A global that answers its common calls in `fast` and hands every other call to `slow` (so every
// error, and its message, is `slow`'s): `fast` receives `slow`'s handle, and forwards to it with
// TVMFFIFunctionCall when the arguments are not the form it handles.
void RegisterWithFastPath(const char* name, TVMFFISafeCallType fast, Function slow) {
  Register(name, Function::FromSafeCall(slow.release(), fast,
                                        [](void* self) { TVMFFIObjectDecRef(self); }));
}

// Owned object `obj` as a safe_call result.
void SetObjectResult(TVMFFIObject* obj, TVMFFIAny* result) {
  TVMFFIAny out{};
  out.type_index = obj->type_index;
  out.v_obj = obj;
  *result = out;
}

// `args[i]` as T, with TVM FFI's message for a mismatch.
template <typename T>
T Arg(const char* name, const AnyView* args, int32_t i) {
  try {
    return args[i].cast<T>();
  } catch (const Error& e) {
    throw Error(e.kind(), "Mismatched type on argument #" + std::to_string(i) + " when calling `" +
                              name + "`: " + e.message());
  }
}

[[maybe_unused]] void RequireArgs(const char* name, int32_t num_args, int32_t at_least) {
  if (num_args < at_least) {
    throw Error("TypeError", "Mismatched number of arguments when calling `" + std::string(name) +
                                 "`: expected at least " + std::to_string(at_least) + " but got " +
                                 std::to_string(num_args));
  }
}

// A C string of at most 7 bytes as the SmallStr it becomes in the container anyway (a value that
// owns nothing): the map then measures and hashes it once, not once to hash and again to copy.
TVMFFIAny ShortRawStrAsSmall(const TVMFFIAny& arg) {
  if (arg.type_index != kTVMFFIRawStr || arg.v_c_str == nullptr) return arg;
  // One pass that measures and gathers the bytes, reading nothing past the NUL.
  uint64_t bits = 0;
  uint32_t size = 0;
  for (; size < 8; ++size) {
    const auto c = static_cast<unsigned char>(arg.v_c_str[size]);
    if (c == 0) break;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    bits |= uint64_t{c} << (8 * size);
#else
    bits |= uint64_t{c} << (56 - 8 * size);
#endif
  }
  if (size > 7) return arg;
  TVMFFIAny small{};
  small.type_index = kTVMFFISmallStr;
  small.small_str_len = size;
  small.v_uint64 = bits;
  return small;
}

// A Map or Dict from `name`'s alternating key and value arguments, made by `create`.
ObjectPtr<> FromKeyValueArguments(const char* name, const AnyView* args, int32_t num_args,
                                  int (*create)(const TVMFFIAny*, const TVMFFIAny*, int64_t,
                                                TVMFFIObjectHandle*)) {
  if (num_args % 2 != 0) {
    throw Error("ValueError", std::string(name) +
                                  " takes alternating keys and values, got an odd number (" +
                                  std::to_string(num_args) + ") of arguments");
  }
  // The keys, then the values, in one buffer: on the stack for a few pairs.
  const size_t pairs = static_cast<size_t>(num_args / 2);
  constexpr size_t kStackPairs = 8;
  TVMFFIAny stack_split[2 * kStackPairs];
  std::vector<TVMFFIAny> heap_split;
  TVMFFIAny* split = stack_split;
  if (pairs > kStackPairs) {
    heap_split.resize(2 * pairs);
    split = heap_split.data();
  }
  for (size_t i = 0; i < pairs; ++i) {
    split[i] = ShortRawStrAsSmall(args[2 * i].raw());
    split[pairs + i] = ShortRawStrAsSmall(args[2 * i + 1].raw());
  }
  TVMFFIObjectHandle handle = nullptr;
  CheckCall(create(split, split + pairs, static_cast<int64_t>(pairs), &handle));
  return ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle));
}

Array NonNullArray(const Array& arr, const char* name) {
  if (!arr.defined()) throw Error("TypeError", std::string(name) + ": the array is None");
  return arr;
}

Map NonNullMap(const Map& map, const char* name) {
  if (!map.defined()) throw Error("TypeError", std::string(name) + ": the map is None");
  return map;
}

// The iterator ffi.MapForwardIterFunctor (ffi.DictForwardIterFunctor) returns: it(0) key, it(1)
// value, it(2) advance. The size is read at each call: a Dict may change while iterated.
Function MapIterator(details::MapReader map, const std::string& name) {
  auto position = std::make_shared<int64_t>(0);
  const std::string iterator_name = name + " iterator";
  return Function::FromTyped(
      [map, position, iterator_name](int64_t command) -> Any {
        const int64_t size = map.size();
        if (command == 2) {
          if (*position < size) ++*position;
          return Any(*position < size);
        }
        if (command != 0 && command != 1) {
          throw Error("ValueError", iterator_name + ": command " + std::to_string(command) +
                                        " is not 0 (key), 1 (value) or 2 (advance)");
        }
        if (*position >= size) {
          throw Error("IndexError",
                      iterator_name + ": past the end of a map of size " + std::to_string(size));
        }
        auto [key, value] = map.ItemAt(*position);
        return command == 0 ? key.ToOwned() : value.ToOwned();
      },
      iterator_name);
}

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
// Whether any element of a sequence cell (Array or List) equals `value` as map keys compare.
bool SeqContains(const TVMFFIObject* seq, const AnyView& value) {
  const auto* cell = reinterpret_cast<const FFIJITArrayCell*>(seq + 1);
  for (int64_t i = 0; i < cell->size; ++i) {
    if (internal::AnyEqual(cell->data[i], value.raw())) return true;
  }
  return false;
}

List NonNullList(const List& list, const char* name) {
  if (!list.defined()) throw Error("TypeError", std::string(name) + ": the list is None");
  return list;
}

Dict NonNullDict(const Dict& dict, const char* name) {
  if (!dict.defined()) throw Error("TypeError", std::string(name) + ": the dict is None");
  return dict;
}

[[noreturn]] void ThrowListIndex(const char* name, int64_t index, int64_t size) {
  throw Error("IndexError", std::string(name) + ": index " + std::to_string(index) +
                                " out of range for a list of size " + std::to_string(size));
}

// The device of the first tensor not on the CPU, looking through Arrays, Lists and the values of
// Maps and Dicts (depth first, in order); each container is visited once, so a cycle ends.
bool FindNonCPUDevice(const TVMFFIAny& value, std::unordered_set<const void*>* seen,
                      DLDevice* out) {
  const int32_t type_index = value.type_index;
  if (type_index < kTVMFFIStaticObjectBegin || value.v_obj == nullptr) return false;
  const TVMFFIObject* obj = value.v_obj;
  if (type_index == kTVMFFITensor) {
    const DLDevice device = reinterpret_cast<const DLTensor*>(obj + 1)->device;
    if (device.device_type == kDLCPU) return false;
    *out = device;
    return true;
  }
  const bool is_seq = type_index == kTVMFFIArray || type_index == kTVMFFIList;
  const bool is_map = type_index == kTVMFFIMap || type_index == kTVMFFIDict;
  if (!(is_seq || is_map) || !seen->insert(obj).second) return false;
  if (is_seq) {
    const auto* cell = reinterpret_cast<const FFIJITArrayCell*>(obj + 1);
    for (int64_t i = 0; i < cell->size; ++i) {
      if (FindNonCPUDevice(cell->data[i], seen, out)) return true;
    }
    return false;
  }
  bool found = false;
  internal::MapForEach(obj, [&](const TVMFFIAny&, const TVMFFIAny& item) {
    if (!found) found = FindNonCPUDevice(item, seen, out);
  });
  return found;
}

void RegisterListGlobals() {
  RegisterPacked("ffi.List", [](const AnyView* args, int32_t num_args, Any* result) {
    TVMFFIObjectHandle handle = nullptr;
    CheckCall(FFIJITListCreate(reinterpret_cast<const TVMFFIAny*>(args), num_args, &handle));
    *result = Any(List(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle))));
  });
  RegisterTyped("ffi.ListGetItem", [](List list, int64_t i) -> Any {
    return NonNullList(list, "ffi.ListGetItem")[i].ToOwned();
  });
  RegisterTyped("ffi.ListSetItem", [](List list, int64_t i, AnyView value) {
    internal::ListSetItem(NonNullList(list, "ffi.ListSetItem").get(), i, value.raw(),
                          "ffi.ListSetItem");
  });
  RegisterTyped("ffi.ListSize", [](List list) { return NonNullList(list, "ffi.ListSize").size(); });
  RegisterTyped("ffi.ListContains", [](List list, AnyView value) {
    return SeqContains(NonNullList(list, "ffi.ListContains").get(), value);
  });
  RegisterTyped("ffi.ListAppend", [](List list, AnyView value) {
    NonNullList(list, "ffi.ListAppend");
    internal::ListInsert(list.get(), list.size(), &value.raw(), 1, "ffi.ListAppend");
  });
  RegisterTyped("ffi.ListInsert", [](List list, int64_t i, AnyView value) {
    NonNullList(list, "ffi.ListInsert");
    internal::ListInsert(list.get(), i, &value.raw(), 1, "ffi.ListInsert");
  });
  RegisterTyped("ffi.ListPop", [](List list, int64_t i) -> Any {
    NonNullList(list, "ffi.ListPop");
    if (i < 0 || i >= list.size()) ThrowListIndex("ffi.ListPop", i, list.size());
    Any value = list[i].ToOwned();
    internal::ListErase(list.get(), i, i + 1, "ffi.ListPop");
    return value;
  });
  RegisterTyped("ffi.ListErase", [](List list, int64_t i) {
    NonNullList(list, "ffi.ListErase");
    if (i < 0 || i >= list.size()) ThrowListIndex("ffi.ListErase", i, list.size());
    internal::ListErase(list.get(), i, i + 1, "ffi.ListErase");
  });
  RegisterTyped("ffi.ListEraseRange", [](List list, int64_t start, int64_t stop) {
    internal::ListErase(NonNullList(list, "ffi.ListEraseRange").get(), start, stop,
                        "ffi.ListEraseRange");
  });
  RegisterTyped(
      "ffi.ListReplaceSlice", [](List list, int64_t start, int64_t stop, AnyView replacement) {
        NonNullList(list, "ffi.ListReplaceSlice");
        // TVM FFI converts an Array replacement to a List; both have the same cell.
        const int32_t kind = replacement.type_index();
        if ((kind != kTVMFFIList && kind != kTVMFFIArray) || replacement.raw().v_obj == nullptr) {
          throw Error("TypeError",
                      "Mismatched type on argument #3 when calling "
                      "`ffi.ListReplaceSlice`: expected `ffi.List` or `ffi.Array` but "
                      "got `" +
                          replacement.type_name() + "`");
        }
        const auto* cell = reinterpret_cast<const FFIJITArrayCell*>(replacement.raw().v_obj + 1);
        internal::ListReplaceSlice(list.get(), start, stop, cell->data, cell->size,
                                   "ffi.ListReplaceSlice");
      });
  RegisterTyped("ffi.ListReverse", [](List list) {
    internal::ListReverse(NonNullList(list, "ffi.ListReverse").get());
  });
  RegisterTyped("ffi.ListClear",
                [](List list) { internal::ListClear(NonNullList(list, "ffi.ListClear").get()); });
}

void RegisterDictGlobals() {
  RegisterPacked("ffi.Dict", [](const AnyView* args, int32_t num_args, Any* result) {
    *result = Any(Dict(FromKeyValueArguments("ffi.Dict", args, num_args, FFIJITDictCreate)));
  });
  RegisterTyped("ffi.DictSize", [](Dict dict) { return NonNullDict(dict, "ffi.DictSize").size(); });
  RegisterTyped("ffi.DictGetItem", [](Dict dict, AnyView key) -> Any {
    std::optional<AnyView> value = NonNullDict(dict, "ffi.DictGetItem").Get(key);
    if (!value) {
      throw Error("KeyError", "ffi.DictGetItem: key of type `" + key.type_name() + "` not found");
    }
    return value->ToOwned();
  });
  RegisterTyped("ffi.DictGetItemOrMissing", [](Dict dict, AnyView key) -> Any {
    std::optional<AnyView> value = NonNullDict(dict, "ffi.DictGetItemOrMissing").Get(key);
    return value ? value->ToOwned() : Any(internal::MissingObject());
  });
  RegisterTyped("ffi.DictSetItem", [](Dict dict, AnyView key, AnyView value) {
    internal::DictSet(NonNullDict(dict, "ffi.DictSetItem").get(), key.raw(), value.raw());
  });
  RegisterTyped("ffi.DictCount", [](Dict dict, AnyView key) -> int64_t {
    return NonNullDict(dict, "ffi.DictCount").Get(key).has_value() ? 1 : 0;
  });
  // Erasing an absent key does nothing, as in TVM FFI.
  RegisterTyped("ffi.DictErase", [](Dict dict, AnyView key) {
    internal::DictErase(NonNullDict(dict, "ffi.DictErase").get(), key.raw());
  });
  RegisterTyped("ffi.DictClear",
                [](Dict dict) { internal::DictClear(NonNullDict(dict, "ffi.DictClear").get()); });
  RegisterTyped("ffi.DictForwardIterFunctor", [](Dict dict) {
    return MapIterator(NonNullDict(dict, "ffi.DictForwardIterFunctor"),
                       "ffi.DictForwardIterFunctor");
  });
}

// The containers' globals TVM FFI 0.1 added beside List and Dict.
void RegisterContainerExtras() {
  RegisterTyped("ffi.ArrayContains", [](Array arr, AnyView value) {
    return SeqContains(NonNullArray(arr, "ffi.ArrayContains").get(), value);
  });
  RegisterTyped("ffi.MapGetItemOrMissing", [](Map map, AnyView key) -> Any {
    std::optional<AnyView> value = NonNullMap(map, "ffi.MapGetItemOrMissing").Get(key);
    return value ? value->ToOwned() : Any(internal::MissingObject());
  });
  RegisterTyped("ffi.GetInvalidObject", [] { return internal::MissingObject(); });
  RegisterTyped("ffi.ContainerFindFirstNonCPUDevice", [](AnyView container) {
    DLDevice device{kDLCPU, 0};
    std::unordered_set<const void*> seen;
    FindNonCPUDevice(container.raw(), &seen, &device);
    return device;
  });
}
#endif  // FFIJIT_TVM_FFI_HAS_LIST_DICT

#if FFIJIT_TVM_FFI_REGISTERS_TESTING_GLOBALS
// testing.run_check_signal: a raw safe_call, because a pending frontend signal returns -2.
int RunCheckSignal(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  int64_t seconds = 0;
  int status = GuardCBoundary([&] {
    RequireArgs("testing.run_check_signal", num_args, 1);
    seconds = Arg<int64_t>("testing.run_check_signal", reinterpret_cast<const AnyView*>(args), 0);
    if (seconds < 0) {
      throw Error("ValueError", "testing.run_check_signal: negative number of seconds " +
                                    std::to_string(seconds));
    }
  });
  if (status != 0) return status;
  for (int64_t i = 0; i < seconds; ++i) {
    if (TVMFFIEnvCheckSignals() != 0) return -2;  // the frontend holds the error
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  *result = TVMFFIAny{};
  return 0;
}
#endif  // FFIJIT_TVM_FFI_REGISTERS_TESTING_GLOBALS

void RegisterCoreGlobals() {
  RegisterTyped("ffi.String", [](String s) { return s; });
  RegisterPacked("ffi.Bytes", [](const AnyView* args, int32_t num_args, Any* result) {
    if (num_args != 1) {
      throw Error("TypeError",
                  "Mismatched number of arguments when calling `ffi.Bytes`: expected "
                  "1 but got " +
                      std::to_string(num_args));
    }
    if (!details::IsBytesForm(args[0].type_index())) {
      throw Error("TypeError",
                  "Mismatched type on argument #0 when calling `ffi.Bytes`: "
                  "expected `bytes` but got `" +
                      args[0].type_name() + "`");
    }
    *result = Any(Arg<Bytes>("ffi.Bytes", args, 0));
  });
  RegisterPacked("ffi.Shape", [](const AnyView* args, int32_t num_args, Any* result) {
    std::vector<int64_t> dims(static_cast<size_t>(num_args));
    for (int32_t i = 0; i < num_args; ++i) {
      if (args[i].type_index() != kTVMFFIInt) {
        throw Error("ValueError", "ffi.Shape: argument #" + std::to_string(i) +
                                      " must be an int, got `" + args[i].type_name() + "`");
      }
      dims[i] = args[i].raw().v_int64;
    }
    *result = Any(Shape(dims));
  });
  RegisterSafeCall("ffi.Array",
                   [](void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
                     TVMFFIObjectHandle handle = nullptr;
                     // FFIJITArrayCreate raises its own error (a malformed or moved item).
                     if (FFIJITArrayCreate(args, num_args, &handle) != 0) return -1;
                     SetObjectResult(static_cast<TVMFFIObject*>(handle), result);
                     return 0;
                   });
  RegisterTyped("ffi.ArrayGetItem", [](Array arr, int64_t i) -> Any {
    // Array::operator[] checks both ends: a negative index is an IndexError, never a read.
    return NonNullArray(arr, "ffi.ArrayGetItem")[i].ToOwned();
  });
  RegisterTyped("ffi.ArraySize",
                [](Array arr) { return NonNullArray(arr, "ffi.ArraySize").size(); });
  RegisterSafeCall(
      "ffi.Map", [](void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
        return GuardCBoundary([&] {
          SetObjectResult(FromKeyValueArguments("ffi.Map", reinterpret_cast<const AnyView*>(args),
                                                num_args, FFIJITMapCreate)
                              .release(),
                          result);
        });
      });
  RegisterTyped("ffi.MapSize", [](Map map) { return NonNullMap(map, "ffi.MapSize").size(); });
  // The fast path takes a Map and a present, well-formed key; anything else (a wrong argument
  // count or type, None, a missing key) goes to the typed function, which reports it.
  RegisterWithFastPath(
      "ffi.MapGetItem",
      [](void* slow, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
        if (num_args == 2 && args[0].type_index == kTVMFFIMap && args[0].v_obj != nullptr &&
            args[0].v_obj->type_index == kTVMFFIMap &&
            details::FindAnyDefect(args[1]) == details::AnyDefect::kNone) {
          const TVMFFIAny* value = nullptr;
          // A failure here is a key hook's error, raised as the typed function would raise it.
          if (FFIJITMapGet(args[0].v_obj, &args[1], &value) != 0) return -1;
          if (value != nullptr) {
            return GuardCBoundary([&] { internal::CopyToOwned(*value, result); });
          }
        }
        return TVMFFIFunctionCall(slow, const_cast<TVMFFIAny*>(args), num_args, result);
      },
      Function::FromTyped(
          [](Map map, AnyView key) -> Any {
            std::optional<AnyView> value = NonNullMap(map, "ffi.MapGetItem").Get(key);
            if (!value) {
              throw Error("KeyError",
                          "ffi.MapGetItem: key of type `" + key.type_name() + "` not found");
            }
            return value->ToOwned();
          },
          "ffi.MapGetItem"));
  RegisterTyped("ffi.MapCount", [](Map map, AnyView key) -> int64_t {
    return NonNullMap(map, "ffi.MapCount").Get(key).has_value() ? 1 : 0;
  });
  RegisterTyped("ffi.MapForwardIterFunctor", [](Map map) {
    return MapIterator(NonNullMap(map, "ffi.MapForwardIterFunctor"), "ffi.MapForwardIterFunctor");
  });
  RegisterTyped("ffi.FunctionListGlobalNamesFunctor", []() {
    // The registry's own name Strings, shared by the Array: a listing copies no name.
    TVMFFIObjectHandle handle = nullptr;
    CheckCall(FFIJITFunctionListGlobals(&handle));
    Array names(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle)));
    return Function::FromTyped(
        [names](int64_t i) -> Any {
          if (i < 0) return Any(names.size());
          if (i >= names.size()) {
            throw Error("IndexError", "ffi.FunctionListGlobalNamesFunctor: index " +
                                          std::to_string(i) + " out of range for " +
                                          std::to_string(names.size()) + " names");
          }
          return names[i].ToOwned();
        },
        "ffi.FunctionListGlobalNamesFunctor functor");
  });
  RegisterTyped("ffi.FunctionRemoveGlobal", [](std::string name) {
    TVMFFIByteArray key{name.data(), name.size()};
    if (FFIJITFunctionRemoveGlobal(&key) == 0) return true;
    TVMFFIObjectHandle error = nullptr;
    TVMFFIErrorMoveFromRaised(&error);  // not registered: report false, as TVM FFI does
    if (error != nullptr) TVMFFIObjectDecRef(error);
    return false;
  });
}

#if FFIJIT_TVM_FFI_REGISTERS_TESTING_GLOBALS
void RegisterTestingGlobals() {
  RegisterTyped("testing.test_raise_error", [](std::string kind, std::string message) {
    throw Error(std::move(kind), std::move(message));
  });
  RegisterPacked("testing.nop", [](const AnyView*, int32_t, Any*) {});
  RegisterPacked("testing.echo", [](const AnyView* args, int32_t num_args, Any* result) {
    RequireArgs("testing.echo", num_args, 1);
    *result = args[0].ToOwned();
  });
  RegisterPacked("testing.apply", [](const AnyView* args, int32_t num_args, Any* result) {
    RequireArgs("testing.apply", num_args, 1);
    Function f = Arg<Function>("testing.apply", args, 0);
    if (!f.defined()) throw Error("TypeError", "testing.apply: the function is None");
    std::vector<TVMFFIAny> rest;
    for (int32_t i = 1; i < num_args; ++i) rest.push_back(args[i].raw());
    *result = f.CallPacked(rest.data(), num_args - 1);
  });
  RegisterTyped("testing.object_use_count", [](ObjectRef obj) -> int64_t {
    // The argument is borrowed by the call, so the count is the caller's.
    return static_cast<int64_t>(obj.use_count()) - (obj.defined() ? 1 : 0);
  });
  Register("testing.run_check_signal", Function::FromSafeCall(nullptr, RunCheckSignal, nullptr));
}
#endif  // FFIJIT_TVM_FFI_REGISTERS_TESTING_GLOBALS

bool RegisterBuiltinGlobals() {
  RegisterCoreGlobals();
#if FFIJIT_TVM_FFI_HAS_LIST_DICT
  RegisterListGlobals();
  RegisterDictGlobals();
  RegisterContainerExtras();
#endif
#if FFIJIT_TVM_FFI_REGISTERS_TESTING_GLOBALS
  RegisterTestingGlobals();
#endif
  return true;
}

__attribute__((constructor)) void RegisterBuiltinGlobalsAtLoad() {
  RegisterAtLoad("the built-in container and registry globals", RegisterBuiltinGlobals);
}

}  // namespace

namespace internal {
ObjectRef MissingObject() {
  // One plain ffi.Object for the whole process (TVM FFI's GetMissingObject): never freed, so
  // every caller compares against the same address for as long as the process runs.
  static TVMFFIObject* const missing =
      AllocObject(sizeof(TVMFFIObject), kTVMFFIObject, [](void* self, int flags) {
        if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(self);
      });
  return ObjectRef(ObjectPtr<>::Borrow(missing));
}
}  // namespace internal
}  // namespace ffijit
