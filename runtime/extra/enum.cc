// The enum types of TVM FFI 0.1 (see enum.h): their entries in the type table with reflected
// fields, registered while the runtime loads (TVM FFI's library registers them at start-up, so
// header code and bindings find `_int_index`, `_str_index`, `value`, `entries`, `indexes`,
// `attrs`), and the JSON graph form of enum singletons.
//
// Layout facts (include/tvm/ffi/enum.h at v0.1.13; header code allocates these objects, the
// runtime only reads them): EnumObj is the object header, int64 `_int_index` @24, String
// `_str_index` (a 16-byte Any cell) @32, 48 bytes; EnumStateObj is the header, then three object
// references `entries` (List) @24, `indexes` (Dict: canonical int and str index -> singleton) @32,
// `attrs` (Dict) @40, 48 bytes. EnumDef stores a type's EnumState in its `__ffi_enum__` entry.
#include "enum.h"

#include <cstring>
#include <string>
#include <string_view>

#include "../internal.h"
#include "../reflected.h"
#include "../string_internal.h"
#include "ffijit/container.h"
#include "ffijit/object.h"
#include "runtime_types.h"

namespace ffijit::internal {

#if FFIJIT_TVM_FFI_HAS_ENUM
namespace {

struct EnumLayout {
  TVMFFIObject header;
  int64_t int_index;
  TVMFFIAny str_index;
};
struct EnumStateLayout {
  TVMFFIObject header;
  TVMFFIObject* entries;
  TVMFFIObject* indexes;
  TVMFFIObject* attrs;
};
static_assert(offsetof(EnumLayout, int_index) == 24 && offsetof(EnumLayout, str_index) == 32 &&
                  sizeof(EnumLayout) == 48,
              "EnumObj layout: _int_index@24, _str_index@32, 48 bytes");
static_assert(offsetof(EnumStateLayout, entries) == 24 &&
                  offsetof(EnumStateLayout, indexes) == 32 &&
                  offsetof(EnumStateLayout, attrs) == 40 && sizeof(EnumStateLayout) == 48,
              "EnumStateObj layout: entries@24, indexes@32, attrs@40, 48 bytes");

// ---- Field accessors (getter: an owned value; setter: converts or fails with TypeError) ----

void SetRaised(const char* kind, const std::string& message) {
  TVMFFIErrorSetRaisedFromCStr(kind, message.c_str());
}

int SetInt64(void* field, const TVMFFIAny* value) {
  if (value->type_index != kTVMFFIInt && value->type_index != kTVMFFIBool) {
    SetRaised("TypeError", "enum index must be an int, not `" + details::AnyTypeName(*value) + "`");
    return -1;
  }
  *static_cast<int64_t*>(field) = value->v_int64;
  return 0;
}

int SetStrCell(void* field, const TVMFFIAny* value) {
  return GuardCBoundary([&] {
    details::RequireWellFormed(*value, "enum string index");
    if (value->type_index != kTVMFFIRawStr && value->type_index != kTVMFFISmallStr &&
        value->type_index != kTVMFFIStr) {
      throw Error("TypeError",
                  "enum string index must be a str, not `" + details::AnyTypeName(*value) + "`");
    }
    TVMFFIAny owned{};
    CopyToOwned(*value, &owned);
    auto* cell = static_cast<TVMFFIAny*>(field);
    ReleaseAny(cell);
    *cell = owned;
  });
}

template <int32_t kTypeIndex>
int SetObjectMember(void* field, const TVMFFIAny* value) {
  if (value->type_index != kTypeIndex) {
    SetRaised("TypeError", "expected `" + TypeIndexToKey(kTypeIndex) + "`, not `" +
                               details::AnyTypeName(*value) + "`");
    return -1;
  }
  details::IncRef(value->v_obj);
  TVMFFIObject* old = std::exchange(*static_cast<TVMFFIObject**>(field), value->v_obj);
  if (old != nullptr) details::DecRef(old);
  return 0;
}

void AddField(int32_t type_index, const char* name, int64_t offset, int64_t size, int64_t flags,
              int32_t static_type_index, TVMFFIFieldGetter getter, TVMFFIFieldSetter setter) {
  RegisterMember(type_index, {name, offset, size, static_type_index, getter, setter, flags});
}

// No creator: header code makes enum singletons; both layouts are 48 bytes.
void AddMetadata(int32_t type_index, TVMFFISEqHashKind kind) {
  RegisterRuntimeTypeMetadata(type_index, nullptr, sizeof(EnumLayout), kind);
}

// The index for `key` the way header code allocates it (dynamic index, no reserved child slots,
// overflow allowed): the first of the runtime and header code to ask wins, the other finds it.
int32_t AllocIndex(const char* key, int32_t depth, int32_t parent) {
  TVMFFIByteArray bytes{key, std::strlen(key)};
  return TVMFFITypeGetOrAllocIndex(&bytes, -1, depth, 0, 1, parent);
}

struct EnumTypes {
  int32_t state = -1;
  int32_t base = -1;
  int32_t int_enum = -1;
  int32_t str_enum = -1;
  EnumTypes() {
    constexpr int64_t kIgnored = kTVMFFIFieldFlagBitMaskSEqHashIgnore;
    constexpr int64_t kNoInit = kTVMFFIFieldFlagBitMaskInitOff;
    state = AllocIndex("ffi.EnumState", 1, kTVMFFIObject);
    AddField(state, "entries", offsetof(EnumStateLayout, entries), 8, kNoInit, kTVMFFIList,
             GetObjectMember, SetObjectMember<kTVMFFIList>);
    AddField(state, "indexes", offsetof(EnumStateLayout, indexes), 8, kNoInit, kTVMFFIDict,
             GetObjectMember, SetObjectMember<kTVMFFIDict>);
    AddField(state, "attrs", offsetof(EnumStateLayout, attrs), 8, kNoInit, kTVMFFIDict,
             GetObjectMember, SetObjectMember<kTVMFFIDict>);
    AddMetadata(state, kTVMFFISEqHashKindUnsupported);

    base = AllocIndex("ffi.Enum", 1, kTVMFFIObject);
    AddField(base, "_int_index", offsetof(EnumLayout, int_index), 8, kIgnored, kTVMFFIInt,
             GetInt64Member, SetInt64);
    AddField(base, "_str_index", offsetof(EnumLayout, str_index), 16, 0, kTVMFFIStr, GetAnyMember,
             SetStrCell);
    AddMetadata(base, kTVMFFISEqHashKindUniqueInstance);

    int_enum = AllocIndex("ffi.IntEnum", 2, base);
    AddField(int_enum, "value", offsetof(EnumLayout, int_index), 8, kIgnored | kNoInit, kTVMFFIInt,
             GetInt64Member, SetInt64);
    AddMetadata(int_enum, kTVMFFISEqHashKindUniqueInstance);

    str_enum = AllocIndex("ffi.StrEnum", 2, base);
    AddField(str_enum, "value", offsetof(EnumLayout, str_index), 16, kIgnored | kNoInit, kTVMFFIStr,
             GetAnyMember, SetStrCell);
    AddMetadata(str_enum, kTVMFFISEqHashKindUniqueInstance);
  }
};

const EnumTypes& Types() {
  static const EnumTypes types;
  return types;
}

// While the runtime loads, before any module's static initialisers allocate the keys themselves.
__attribute__((constructor)) void RegisterEnumTypes() {
  // Without them, header code allocates the types without reflection.
  RegisterAtLoad("the enum types", [] { Types(); });
}

}  // namespace

bool EnumToJSONData(const TVMFFIAny& value, Any* data) {
  if (value.type_index < kTVMFFIStaticObjectBegin) return false;
  const EnumTypes& types = Types();
  if (!IsInstance(value.type_index, types.base)) return false;
  const auto* obj = reinterpret_cast<const EnumLayout*>(value.v_obj);
  if (IsInstance(value.type_index, types.int_enum)) {
    *data = Any(obj->int_index);
  } else {
    *data = Any(AnyView(obj->str_index));
  }
  return true;
}

bool EnumFromJSONData(int32_t type_index, const AnyView& data, Any* out) {
  const EnumTypes& types = Types();
  if (!IsInstance(type_index, types.base)) return false;
  const std::string key = TypeIndexToKey(type_index);
  const bool by_int = IsInstance(type_index, types.int_enum);
  std::string_view chars;
  if (by_int ? data.type_index() != kTVMFFIInt : !ViewBytes(data.raw(), &chars)) {
    throw Error("TypeError", "the data of enum `" + key + "` must be " +
                                 (by_int ? "an int" : "a str") + " index, not `" +
                                 data.type_name() + "`");
  }
  const std::string index_text =
      by_int ? std::to_string(data.cast<int64_t>()) : "\"" + std::string(chars) + "\"";
  TVMFFIByteArray column_name{"__ffi_enum__", std::strlen("__ffi_enum__")};
  const TVMFFITypeAttrColumn* column = TVMFFIGetTypeAttrColumn(&column_name);
  const TVMFFIAny* entry =
      column == nullptr ? nullptr : FFIJITTypeAttrColumnEntry(column, type_index);
  if (entry != nullptr && entry->type_index == types.state) {
    const auto* state = reinterpret_cast<const EnumStateLayout*>(entry->v_obj);
    if (state->indexes != nullptr) {
      Dict indexes(ObjectPtr<>::Borrow(state->indexes));
      if (std::optional<AnyView> found = indexes.Get(data)) {
        *out = found->ToOwned();
        return true;
      }
    }
  }
  throw Error("ValueError", "Enum `" + key + "` has no instance with index " + index_text);
}

#else  // no enums at this revision

bool EnumToJSONData(const TVMFFIAny&, Any*) {
  return false;
}
bool EnumFromJSONData(int32_t, const AnyView&, Any*) {
  return false;
}

#endif  // FFIJIT_TVM_FFI_HAS_ENUM

}  // namespace ffijit::internal
