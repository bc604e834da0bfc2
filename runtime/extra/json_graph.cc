// Object-graph serialization of values to and from JSON values, as TVM FFI's C++ API
// `ToJSONGraph(value, metadata)` / `FromJSONGraph(json)` and the globals `ffi.ToJSONGraph`,
// `ffi.ToJSONGraphString`, `ffi.FromJSONGraph`, `ffi.FromJSONGraphString` (apache/tvm-ffi
// e98b94e1, include/tvm/ffi/extra/serialization.h; the format facts from that version).
//
// The graph is {"root_index": i, "nodes": [...], "metadata": m (only when not None)}; each node is
// {"type": <type key>, "data": ...} and is written after the nodes it refers to. Equal POD values
// and equal strings share one node, objects are shared by identity. Data: bool/int/float as
// themselves, "DataType" as its string, "Device" as [type, id], "ffi.String" as the text,
// "ffi.Bytes" as base64, "ffi.Array" as the node indices of its items, "ffi.Map" as
// [key0, value0, key1, ...] indices, "ffi.Shape" as its integers. Any other object type is
// reflected: an enum singleton (v0.1.13) as its canonical index (the integer of an IntEnum, else
// the string), read back as the registered singleton; otherwise its `__data_to_json__` /
// `__data_from_json__` type attributes when set, else a JSON object of its fields
// (bool/int/float/DataType fields inline, others as node indices), read back through the type's
// creator and field setters (defaults for absent fields).
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "../container_internal.h"
#include "../cxx_abi/shims.h"
#include "../internal.h"
#include "../reflected.h"
#include "../string_internal.h"
#include "enum.h"
#include "ffijit/container.h"
#include "ffijit/dtype.h"
#include "ffijit/function.h"
#include "ffijit/registry.h"

namespace ffijit {
namespace {

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (uint32_t{static_cast<unsigned char>(bytes[i])} << 16) |
                 (uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8) |
                 static_cast<unsigned char>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kBase64[(v >> s) & 63];
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = uint32_t{static_cast<unsigned char>(bytes[i])} << 16;
    if (rest == 2) v |= uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8;
    out += kBase64[(v >> 18) & 63];
    out += kBase64[(v >> 12) & 63];
    out += rest == 2 ? kBase64[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) {
    throw Error("ValueError", "FromJSONGraph: base64 data length is not a multiple of 4");
  }
  std::string out;
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t v = 0;
    int pad = 0;
    for (size_t k = 0; k < 4; ++k) {
      char c = text[i + k];
      const char* at = c == '\0' ? nullptr : std::strchr(kBase64, c);
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        ++pad;
        v <<= 6;
        continue;
      }
      if (at == nullptr || pad > 0) {
        throw Error("ValueError", "FromJSONGraph: invalid base64 data");
      }
      v = (v << 6) | static_cast<uint32_t>(at - kBase64);
    }
    out += static_cast<char>((v >> 16) & 0xFF);
    if (pad < 2) out += static_cast<char>((v >> 8) & 0xFF);
    if (pad < 1) out += static_cast<char>(v & 0xFF);
  }
  return out;
}

std::string TypeKey(int32_t type_index) {
  TVMFFIAny key{};
  if (FFIJITTypeIndexToKey(type_index, &key) != 0) throw Error::MoveFromRaised();
  return Any::Adopt(key).cast<std::string>();
}

class Serializer {
 public:
  int64_t NodeOf(const AnyView& value) {
    std::string identity = Identity(value);
    auto it = index_.find(identity);
    if (it != index_.end()) return it->second;
    const TVMFFIAny& raw = value.raw();
    std::string_view chars;
    Any type, data;
    switch (raw.type_index) {
      case kTVMFFINone:
        type = "None";
        break;
      case kTVMFFIBool:
        type = "bool";
        data = Any(raw.v_int64 != 0);
        break;
      case kTVMFFIInt:
        type = "int";
        data = Any(raw.v_int64);
        break;
      case kTVMFFIFloat:
        type = "float";
        data = Any(raw.v_float64);
        break;
      case kTVMFFIDataType: {
        TVMFFIAny text{};
        if (TVMFFIDataTypeToString(&raw.v_dtype, &text) != 0) throw Error::MoveFromRaised();
        type = "DataType";
        data = Any::Adopt(text);
        break;
      }
      case kTVMFFIDevice:
        type = "Device";
        data = Array{int64_t{raw.v_device.device_type}, int64_t{raw.v_device.device_id}};
        break;
      case kTVMFFIRawStr:
      case kTVMFFISmallStr:
      case kTVMFFIStr:
        internal::ViewBytes(raw, &chars);
        type = "ffi.String";
        data = String(chars);
        break;
      case kTVMFFIByteArrayPtr:
      case kTVMFFISmallBytes:
      case kTVMFFIBytes:
        internal::ViewBytes(raw, &chars);
        type = "ffi.Bytes";
        data = String(Base64Encode(chars));
        break;
      case kTVMFFIArray:
#if FFIJIT_TVM_FFI_HAS_LIST_DICT
      case kTVMFFIList:  // the same sequence cell and encoding, under its own type key
#endif
      {
        const auto* cell = reinterpret_cast<const FFIJITArrayCell*>(raw.v_obj + 1);
        std::vector<Any> items;
        for (int64_t i = 0; i < cell->size; ++i) items.emplace_back(NodeOf(cell->data[i]));
        type = raw.type_index == kTVMFFIArray ? "ffi.Array" : "ffi.List";
        data = Array(items);
        break;
      }
      case kTVMFFIMap:
#if FFIJIT_TVM_FFI_HAS_LIST_DICT
      case kTVMFFIDict:
#endif
      {
        std::vector<Any> items;
        internal::MapForEach(raw.v_obj, [&](const TVMFFIAny& key, const TVMFFIAny& item) {
          items.emplace_back(NodeOf(key));
          items.emplace_back(NodeOf(item));
        });
        type = raw.type_index == kTVMFFIMap ? "ffi.Map" : "ffi.Dict";
        data = Array(items);
        break;
      }
      case kTVMFFIShape: {
        const auto* cell = reinterpret_cast<const TVMFFIShapeCell*>(raw.v_obj + 1);
        std::vector<Any> dims;
        for (size_t i = 0; i < cell->size; ++i) dims.emplace_back(cell->data[i]);
        type = "ffi.Shape";
        data = Array(dims);
        break;
      }
      default:
        if (raw.type_index < kTVMFFIStaticObjectBegin) {
          throw Error("TypeError", "ToJSONGraph: values of type `" + TypeKey(raw.type_index) +
                                       "` cannot be serialized");
        }
        type = String(TypeKey(raw.type_index));
        data = ObjectData(raw);
    }
    std::vector<std::pair<Any, Any>> node{{"type", type}};
    if (raw.type_index != kTVMFFINone) node.emplace_back("data", data);
    int64_t index = static_cast<int64_t>(nodes_.size());
    nodes_.emplace_back(Map(node));
    // An object's node is found by its address: keep it alive while that address is a key.
    if (raw.type_index >= kTVMFFIStaticObjectBegin) keep_.push_back(value.ToOwned());
    index_.emplace(std::move(identity), index);
    return index;
  }
  Array Nodes() const {
    return Array(nodes_);
  }

 private:
  // A reflected object's data: what its `__data_to_json__` type attribute returns, or else a JSON
  // object of its fields (ancestors' first): bool/int/float/DataType fields inline, any other
  // field as the index of its value's node.
  Any ObjectData(const TVMFFIAny& raw) {
    // An enum singleton is written as its canonical index; reading it back finds the singleton.
    if (Any index; internal::EnumToJSONData(raw, &index)) return index;
    if (TVMFFIObject* to_json = internal::TypeAttrFunction("__data_to_json__", raw.type_index)) {
      return Function(ObjectPtr<>::Borrow(to_json))(AnyView(raw));
    }
    const TVMFFITypeInfo& info = *TVMFFIGetTypeInfo(raw.type_index);
    if (__atomic_load_n(&info.metadata, __ATOMIC_ACQUIRE) == nullptr) {
      throw Error("TypeError", "Type metadata is not set for type `" + internal::TypeKeyOf(info) +
                                   "`, so ToJSONGraph is not supported for this type");
    }
    std::vector<std::pair<Any, Any>> fields;
    internal::ForEachField(info, [&](const TVMFFIFieldInfo& field) {
      Any value = internal::ReadField(raw.v_obj, field);
      Any name(std::string_view(field.name.data, field.name.size));
      switch (field.field_static_type_index) {
        case kTVMFFINone:
          fields.emplace_back(name, Any());
          break;
        case kTVMFFIBool:
        case kTVMFFIInt:
        case kTVMFFIFloat:
          fields.emplace_back(name, value);
          break;
        case kTVMFFIDataType: {
          TVMFFIAny text{};
          CheckCall(TVMFFIDataTypeToString(&value.raw().v_dtype, &text));
          fields.emplace_back(name, Any::Adopt(text));
          break;
        }
        default:
          fields.emplace_back(name, Any(NodeOf(value)));
      }
      return false;
    });
    return Map(fields);
  }

  // Equal POD values and equal strings map to one node; objects by address.
  static std::string Identity(const AnyView& value) {
    const TVMFFIAny& raw = value.raw();
    std::string_view chars;
    if (internal::ViewBytes(raw, &chars)) {
      bool is_str = raw.type_index == kTVMFFIRawStr || raw.type_index == kTVMFFISmallStr ||
                    raw.type_index == kTVMFFIStr;
      return std::string(is_str ? "s" : "b") + std::string(chars);
    }
    return "v" + std::to_string(raw.type_index) + ":" + std::to_string(raw.v_uint64);
  }

  std::unordered_map<std::string, int64_t> index_;
  std::vector<Any> nodes_;
  std::vector<Any> keep_;
};

Any ToGraph(const AnyView& value, const AnyView& metadata) {
  Serializer serializer;
  int64_t root = serializer.NodeOf(value);
  std::vector<std::pair<Any, Any>> graph{{"root_index", root}, {"nodes", serializer.Nodes()}};
  if (!metadata.is_none()) graph.emplace_back("metadata", metadata.ToOwned());
  return Map(graph);
}

class Deserializer {
 public:
  explicit Deserializer(const AnyView& graph) {
    if (graph.type_index() != kTVMFFIMap) Bad("the graph must be a JSON object");
    Map map = graph.cast<Map>();
    std::optional<AnyView> root = map.Get(Any("root_index"));
    std::optional<AnyView> nodes = map.Get(Any("nodes"));
    if (!root || root->type_index() != kTVMFFIInt) Bad("`root_index` must be an integer");
    if (!nodes || nodes->type_index() != kTVMFFIArray) Bad("`nodes` must be an array");
    root_ = root->cast<int64_t>();
    nodes_ = nodes->cast<Array>();
    decoded_.resize(static_cast<size_t>(nodes_.size()));
    done_.resize(static_cast<size_t>(nodes_.size()), 0);
  }
  Any Root() { return Node(root_); }

 private:
  [[noreturn]] static void Bad(const std::string& what) {
    throw Error("ValueError", "FromJSONGraph: " + what);
  }
  Any Node(int64_t index) {
    if (index < 0 || index >= nodes_.size()) {
      Bad("node index " + std::to_string(index) + " out of range for " +
          std::to_string(nodes_.size()) + " nodes");
    }
    auto slot = static_cast<size_t>(index);
    if (done_[slot] == 1) return decoded_[slot];
    if (done_[slot] == 2) Bad("node " + std::to_string(index) + " refers to itself");
    done_[slot] = 2;
    decoded_[slot] = Decode(index);
    done_[slot] = 1;
    return decoded_[slot];
  }
  std::vector<int64_t> Indices(const AnyView& data, int64_t index) {
    if (data.type_index() != kTVMFFIArray) Bad("node " + std::to_string(index) + ": bad data");
    std::vector<int64_t> out;
    for (const AnyView& item : data.cast<Array>()) {
      if (item.type_index() != kTVMFFIInt) Bad("node " + std::to_string(index) + ": bad data");
      out.push_back(item.cast<int64_t>());
    }
    return out;
  }
  Any Decode(int64_t index) {
    AnyView node_view = nodes_[index];
    if (node_view.type_index() != kTVMFFIMap)
      Bad("node " + std::to_string(index) + " is not an object");
    Map node = node_view.cast<Map>();
    std::optional<AnyView> type = node.Get(Any("type"));
    if (!type || (type->type_index() != kTVMFFISmallStr && type->type_index() != kTVMFFIStr)) {
      Bad("node " + std::to_string(index) + " has no `type`");
    }
    std::string key = type->cast<std::string>();
    AnyView data = node.Get(Any("data")).value_or(AnyView());
    auto expect = [&](int32_t type_index) {
      if (data.type_index() != type_index) Bad("node " + std::to_string(index) + ": bad data");
    };
    if (key == "None") return Any();
    if (key == "bool") {
      expect(kTVMFFIBool);
      return data.ToOwned();
    }
    if (key == "int") {
      expect(kTVMFFIInt);
      return data.ToOwned();
    }
    if (key == "float") {
      if (data.type_index() == kTVMFFIInt) return Any(static_cast<double>(data.cast<int64_t>()));
      expect(kTVMFFIFloat);
      return data.ToOwned();
    }
    if (key == "ffi.String") {
      if (data.type_index() != kTVMFFISmallStr) expect(kTVMFFIStr);
      return data.ToOwned();
    }
    if (key == "DataType") {
      std::string text = data.cast<std::string>();
      TVMFFIByteArray bytes{text.data(), text.size()};
      TVMFFIAny out{};
      out.type_index = kTVMFFIDataType;
      if (TVMFFIDataTypeFromString(&bytes, &out.v_dtype) != 0) throw Error::MoveFromRaised();
      return Any::Adopt(out);
    }
    if (key == "Device") {
      std::vector<int64_t> parts = Indices(data, index);
      if (parts.size() != 2) Bad("node " + std::to_string(index) + ": a Device is [type, id]");
      TVMFFIAny out{};
      out.type_index = kTVMFFIDevice;
      out.v_device = DLDevice{static_cast<DLDeviceType>(parts[0]), static_cast<int32_t>(parts[1])};
      return Any::Adopt(out);
    }
    if (key == "ffi.Bytes") {
      std::string bytes = Base64Decode(data.cast<std::string>());
      TVMFFIByteArray view{bytes.data(), bytes.size()};
      TVMFFIAny out{};
      if (TVMFFIBytesFromByteArray(&view, &out) != 0) throw Error::MoveFromRaised();
      return Any::Adopt(out);
    }
    if (key == "ffi.Array" || (FFIJIT_TVM_FFI_HAS_LIST_DICT && key == "ffi.List")) {
      std::vector<Any> items;
      for (int64_t child : Indices(data, index)) items.push_back(Node(child));
#if FFIJIT_TVM_FFI_HAS_LIST_DICT
      if (key == "ffi.List") return List(items);
#endif
      return Array(items);
    }
    if (key == "ffi.Map" || (FFIJIT_TVM_FFI_HAS_LIST_DICT && key == "ffi.Dict")) {
      std::vector<int64_t> children = Indices(data, index);
      if (children.size() % 2 != 0) Bad("node " + std::to_string(index) + ": odd map data");
      std::vector<std::pair<Any, Any>> items;
      for (size_t i = 0; i < children.size(); i += 2) {
        items.emplace_back(Node(children[i]), Node(children[i + 1]));
      }
#if FFIJIT_TVM_FFI_HAS_LIST_DICT
      if (key == "ffi.Dict") return Dict(items);
#endif
      return Map(items);
    }
    if (key == "ffi.Shape") {
      return Shape(Indices(data, index));
    }
    return DecodeObject(index, key, data);
  }

  // A reflected object: through its `__data_from_json__` type attribute, or else made by its
  // metadata's creator and its fields (ancestors' first) set from the data object, falling back to
  // their defaults.
  Any DecodeObject(int64_t index, const std::string& key, const AnyView& data) {
    TVMFFIByteArray key_bytes{key.data(), key.size()};
    int32_t type_index = -1;
    if (TVMFFITypeKeyToIndex(&key_bytes, &type_index) != 0) {
      Error::MoveFromRaised();  // replaced by a message naming the node
      Bad("node " + std::to_string(index) + " has type `" + key + "`, which is not registered");
    }
    if (type_index < kTVMFFIStaticObjectBegin) {
      Bad("node " + std::to_string(index) + ": type `" + key + "` is not an object type");
    }
    if (Any singleton; internal::EnumFromJSONData(type_index, data, &singleton)) return singleton;
    if (TVMFFIObject* from_json = internal::TypeAttrFunction("__data_from_json__", type_index)) {
      return Function(ObjectPtr<>::Borrow(from_json))(data);
    }
    const TVMFFITypeInfo& info = *TVMFFIGetTypeInfo(type_index);
    const TVMFFITypeMetadata* metadata = __atomic_load_n(&info.metadata, __ATOMIC_ACQUIRE);
    if (metadata == nullptr || metadata->creator == nullptr) {
      throw Error("RuntimeError", "Type `" + key +
                                      "` does not support default construction, so "
                                      "FromJSONGraph is not supported for this type");
    }
    if (data.type_index() != kTVMFFIMap) {
      Bad("node " + std::to_string(index) + ": the data of a `" + key + "` must be an object");
    }
    Map fields = data.cast<Map>();
    TVMFFIObjectHandle handle = nullptr;
    CheckCall(metadata->creator(&handle));
    if (handle == nullptr)
      throw Error("RuntimeError", "the creator of `" + key + "` returned no object");
    ObjectPtr<> object = ObjectPtr<>::Adopt(static_cast<TVMFFIObject*>(handle));
    internal::ForEachField(info, [&](const TVMFFIFieldInfo& field) {
      std::string name(field.name.data, field.name.size);
      std::optional<AnyView> given = fields.Get(Any(name));
      Any value;
      if (given) {
        value = FieldValue(index, field, name, *given);
      } else if (field.flags & kTVMFFIFieldFlagBitMaskHasDefault) {
        value = internal::FieldDefault(field);
      } else {
        throw Error("TypeError", "Required field `" + name + "` not set in type `" + key + "`");
      }
      internal::SetField(object.get(), field, value.raw(), key);
      return false;
    });
    return Any(ObjectRef(std::move(object)));
  }

  // A field's value from its JSON form: inline for bool/int/float/DataType fields, else a node.
  Any FieldValue(int64_t index, const TVMFFIFieldInfo& field, const std::string& name,
                 const AnyView& json) {
    auto expect = [&](bool ok) {
      if (!ok) Bad("node " + std::to_string(index) + ": bad value for field `" + name + "`");
    };
    switch (field.field_static_type_index) {
      case kTVMFFINone:
        return Any();
      case kTVMFFIBool:
        expect(json.type_index() == kTVMFFIBool);
        return json.ToOwned();
      case kTVMFFIInt:
        expect(json.type_index() == kTVMFFIInt);
        return json.ToOwned();
      case kTVMFFIFloat:
        if (json.type_index() == kTVMFFIInt) return Any(static_cast<double>(json.cast<int64_t>()));
        expect(json.type_index() == kTVMFFIFloat);
        return json.ToOwned();
      case kTVMFFIDataType: {
        expect(json.type_index() == kTVMFFISmallStr || json.type_index() == kTVMFFIStr);
        std::string text = json.cast<std::string>();
        TVMFFIByteArray bytes{text.data(), text.size()};
        TVMFFIAny out{};
        out.type_index = kTVMFFIDataType;
        CheckCall(TVMFFIDataTypeFromString(&bytes, &out.v_dtype));
        return Any::Adopt(out);
      }
      default:
        expect(json.type_index() == kTVMFFIInt);
        return Node(json.cast<int64_t>());
    }
  }

  int64_t root_ = 0;
  Array nodes_;
  std::vector<Any> decoded_;
  std::vector<char> done_;  // 0 new, 2 decoding, 1 decoded
};

std::string GraphText(const Any& graph) {
  tvm::ffi::Any held;
  held.data_ = Any(graph).release();
  tvm::ffi::Optional<int> none(tvm::ffi::Optional<int>::None());
  // Stringify fails with tvm::ffi::Error; the globals calling this report it as it is.
  tvm::ffi::String text =
      internal::WithFfijitErrors([&] { return tvm::ffi::json::Stringify(held, none); });
  std::string_view chars;
  internal::ViewBytes(text.data_, &chars);
  return std::string(chars);
}

void CheckArity(const char* name, int32_t num_args, int32_t lo, int32_t hi) {
  if (num_args < lo || num_args > hi) {
    throw Error("TypeError", std::string(name) + ": expected " + std::to_string(lo) +
                                 (lo == hi ? "" : " or " + std::to_string(hi)) +
                                 " arguments but got " + std::to_string(num_args));
  }
}

int ToGraphGlobal(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return GuardCBoundary([&] {
    CheckArity("ffi.ToJSONGraph", num_args, 1, 2);
    *result = ToGraph(args[0], num_args == 2 ? AnyView(args[1]) : AnyView()).release();
  });
}
int ToGraphStringGlobal(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return GuardCBoundary([&] {
    CheckArity("ffi.ToJSONGraphString", num_args, 1, 2);
    std::string text = GraphText(ToGraph(args[0], num_args == 2 ? AnyView(args[1]) : AnyView()));
    *result = String(text).release();
  });
}
int FromGraphGlobal(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return GuardCBoundary([&] {
    CheckArity("ffi.FromJSONGraph", num_args, 1, 1);
    *result = Deserializer(args[0]).Root().release();
  });
}
int FromGraphStringGlobal(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return GuardCBoundary([&] {
    CheckArity("ffi.FromJSONGraphString", num_args, 1, 1);
    Function parse = GetGlobalFunctionOrThrow("ffi.json.Parse");
    Any graph = parse(AnyView(args[0]));
    *result = Deserializer(graph).Root().release();
  });
}

__attribute__((constructor)) void RegisterJsonGraphGlobals() {
  RegisterAtLoad("the ffi.*JSONGraph* globals", [] {
    const std::pair<const char*, TVMFFISafeCallType> globals[] = {
        {"ffi.ToJSONGraph", ToGraphGlobal},
        {"ffi.ToJSONGraphString", ToGraphStringGlobal},
        {"ffi.FromJSONGraph", FromGraphGlobal},
        {"ffi.FromJSONGraphString", FromGraphStringGlobal}};
    for (const auto& [name, body] : globals) {
      SetGlobalFunction(name, Function::FromSafeCall(nullptr, body, nullptr), true);
    }
  });
}

}  // namespace
}  // namespace ffijit

namespace tvm {
namespace ffi {

Any ToJSONGraph(const Any& value, const Any& metadata) {
  return ffijit::internal::WithTvmErrors([&] {
    Any result;
    result.data_ = ffijit::ToGraph(value.data_, metadata.data_).release();
    return result;
  });
}

Any FromJSONGraph(const Any& value) {
  return ffijit::internal::WithTvmErrors([&] {
    Any result;
    result.data_ = ffijit::Deserializer(value.data_).Root().release();
    return result;
  });
}

}  // namespace ffi
}  // namespace tvm
