// What the dataclass operations share: the depth limit of their walks, reading the containers,
// fields and type attributes of the values they walk, and each operation's entry point for
// dataclass.cc, which exports them. Each operation is a file of its own (dataclass_repr.cc,
// dataclass_hash.cc, dataclass_compare.cc, dataclass_copy.cc). Errors are ffijit::Error.
#ifndef FFIJIT_RUNTIME_EXTRA_DATACLASS_COMMON_H_
#define FFIJIT_RUNTIME_EXTRA_DATACLASS_COMMON_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../container_internal.h"
#include "../reflected.h"
#include "../string_internal.h"
#include "ffijit/any.h"
#include "ffijit/c_ext.h"
#include "ffijit/error.h"
#include "ffijit/function.h"

#if FFIJIT_TVM_FFI_HAS_DATACLASS_API

namespace ffijit::internal {

// Deep enough for any real value graph, shallow enough not to exhaust the thread's stack.
constexpr int kMaxDepth = 4000;

// Counts the nesting of one traversal; a ValueError past kMaxDepth.
class DepthGuard {
 public:
  DepthGuard(int* depth, const char* operation) : depth_(depth) {
    if (++*depth_ > kMaxDepth) {
      --*depth_;
      throw Error("ValueError", std::string(operation) + ": the value nests deeper than " +
                                    std::to_string(kMaxDepth) + " levels");
    }
  }
  ~DepthGuard() { --*depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  int* depth_;
};

// ---- Reading values ----

inline TVMFFIAny ViewOf(TVMFFIObject* obj) {
  TVMFFIAny view{};
  view.type_index = obj->type_index;
  view.v_obj = obj;
  return view;
}

inline bool IsSequence(int32_t type_index) {
  return type_index == kTVMFFIArray || type_index == kTVMFFIList;
}
inline bool IsMapLike(int32_t type_index) {
  return type_index == kTVMFFIMap || type_index == kTVMFFIDict;
}

// Array and List share the element store (TVMFFISeqCell) at +24.
inline const FFIJITArrayCell& SeqCell(TVMFFIObject* obj) {
  return *reinterpret_cast<const FFIJITArrayCell*>(obj + 1);
}

inline std::vector<std::pair<TVMFFIAny, TVMFFIAny>> MapEntries(TVMFFIObject* map) {
  std::vector<std::pair<TVMFFIAny, TVMFFIAny>> entries;
  internal::MapForEach(
      map, [&](const TVMFFIAny& key, const TVMFFIAny& value) { entries.emplace_back(key, value); });
  return entries;
}

inline std::string_view TextOf(const TVMFFIAny& v) {
  std::string_view text;
  internal::ViewBytes(v, &text);
  return text;
}

inline std::string TypeKeyOfIndex(int32_t type_index) {
  return TypeIndexToKey(type_index);
}

// The value of `type_index`'s entry in the type attribute column `name` (a view), or None.
inline TVMFFIAny TypeAttr(const char* name, int32_t type_index) {
  TVMFFIByteArray key{name, std::strlen(name)};
  const TVMFFITypeAttrColumn* column = TVMFFIGetTypeAttrColumn(&key);
  if (column == nullptr || type_index < column->begin_index ||
      type_index - column->begin_index >= column->size) {
    return TVMFFIAny{};
  }
  return column->data[type_index - column->begin_index];
}

// The Function in a type attribute column for the type, or nullopt; a TypeError for a non-function.
inline std::optional<Function> TypeAttrHook(const char* name, int32_t type_index) {
  const TVMFFIAny entry = TypeAttr(name, type_index);
  if (entry.type_index == kTVMFFINone) return std::nullopt;
  if (entry.type_index != kTVMFFIFunction) {
    throw Error("TypeError", std::string("type attribute `") + name + "` of `" +
                                 TypeKeyOfIndex(type_index) + "` must be a function, not `" +
                                 details::AnyTypeName(entry) + "`");
  }
  return Function(ObjectPtr<>::Borrow(entry.v_obj));
}

// Calls visit(field) for every field of the object's type without any of the `skip` flags.
template <typename Visit>
void ForEachFieldOf(TVMFFIObject* obj, int64_t skip, Visit&& visit) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(obj->type_index);
  if (info == nullptr) return;
  ForEachField(*info, [&](const TVMFFIFieldInfo& field) {
    if ((field.flags & skip) == 0) visit(field);
    return false;
  });
}

// ---- The operations, one file each ----

// ReprPrint (dataclass_repr.cc).
std::string ReprOf(const TVMFFIAny& v);
// RecursiveHash (dataclass_hash.cc).
int64_t RecursiveHashOf(const TVMFFIAny& v);
// -1, 0 or 1 (dataclass_compare.cc); with `eq_only` (RecursiveEq) what has no order is unequal
// rather than an error.
int32_t RecursiveCompare(const TVMFFIAny& l, const TVMFFIAny& r, bool eq_only);
// DeepCopy (dataclass_copy.cc).
Any DeepCopyOf(const TVMFFIAny& v);

}  // namespace ffijit::internal

#endif  // FFIJIT_TVM_FFI_HAS_DATACLASS_API

#endif  // FFIJIT_RUNTIME_EXTRA_DATACLASS_COMMON_H_
