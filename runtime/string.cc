// Strings and bytes: Str/Bytes objects, the inline SmallStr/SmallBytes form, and view->owned
// copies.
#include <cstdlib>
#include <cstring>

#include "ffijit/object.h"
#include "internal.h"
#include "object_internal.h"
#include "string_internal.h"

namespace ffijit::internal {
namespace {

void BytesDeleter(void* self, int flags) {
  // The characters live inline: nothing to destroy before the memory goes.
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(self);
}

}  // namespace

TVMFFIObject* NewBytesObject(int32_t type_index, const char* data, size_t size) {
  size_t header = sizeof(TVMFFIObject) + sizeof(FFIJITBytesCell);
  if (size > SIZE_MAX - header - 1) throw Error("ValueError", "string too large");
  // The characters and their NUL are written below: only the header and cell need zeroing.
  TVMFFIObject* obj = AllocObjectZeroing(header + size + 1, header, type_index, BytesDeleter);
  auto* cell = reinterpret_cast<FFIJITBytesCell*>(obj + 1);
  char* chars = reinterpret_cast<char*>(cell + 1);
  if (size) std::memcpy(chars, data, size);
  chars[size] = '\0';
  cell->data = chars;
  cell->size = size;
  return obj;
}

void MakeOwnedBytes(bool is_str, const char* data, size_t size, TVMFFIAny* out) {
  TVMFFIAny result{};
  if (size <= 7) {
    result.type_index = is_str ? kTVMFFISmallStr : kTVMFFISmallBytes;
    result.small_str_len = static_cast<uint32_t>(size);
    // The bytes gathered in a register: a memcpy into `result` on the stack, read back whole,
    // stalled on store forwarding and cost more than the rest of the conversion.
    uint64_t bits = 0;
    for (size_t i = 0; i < size; ++i) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      const unsigned shift = 8 * static_cast<unsigned>(i);
#else
      const unsigned shift = 56 - 8 * static_cast<unsigned>(i);
#endif
      bits |= uint64_t{static_cast<unsigned char>(data[i])} << shift;
    }
    result.v_uint64 = bits;
  } else {
    result.type_index = is_str ? kTVMFFIStr : kTVMFFIBytes;
    result.v_obj = NewBytesObject(result.type_index, data, size);
  }
  *out = result;
}

bool ViewBytes(const TVMFFIAny& any, std::string_view* out) noexcept {
  switch (any.type_index) {
    case kTVMFFIRawStr:
      *out = any.v_c_str ? std::string_view(any.v_c_str) : std::string_view();
      return true;
    case kTVMFFISmallStr:
    case kTVMFFISmallBytes:
      *out = std::string_view(any.v_bytes, any.small_str_len);
      return true;
    case kTVMFFIByteArrayPtr: {
      const auto* bytes = static_cast<const TVMFFIByteArray*>(any.v_ptr);
      *out = bytes ? std::string_view(bytes->data, bytes->size) : std::string_view();
      return true;
    }
    case kTVMFFIStr:
    case kTVMFFIBytes: {
      const auto* cell = reinterpret_cast<const FFIJITBytesCell*>(any.v_obj + 1);
      *out = std::string_view(cell->data, cell->size);
      return true;
    }
    default:
      return false;
  }
}

void CopyToOwnedSlow(const TVMFFIAny& view, TVMFFIAny* out) {
  std::string_view chars;
  switch (view.type_index) {
    case kTVMFFIRawStr:
      if (view.v_c_str == nullptr) throw Error("ValueError", "RawStr view holds a NULL pointer");
      ViewBytes(view, &chars);
      MakeOwnedBytes(true, chars.data(), chars.size(), out);
      return;
    case kTVMFFIByteArrayPtr:
      if (view.v_ptr == nullptr) {
        throw Error("ValueError", "ByteArrayPtr view holds a NULL pointer");
      }
      ViewBytes(view, &chars);
      MakeOwnedBytes(false, chars.data(), chars.size(), out);
      return;
    case kTVMFFIObjectRValueRef: {
      // The view points at an object slot whose reference moves into the result.
      auto** slot = static_cast<TVMFFIObject**>(view.v_ptr);
      if (slot == nullptr) throw Error("ValueError", "ObjectRValueRef view holds a NULL slot");
      // TVM FFI's kind and text for a reference that was already taken.
      if (*slot == nullptr) throw Error("InternalError", "RValueRef already moved");
      TVMFFIAny result{};
      result.type_index = (*slot)->type_index;
      result.v_obj = *slot;
      *slot = nullptr;
      *out = result;
      return;
    }
    default:
      break;
  }
  if (view.type_index < kTVMFFINone ||
      (view.type_index > kTVMFFISmallBytes && view.type_index < kTVMFFIStaticObjectBegin)) {
    throw Error("TypeError", "unknown type index " + std::to_string(view.type_index));
  }
  details::RequireWellFormed(view, nullptr);
  if (view.type_index >= kTVMFFIStaticObjectBegin) details::IncRef(view.v_obj);
  *out = view;
}

}  // namespace ffijit::internal

using namespace ffijit;

extern "C" {

int TVMFFIStringFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(input, "TVMFFIStringFromByteArray", "input");
    internal::RequireNonNull(out, "TVMFFIStringFromByteArray", "out");
    if (input->data == nullptr && input->size != 0) {
      throw Error("ValueError", "TVMFFIStringFromByteArray: NULL data with nonzero size");
    }
    internal::MakeOwnedBytes(true, input->data, input->size, out);
  });
}

int TVMFFIBytesFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(input, "TVMFFIBytesFromByteArray", "input");
    internal::RequireNonNull(out, "TVMFFIBytesFromByteArray", "out");
    if (input->data == nullptr && input->size != 0) {
      throw Error("ValueError", "TVMFFIBytesFromByteArray: NULL data with nonzero size");
    }
    internal::MakeOwnedBytes(false, input->data, input->size, out);
  });
}

int TVMFFIAnyViewToOwnedAny(const TVMFFIAny* any_view, TVMFFIAny* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(any_view, "TVMFFIAnyViewToOwnedAny", "any_view");
    internal::RequireNonNull(out, "TVMFFIAnyViewToOwnedAny", "out");
    internal::CopyToOwned(*any_view, out);
  });
}

}  // extern "C"
