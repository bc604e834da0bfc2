// `tvm::ffi::VisitErrorContext::FindAccessPaths` of TVM FFI v0.1.13's extra C++ API
// (include/tvm/ffi/extra/visit_error_context.h) and the global
// `ffi.VisitErrorContext.FindAccessPaths`: where, under a root object, the chain of nodes that a
// failed recursive visit recorded can be found, as reflection access paths.
//
// The context is an `ffi.VisitErrorContext` object that header code makes (TVM_FFI_VISIT_THROW):
// its first member, at header+24, is a List<ObjectRef> (`reverse_visit_pattern`, innermost node
// first). Semantics, as v0.1.13's: the pattern drops NULL entries and runs of the same node; the
// search walks the root depth first (fields of objects whose type has metadata, elements of
// Array/List, values of Map/Dict with the key as step) and records the path to each node that
// completes the pattern, outermost record matched first; with allow_prefix_match, a node that
// matched part of the pattern and whose subtree completed nothing is recorded too.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../container_internal.h"
#include "../cxx_abi/shims.h"
#include "../internal.h"
#include "../object_internal.h"
#include "../reflected.h"
#include "access_path.h"
#include "ffijit/c_ext.h"
#include "ffijit/container.h"
#include "ffijit/function.h"
#include "ffijit/registry.h"
#include "runtime_types.h"

#if FFIJIT_TVM_FFI_HAS_DATACLASS_API

namespace ffijit {
namespace {

using internal::AccessKind;

constexpr std::string_view kContextKey = "ffi.VisitErrorContext";

// The pattern recorded in a context object, normalized (see the file comment).
std::vector<TVMFFIObject*> NormalizedPattern(TVMFFIObject* context) {
  if (context == nullptr) {
    throw Error("ValueError", "VisitErrorContext.FindAccessPaths: the context is None");
  }
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(context->type_index);
  if (info == nullptr ||
      std::string_view(info->type_key.data, info->type_key.size) != kContextKey) {
    throw Error("TypeError", "VisitErrorContext.FindAccessPaths: expected an `" +
                                 std::string(kContextKey) + "`, got `" +
                                 TypeIndexToKey(context->type_index) + "`");
  }
  TVMFFIObject* list = *reinterpret_cast<TVMFFIObject**>(context + 1);
  std::vector<TVMFFIObject*> pattern;
  if (list == nullptr) return pattern;
  if (list->type_index != kTVMFFIList && list->type_index != kTVMFFIArray) {
    throw Error("TypeError", "VisitErrorContext.reverse_visit_pattern must be a list, not `" +
                                 TypeIndexToKey(list->type_index) + "`");
  }
  const auto& cell = *reinterpret_cast<const FFIJITArrayCell*>(list + 1);
  for (int64_t i = 0; i < cell.size; ++i) {
    const TVMFFIAny& entry = cell.data[i];
    if (entry.type_index < kTVMFFIStaticObjectBegin || entry.v_obj == nullptr) continue;
    if (!pattern.empty() && pattern.back() == entry.v_obj) continue;
    pattern.push_back(entry.v_obj);
  }
  return pattern;
}

class AccessPathFinder {
 public:
  AccessPathFinder(std::vector<TVMFFIObject*> pattern, bool allow_prefix_match)
      : pattern_(std::move(pattern)), allow_prefix_match_(allow_prefix_match) {}

  Array Find(TVMFFIObject* root) {
    keep_.push_back(ObjectPtr<>::Borrow(root));
    VisitObject(root);
    std::vector<Any> paths;
    for (const ObjectPtr<>& path : results_) paths.push_back(Any(ObjectRef(path)));
    return Array(paths);
  }

 private:
  struct Step {
    AccessKind kind;
    Any key;
  };

  void VisitAny(const TVMFFIAny& value) {
    if (value.type_index < kTVMFFIStaticObjectBegin || value.v_obj == nullptr) return;
    TVMFFIObject* obj = value.v_obj;
    switch (value.type_index) {
      case kTVMFFIArray:
      case kTVMFFIList: {
        const auto& cell = *reinterpret_cast<const FFIJITArrayCell*>(obj + 1);
        for (int64_t i = 0; i < cell.size; ++i) {
          if (cell.data[i].type_index == kTVMFFINone) continue;
          steps_.push_back(Step{AccessKind::kArrayItem, Any(i)});
          VisitAny(cell.data[i]);
          steps_.pop_back();
        }
        return;
      }
      case kTVMFFIMap:
      case kTVMFFIDict: {
        std::vector<std::pair<TVMFFIAny, TVMFFIAny>> entries;
        internal::MapForEach(obj, [&](const TVMFFIAny& key, const TVMFFIAny& item) {
          entries.emplace_back(key, item);
        });
        for (const auto& [key, item] : entries) {
          if (key.type_index == kTVMFFINone || item.type_index == kTVMFFINone) continue;
          steps_.push_back(Step{AccessKind::kMapItem, Any(AnyView(key))});
          VisitAny(item);
          steps_.pop_back();
        }
        return;
      }
      default:
        VisitObject(obj);
    }
  }

  void VisitObject(TVMFFIObject* node) {
    if (node == nullptr) return;
    const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(node->type_index);
    if (info == nullptr || __atomic_load_n(&info->metadata, __ATOMIC_ACQUIRE) == nullptr) return;
    const bool matched =
        matched_ < pattern_.size() && node == pattern_[pattern_.size() - 1 - matched_];
    if (matched) {
      if (++matched_ == pattern_.size()) {
        results_.push_back(CurrentPath());
        --matched_;
        return;
      }
    }
    const size_t results_before = results_.size();
    internal::ForEachField(*info, [&](const TVMFFIFieldInfo& field) {
      Any child = internal::ReadField(node, field);
      steps_.push_back(
          Step{AccessKind::kAttr, Any(std::string_view(field.name.data, field.name.size))});
      VisitAny(child.raw());
      steps_.pop_back();
      return false;
    });
    if (allow_prefix_match_ && matched_ > 0 && matched_ < pattern_.size() && !steps_.empty() &&
        results_.size() == results_before) {
      results_.push_back(CurrentPath());
    }
    if (matched) --matched_;
  }

  ObjectPtr<> CurrentPath() const {
    ObjectPtr<> path = internal::AccessPathRoot();
    for (const Step& step : steps_) {
      path = internal::ExtendAccessPath(path, internal::NewAccessStep(step.kind, step.key));
    }
    return path;
  }

  std::vector<TVMFFIObject*> pattern_;
  bool allow_prefix_match_;
  size_t matched_ = 0;
  std::vector<Step> steps_;
  std::vector<ObjectPtr<>> results_;
  std::vector<ObjectPtr<>> keep_;
};

Array FindAccessPaths(TVMFFIObject* root, TVMFFIObject* context, bool allow_prefix_match) {
  AccessPathFinder finder(NormalizedPattern(context), allow_prefix_match);
  if (root == nullptr) return Array(std::vector<Any>{});
  return finder.Find(root);
}

// ---- The type ffi.VisitErrorContext, registered as TVM FFI's library does (read-only fields) ----
// Layout (include/tvm/ffi/extra/visit_error_context.h): header, List `reverse_visit_pattern` (one
// object pointer) @24, Optional<ObjectRef> `prev_error_context` @32: a 16-byte Any cell (48 bytes
// in all) where FFIJIT_TVM_FFI_OPTIONAL_OBJECT_IS_ANY, else a nullable object pointer (40).

#if FFIJIT_TVM_FFI_OPTIONAL_OBJECT_IS_ANY
using PrevContextSlot = TVMFFIAny;
void ReleasePrevContext(PrevContextSlot* slot) {
  internal::ReleaseAny(slot);
}
constexpr TVMFFIFieldGetter kGetPrevContext = internal::GetAnyMember;
constexpr size_t kContextSize = 48;
#else
using PrevContextSlot = TVMFFIObject*;
void ReleasePrevContext(PrevContextSlot* slot) {
  if (TVMFFIObject* prev = std::exchange(*slot, nullptr)) details::DecRef(prev);
}
constexpr TVMFFIFieldGetter kGetPrevContext = internal::GetObjectMember;
constexpr size_t kContextSize = 40;
#endif

struct ContextLayout {
  TVMFFIObject header;
  TVMFFIObject* reverse_visit_pattern;
  PrevContextSlot prev_error_context;
};
static_assert(offsetof(ContextLayout, reverse_visit_pattern) == 24 &&
                  offsetof(ContextLayout, prev_error_context) == 32 &&
                  sizeof(ContextLayout) == kContextSize,
              "VisitErrorContextObj layout");

int32_t g_context_type_index = -1;  // set once, while the library loads

void ContextDeleter(void* self, int flags) {
  auto* context = static_cast<ContextLayout*>(self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    if (TVMFFIObject* list = std::exchange(context->reverse_visit_pattern, nullptr)) {
      details::DecRef(list);
    }
    ReleasePrevContext(&context->prev_error_context);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(self);
}

// A context with no pattern and no previous context (the original's default construction).
int CreateContext(TVMFFIObjectHandle* result) {
  return GuardCBoundary([&] {
    *result = internal::AllocObject(sizeof(ContextLayout), g_context_type_index, ContextDeleter);
  });
}

void RegisterVisitErrorContextType() {
  TVMFFIByteArray key{kContextKey.data(), kContextKey.size()};
  // A final subclass of ffi.Object, allocated as header code does (overflow allowed).
  g_context_type_index = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, kTVMFFIObject);
  internal::RegisterMember(g_context_type_index,
                           {"reverse_visit_pattern", offsetof(ContextLayout, reverse_visit_pattern),
                            8, kTVMFFIList, internal::GetObjectMember});
  internal::RegisterMember(g_context_type_index,
                           {"prev_error_context", offsetof(ContextLayout, prev_error_context),
                            sizeof(PrevContextSlot), kTVMFFIAny, kGetPrevContext});
  internal::RegisterRuntimeTypeMetadata(g_context_type_index, CreateContext, sizeof(ContextLayout),
                                        kTVMFFISEqHashKindUnsupported);
}

__attribute__((constructor)) void RegisterFindAccessPathsGlobal() {
  RegisterAtLoad("ffi.VisitErrorContext and its FindAccessPaths", [] {
    RegisterVisitErrorContextType();
    SetGlobalFunction(
        "ffi.VisitErrorContext.FindAccessPaths",
        Function::FromPacked([](const AnyView* args, int32_t n, Any* result) {
          if (n < 2 || n > 3) {
            throw Error("TypeError",
                        "ffi.VisitErrorContext.FindAccessPaths takes (root, visit_context, "
                        "allow_prefix_match=False), got " +
                            std::to_string(n) + " arguments");
          }
          auto object_arg = [&](int i) -> TVMFFIObject* {
            const TVMFFIAny& raw = args[i].raw();
            if (raw.type_index == kTVMFFINone) return nullptr;
            if (raw.type_index < kTVMFFIStaticObjectBegin) {
              throw Error("TypeError", "ffi.VisitErrorContext.FindAccessPaths: argument #" +
                                           std::to_string(i) + " must be an object, not `" +
                                           args[i].type_name() + "`");
            }
            return raw.v_obj;
          };
          const bool prefix = n == 3 && args[2].cast<bool>();
          *result = Any(FindAccessPaths(object_arg(0), object_arg(1), prefix));
        }),
        true);
  });
}

}  // namespace
}  // namespace ffijit

namespace tvm {
namespace ffi {

ObjectRef VisitErrorContext::FindAccessPaths(const ObjectRef& root,
                                             const VisitErrorContext& visit_context,
                                             bool allow_prefix_match) {
  return ffijit::internal::WithTvmErrors([&] {
    ffijit::Array paths =
        ffijit::FindAccessPaths(root.get(), visit_context.get(), allow_prefix_match);
    return ObjectRef::Adopt(static_cast<TVMFFIObject*>(paths.release()));
  });
}

}  // namespace ffi
}  // namespace tvm

#endif  // FFIJIT_TVM_FFI_HAS_DATACLASS_API
