// The global functions TVM FFI's runtime registers and its language bindings call (facts sheet
// §8): string/bytes/shape/array/map constructors and accessors, the global-table functors, and
// the testing.* helpers. Registered while the runtime library loads. (Module globals live in
// module.cc.)
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ffijit/c_env_api.h"
#include "ffijit/container.h"
#include "ffijit/function.h"
#include "ffijit/registry.h"
#include "ffijit/string.h"
#include "internal.h"

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

void RequireArgs(const char* name, int32_t num_args, int32_t at_least) {
  if (num_args < at_least) {
    throw Error("TypeError", "Mismatched number of arguments when calling `" + std::string(name) +
                                 "`: expected at least " + std::to_string(at_least) + " but got " +
                                 std::to_string(num_args));
  }
}

Array NonNullArray(const Array& arr, const char* name) {
  if (!arr.defined()) throw Error("TypeError", std::string(name) + ": the array is None");
  return arr;
}

Map NonNullMap(const Map& map, const char* name) {
  if (!map.defined()) throw Error("TypeError", std::string(name) + ": the map is None");
  return map;
}

// The iterator ffi.MapForwardIterFunctor returns: it(0) key, it(1) value, it(2) advance.
Function MapIterator(Map map) {
  auto position = std::make_shared<int64_t>(0);
  const int64_t size = map.size();
  return Function::FromTyped(
      [map, position, size](int64_t command) -> Any {
        if (command == 2) {
          if (*position < size) ++*position;
          return Any(*position < size);
        }
        if (command != 0 && command != 1) {
          throw Error("ValueError", "ffi.MapForwardIterFunctor iterator: command " +
                                        std::to_string(command) +
                                        " is not 0 (key), 1 (value) or 2 (advance)");
        }
        if (*position >= size) {
          throw Error("IndexError",
                      "ffi.MapForwardIterFunctor iterator: past the end of a map "
                      "of size " +
                          std::to_string(size));
        }
        auto [key, value] = map.ItemAt(*position);
        return command == 0 ? key.ToOwned() : value.ToOwned();
      },
      "ffi.MapForwardIterFunctor iterator");
}

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

bool RegisterBuiltinGlobals() {
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
  RegisterPacked("ffi.Array", [](const AnyView* args, int32_t num_args, Any* result) {
    TVMFFIObjectHandle handle = nullptr;
    CheckCall(FFIJITArrayCreate(reinterpret_cast<const TVMFFIAny*>(args), num_args, &handle));
    *result = Any(Array(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle))));
  });
  RegisterTyped("ffi.ArrayGetItem", [](Array arr, int64_t i) -> Any {
    // Array::operator[] checks both ends: a negative index is an IndexError, never a read.
    return NonNullArray(arr, "ffi.ArrayGetItem")[i].ToOwned();
  });
  RegisterTyped("ffi.ArraySize",
                [](Array arr) { return NonNullArray(arr, "ffi.ArraySize").size(); });
  RegisterPacked("ffi.Map", [](const AnyView* args, int32_t num_args, Any* result) {
    if (num_args % 2 != 0) {
      throw Error("ValueError", "ffi.Map takes alternating keys and values, got an odd number (" +
                                    std::to_string(num_args) + ") of arguments");
    }
    std::vector<TVMFFIAny> keys, values;
    for (int32_t i = 0; i < num_args; i += 2) {
      keys.push_back(args[i].raw());
      values.push_back(args[i + 1].raw());
    }
    TVMFFIObjectHandle handle = nullptr;
    CheckCall(FFIJITMapCreate(keys.data(), values.data(), num_args / 2, &handle));
    *result = Any(Map(ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle))));
  });
  RegisterTyped("ffi.MapSize", [](Map map) { return NonNullMap(map, "ffi.MapSize").size(); });
  RegisterTyped("ffi.MapGetItem", [](Map map, AnyView key) -> Any {
    std::optional<AnyView> value = NonNullMap(map, "ffi.MapGetItem").Get(key);
    if (!value) {
      throw Error("KeyError", "ffi.MapGetItem: key of type `" + key.type_name() + "` not found");
    }
    return value->ToOwned();
  });
  RegisterTyped("ffi.MapCount", [](Map map, AnyView key) -> int64_t {
    return NonNullMap(map, "ffi.MapCount").Get(key).has_value() ? 1 : 0;
  });
  RegisterTyped("ffi.MapForwardIterFunctor",
                [](Map map) { return MapIterator(NonNullMap(map, "ffi.MapForwardIterFunctor")); });
  RegisterTyped("ffi.FunctionListGlobalNamesFunctor", []() {
    auto names = std::make_shared<std::vector<std::string>>(ListGlobalFunctions());
    return Function::FromTyped(
        [names](int64_t i) -> Any {
          if (i < 0) return Any(static_cast<int64_t>(names->size()));
          if (i >= static_cast<int64_t>(names->size())) {
            throw Error("IndexError", "ffi.FunctionListGlobalNamesFunctor: index " +
                                          std::to_string(i) + " out of range for " +
                                          std::to_string(names->size()) + " names");
          }
          return Any((*names)[static_cast<size_t>(i)]);
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
  return true;
}

// Runs while the library loads; only allocation can fail, and that must not terminate the
// process from a static initializer.
bool RegisterOrReport() {
  try {
    return RegisterBuiltinGlobals();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ffijit: cannot register the built-in global functions: %s\n", e.what());
    return false;
  }
}

[[maybe_unused]] const bool builtin_globals_registered = RegisterOrReport();

}  // namespace
}  // namespace ffijit
