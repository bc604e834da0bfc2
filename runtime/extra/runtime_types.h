// Registering the members and metadata of the object types the runtime defines itself
// (AccessStep/AccessPath, StructuralKey and VisitInterrupt, the enum types, VisitErrorContext), the
// way header code's def_ro/def_rw would, and the member getters those types share.
#ifndef FFIJIT_RUNTIME_EXTRA_RUNTIME_TYPES_H_
#define FFIJIT_RUNTIME_EXTRA_RUNTIME_TYPES_H_

#include <cstdint>

#include "ffijit/c_api.h"

namespace ffijit::internal {

// An int64 member, as an Int.
int GetInt64Member(void* field, TVMFFIAny* result);
// A 16-byte Any cell member, as an owned copy.
int GetAnyMember(void* field, TVMFFIAny* result);
// An object pointer member: a new reference, or None for NULL.
int GetObjectMember(void* field, TVMFFIAny* result);

struct MemberSpec {
  const char* name;
  int64_t offset;
  int64_t size;  // aligned to min(size, 8)
  int32_t static_type_index;
  TVMFFIFieldGetter getter;
  TVMFFIFieldSetter setter = nullptr;  // none: read-only
  int64_t flags = 0;
};
// Registers one reflected member; a refusal (say, a duplicate name) throws ffijit::Error.
void RegisterMember(int32_t type_index, const MemberSpec& member);
// Registers the type's metadata (creator may be NULL: no creator).
void RegisterRuntimeTypeMetadata(int32_t type_index, TVMFFIObjectCreator creator,
                                 int32_t total_size, TVMFFISEqHashKind kind);

}  // namespace ffijit::internal

#endif  // FFIJIT_RUNTIME_EXTRA_RUNTIME_TYPES_H_
