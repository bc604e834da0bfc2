// The dataclass operations of TVM FFI v0.1.13's extra C++ API (include/tvm/ffi/extra/dataclass.h):
// `ReprPrint`, `RecursiveHash`, `RecursiveEq/Lt/Le/Gt/Ge` and `DeepCopy`, exported under their
// Itanium names, and the globals `ffi.ReprPrint`, `ffi.RecursiveHash`, `ffi.RecursiveEq/Lt/Le/Gt/
// Ge` and `ffi.DeepCopy`. e98b94e1 has none of them (FFIJIT_TVM_FFI_HAS_DATACLASS_API).
//
// Semantics (those of v0.1.13's src/ffi/extra/dataclass.cc, reimplemented recursively here):
// - ReprPrint: None, True/False, ints, floats (ostream default format), dtypes, devices
//   ("cuda:0"); strings Python-escaped in double quotes, bytes as b"..."; Array "(a, b)" ("(a,)"
//   for one element), List "[a, b]", Map/Dict "{k: v}"; Shape "Shape(1, 2)"; Tensor
//   "float32[2, 3]@cpu:0"; an `__ffi_repr__` type attribute (self, repr_fn) -> str; any other
//   object `type_key(field=value, ...)` over its fields without the ReprOff flag (a name repeated
//   in a subclass is printed once), or just `type_key` when it has none (functions, errors).
//   A value already printed prints the same again; one still being printed prints "...".
//   TVM_FFI_REPR_WITH_ADDR=1 appends "@0x<address>" to objects, as upstream does.
// - RecursiveEq/compare: three-way over the same structure; strings and bytes compare in any form
//   by content; values of different types are unequal (and a TypeError when ordering); NaN equals
//   NaN only for equality; Maps/Dicts compare entry by entry and cannot be ordered; sequences
//   lexicographically then by length; objects field by field (without CompareOff) or through the
//   `__ffi_eq__` / `__ffi_compare__` type attributes (lhs, rhs, callback); a pair met again while
//   being compared is equal for Eq and a ValueError when ordering.
// - RecursiveHash: consistent with RecursiveEq, with TVM FFI's stable hash combine, so the numbers
//   match v0.1.13's; `__ffi_hash__` (self, hash_fn) -> int replaces the field walk, and a type
//   with `__ffi_eq__` or `__ffi_compare__` but no `__ffi_hash__` is a ValueError.
// - DeepCopy: POD values, strings, bytes and shapes are returned as they are; Arrays, Maps (and
//   Lists/Dicts, through the ffi.List* / ffi.Dict* globals when registered) are copied with their
//   elements; other objects need the `__ffi_shallow_copy__` type attribute (self) -> copy, after
//   which each field holding a copied value is set again. Shared and cyclic references are kept
//   shared in the copy.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../container_internal.h"
#include "../cxx_abi/shims.h"
#include "../hashing.h"
#include "../internal.h"
#include "../reflected.h"
#include "../string_internal.h"
#include "ffijit/c_ext.h"
#include "ffijit/container.h"
#include "ffijit/dtype.h"
#include "ffijit/function.h"
#include "ffijit/registry.h"

#if FFIJIT_TVM_FFI_HAS_DATACLASS_API

namespace ffijit {
namespace {

using details::IsBytesForm;
using details::IsStrForm;
using internal::ForEachField;
using internal::HashBytes;
using internal::HashCombine;
using internal::ReadField;
using internal::TypeKeyHash;
using internal::TypeKeyOf;

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

TVMFFIAny ViewOf(TVMFFIObject* obj) {
  TVMFFIAny view{};
  view.type_index = obj->type_index;
  view.v_obj = obj;
  return view;
}

bool IsObject(const TVMFFIAny& v) {
  return v.type_index >= kTVMFFIStaticObjectBegin && v.v_obj != nullptr;
}
bool IsSequence(int32_t type_index) {
  return type_index == kTVMFFIArray || type_index == kTVMFFIList;
}
bool IsMapLike(int32_t type_index) {
  return type_index == kTVMFFIMap || type_index == kTVMFFIDict;
}

// Array and List share the element store (TVMFFISeqCell) at +24.
const FFIJITArrayCell& SeqCell(TVMFFIObject* obj) {
  return *reinterpret_cast<const FFIJITArrayCell*>(obj + 1);
}

std::vector<std::pair<TVMFFIAny, TVMFFIAny>> MapEntries(TVMFFIObject* map) {
  std::vector<std::pair<TVMFFIAny, TVMFFIAny>> entries;
  internal::MapForEach(
      map, [&](const TVMFFIAny& key, const TVMFFIAny& value) { entries.emplace_back(key, value); });
  return entries;
}

const TVMFFIAny* MapFind(TVMFFIObject* map, const TVMFFIAny& key) {
  const TVMFFIAny* value = nullptr;
  CheckCall(FFIJITMapGet(map, &key, &value));
  return value;
}

std::string_view TextOf(const TVMFFIAny& v) {
  std::string_view text;
  internal::ViewBytes(v, &text);
  return text;
}

std::string TypeKeyOfIndex(int32_t type_index) {
  return TypeIndexToKey(type_index);
}

// The value of `type_index`'s entry in the type attribute column `name` (a view), or None.
TVMFFIAny TypeAttr(const char* name, int32_t type_index) {
  TVMFFIByteArray key{name, std::strlen(name)};
  const TVMFFITypeAttrColumn* column = TVMFFIGetTypeAttrColumn(&key);
  if (column == nullptr || type_index < column->begin_index ||
      type_index - column->begin_index >= column->size) {
    return TVMFFIAny{};
  }
  return column->data[type_index - column->begin_index];
}

// The Function in a type attribute column for the type, or nullopt; a TypeError for a non-function.
std::optional<Function> TypeAttrHook(const char* name, int32_t type_index) {
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

// Writes `value` into `field` of `obj` through the field's setter (a C setter or, with
// kTVMFFIFieldFlagBitSetterIsFunctionObj, a Function taking the field address and the value).
void WriteField(TVMFFIObject* obj, const TVMFFIFieldInfo& field, const TVMFFIAny& value) {
  void* address = reinterpret_cast<char*>(obj) + field.offset;
  const std::string name(field.name.data, field.name.size);
  if (field.setter == nullptr) {
    throw Error("TypeError", "field `" + name + "` of `" + TypeKeyOfIndex(obj->type_index) +
                                 "` is read-only, so the copy cannot refer to the copied value");
  }
  if (field.flags & kTVMFFIFieldFlagBitSetterIsFunctionObj) {
    TVMFFIAny args[2] = {TVMFFIAny{}, value};
    args[0].type_index = kTVMFFIOpaquePtr;
    args[0].v_ptr = address;
    TVMFFIAny result{};
    CheckCall(TVMFFIFunctionCall(field.setter, args, 2, &result));
    internal::ReleaseAny(&result);
    return;
  }
  CheckCall(reinterpret_cast<TVMFFIFieldSetter>(field.setter)(address, &value));
}

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

// ---- Repr ----

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

// ---- Hash ----

uint64_t HashPod(const TVMFFIAny& v) {
  const auto ti = static_cast<uint64_t>(v.type_index);
  switch (v.type_index) {
    case kTVMFFIBool:
      return HashCombine(ti, v.v_int64 != 0 ? 1 : 0);
    case kTVMFFIFloat: {
      double value = v.v_float64;
      if (std::isnan(value)) value = std::numeric_limits<double>::quiet_NaN();
      if (value == 0.0) value = 0.0;  // -0.0 hashes like 0.0 (they compare equal)
      uint64_t bits = 0;
      std::memcpy(&bits, &value, sizeof bits);
      return HashCombine(ti, bits);
    }
    case kTVMFFIDataType: {
      uint64_t h = HashCombine(ti, v.v_dtype.code);
      h = HashCombine(h, v.v_dtype.bits);
      return HashCombine(h, v.v_dtype.lanes);
    }
    case kTVMFFIDevice: {
      uint64_t h = HashCombine(ti, static_cast<uint64_t>(v.v_device.device_type));
      return HashCombine(h, static_cast<uint64_t>(static_cast<int64_t>(v.v_device.device_id)));
    }
    default:
      return HashCombine(ti, v.v_uint64);
  }
}

class RecursiveHasher {
 public:
  uint64_t Hash(const TVMFFIAny& v) {
    if (v.type_index == kTVMFFINone) return HashCombine(0, 0);
    if (IsStrForm(v.type_index)) return HashCombine(kTVMFFIStr, HashBytes(TextOf(v)));
    if (IsBytesForm(v.type_index)) return HashCombine(kTVMFFIBytes, HashBytes(TextOf(v)));
    if (v.type_index < kTVMFFIStaticObjectBegin) return HashPod(v);
    if (v.v_obj == nullptr) return HashCombine(0, 0);
    TVMFFIObject* obj = v.v_obj;
    if (auto memo = memo_.find(obj); memo != memo_.end()) return memo->second;
    // A cycle back to an object being hashed contributes its type alone.
    if (on_stack_.count(obj) != 0) return TypeKeyHash(obj->type_index);
    DepthGuard guard(&depth_, "RecursiveHash");
    on_stack_.insert(obj);
    const uint64_t h = HashObject(obj);
    on_stack_.erase(obj);
    memo_[obj] = h;
    keep_.push_back(ObjectPtr<>::Borrow(obj));
    return h;
  }

 private:
  uint64_t HashObject(TVMFFIObject* obj) {
    const int32_t type_index = obj->type_index;
    const uint64_t type_hash = TypeKeyHash(type_index);
    if (type_index == kTVMFFIShape) {
      const auto& cell = *reinterpret_cast<const TVMFFIShapeCell*>(obj + 1);
      uint64_t h = HashCombine(type_hash, cell.size);
      for (size_t i = 0; i < cell.size; ++i)
        h = HashCombine(h, static_cast<uint64_t>(cell.data[i]));
      return h;
    }
    if (std::optional<Function> hook = TypeAttrHook("__ffi_hash__", type_index)) {
      Function hash_fn = Function::FromPacked([this](const AnyView* args, int32_t n, Any* result) {
        if (n != 1) {
          throw Error("TypeError", "the __ffi_hash__ callback takes one value, got " +
                                       std::to_string(n) + " arguments");
        }
        *result = Any(static_cast<int64_t>(Hash(args[0].raw())));
      });
      Any out = (*hook)(AnyView(ViewOf(obj)), hash_fn);
      if (out.type_index() != kTVMFFIInt) {
        throw Error("TypeError", "__ffi_hash__ of `" + TypeKeyOfIndex(type_index) +
                                     "` must return an int, not `" + out.type_name() + "`");
      }
      return out.raw().v_uint64;
    }
    if (type_index >= kTVMFFIStaticObjectEnd &&
        (TypeAttr("__ffi_eq__", type_index).type_index != kTVMFFINone ||
         TypeAttr("__ffi_compare__", type_index).type_index != kTVMFFINone)) {
      throw Error("ValueError", "RecursiveHash: type '" + TypeKeyOfIndex(type_index) +
                                    "' defines __ffi_eq__ or __ffi_compare__ but not __ffi_hash__. "
                                    "Add a __ffi_hash__ hook to maintain the invariant "
                                    "RecursiveEq(a,b) => RecursiveHash(a)==RecursiveHash(b).");
    }
    if (IsSequence(type_index)) {
      const FFIJITArrayCell& cell = SeqCell(obj);
      uint64_t h = HashCombine(type_hash, static_cast<uint64_t>(cell.size));
      for (int64_t i = 0; i < cell.size; ++i) {
        h = HashCombine(h, HashCombine(Hash(cell.data[i]), static_cast<uint64_t>(i)));
      }
      return h;
    }
    if (IsMapLike(type_index)) {
      const auto entries = MapEntries(obj);
      uint64_t h = HashCombine(type_hash, entries.size());
      // Sorted entry hashes: the result does not depend on the map's order.
      std::vector<uint64_t> entry_hashes;
      entry_hashes.reserve(entries.size());
      for (const auto& [key, value] : entries) {
        const uint64_t key_hash = Hash(key);
        entry_hashes.push_back(HashCombine(key_hash, Hash(value)));
      }
      std::sort(entry_hashes.begin(), entry_hashes.end());
      for (uint64_t entry : entry_hashes) h = HashCombine(h, entry);
      return h;
    }
    uint64_t h = type_hash;
    ForEachFieldOf(obj, kTVMFFIFieldFlagBitMaskHashOff | kTVMFFIFieldFlagBitMaskCompareOff,
                   [&](const TVMFFIFieldInfo& field) {
                     Any value = ReadField(obj, field);
                     h = HashCombine(h, Hash(value.raw()));
                   });
    return h;
  }

  int depth_ = 0;
  std::unordered_set<TVMFFIObject*> on_stack_;
  std::unordered_map<TVMFFIObject*, uint64_t> memo_;
  std::vector<ObjectPtr<>> keep_;  // memoized objects stay alive while their addresses are keys
};

// ---- Compare ----

int32_t Sign(int64_t v) {
  return v < 0 ? -1 : (v > 0 ? 1 : 0);
}

int32_t CompareText(std::string_view a, std::string_view b) {
  return Sign(a.compare(b));
}

struct PairHash {
  size_t operator()(const std::pair<TVMFFIObject*, TVMFFIObject*>& p) const noexcept {
    const auto a = reinterpret_cast<uintptr_t>(p.first);
    const auto b = reinterpret_cast<uintptr_t>(p.second);
    return a ^ (b * 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
  }
};

class RecursiveComparer {
 public:
  explicit RecursiveComparer(bool eq_only) : eq_only_(eq_only) {}

  // -1, 0 or 1.
  int32_t Compare(const TVMFFIAny& l, const TVMFFIAny& r) {
    const int32_t lt = l.type_index, rt = r.type_index;
    if (lt == kTVMFFINone || rt == kTVMFFINone) {
      return lt == rt ? 0 : (lt == kTVMFFINone ? -1 : 1);
    }
    if ((IsStrForm(lt) && IsStrForm(rt)) || (IsBytesForm(lt) && IsBytesForm(rt))) {
      return CompareText(TextOf(l), TextOf(r));
    }
    if (lt != rt) {
      return Unordered("Cannot compare values of different types: " + TypeKeyOfIndex(lt) + " vs " +
                       TypeKeyOfIndex(rt));
    }
    if (lt < kTVMFFIStaticObjectBegin) return ComparePod(l, r);
    if (l.v_obj == r.v_obj) return 0;
    if (l.v_obj == nullptr) return -1;
    if (r.v_obj == nullptr) return 1;
    if (lt == kTVMFFIShape) return CompareShape(l.v_obj, r.v_obj);
    const std::pair<TVMFFIObject*, TVMFFIObject*> pair(l.v_obj, r.v_obj);
    if (on_stack_.count(pair) != 0) {
      if (eq_only_) return 0;
      throw Error("ValueError", "RecursiveCompare: cyclic reference detected in ordering");
    }
    DepthGuard guard(&depth_, "RecursiveCompare");
    on_stack_.insert(pair);
    struct Pop {
      RecursiveComparer* self;
      std::pair<TVMFFIObject*, TVMFFIObject*> pair;
      ~Pop() { self->on_stack_.erase(pair); }
    } pop{this, pair};
    return CompareObjects(l.v_obj, r.v_obj);
  }

 private:
  // The result for values that have no order: unequal for Eq, else a TypeError.
  int32_t Unordered(const std::string& message) {
    if (eq_only_) return 1;
    throw Error("TypeError", message);
  }

  int32_t ComparePod(const TVMFFIAny& l, const TVMFFIAny& r) {
    switch (l.type_index) {
      case kTVMFFIBool:
        return Sign(int64_t{l.v_int64 != 0} - int64_t{r.v_int64 != 0});
      case kTVMFFIInt:
        return l.v_int64 < r.v_int64 ? -1 : (l.v_int64 > r.v_int64 ? 1 : 0);
      case kTVMFFIFloat: {
        const double a = l.v_float64, b = r.v_float64;
        if (std::isnan(a) || std::isnan(b)) {
          if (eq_only_) return std::isnan(a) && std::isnan(b) ? 0 : 1;
          throw Error("TypeError", "Cannot order NaN values");
        }
        return a < b ? -1 : (a > b ? 1 : 0);
      }
      case kTVMFFIDataType: {
        const DLDataType a = l.v_dtype, b = r.v_dtype;
        if (a.code != b.code) return a.code < b.code ? -1 : 1;
        if (a.bits != b.bits) return a.bits < b.bits ? -1 : 1;
        if (a.lanes != b.lanes) return a.lanes < b.lanes ? -1 : 1;
        return 0;
      }
      case kTVMFFIDevice: {
        const DLDevice a = l.v_device, b = r.v_device;
        if (a.device_type != b.device_type) return a.device_type < b.device_type ? -1 : 1;
        if (a.device_id != b.device_id) return a.device_id < b.device_id ? -1 : 1;
        return 0;
      }
      default:
        if (l.zero_padding == r.zero_padding && l.v_int64 == r.v_int64) return 0;
        return Unordered("Cannot order values of type " + TypeKeyOfIndex(l.type_index));
    }
  }

  static int32_t CompareShape(TVMFFIObject* l, TVMFFIObject* r) {
    const auto& a = *reinterpret_cast<const TVMFFIShapeCell*>(l + 1);
    const auto& b = *reinterpret_cast<const TVMFFIShapeCell*>(r + 1);
    for (size_t i = 0; i < std::min(a.size, b.size); ++i) {
      if (a.data[i] != b.data[i]) return a.data[i] < b.data[i] ? -1 : 1;
    }
    return a.size < b.size ? -1 : (a.size > b.size ? 1 : 0);
  }

  Function Callback(bool as_bool) {
    return Function::FromPacked([this, as_bool](const AnyView* args, int32_t n, Any* result) {
      if (n != 2) {
        throw Error("TypeError", "the comparison callback takes (lhs, rhs), got " +
                                     std::to_string(n) + " arguments");
      }
      const int32_t cmp = Compare(args[0].raw(), args[1].raw());
      if (as_bool) {
        *result = Any(cmp == 0);
      } else {
        *result = Any(static_cast<int64_t>(cmp));
      }
    });
  }

  // The result of a custom hook, or nullopt when the type has none that applies.
  std::optional<int32_t> CustomHook(TVMFFIObject* l, TVMFFIObject* r) {
    const int32_t type_index = l->type_index;
    if (eq_only_) {
      if (std::optional<Function> eq = TypeAttrHook("__ffi_eq__", type_index)) {
        return (*eq)(AnyView(ViewOf(l)), AnyView(ViewOf(r)), Callback(true)).cast<bool>() ? 0 : 1;
      }
    }
    if (std::optional<Function> cmp = TypeAttrHook("__ffi_compare__", type_index)) {
      Any out = (*cmp)(AnyView(ViewOf(l)), AnyView(ViewOf(r)), Callback(false));
      return Sign(out.cast<int64_t>());
    }
    return std::nullopt;
  }

  int32_t CompareObjects(TVMFFIObject* l, TVMFFIObject* r) {
    const int32_t type_index = l->type_index;
    if (type_index >= kTVMFFIStaticObjectEnd) {
      if (std::optional<int32_t> hooked = CustomHook(l, r)) return *hooked;
    }
    if (IsSequence(type_index)) {
      const FFIJITArrayCell &a = SeqCell(l), &b = SeqCell(r);
      for (int64_t i = 0; i < std::min(a.size, b.size); ++i) {
        if (int32_t cmp = Compare(a.data[i], b.data[i])) return cmp;
      }
      return a.size < b.size ? -1 : (a.size > b.size ? 1 : 0);
    }
    if (IsMapLike(type_index)) {
      const auto entries = MapEntries(l);
      if (static_cast<int64_t>(entries.size()) != static_cast<int64_t>(MapEntries(r).size())) {
        return Unordered("Cannot order Map/Dict values");
      }
      for (const auto& [key, value] : entries) {
        const TVMFFIAny* other = MapFind(r, key);
        if (other == nullptr) return Unordered("Cannot order Map/Dict values");
        if (Compare(value, *other) != 0) return Unordered("Cannot order Map/Dict values");
      }
      return 0;
    }
    if (type_index >= kTVMFFIStaticObjectEnd && r->type_index != type_index) {
      return Unordered("Cannot compare objects of different types: " + TypeKeyOfIndex(type_index) +
                       " vs " + TypeKeyOfIndex(r->type_index));
    }
    int32_t result = 0;
    const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
    if (info == nullptr) return 0;
    ForEachField(*info, [&](const TVMFFIFieldInfo& field) {
      if (field.flags & kTVMFFIFieldFlagBitMaskCompareOff) return false;
      Any a = ReadField(l, field), b = ReadField(r, field);
      result = Compare(a.raw(), b.raw());
      return result != 0;
    });
    return result;
  }

  bool eq_only_;
  int depth_ = 0;
  std::unordered_set<std::pair<TVMFFIObject*, TVMFFIObject*>, PairHash> on_stack_;
};

// ---- Deep copy ----

bool SameValue(const TVMFFIAny& a, const TVMFFIAny& b) {
  if (a.type_index >= kTVMFFIStaticObjectBegin || b.type_index >= kTVMFFIStaticObjectBegin) {
    return a.type_index == b.type_index && a.v_obj == b.v_obj;
  }
  return a.type_index == b.type_index && a.zero_padding == b.zero_padding && a.v_int64 == b.v_int64;
}

Function RequireGlobal(const char* name, const char* why) {
  std::optional<Function> func = GetGlobalFunction(name);
  if (!func) {
    throw Error("RuntimeError", std::string("DeepCopy: ") + why + " needs the global `" + name +
                                    "`, which is not registered");
  }
  return *func;
}

class DeepCopier {
 public:
  Any Copy(const TVMFFIAny& v) {
    Any result = CopyValue(v);
    if (has_deferred_) FixDeferred();
    return result;
  }

 private:
  Any CopyValue(const TVMFFIAny& v) {
    if (!IsObject(v)) return Any(AnyView(v));
    TVMFFIObject* obj = v.v_obj;
    if (auto done = copies_.find(obj); done != copies_.end()) return done->second;
    if (in_progress_.count(obj) != 0) {
      // An immutable container reached again through itself: refer to the original for now and
      // fix the mutable holders once every copy exists.
      has_deferred_ = true;
      return Any(AnyView(v));
    }
    const int32_t type_index = obj->type_index;
    if (type_index == kTVMFFIStr || type_index == kTVMFFIBytes || type_index == kTVMFFIShape) {
      return Any(AnyView(v));
    }
    DepthGuard guard(&depth_, "DeepCopy");
    keep_.push_back(ObjectPtr<>::Borrow(obj));
    switch (type_index) {
      case kTVMFFIArray:
        return CopyArray(obj);
      case kTVMFFIMap:
        return CopyMap(obj);
      case kTVMFFIList:
        return CopyList(obj);
      case kTVMFFIDict:
        return CopyDict(obj);
      default:
        return CopyObject(obj);
    }
  }

  Any CopyArray(TVMFFIObject* obj) {
    in_progress_.insert(obj);
    std::vector<Any> items;
    const FFIJITArrayCell& cell = SeqCell(obj);
    for (int64_t i = 0; i < cell.size; ++i) items.push_back(CopyValue(SeqCell(obj).data[i]));
    in_progress_.erase(obj);
    std::vector<TVMFFIAny> views;
    for (const Any& item : items) views.push_back(item.raw());
    TVMFFIObjectHandle out = nullptr;
    CheckCall(FFIJITArrayCreate(views.data(), static_cast<int64_t>(views.size()), &out));
    Any copy = Any::Adopt(ViewOf(static_cast<TVMFFIObject*>(out)));
    copies_[obj] = copy;
    return copy;
  }

  Any CopyMap(TVMFFIObject* obj) {
    in_progress_.insert(obj);
    std::vector<Any> keys, values;
    for (const auto& [key, value] : MapEntries(obj)) {
      keys.push_back(CopyValue(key));
      values.push_back(CopyValue(value));
    }
    in_progress_.erase(obj);
    std::vector<TVMFFIAny> key_views, value_views;
    for (size_t i = 0; i < keys.size(); ++i) {
      key_views.push_back(keys[i].raw());
      value_views.push_back(values[i].raw());
    }
    TVMFFIObjectHandle out = nullptr;
    CheckCall(FFIJITMapCreate(key_views.data(), value_views.data(),
                              static_cast<int64_t>(keys.size()), &out));
    Any copy = Any::Adopt(ViewOf(static_cast<TVMFFIObject*>(out)));
    copies_[obj] = copy;
    return copy;
  }

  // Mutable containers are registered before their elements are copied, so cycles through them
  // close on the copy.
  Any CopyList(TVMFFIObject* obj) {
    Any copy = RequireGlobal("ffi.List", "copying an ffi.List")();
    copies_[obj] = copy;
    Function append = RequireGlobal("ffi.ListAppend", "copying an ffi.List");
    for (int64_t i = 0; i < SeqCell(obj).size; ++i) {
      Any item = CopyValue(SeqCell(obj).data[i]);
      append(copy, item);
    }
    return copy;
  }

  Any CopyDict(TVMFFIObject* obj) {
    Any copy = RequireGlobal("ffi.Dict", "copying an ffi.Dict")();
    copies_[obj] = copy;
    Function set_item = RequireGlobal("ffi.DictSetItem", "copying an ffi.Dict");
    for (const auto& [key, value] : MapEntries(obj)) {
      Any k = CopyValue(key);
      Any v = CopyValue(value);
      set_item(copy, k, v);
    }
    return copy;
  }

  Any CopyObject(TVMFFIObject* obj) {
    const int32_t type_index = obj->type_index;
    std::optional<Function> shallow_copy = TypeAttrHook("__ffi_shallow_copy__", type_index);
    if (!shallow_copy) {
      throw Error("InternalError", "Cannot deep copy object of type \"" +
                                       TypeKeyOfIndex(type_index) +
                                       "\" because it is not copy-constructible");
    }
    Any copy = (*shallow_copy)(AnyView(ViewOf(obj)));
    if (!IsObject(copy.raw())) {
      throw Error("TypeError", "__ffi_shallow_copy__ of `" + TypeKeyOfIndex(type_index) +
                                   "` returned `" + copy.type_name() + "`, not an object");
    }
    copies_[obj] = copy;
    ForEachFieldOf(obj, 0, [&](const TVMFFIFieldInfo& field) {
      Any original = ReadField(obj, field);
      Any resolved = CopyValue(original.raw());
      if (!SameValue(original.raw(), resolved.raw())) {
        WriteField(copy.raw().v_obj, field, resolved.raw());
      }
    });
    return copy;
  }

  // Replaces, in the copied Lists and objects, references to originals that have copies.
  void FixDeferred() {
    std::optional<Function> list_set = GetGlobalFunction("ffi.ListSetItem");
    std::optional<Function> dict_set = GetGlobalFunction("ffi.DictSetItem");
    auto copy_of = [&](const TVMFFIAny& v) -> const Any* {
      if (!IsObject(v)) return nullptr;
      auto it = copies_.find(v.v_obj);
      if (it == copies_.end() || SameValue(it->second.raw(), v)) return nullptr;
      return &it->second;
    };
    for (const auto& entry : copies_) {
      TVMFFIObject* copy = entry.second.raw().v_obj;
      const int32_t type_index = copy->type_index;
      if (type_index == kTVMFFIList && list_set) {
        for (int64_t i = 0; i < SeqCell(copy).size; ++i) {
          if (const Any* fixed = copy_of(SeqCell(copy).data[i])) {
            (*list_set)(entry.second, i, *fixed);
          }
        }
      } else if (type_index == kTVMFFIDict && dict_set) {
        for (const auto& [key, value] : MapEntries(copy)) {
          if (const Any* fixed = copy_of(value)) (*dict_set)(entry.second, AnyView(key), *fixed);
        }
      } else if (type_index >= kTVMFFIStaticObjectEnd) {
        ForEachFieldOf(copy, 0, [&](const TVMFFIFieldInfo& field) {
          Any value = ReadField(copy, field);
          if (const Any* fixed = copy_of(value.raw())) WriteField(copy, field, fixed->raw());
        });
      }
    }
  }

  int depth_ = 0;
  bool has_deferred_ = false;
  std::unordered_map<TVMFFIObject*, Any> copies_;
  std::unordered_set<TVMFFIObject*> in_progress_;
  std::vector<ObjectPtr<>> keep_;  // originals stay alive while their addresses are keys
};

// ---- Entry points and globals ----

std::string ReprOf(const TVMFFIAny& v) {
  return ReprPrinter().Repr(v);
}
int64_t RecursiveHashOf(const TVMFFIAny& v) {
  return static_cast<int64_t>(RecursiveHasher().Hash(v));
}
int32_t RecursiveCompare(const TVMFFIAny& l, const TVMFFIAny& r, bool eq_only) {
  return RecursiveComparer(eq_only).Compare(l, r);
}
Any DeepCopyOf(const TVMFFIAny& v) {
  return DeepCopier().Copy(v);
}

void RequireArgs(const char* name, int32_t num_args, int32_t expected) {
  if (num_args != expected) {
    throw Error("TypeError", std::string("Mismatched number of arguments when calling `") + name +
                                 "`: expected " + std::to_string(expected) + " but got " +
                                 std::to_string(num_args) + " arguments");
  }
}

void RegisterDataclassGlobals() {
  auto define = [](const char* name, Function::PackedBody body) {
    SetGlobalFunction(name, Function::FromPacked(std::move(body)), true);
  };
  define("ffi.ReprPrint", [](const AnyView* args, int32_t n, Any* result) {
    RequireArgs("ffi.ReprPrint", n, 1);
    *result = Any(ReprOf(args[0].raw()));
  });
  define("ffi.RecursiveHash", [](const AnyView* args, int32_t n, Any* result) {
    RequireArgs("ffi.RecursiveHash", n, 1);
    *result = Any(RecursiveHashOf(args[0].raw()));
  });
  define("ffi.DeepCopy", [](const AnyView* args, int32_t n, Any* result) {
    RequireArgs("ffi.DeepCopy", n, 1);
    *result = DeepCopyOf(args[0].raw());
  });
  struct Comparison {
    const char* name;
    bool eq_only;
    bool (*accept)(int32_t);
  };
  static const Comparison comparisons[] = {
      {"ffi.RecursiveEq", true, [](int32_t c) { return c == 0; }},
      {"ffi.RecursiveLt", false, [](int32_t c) { return c < 0; }},
      {"ffi.RecursiveLe", false, [](int32_t c) { return c <= 0; }},
      {"ffi.RecursiveGt", false, [](int32_t c) { return c > 0; }},
      {"ffi.RecursiveGe", false, [](int32_t c) { return c >= 0; }},
  };
  for (const Comparison& cmp : comparisons) {
    define(cmp.name, [&cmp](const AnyView* args, int32_t n, Any* result) {
      RequireArgs(cmp.name, n, 2);
      *result = Any(cmp.accept(RecursiveCompare(args[0].raw(), args[1].raw(), cmp.eq_only)));
    });
  }
}

// While the runtime loads; only allocation can fail, and that must not end the process.
__attribute__((constructor)) void RegisterDataclassGlobalsAtLoad() {
  RegisterAtLoad("the ffi.Recursive*/ReprPrint globals", RegisterDataclassGlobals);
}

}  // namespace
}  // namespace ffijit

namespace tvm {
namespace ffi {

using ffijit::internal::WithTvmErrors;

String ReprPrint(const Any& value) {
  return WithTvmErrors([&] { return String::From(ffijit::ReprOf(value.data_)); });
}

int64_t RecursiveHash(const Any& value) {
  return WithTvmErrors([&] { return ffijit::RecursiveHashOf(value.data_); });
}

bool RecursiveEq(const Any& lhs, const Any& rhs) {
  return WithTvmErrors([&] { return ffijit::RecursiveCompare(lhs.data_, rhs.data_, true) == 0; });
}
bool RecursiveLt(const Any& lhs, const Any& rhs) {
  return WithTvmErrors([&] { return ffijit::RecursiveCompare(lhs.data_, rhs.data_, false) < 0; });
}
bool RecursiveLe(const Any& lhs, const Any& rhs) {
  return WithTvmErrors([&] { return ffijit::RecursiveCompare(lhs.data_, rhs.data_, false) <= 0; });
}
bool RecursiveGt(const Any& lhs, const Any& rhs) {
  return WithTvmErrors([&] { return ffijit::RecursiveCompare(lhs.data_, rhs.data_, false) > 0; });
}
bool RecursiveGe(const Any& lhs, const Any& rhs) {
  return WithTvmErrors([&] { return ffijit::RecursiveCompare(lhs.data_, rhs.data_, false) >= 0; });
}

Any DeepCopy(const Any& value) {
  return WithTvmErrors([&] {
    Any result;
    result.data_ = ffijit::DeepCopyOf(value.data_).release();
    return result;
  });
}

}  // namespace ffi
}  // namespace tvm

#endif  // FFIJIT_TVM_FFI_HAS_DATACLASS_API
