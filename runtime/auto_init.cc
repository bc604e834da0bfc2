// The automatic `__ffi_init__` of TVM FFI 0.1: the global ffi.GetKwargsObject (the marker that
// separates positional from keyword arguments in a call) and ffi._RegisterFFIInit(type_index),
// which header code calls for every reflected type registered without an explicit init. The init
// it makes builds an empty object (the type's creator, else its __ffi_new__ attribute) and sets
// its fields from the call:
//   init(p0, p1, ...)                         positional arguments only
//   init(p0, ..., KWARGS, "name", value, ...) positional arguments, then name/value pairs
// Positional arguments fill the fields that take part in init and are not keyword-only, required
// ones first, each group in field order (ancestors' fields first). Fields left unset get their
// default; a missing required field is a TypeError naming it. Errors carry TVM FFI's kinds and
// wording ("<type>.__ffi_init__() got an unexpected keyword argument 'z'", ...), since callers and
// tests match them.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ffijit/function.h"
#include "ffijit/object.h"
#include "ffijit/registry.h"
#include "internal.h"
#include "object_internal.h"
#include "reflected.h"
#include "string_internal.h"

#if FFIJIT_TVM_FFI_HAS_AUTO_INIT

namespace ffijit {
namespace {

// One plain ffi.Object for the whole process (TVM FFI's kwargs sentinel): never freed, so an init
// recognises it by address for as long as the process runs.
TVMFFIObject* KwargsMarker() {
  static TVMFFIObject* const marker =
      internal::AllocObject(sizeof(TVMFFIObject), kTVMFFIObject, [](void* self, int flags) {
        if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(self);
      });
  return marker;
}

// A field as the init sees it. The field record is copied: a type's field array may be
// republished by later registrations (its strings and default stay owned by the type table).
struct InitField {
  TVMFFIFieldInfo info;
  bool in_init;  // not InitOff: the call may set it
  bool keyword_only;
  bool has_default;
  std::string_view name() const { return std::string_view(info.name.data, info.name.size); }
};

// What an init of one type needs, computed once when the init is made (as TVM FFI does).
struct InitPlan {
  int32_t type_index = -1;
  std::string type_key;
  std::string prefix;              // "<type>.__ffi_init__()", the start of every message
  std::vector<InitField> fields;   // every field, ancestors' first
  std::vector<size_t> positional;  // fields positional arguments fill, in that order
  std::unordered_map<std::string_view, size_t> by_name;  // fields keywords may name
};

std::shared_ptr<const InitPlan> MakePlan(const TVMFFITypeInfo& type) {
  auto plan = std::make_shared<InitPlan>();
  plan->type_index = type.type_index;
  plan->type_key = internal::TypeKeyOf(type);
  plan->prefix = plan->type_key + ".__ffi_init__()";
  internal::ForEachField(type, [&](const TVMFFIFieldInfo& field) {
    InitField entry{field, (field.flags & kTVMFFIFieldFlagBitMaskInitOff) == 0,
                    (field.flags & kTVMFFIFieldFlagBitMaskKwOnly) != 0,
                    (field.flags & kTVMFFIFieldFlagBitMaskHasDefault) != 0};
    plan->fields.push_back(entry);
    if (entry.in_init) {
      plan->by_name[entry.name()] = plan->fields.size() - 1;  // a subtype's shadows an ancestor's
    }
    return false;
  });
  // Required fields take the first positional arguments, as in a Python signature; each group
  // keeps field order.
  for (bool defaulted : {false, true}) {
    for (size_t index = 0; index < plan->fields.size(); ++index) {
      const InitField& field = plan->fields[index];
      if (field.in_init && !field.keyword_only && field.has_default == defaulted) {
        plan->positional.push_back(index);
      }
    }
  }
  return plan;
}

// A new object of the plan's type with its fields as the creator leaves them.
ObjectPtr<> NewEmptyObject(const InitPlan& plan) {
  const TVMFFITypeInfo* type = TVMFFIGetTypeInfo(plan.type_index);
  const TVMFFITypeMetadata* metadata = __atomic_load_n(&type->metadata, __ATOMIC_ACQUIRE);
  if (metadata != nullptr && metadata->creator != nullptr) {
    TVMFFIObjectHandle handle = nullptr;
    CheckCall(metadata->creator(&handle));
    if (handle == nullptr) {
      throw Error("RuntimeError", "the creator of `" + plan.type_key + "` returned no object");
    }
    return ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle));
  }
  if (TVMFFIObject* make = internal::TypeAttrFunction("__ffi_new__", plan.type_index)) {
    Any made = Function(ObjectPtr<>::Borrow(make))();
    const TVMFFIAny& raw = made.raw();
    if (raw.type_index < kTVMFFIStaticObjectBegin || raw.v_obj == nullptr ||
        !IsInstance(raw.v_obj->type_index, plan.type_index)) {
      throw Error("TypeError", "the __ffi_new__ of `" + plan.type_key + "` returned a `" +
                                   TypeIndexToKey(raw.type_index) +
                                   "`, not an object of that type");
    }
    return ObjectPtr<>::Borrow(raw.v_obj);
  }
  throw Error("RuntimeError", "Type `" + plan.type_key +
                                  "` does not support reflection creation (no native creator or "
                                  "__ffi_new__ type attr)");
}

// `message` indented under a header line, as TVM FFI nests a field setter's error.
std::string Nested(std::string_view message) {
  std::string out = ":\n  ";
  for (char ch : message) {
    out.push_back(ch);
    if (ch == '\n') out.append("  ");
  }
  return out;
}

// Stores `value` into field `index`; a setter's error keeps its kind and names the field.
void SetInitField(const InitPlan& plan, TVMFFIObject* obj, size_t index, const TVMFFIAny& value) {
  const InitField& field = plan.fields[index];
  try {
    internal::SetField(obj, field.info, value, plan.type_key);
  } catch (const Error& e) {
    throw Error(e.kind(),
                plan.prefix + " field '" + std::string(field.name()) + "'" + Nested(e.message()));
  }
}

void SetToDefault(const InitPlan& plan, TVMFFIObject* obj, size_t index) {
  const InitField& field = plan.fields[index];
  try {
    const Any value = internal::FieldDefault(field.info);
    internal::SetField(obj, field.info, value.raw(), plan.type_key);
  } catch (const Error& e) {
    throw Error(e.kind(), plan.prefix + " default of field '" + std::string(field.name()) + "'" +
                              Nested(e.message()));
  }
}

bool IsKwargsMarker(const TVMFFIAny& arg) {
  return arg.type_index >= kTVMFFIStaticObjectBegin && arg.v_obj == KwargsMarker();
}

// The keyword at argument `i`: a string (str, small str or C string), else a TypeError.
std::string_view KeywordAt(const InitPlan& plan, const TVMFFIAny* args, int32_t i) {
  const TVMFFIAny& arg = args[i];
  std::string_view name;
  const bool is_string = arg.type_index == kTVMFFIStr || arg.type_index == kTVMFFISmallStr ||
                         (arg.type_index == kTVMFFIRawStr && arg.v_c_str != nullptr);
  if (!is_string || !internal::ViewBytes(arg, &name)) {
    throw Error("TypeError",
                plan.prefix + " keyword argument names must be strings, but argument #" +
                    std::to_string(i) + " is a `" + TypeIndexToKey(arg.type_index) + "`");
  }
  return name;
}

std::string TooManyPositional(const InitPlan& plan, int32_t given) {
  return plan.prefix + " takes at most " + std::to_string(plan.positional.size()) +
         " positional argument(s), but " + std::to_string(given) + " were given";
}

void Init(const InitPlan& plan, const TVMFFIAny* args, int32_t num_args, Any* result) {
  // Every argument must be a well-formed value before any setter reads it.
  int32_t marker_at = -1;
  for (int32_t i = 0; i < num_args; ++i) {
    const details::AnyDefect defect = details::FindAnyDefect(args[i]);
    if (defect != details::AnyDefect::kNone) {
      const std::string where = plan.prefix + " argument #" + std::to_string(i);
      details::ThrowMalformed(where.c_str(), args[i], defect);
    }
    if (marker_at < 0 && IsKwargsMarker(args[i])) marker_at = i;
  }
  const int32_t num_positional = marker_at < 0 ? num_args : marker_at;
  if (static_cast<size_t>(num_positional) > plan.positional.size()) {
    throw Error("TypeError", TooManyPositional(plan, num_positional));
  }
  const int32_t num_keyword_args = marker_at < 0 ? 0 : num_args - marker_at - 1;
  if (num_keyword_args % 2 != 0) {
    throw Error("TypeError",
                plan.prefix + " KWARGS requires an even number of key-value arguments");
  }

  ObjectPtr<> obj = NewEmptyObject(plan);
  std::vector<bool> is_set(plan.fields.size(), false);
  for (int32_t i = 0; i < num_positional; ++i) {
    const size_t index = plan.positional[i];
    SetInitField(plan, obj.get(), index, args[i]);
    is_set[index] = true;
  }
  for (int32_t i = marker_at + 1; marker_at >= 0 && i < num_args; i += 2) {
    const std::string_view name = KeywordAt(plan, args, i);
    auto it = plan.by_name.find(name);
    if (it == plan.by_name.end()) {
      throw Error("TypeError",
                  plan.prefix + " got an unexpected keyword argument '" + std::string(name) + "'");
    }
    if (is_set[it->second]) {
      throw Error("TypeError",
                  plan.prefix + " got multiple values for argument '" + std::string(name) + "'");
    }
    SetInitField(plan, obj.get(), it->second, args[i + 1]);
    is_set[it->second] = true;
  }
  for (size_t index = 0; index < plan.fields.size(); ++index) {
    const InitField& field = plan.fields[index];
    if (is_set[index]) continue;
    if (field.has_default) {
      SetToDefault(plan, obj.get(), index);
    } else if (field.in_init) {
      throw Error("TypeError",
                  plan.prefix + " missing required " +
                      (field.keyword_only ? "keyword-only argument: '" : "argument: '") +
                      std::string(field.name()) + "'");
    }
    // A field outside init without a default keeps what the creator left in it.
  }
  TVMFFIAny owned{};
  owned.type_index = obj->type_index;
  owned.v_obj = obj.release();
  *result = Any::Adopt(owned);
}

// ffi._RegisterFFIInit(type_index): makes the type's init and stores it as its __ffi_init__
// attribute (a second registration is the attribute table's RuntimeError).
void RegisterFFIInit(int32_t type_index) {
  const TVMFFITypeInfo* type = TVMFFIGetTypeInfo(type_index);
  if (type->type_index != type_index || type_index < kTVMFFIStaticObjectBegin) {
    throw Error("ValueError", "ffi._RegisterFFIInit: no object type is registered at index " +
                                  std::to_string(type_index));
  }
  std::shared_ptr<const InitPlan> plan = MakePlan(*type);
  Function init = Function::FromPacked([plan](const AnyView* args, int32_t num_args, Any* result) {
    Init(*plan, reinterpret_cast<const TVMFFIAny*>(args), num_args, result);
  });
  const char attr[] = "__ffi_init__";
  TVMFFIByteArray name{attr, sizeof(attr) - 1};
  TVMFFIAny value{};
  value.type_index = kTVMFFIFunction;
  value.v_obj = init.get();
  CheckCall(TVMFFITypeRegisterAttr(type_index, &name, &value));
}

// Registered while the runtime library loads: header code looks ffi._RegisterFFIInit up during
// the static initialisation of the libraries that link the runtime.
__attribute__((constructor)) void RegisterAutoInitGlobals() {
  // Without them, header code registers types without an automatic init.
  RegisterAtLoad("ffi.GetKwargsObject and ffi._RegisterFFIInit", [] {
    SetGlobalFunction(
        "ffi.GetKwargsObject",
        Function::FromTyped([] { return ObjectRef(ObjectPtr<>::Borrow(KwargsMarker())); },
                            "ffi.GetKwargsObject"),
        true);
    SetGlobalFunction("ffi._RegisterFFIInit",
                      Function::FromTyped(RegisterFFIInit, "ffi._RegisterFFIInit"), true);
  });
}

}  // namespace
}  // namespace ffijit

#endif  // FFIJIT_TVM_FFI_HAS_AUTO_INIT
