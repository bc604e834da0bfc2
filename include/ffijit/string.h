// String and Bytes: owned byte strings, inline (SmallStr/SmallBytes) up to 7 bytes, heap beyond.
//
// Embedded NUL bytes are kept; data() is always NUL-terminated as well.
#ifndef FFIJIT_STRING_H_
#define FFIJIT_STRING_H_

#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "ffijit/object.h"

namespace ffijit {
namespace details {

// Shared implementation; kIsStr selects the Str/SmallStr or Bytes/SmallBytes type indices.
template <bool kIsStr>
class OwnedBytes {
 public:
  static constexpr int32_t kSmallIndex = kIsStr ? kTVMFFISmallStr : kTVMFFISmallBytes;
  static constexpr int32_t kHeapIndex = kIsStr ? kTVMFFIStr : kTVMFFIBytes;
  static constexpr size_t kMaxInline = 7;

  OwnedBytes() noexcept : data_{} { data_.type_index = kSmallIndex; }
  OwnedBytes(const char* text) : OwnedBytes(std::string_view(text ? text : "")) {}  // NOLINT
  OwnedBytes(const std::string& text) : OwnedBytes(std::string_view(text)) {}       // NOLINT
  OwnedBytes(std::string_view text) : data_{} {                                     // NOLINT
    if (text.size() <= kMaxInline) {
      // The no-allocation path: the bytes travel inside the 16-byte Any.
      data_.type_index = kSmallIndex;
      data_.small_str_len = static_cast<uint32_t>(text.size());
      if (!text.empty()) std::memcpy(data_.v_bytes, text.data(), text.size());
      return;
    }
    TVMFFIByteArray bytes{text.data(), text.size()};
    CheckCall(kIsStr ? TVMFFIStringFromByteArray(&bytes, &data_)
                     : TVMFFIBytesFromByteArray(&bytes, &data_));
  }
  OwnedBytes(const OwnedBytes& other) noexcept : data_(other.data_) {
    if (is_heap()) IncRef(data_.v_obj);
  }
  OwnedBytes(OwnedBytes&& other) noexcept : data_(other.data_) { other.data_ = OwnedBytes().data_; }
  OwnedBytes& operator=(OwnedBytes other) noexcept {
    std::swap(data_, other.data_);
    return *this;
  }
  ~OwnedBytes() {
    if (is_heap()) DecRef(data_.v_obj);
  }

  // Adopts an owned Any that must hold this kind's small or heap form.
  static OwnedBytes AdoptAny(TVMFFIAny owned) noexcept {
    OwnedBytes result;
    result.data_ = owned;
    return result;
  }

  const char* data() const noexcept {
    return is_heap() ? reinterpret_cast<const FFIJITBytesCell*>(data_.v_obj + 1)->data
                     : data_.v_bytes;
  }
  size_t size() const noexcept {
    return is_heap() ? reinterpret_cast<const FFIJITBytesCell*>(data_.v_obj + 1)->size
                     : data_.small_str_len;
  }
  bool empty() const noexcept { return size() == 0; }
  const char* c_str() const noexcept { return data(); }
  std::string_view view() const noexcept { return std::string_view(data(), size()); }
  std::string str() const { return std::string(data(), size()); }
  operator std::string_view() const noexcept { return view(); }  // NOLINT
  // True when the bytes live inside the Any (no heap object).
  bool is_inline() const noexcept { return !is_heap(); }
  // The owned Any (borrowed view of it).
  const TVMFFIAny& any() const noexcept { return data_; }
  // Gives the Any (and its reference) to the caller.
  TVMFFIAny release() noexcept { return std::exchange(data_, OwnedBytes().data_); }

  friend bool operator==(const OwnedBytes& a, const OwnedBytes& b) noexcept {
    return a.view() == b.view();
  }
  friend bool operator!=(const OwnedBytes& a, const OwnedBytes& b) noexcept { return !(a == b); }
  friend bool operator==(const OwnedBytes& a, std::string_view b) noexcept { return a.view() == b; }
  friend bool operator!=(const OwnedBytes& a, std::string_view b) noexcept { return a.view() != b; }
  friend bool operator==(const OwnedBytes& a, const char* b) noexcept {
    return a.view() == std::string_view(b ? b : "");
  }
  friend bool operator!=(const OwnedBytes& a, const char* b) noexcept { return !(a == b); }

 private:
  bool is_heap() const noexcept { return data_.type_index == kHeapIndex; }
  TVMFFIAny data_;
};

}  // namespace details

using String = details::OwnedBytes<true>;
using Bytes = details::OwnedBytes<false>;

}  // namespace ffijit

#endif  // FFIJIT_STRING_H_
