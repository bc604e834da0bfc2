// The member getters and registration helpers of runtime_types.h.
#include "runtime_types.h"

#include <algorithm>
#include <cstring>

#include "../internal.h"
#include "../string_internal.h"
#include "ffijit/object.h"

namespace ffijit::internal {

int GetInt64Member(void* field, TVMFFIAny* result) {
  *result = TVMFFIAny{};
  result->type_index = kTVMFFIInt;
  result->v_int64 = *static_cast<const int64_t*>(field);
  return 0;
}

int GetAnyMember(void* field, TVMFFIAny* result) {
  return GuardCBoundary([&] { CopyToOwned(*static_cast<const TVMFFIAny*>(field), result); });
}

int GetObjectMember(void* field, TVMFFIAny* result) {
  *result = TVMFFIAny{};
  if (TVMFFIObject* obj = *static_cast<TVMFFIObject**>(field)) {
    details::IncRef(obj);
    result->type_index = obj->type_index;
    result->v_obj = obj;
  }
  return 0;
}

void RegisterMember(int32_t type_index, const MemberSpec& member) {
  TVMFFIFieldInfo info{};
  info.name = TVMFFIByteArray{member.name, std::strlen(member.name)};
  info.size = member.size;
  info.alignment = std::min<int64_t>(member.size, 8);
  info.offset = member.offset;
  info.flags = member.flags;
  info.getter = member.getter;
  info.setter = reinterpret_cast<decltype(info.setter)>(member.setter);  // a void* at v0.1.13
  info.field_static_type_index = member.static_type_index;
  CheckCall(TVMFFITypeRegisterField(type_index, &info));
}

void RegisterRuntimeTypeMetadata(int32_t type_index, TVMFFIObjectCreator creator,
                                 int32_t total_size, TVMFFISEqHashKind kind) {
  TVMFFITypeMetadata metadata{};
  metadata.creator = creator;
  metadata.total_size = total_size;
  metadata.structural_eq_hash_kind = kind;
  CheckCall(TVMFFITypeRegisterMetadata(type_index, &metadata));
}

}  // namespace ffijit::internal
