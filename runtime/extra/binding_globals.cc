// Global functions TVM FFI 0.1 registers for its language bindings (apache/tvm-ffi v0.1.13,
// src/ffi/object.cc, function.cc, extra/module.cc, extra/dataclass.cc, extra/structural_equal.cc):
//   ffi.GetRegisteredTypeKeys() -> [str]        every type key in the type table, by index
//   ffi.FunctionFromExternC(self, safe_call, deleter) -> Function   wraps a C safe_call
//   ffi.MakeFieldGetter(field_type_index) -> int        a TVMFFIFieldGetter for that storage kind
//   ffi.MakeFieldSetter(field_type_index, converter, f_convert) -> Function   a setter Function
//       (field address, value) that converts the value through f_convert(converter, in, out)
//   ffi.ModuleGlobalsAdd(mod) / ffi.ModuleGlobalsRemove(mod)   keep a module alive process-wide
//   ffi.StructuralEqual(lhs, rhs, map_free_vars=False, skip_tensor_content=False) -> bool
// Field storage kinds (what a binding-defined class stores at a field's offset): int -> int64,
// float -> double, bool -> one-byte bool, OpaquePtr -> void*, DataType -> DLDataType, Device ->
// DLDevice, None/Any -> a 16-byte Any cell, any object type -> one object pointer (NULL is None).
// Registered while the runtime loads, only at revisions that have them.
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../internal.h"
#include "../string_internal.h"
#include "ffijit/container.h"
#include "ffijit/dtype.h"
#include "ffijit/function.h"
#include "ffijit/registry.h"
#include "runtime_types.h"

namespace ffijit {
namespace {

#if FFIJIT_TVM_FFI_HAS_BINDING_GLOBALS_0_1

// ---- Field storage (ffi.MakeFieldGetter / ffi.MakeFieldSetter) ----

enum class Storage { kInt, kFloat, kBool, kPtr, kDataType, kDevice, kAny, kObject };

Storage StorageOf(int64_t field_type_index, const char* what) {
  switch (field_type_index) {
    case kTVMFFIInt:
      return Storage::kInt;
    case kTVMFFIFloat:
      return Storage::kFloat;
    case kTVMFFIBool:
      return Storage::kBool;
    case kTVMFFIOpaquePtr:
      return Storage::kPtr;
    case kTVMFFIDataType:
      return Storage::kDataType;
    case kTVMFFIDevice:
      return Storage::kDevice;
    case kTVMFFINone:
    case kTVMFFIAny:
      return Storage::kAny;
    default:
      if (field_type_index >= kTVMFFIStaticObjectBegin) return Storage::kObject;
      throw Error("ValueError", std::string("Unsupported field type index for ") + what + ": " +
                                    std::to_string(field_type_index));
  }
}

template <typename T>
int PodGetter(void* field, TVMFFIAny* result) {
  return GuardCBoundary([&] { TypeTraits<T>::ToAny(*static_cast<T*>(field), result); });
}

TVMFFIFieldGetter GetterFor(Storage storage) {
  switch (storage) {
    case Storage::kInt:
      return PodGetter<int64_t>;
    case Storage::kFloat:
      return PodGetter<double>;
    case Storage::kBool:
      return PodGetter<bool>;
    case Storage::kPtr:
      return PodGetter<void*>;
    case Storage::kDataType:
      return PodGetter<DLDataType>;
    case Storage::kDevice:
      return PodGetter<DLDevice>;
    case Storage::kAny:
      return internal::GetAnyMember;
    case Storage::kObject:
      return internal::GetObjectMember;
  }
  return nullptr;
}

// Stores `value` (owned by the caller) at `field` as `storage`; the previous content of an Any or
// object field is released.
void WriteField(void* field, Storage storage, const Any& value) {
  const TVMFFIAny& raw = value.raw();
  switch (storage) {
    case Storage::kInt:
      *static_cast<int64_t*>(field) = TypeTraits<int64_t>::FromAny(raw);
      return;
    case Storage::kFloat:
      *static_cast<double*>(field) = TypeTraits<double>::FromAny(raw);
      return;
    case Storage::kBool:
      *static_cast<bool*>(field) = TypeTraits<bool>::FromAny(raw);
      return;
    case Storage::kPtr:
      *static_cast<void**>(field) = TypeTraits<void*>::FromAny(raw);
      return;
    case Storage::kDataType:
      *static_cast<DLDataType*>(field) = TypeTraits<DLDataType>::FromAny(raw);
      return;
    case Storage::kDevice:
      *static_cast<DLDevice*>(field) = TypeTraits<DLDevice>::FromAny(raw);
      return;
    case Storage::kAny: {
      TVMFFIAny owned{};
      internal::CopyToOwned(raw, &owned);
      auto* cell = static_cast<TVMFFIAny*>(field);
      internal::ReleaseAny(cell);
      *cell = owned;
      return;
    }
    case Storage::kObject: {
      if (raw.type_index != kTVMFFINone && raw.type_index < kTVMFFIStaticObjectBegin) {
        throw Error("TypeError", "an object field cannot hold a `" + value.type_name() + "`");
      }
      TVMFFIObject* next = raw.type_index == kTVMFFINone ? nullptr : raw.v_obj;
      if (next != nullptr) details::IncRef(next);
      TVMFFIObject* old = std::exchange(*static_cast<TVMFFIObject**>(field), next);
      if (old != nullptr) details::DecRef(old);
      return;
    }
  }
}

using ConvertFn = int (*)(void* converter, const TVMFFIAny* value, TVMFFIAny* out);

Function MakeFieldSetter(int32_t field_type_index, int64_t converter_bits, int64_t convert_bits) {
  const Storage storage = StorageOf(field_type_index, "setter");
  if (convert_bits == 0) {
    throw Error("ValueError", "ffi.MakeFieldSetter: the conversion function pointer is NULL");
  }
  void* converter = reinterpret_cast<void*>(converter_bits);
  auto convert = reinterpret_cast<ConvertFn>(convert_bits);
  return Function::FromPacked(
      [storage, converter, convert](const AnyView* args, int32_t num_args, Any*) {
        if (num_args != 2) {
          throw Error("TypeError", "a field setter takes (field address, value), got " +
                                       std::to_string(num_args) + " arguments");
        }
        void* field = args[0].cast<void*>();
        if (field == nullptr) throw Error("ValueError", "a field setter got a NULL field address");
        TVMFFIAny converted{};
        CheckCall(convert(converter, &args[1].raw(), &converted));  // rethrows the raised error
        WriteField(field, storage, Any::Adopt(converted));
      });
}

// ---- Module globals: modules kept alive until removed ----

ObjectPtr<> RequireModule(const char* name, const AnyView& value) {
  if (value.type_index() < kTVMFFIStaticObjectBegin ||
      !IsInstance(value.type_index(), kTVMFFIModule)) {
    throw Error("TypeError", std::string("Mismatched type on argument #0 when calling `") + name +
                                 "`: expected `ffi.Module` but got `" + value.type_name() + "`");
  }
  return ObjectPtr<>::Borrow(value.raw().v_obj);
}

struct ModuleGlobals {
  std::mutex mutex;
  std::unordered_map<TVMFFIObject*, ObjectPtr<>> modules;
};
ModuleGlobals& Modules() {
  static ModuleGlobals* const globals = new ModuleGlobals();  // outlives every static destructor
  return *globals;
}

// ---- Registration ----

void Register(const char* name, Function func) {
  SetGlobalFunction(name, func, true);
}

void RegisterBindingGlobals() {
  Register("ffi.GetRegisteredTypeKeys",
           Function::FromTyped(
               [] {
                 // TVMFFIGetTypeInfo answers NULL for unused and
                 // out-of-table indices; the table is far smaller.
                 constexpr int32_t kScanLimit = 1 << 16;
                 std::vector<Any> keys;
                 for (int32_t i = 0; i < kScanLimit; ++i) {
                   if (const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(i)) {
                     keys.emplace_back(std::string(info->type_key.data, info->type_key.size));
                   }
                 }
                 return Array(keys);
               },
               "ffi.GetRegisteredTypeKeys"));
  Register("ffi.FunctionFromExternC",
           Function::FromTyped(
               [](void* self, void* safe_call, void* deleter) {
                 if (safe_call == nullptr) {
                   throw Error("ValueError", "ffi.FunctionFromExternC: safe_call is NULL");
                 }
                 return Function::FromSafeCall(self,
                                               reinterpret_cast<TVMFFISafeCallType>(safe_call),
                                               reinterpret_cast<void (*)(void*)>(deleter));
               },
               "ffi.FunctionFromExternC"));
  Register("ffi.MakeFieldGetter", Function::FromTyped(
                                      [](int32_t field_type_index) {
                                        TVMFFIFieldGetter getter =
                                            GetterFor(StorageOf(field_type_index, "getter"));
                                        return reinterpret_cast<int64_t>(getter);
                                      },
                                      "ffi.MakeFieldGetter"));
  Register("ffi.MakeFieldSetter", Function::FromTyped(MakeFieldSetter, "ffi.MakeFieldSetter"));
  Register("ffi.ModuleGlobalsAdd",
           Function::FromPacked([](const AnyView* args, int32_t num_args, Any*) {
             if (num_args != 1) {
               throw Error("TypeError", "ffi.ModuleGlobalsAdd: expected 1 argument but got " +
                                            std::to_string(num_args));
             }
             ObjectPtr<> mod = RequireModule("ffi.ModuleGlobalsAdd", args[0]);
             std::scoped_lock lock(Modules().mutex);
             Modules().modules.emplace(mod.get(), mod);
           }));
  Register("ffi.ModuleGlobalsRemove",
           Function::FromPacked([](const AnyView* args, int32_t num_args, Any*) {
             if (num_args != 1) {
               throw Error("TypeError", "ffi.ModuleGlobalsRemove: expected 1 argument but got " +
                                            std::to_string(num_args));
             }
             ObjectPtr<> mod = RequireModule("ffi.ModuleGlobalsRemove", args[0]);
             ObjectPtr<> released;  // dropped after the lock: a module's deleter may re-enter
             std::scoped_lock lock(Modules().mutex);
             auto it = Modules().modules.find(mod.get());
             if (it != Modules().modules.end()) {
               released = std::move(it->second);
               Modules().modules.erase(it);
             }
           }));
  // Equal exactly when the structural comparison finds no first mismatch (same flags, same
  // argument checks as ffi.GetFirstStructuralMismatch).
  Register("ffi.StructuralEqual",
           Function::FromPacked([](const AnyView* args, int32_t num_args, Any* result) {
             if (num_args < 2 || num_args > 4) {
               throw Error("TypeError", "ffi.StructuralEqual: expected 2 to 4 arguments but got " +
                                            std::to_string(num_args));
             }
             Function mismatch = GetGlobalFunctionOrThrow("ffi.GetFirstStructuralMismatch");
             std::vector<TVMFFIAny> raw;
             for (int32_t i = 0; i < num_args; ++i) raw.push_back(args[i].raw());
             Any found = mismatch.CallPacked(raw.data(), num_args);
             *result = Any(found.type_index() == kTVMFFINone);
           }));
}

__attribute__((constructor)) void RegisterBindingGlobalsAtLoad() {
  RegisterAtLoad("the binding globals", RegisterBindingGlobals);
}

#endif  // FFIJIT_TVM_FFI_HAS_BINDING_GLOBALS_0_1

}  // namespace
}  // namespace ffijit
