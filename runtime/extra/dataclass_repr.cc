// ReprPrint (semantics in dataclass.cc's file comment): Python's escaping of strings and bytes
// and the printer that walks a value, remembering what it printed. Each dataclass operation is a
// file of its own; they share only dataclass_common.h.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "../reflected.h"
#include "dataclass_common.h"
#include "ffijit/dtype.h"
#include "ffijit/function.h"

#if FFIJIT_TVM_FFI_HAS_DATACLASS_API

namespace ffijit {
namespace {

using details::IsBytesForm;
using details::IsStrForm;
using internal::DepthGuard;
using internal::ForEachFieldOf;
using internal::IsMapLike;
using internal::IsSequence;
using internal::MapEntries;
using internal::ReadField;
using internal::SeqCell;
using internal::TextOf;
using internal::TypeAttrHook;
using internal::TypeKeyOfIndex;
using internal::ViewOf;

bool ShowAddress() {
  const char* env = std::getenv("TVM_FFI_REPR_WITH_ADDR");
  return env != nullptr && std::string_view(env) == "1";
}

std::string AddressText(const void* obj) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%llx",
                static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(obj)));
  return buffer;
}

// The device as "cuda:0" (ffijit's device names); a type no name is known for as "unknown:N".
std::string DeviceText(DLDevice device) {
  try {
    return ffijit::DeviceToString(device);
  } catch (const ffijit::Error&) {
    return "unknown:" + std::to_string(device.device_id);
  }
}

void AppendHex(std::string* out, const char* prefix, uint32_t value, int digits) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%s%0*x", prefix, digits, value);
  out->append(buffer);
}

// Python's repr of a str: double quotes, C escapes, \xNN for control characters, \uXXXX /
// \UXXXXXXXX for well-formed UTF-8 sequences, \xNN for stray bytes; ANSI colour sequences
// (ESC [ digits/; m|K) keep their text after an escaped ESC.
std::string PyStringRepr(std::string_view s) {
  std::string out = "\"";
  const size_t n = s.size();
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  for (size_t i = 0; i < n;) {
    const unsigned char c = byte(i);
    const unsigned char d = i + 1 < n ? byte(i + 1) : 0;
    if (c == 0x1b && d == '[') {
      size_t j = i + 2;
      while (j < n && ((s[j] >= '0' && s[j] <= '9') || s[j] == ';')) ++j;
      if (j < n && (s[j] == 'm' || s[j] == 'K')) {
        out += "\\x1b[";
        out.append(s.substr(i + 2, j - i - 1));
        i = j + 1;
        continue;
      }
    }
    switch (c) {
      case '\n':
        out += "\\n";
        ++i;
        continue;
      case '\t':
        out += "\\t";
        ++i;
        continue;
      case '\r':
        out += "\\r";
        ++i;
        continue;
      case '\\':
        out += "\\\\";
        ++i;
        continue;
      case '"':
        out += "\\\"";
        ++i;
        continue;
      default:
        break;
    }
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) {
        AppendHex(&out, "\\x", c, 2);
      } else {
        out.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    auto continuation = [&](size_t k) { return k < n && (byte(k) & 0xC0) == 0x80; };
    if ((c & 0xE0) == 0xC0 && continuation(i + 1)) {
      AppendHex(&out, "\\u", ((c & 0x1Fu) << 6) | (d & 0x3Fu), 4);
      i += 2;
    } else if ((c & 0xF0) == 0xE0 && i + 2 < n && continuation(i + 1) && continuation(i + 2)) {
      AppendHex(&out, "\\u", ((c & 0x0Fu) << 12) | ((d & 0x3Fu) << 6) | (byte(i + 2) & 0x3Fu), 4);
      i += 3;
    } else if ((c & 0xF8) == 0xF0 && i + 3 < n && continuation(i + 1) && continuation(i + 2) &&
               continuation(i + 3)) {
      AppendHex(&out, "\\U",
                ((c & 0x07u) << 18) | ((d & 0x3Fu) << 12) | ((byte(i + 2) & 0x3Fu) << 6) |
                    (byte(i + 3) & 0x3Fu),
                8);
      i += 4;
    } else {
      AppendHex(&out, "\\x", c, 2);
      ++i;
    }
  }
  out += "\"";
  return out;
}

// b"..." with printable ASCII as it is and every other byte (and " and \) as \xNN.
std::string PyBytesRepr(std::string_view s) {
  std::string out = "b\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 32 && c < 127 && c != '"' && c != '\\') {
      out.push_back(ch);
    } else {
      AppendHex(&out, "\\x", c, 2);
    }
  }
  out += "\"";
  return out;
}

class ReprPrinter {
 public:
  std::string Repr(const TVMFFIAny& v) {
    switch (v.type_index) {
      case kTVMFFINone:
        return "None";
      case kTVMFFIBool:
        return v.v_int64 != 0 ? "True" : "False";
      case kTVMFFIInt:
        return std::to_string(v.v_int64);
      case kTVMFFIFloat: {
        std::ostringstream os;
        os << v.v_float64;
        return os.str();
      }
      case kTVMFFIDataType:
        return DataTypeToString(v.v_dtype);
      case kTVMFFIDevice:
        return DeviceText(v.v_device);
      default:
        break;
    }
    if (IsStrForm(v.type_index)) return PyStringRepr(TextOf(v));
    if (IsBytesForm(v.type_index)) return PyBytesRepr(TextOf(v));
    if (v.type_index < kTVMFFIStaticObjectBegin) return TypeKeyOfIndex(v.type_index);
    if (v.v_obj == nullptr) return "None";
    TVMFFIObject* obj = v.v_obj;
    if (auto done = cache_.find(obj); done != cache_.end()) return done->second;
    if (in_progress_.count(obj) != 0) return show_addr_ ? "...@" + AddressText(obj) : "...";
    DepthGuard guard(&depth_, "ReprPrint");
    in_progress_.insert(obj);
    std::string text = ReprObject(obj);
    in_progress_.erase(obj);
    cache_[obj] = text;
    return text;
  }

 private:
  std::string ReprObject(TVMFFIObject* obj) {
    const int32_t type_index = obj->type_index;
    const bool container = IsSequence(type_index) || IsMapLike(type_index);
    std::string suffix = show_addr_ && container ? "@" + AddressText(obj) : "";
    if (type_index == kTVMFFITensor) {
      const auto& t = *reinterpret_cast<const DLTensor*>(obj + 1);
      std::string text = DataTypeToString(t.dtype) + "[";
      for (int32_t i = 0; i < t.ndim; ++i) {
        if (i > 0) text += ", ";
        text += std::to_string(t.shape[i]);
      }
      text += "]@" + DeviceText(t.device);
      if (show_addr_) text += "@" + AddressText(obj);
      return text;
    }
    if (type_index == kTVMFFIShape) {
      const auto& cell = *reinterpret_cast<const TVMFFIShapeCell*>(obj + 1);
      std::string text = "Shape(";
      for (size_t i = 0; i < cell.size; ++i) {
        if (i > 0) text += ", ";
        text += std::to_string(cell.data[i]);
      }
      return text + ")";
    }
    if (std::optional<Function> hook = TypeAttrHook("__ffi_repr__", type_index)) {
      Function repr_fn = Function::FromPacked([this](const AnyView* args, int32_t n, Any* result) {
        if (n != 1) {
          throw Error("TypeError", "the __ffi_repr__ callback takes one value, got " +
                                       std::to_string(n) + " arguments");
        }
        *result = Any(Repr(args[0].raw()));
      });
      Any text = (*hook)(AnyView(ViewOf(obj)), repr_fn);
      if (!IsStrForm(text.type_index())) {
        throw Error("TypeError", "__ffi_repr__ of `" + TypeKeyOfIndex(type_index) +
                                     "` must return a str, not `" + text.type_name() + "`");
      }
      return std::string(TextOf(text.raw())) + suffix;
    }
    if (IsSequence(type_index)) {
      const FFIJITArrayCell& cell = SeqCell(obj);
      const bool tuple = type_index == kTVMFFIArray;
      std::string text = tuple ? "(" : "[";
      for (int64_t i = 0; i < cell.size; ++i) {
        if (i > 0) text += ", ";
        text += Repr(cell.data[i]);
      }
      if (tuple && cell.size == 1) text += ",";
      return text + (tuple ? ")" : "]") + suffix;
    }
    if (IsMapLike(type_index)) {
      std::string text = "{";
      bool first = true;
      for (const auto& [key, value] : MapEntries(obj)) {
        if (!first) text += ", ";
        first = false;
        text += Repr(key);
        text += ": ";
        text += Repr(value);
      }
      return text + "}" + suffix;
    }
    std::string header = TypeKeyOfIndex(type_index);
    if (show_addr_) header += "@" + AddressText(obj);
    std::string fields;
    std::unordered_set<std::string> seen;
    ForEachFieldOf(obj, kTVMFFIFieldFlagBitMaskReprOff, [&](const TVMFFIFieldInfo& field) {
      std::string name(field.name.data, field.name.size);
      Any value = ReadField(obj, field);
      std::string text = Repr(value.raw());
      if (!seen.insert(name).second) return;
      if (!fields.empty()) fields += ", ";
      fields += name + "=" + text;
    });
    if (seen.empty()) return header;
    return header + "(" + fields + ")";
  }

  bool show_addr_ = ShowAddress();
  int depth_ = 0;
  std::unordered_set<TVMFFIObject*> in_progress_;
  std::unordered_map<TVMFFIObject*, std::string> cache_;
};

}  // namespace

namespace internal {

std::string ReprOf(const TVMFFIAny& v) {
  return ReprPrinter().Repr(v);
}

}  // namespace internal
}  // namespace ffijit

#endif  // FFIJIT_TVM_FFI_HAS_DATACLASS_API
