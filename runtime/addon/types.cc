// Type keys and type tests (object.h, c_ext.h) over TVM FFI's own library. TVM FFI's
// TVMFFIGetTypeInfo ends the process on an index nobody registered, and values from callers may
// carry any index, so every lookup asks it only for indices known to be registered: a bitmap
// filled from the library's `ffi.GetRegisteredTypeKeys` whenever an index is not in it yet.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "ffijit/c_ext.h"
#include "ffijit/container.h"
#include "ffijit/error.h"
#include "ffijit/object.h"

namespace ffijit {
namespace {

// Type indices TVM FFI hands out grow from 0; beyond this many, every lookup of an unseen index
// asks the library again (correct, only slower).
constexpr int32_t kTrackedTypes = 1 << 16;
std::atomic<uint64_t> registered_bits[kTrackedTypes / 64];

bool Marked(int32_t index) {
  return index >= 0 && index < kTrackedTypes &&
         (registered_bits[index / 64].load(std::memory_order_acquire) >> (index % 64) & 1);
}

// Re-reads the registered type keys; returns whether `index` is registered now.
bool Refresh(int32_t index) {
  static std::mutex refreshing;
  std::lock_guard<std::mutex> lock(refreshing);
  if (Marked(index)) return true;
  TVMFFIObjectHandle keys_func = nullptr;
  TVMFFIByteArray name{"ffi.GetRegisteredTypeKeys", 25};
  if (TVMFFIFunctionGetGlobal(&name, &keys_func) != 0 || keys_func == nullptr) {
    throw Error("RuntimeError", "TVM FFI's library has no `ffi.GetRegisteredTypeKeys`");
  }
  ObjectPtr<> keep_func = ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(keys_func));
  TVMFFIAny result{};
  if (TVMFFIFunctionCall(keys_func, nullptr, 0, &result) != 0) throw Error::MoveFromRaised();
  if (result.type_index != kTVMFFIArray) {
    if (result.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(result.v_obj);
    throw Error("RuntimeError", "`ffi.GetRegisteredTypeKeys` returned no Array");
  }
  Array keys{ObjectPtr<>::Adopt(result.v_obj)};
  bool found = false;
  for (const AnyView& key : keys) {
    std::string_view text = details::ViewChars(key.raw());
    TVMFFIByteArray bytes{text.data(), text.size()};
    int32_t registered = -1;
    if (TVMFFITypeKeyToIndex(&bytes, &registered) != 0) {
      TVMFFIObjectHandle error = nullptr;
      TVMFFIErrorMoveFromRaised(&error);
      if (error != nullptr) TVMFFIObjectDecRef(error);
      continue;
    }
    if (registered == index) found = true;
    if (registered >= 0 && registered < kTrackedTypes) {
      registered_bits[registered / 64].fetch_or(uint64_t{1} << (registered % 64),
                                                std::memory_order_release);
    }
  }
  return found;
}

// The library's record of a registered type, or NULL.
const TVMFFITypeInfo* RegisteredTypeInfo(int32_t index) {
  if (index < 0) return nullptr;
  if (!Marked(index) && !Refresh(index)) return nullptr;
  return TVMFFIGetTypeInfo(index);
}

}  // namespace

std::string TypeIndexToKey(int32_t type_index) {
  const TVMFFITypeInfo* info = RegisteredTypeInfo(type_index);
  if (info == nullptr) {
    throw Error("KeyError", "unknown type index " + std::to_string(type_index));
  }
  return std::string(info->type_key.data, info->type_key.size);
}

int32_t TypeKeyToIndex(const std::string& key) {
  TVMFFIByteArray bytes{key.data(), key.size()};
  int32_t index = -1;
  if (TVMFFITypeKeyToIndex(&bytes, &index) != 0) throw Error::MoveFromRaised();
  return index;
}

}  // namespace ffijit

using namespace ffijit;

extern "C" {

int FFIJITObjectIsInstance(int32_t object_type_index, int32_t target_type_index) {
  if (object_type_index == target_type_index) return 1;
  try {
    const TVMFFITypeInfo* object = RegisteredTypeInfo(object_type_index);
    if (object == nullptr || object_type_index < kTVMFFIStaticObjectBegin) return 0;
    if (target_type_index == kTVMFFIObject) return 1;
    const TVMFFITypeInfo* target = RegisteredTypeInfo(target_type_index);
    if (target == nullptr) return 0;
    int32_t depth = target->type_depth;
    return object->type_depth > depth &&
                   object->FFIJIT_TYPE_ANCESTORS[depth]->type_index == target_type_index
               ? 1
               : 0;
  } catch (...) {  // the registry could not be read: not an instance
    return 0;
  }
}

int FFIJITTypeIndexToKey(int32_t type_index, TVMFFIAny* out) {
  return GuardCBoundary([&] {
    details::RequireNonNull(out, "FFIJITTypeIndexToKey", "out");
    std::string key = TypeIndexToKey(type_index);
    TVMFFIByteArray bytes{key.data(), key.size()};
    if (TVMFFIStringFromByteArray(&bytes, out) != 0) throw Error::MoveFromRaised();
  });
}

}  // extern "C"
