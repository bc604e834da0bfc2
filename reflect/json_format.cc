// The `iree.abi` JSON format: type records to Signature and back.
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ffijit/error.h"
#include "ffijit/reflect/metadata.h"
#include "json_dom.h"
#include "type_names.h"

namespace ffijit {
namespace {

constexpr const char* kFormat = "json";

struct ScalarName {
  const char* name;
  ScalarKind kind;
};
constexpr ScalarName kScalarNames[] = {
    {"i1", ScalarKind::kI1},   {"i8", ScalarKind::kI8},     {"i16", ScalarKind::kI16},
    {"i32", ScalarKind::kI32}, {"i64", ScalarKind::kI64},   {"u8", ScalarKind::kU8},
    {"u16", ScalarKind::kU16}, {"u32", ScalarKind::kU32},   {"u64", ScalarKind::kU64},
    {"f16", ScalarKind::kF16}, {"bf16", ScalarKind::kBF16}, {"f32", ScalarKind::kF32},
    {"f64", ScalarKind::kF64},
};

bool LookupScalar(const std::string& name, ScalarKind* out) {
  for (const ScalarName& s : kScalarNames) {
    if (name == s.name) {
      *out = s.kind;
      return true;
    }
  }
  return false;
}

// A name of the shape i<width> or u<width> that is not in the table: an MLIR integer type with no
// C type of its own. Refused naming the width rather than as an unknown name.
void RefuseIntegerWidth(const std::string& name, size_t offset) {
  if (name.size() < 2 || (name[0] != 'i' && name[0] != 'u')) return;
  for (size_t i = 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return;
  }
  ThrowAt(kFormat, offset, UnsupportedIntegerWidth(name, std::string_view(name).substr(1)));
}

// Where a type record sits decides which records are allowed there.
enum class Place { kRootArg, kResult, kSlot, kTupleSlot };

class JsonTypeReader {
 public:
  // Reads one type record; `depth` counts enclosing records.
  TypePtr Read(const JsonValue& v, Place place, int depth) {
    if (depth > kMaxMetadataNesting) {
      ThrowAt(kFormat, v.offset,
              "type records nested deeper than " + std::to_string(kMaxMetadataNesting));
    }
    switch (v.kind) {
      case JsonValue::Kind::kNull:
        if (place != Place::kTupleSlot) {
          ThrowAt(kFormat, v.offset, "null (a gap) is only allowed as an slist or stuple slot");
        }
        return nullptr;
      case JsonValue::Kind::kString:
        return ReadName(v);
      case JsonValue::Kind::kArray:
        return ReadRecord(v, place, depth);
      default:
        ThrowAt(kFormat, v.offset,
                std::string("expected a type record (a string, an array or null), got ") +
                    v.KindName());
    }
  }

  // ["sdict_kwargs", [key, T]...] or ["sdict", ...] slots: keys and types, duplicates rejected.
  void ReadSlots(const JsonValue& v, int depth, std::vector<std::string>* keys,
                 std::vector<TypePtr>* types) {
    std::unordered_set<std::string> seen;  // a set, so huge dicts cannot cost quadratic time
    for (size_t i = 1; i < v.items.size(); ++i) {
      const JsonValue& slot = v.items[i];
      if (slot.kind != JsonValue::Kind::kArray || slot.items.size() != 2 ||
          slot.items[0].kind != JsonValue::Kind::kString) {
        ThrowAt(kFormat, slot.offset, "expected a [key, type] slot of " + v.items[0].string);
      }
      const std::string& key = slot.items[0].string;
      if (!seen.insert(key).second) {
        ThrowAt(kFormat, slot.items[0].offset,
                "duplicate key \"" + key + "\" in " + v.items[0].string);
      }
      keys->push_back(key);
      types->push_back(Read(slot.items[1], Place::kSlot, depth + 1));
    }
  }

 private:
  TypePtr ReadName(const JsonValue& v) {
    const std::string& n = v.string;
    ScalarKind kind;
    if (LookupScalar(n, &kind)) return Type::Scalar(kind);
    if (n == "unknown") return Type::Simple(TypeKind::kUnknown);
    if (n == "str" || n == "pystr") return Type::Simple(TypeKind::kStr);
    if (n == "bytes") return Type::Simple(TypeKind::kBytes);
    if (n == "ptr") return Type::Simple(TypeKind::kOpaquePtr);
    if (n == "object") return Type::Object();
    if (n == "DataType") return Type::Simple(TypeKind::kDataType);
    if (n == "Device") return Type::Simple(TypeKind::kDevice);
    RefuseIntegerWidth(n, v.offset);
    ThrowAt(kFormat, v.offset, "unknown type name \"" + Excerpt(n) + "\"");
  }

  void CheckArity(const JsonValue& v, size_t min_items, size_t max_items,
                  const std::string& shape) {
    const size_t n = v.items.size() - 1;
    if (n < min_items || n > max_items) {
      ThrowAt(kFormat, v.offset,
              "wrong arity: expected " + shape + ", got " + std::to_string(n) +
                  (n == 1 ? " operand" : " operands"));
    }
  }

  TypePtr ReadNDArray(const JsonValue& v) {
    CheckArity(v, 2, SIZE_MAX, "[\"ndarray\", element, rank|null, dim...]");
    const JsonValue& elt = v.items[1];
    ScalarKind kind = ScalarKind::kAny;
    // "unknown" is what IREE's TF importer writes for element types with no V1 name (strings):
    // read as an unchecked element, like null.
    if (elt.kind == JsonValue::Kind::kString) {
      if (elt.string != "unknown" && !LookupScalar(elt.string, &kind)) {
        RefuseIntegerWidth(elt.string, elt.offset);
        ThrowAt(kFormat, elt.offset,
                "unknown ndarray element type \"" + Excerpt(elt.string) + "\"");
      }
    } else if (elt.kind != JsonValue::Kind::kNull) {
      ThrowAt(kFormat, elt.offset,
              std::string("expected an element type name or null, got ") + elt.KindName());
    }
    const JsonValue& rank = v.items[2];
    const size_t ndims = v.items.size() - 3;
    if (rank.kind == JsonValue::Kind::kNull) {
      if (ndims != 0) {
        ThrowAt(kFormat, v.items[3].offset, "dims listed for an ndarray of unknown (null) rank");
      }
      return Type::NDArray(kind, -1, {});
    }
    if (rank.kind != JsonValue::Kind::kInt) {
      ThrowAt(kFormat, rank.offset,
              std::string("expected a rank (an integer or null), got ") + rank.KindName());
    }
    if (rank.integer < 0) {
      ThrowAt(kFormat, rank.offset, "negative rank " + std::to_string(rank.integer));
    }
    if (static_cast<uint64_t>(rank.integer) != ndims) {
      ThrowAt(kFormat, rank.offset,
              "rank " + std::to_string(rank.integer) + " disagrees with the " +
                  std::to_string(ndims) + (ndims == 1 ? " dim" : " dims") + " listed");
    }
    std::vector<int64_t> dims;
    for (size_t i = 3; i < v.items.size(); ++i) {
      const JsonValue& d = v.items[i];
      if (d.kind == JsonValue::Kind::kNull) {
        dims.push_back(-1);
      } else if (d.kind == JsonValue::Kind::kInt && d.integer >= 0) {
        dims.push_back(d.integer);
      } else {
        ThrowAt(kFormat, d.offset, "expected a dim (an integer >= 0, or null for dynamic)");
      }
    }
    return Type::NDArray(kind, static_cast<int32_t>(ndims), std::move(dims));
  }

  TypePtr ReadRecord(const JsonValue& v, Place place, int depth) {
    if (v.items.empty() || v.items[0].kind != JsonValue::Kind::kString) {
      ThrowAt(kFormat, v.offset, "expected a compound type record [\"tag\", ...]");
    }
    const std::string& tag = v.items[0].string;
    if (tag == "ndarray") return ReadNDArray(v);
    if (tag == "named") {
      if (place != Place::kRootArg) {
        ThrowAt(kFormat, v.offset, "named is only allowed as a top-level argument");
      }
      CheckArity(v, 2, 2, "[\"named\", key, type]");
      if (v.items[1].kind != JsonValue::Kind::kString || v.items[1].string.empty()) {
        ThrowAt(kFormat, v.items[1].offset, "expected a non-empty keyword string");
      }
      return Type::Named(v.items[1].string, Read(v.items[2], Place::kSlot, depth + 1));
    }
    if (tag == "slist" || tag == "stuple" || tag == "pytuple") {
      const bool tuple = tag != "slist";
      std::vector<TypePtr> elements;
      // The V1 spec: "If there are gaps in the list, empty slots will have a null type".
      for (size_t i = 1; i < v.items.size(); ++i) {
        elements.push_back(Read(v.items[i], Place::kTupleSlot, depth + 1));
      }
      return Type::Sequence(tuple ? TypeKind::kSTuple : TypeKind::kSList, std::move(elements));
    }
    if (tag == "sdict") {
      std::vector<std::string> keys;
      std::vector<TypePtr> types;
      ReadSlots(v, depth, &keys, &types);
      return Type::SDict(std::move(keys), std::move(types));
    }
    if (tag == "py_homogeneous_list" || tag == "py_uniform_list") {
      CheckArity(v, 1, 1, "[\"" + tag + "\", element type]");
      return Type::List(Read(v.items[1], Place::kSlot, depth + 1));
    }
    if (tag == "py_uniform_dict") {
      CheckArity(v, 2, 2, "[\"py_uniform_dict\", key type, value type]");
      TypePtr key = Read(v.items[1], Place::kSlot, depth + 1);
      return Type::Dict(std::move(key), Read(v.items[2], Place::kSlot, depth + 1));
    }
    if (tag == "object") {
      CheckArity(v, 1, 1, "[\"object\", type key]");
      if (v.items[1].kind != JsonValue::Kind::kString) {
        ThrowAt(kFormat, v.items[1].offset, "expected an object type key string");
      }
      return Type::Object(v.items[1].string);
    }
    if (tag == "nullable") {
      CheckArity(v, 1, 1, "[\"nullable\", type]");
      TypePtr inner = Read(v.items[1], Place::kSlot, depth + 1);
      if (inner->kind == TypeKind::kObject) return Type::Object(inner->name, true);
      if (inner->kind == TypeKind::kStr || inner->kind == TypeKind::kOpaquePtr) {
        auto copy = std::make_shared<Type>(*inner);
        copy->nullable = true;
        return copy;
      }
      ThrowAt(kFormat, v.items[1].offset, "only str, ptr and object types can be nullable");
    }
    if (tag == "sdict_kwargs") {
      ThrowAt(kFormat, v.offset, "sdict_kwargs is only allowed as the last top-level argument");
    }
    ThrowAt(kFormat, v.items[0].offset, "unknown type record tag \"" + Excerpt(tag) + "\"");
  }
};

const JsonValue& RequireArray(const JsonValue& v, const char* what) {
  if (v.kind != JsonValue::Kind::kArray) {
    ThrowAt(kFormat, v.offset,
            std::string("expected ") + what + " to be an array, got " + v.KindName());
  }
  return v;
}

nlohmann::json TypeToJson(const Type* t);

nlohmann::json ListToJson(const char* tag, const std::vector<TypePtr>& items) {
  nlohmann::json out = nlohmann::json::array({tag});
  for (const TypePtr& item : items) out.push_back(TypeToJson(item.get()));
  return out;
}

nlohmann::json TypeToJson(const Type* t) {
  if (t == nullptr) return nullptr;
  nlohmann::json out;
  switch (t->kind) {
    case TypeKind::kScalar:
      return ScalarKindName(t->scalar);
    case TypeKind::kNDArray: {
      out = nlohmann::json::array({"ndarray"});
      if (t->scalar == ScalarKind::kAny) {
        out.push_back(nullptr);
      } else {
        out.push_back(ScalarKindName(t->scalar));
      }
      if (t->rank < 0) {
        out.push_back(nullptr);
      } else {
        out.push_back(t->rank);
      }
      for (int64_t d : t->dims) {
        if (d < 0) {
          out.push_back(nullptr);
        } else {
          out.push_back(d);
        }
      }
      return out;
    }
    case TypeKind::kStr:
      out = "str";
      break;
    case TypeKind::kBytes:
      return "bytes";
    case TypeKind::kOpaquePtr:
      out = "ptr";
      break;
    case TypeKind::kObject:
      if (t->name.empty()) {
        out = "object";
      } else {
        out = nlohmann::json::array({"object", t->name});
      }
      break;
    case TypeKind::kDataType:
      return "DataType";
    case TypeKind::kDevice:
      return "Device";
    case TypeKind::kUnknown:
      return "unknown";
    case TypeKind::kSList:
      return ListToJson("slist", t->elements);
    case TypeKind::kSTuple:
      return ListToJson("stuple", t->elements);
    case TypeKind::kSDict:
      out = nlohmann::json::array({"sdict"});
      for (size_t i = 0; i < t->elements.size() && i < t->keys.size(); ++i) {
        out.push_back(nlohmann::json::array({t->keys[i], TypeToJson(t->elements[i].get())}));
      }
      return out;
    case TypeKind::kList:
      return ListToJson("py_homogeneous_list", t->elements);
    case TypeKind::kDict:
      return ListToJson("py_uniform_dict", t->elements);
    case TypeKind::kNamed:
      return nlohmann::json::array(
          {"named", t->name, TypeToJson(t->elements.empty() ? nullptr : t->elements[0].get())});
  }
  if (t->nullable) out = nlohmann::json::array({"nullable", out});
  return out;
}

}  // namespace

Signature ParseJson(std::string_view text) {
  const JsonValue root = ParseJsonDom(text, kFormat, kMaxMetadataNesting + 2);
  if (root.kind != JsonValue::Kind::kObject) {
    ThrowAt(kFormat, root.offset,
            std::string("expected an iree.abi object {\"a\": [...], \"r\": [...]}, got ") +
                root.KindName());
  }
  const JsonValue* args = nullptr;
  const JsonValue* results = nullptr;
  for (size_t i = 0; i < root.keys.size(); ++i) {
    const std::string& key = root.keys[i];
    const JsonValue& value = root.items[i];
    const JsonValue** slot = key == "a" ? &args : key == "r" ? &results : nullptr;
    if (slot != nullptr) {
      if (*slot != nullptr)
        ThrowAt(kFormat, root.key_offsets[i], "duplicate key \"" + Excerpt(key) + "\"");
      *slot = &RequireArray(value, key == "a" ? "\"a\" (the arguments)" : "\"r\" (the results)");
    } else if (key == "v") {
      if (value.kind != JsonValue::Kind::kInt || value.integer != 1) {
        ThrowAt(kFormat, value.offset, "unsupported version: expected \"v\": 1");
      }
    } else {
      ThrowAt(kFormat, root.key_offsets[i],
              "unknown key \"" + key + "\" (expected \"a\", \"r\" and \"v\")");
    }
  }
  if (args == nullptr) ThrowAt(kFormat, root.offset, "missing key \"a\" (the arguments)");
  if (results == nullptr) ThrowAt(kFormat, root.offset, "missing key \"r\" (the results)");

  JsonTypeReader reader;
  Signature sig;
  for (size_t i = 0; i < args->items.size(); ++i) {
    const JsonValue& v = args->items[i];
    const bool kwargs = v.kind == JsonValue::Kind::kArray && !v.items.empty() &&
                        v.items[0].kind == JsonValue::Kind::kString &&
                        v.items[0].string == "sdict_kwargs";
    if (!kwargs) {
      sig.args.push_back(reader.Read(v, Place::kRootArg, 1));
      continue;
    }
    if (i + 1 != args->items.size()) {
      ThrowAt(kFormat, v.offset, "sdict_kwargs is only allowed as the last top-level argument");
    }
    std::vector<std::string> keys;
    std::vector<TypePtr> types;
    reader.ReadSlots(v, 1, &keys, &types);
    for (size_t k = 0; k < keys.size(); ++k) sig.args.push_back(Type::Named(keys[k], types[k]));
  }
  // Keywords must be unique across the top-level arguments, whichever record introduced them.
  std::unordered_set<std::string> keywords;
  for (const TypePtr& arg : sig.args) {
    if (arg->kind == TypeKind::kNamed && !keywords.insert(arg->name).second) {
      ThrowAt(kFormat, args->offset, "duplicate keyword argument \"" + Excerpt(arg->name) + "\"");
    }
  }
  for (const JsonValue& v : results->items)
    sig.results.push_back(reader.Read(v, Place::kResult, 1));
  return sig;
}

std::string PrintJson(const Signature& sig) {
  if (!sig.arg_leaf_order.empty() || !sig.result_leaf_order.empty()) {
    throw ValueError(std::string(kFormat) + ": the iree.abi JSON has no way to say that the " +
                     (sig.arg_leaf_order.empty() ? "result" : "argument") +
                     " leaves are out of native order");
  }
  RefuseOutputStorage(sig, kFormat, "the iree.abi JSON");
  nlohmann::json out = nlohmann::json::object();
  nlohmann::json args = nlohmann::json::array();
  for (const TypePtr& t : sig.args) args.push_back(TypeToJson(t.get()));
  nlohmann::json results = nlohmann::json::array();
  for (const TypePtr& t : sig.results) results.push_back(TypeToJson(t.get()));
  out["a"] = std::move(args);
  out["r"] = std::move(results);
  out["v"] = 1;
  // Keys from raw/SIP input may be arbitrary bytes; replace invalid UTF-8 rather than throw.
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ffijit
