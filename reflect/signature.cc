// The Signature model: type factories, the canonical/readable printers, equality and hashing.
#include "ffijit/reflect/signature.h"

#include <cstdio>
#include <functional>
#include <string>
#include <unordered_set>
#include <utility>

#include "ffijit/error.h"

namespace ffijit {
namespace {

std::shared_ptr<Type> NewType(TypeKind kind) {
  auto t = std::make_shared<Type>();
  t->kind = kind;
  return t;
}

bool IsBareKeyChar(char c, bool first) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') return true;
  return !first && ((c >= '0' && c <= '9') || c == '.');
}

void AppendKey(std::string& out, const std::string& key) {
  bool bare = !key.empty();
  for (size_t i = 0; i < key.size() && bare; ++i) bare = IsBareKeyChar(key[i], i == 0);
  if (bare) {
    out += key;
    return;
  }
  // Keys outside the identifier alphabet are quoted so that `,`, `:` or `>` inside a key can never
  // make two different signatures print the same canonical text.
  out += '"';
  for (char c : key) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

void AppendType(std::string& out, const Type* type);

void AppendList(std::string& out, const std::vector<TypePtr>& items) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    AppendType(out, items[i].get());
  }
}

void AppendNDArray(std::string& out, const Type& t) {
  out += "ndarray<";
  out += ScalarKindName(t.scalar);
  if (t.rank >= 0) {
    bool all_dynamic = true;
    for (int64_t d : t.dims) all_dynamic = all_dynamic && d < 0;
    out += ',';
    if (all_dynamic) {
      out += std::to_string(t.rank);
    } else {
      out += '[';
      for (size_t i = 0; i < t.dims.size(); ++i) {
        if (i) out += ',';
        out += t.dims[i] < 0 ? std::string("?") : std::to_string(t.dims[i]);
      }
      out += ']';
    }
  }
  out += '>';
}

void AppendType(std::string& out, const Type* type) {
  if (type == nullptr) {
    out += "null";
    return;
  }
  const Type& t = *type;
  switch (t.kind) {
    case TypeKind::kScalar:
      out += ScalarKindName(t.scalar);
      return;
    case TypeKind::kNDArray:
      AppendNDArray(out, t);
      return;
    case TypeKind::kStr:
      out += "str";
      break;
    case TypeKind::kBytes:
      out += "bytes";
      return;
    case TypeKind::kOpaquePtr:
      out += "ptr";
      break;
    case TypeKind::kObject:
      out += "object";
      if (!t.name.empty()) {
        out += '<';
        AppendKey(out, t.name);
        out += '>';
      }
      break;
    case TypeKind::kDataType:
      out += "DataType";
      return;
    case TypeKind::kDevice:
      out += "Device";
      return;
    case TypeKind::kUnknown:
      out += "any";
      return;
    case TypeKind::kSList:
    case TypeKind::kSTuple:
      out += t.kind == TypeKind::kSList ? "slist<" : "stuple<";
      AppendList(out, t.elements);
      out += '>';
      return;
    case TypeKind::kSDict:
      out += "sdict<";
      for (size_t i = 0; i < t.elements.size(); ++i) {
        if (i) out += ',';
        AppendKey(out, i < t.keys.size() ? t.keys[i] : std::string());
        out += ':';
        AppendType(out, t.elements[i].get());
      }
      out += '>';
      return;
    case TypeKind::kList:
      out += "list<";
      AppendList(out, t.elements);
      out += '>';
      return;
    case TypeKind::kDict:
      out += "dict<";
      AppendList(out, t.elements);
      out += '>';
      return;
    case TypeKind::kNamed:
      AppendKey(out, t.name);
      out += ": ";
      AppendType(out, t.elements.empty() ? nullptr : t.elements[0].get());
      return;
  }
  // Only the kinds that can be nullable fall through to here.
  if (t.nullable) out += '?';
}

bool TypeEquals(const Type* a, const Type* b);

bool ListEquals(const std::vector<TypePtr>& a, const std::vector<TypePtr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!TypeEquals(a[i].get(), b[i].get())) return false;
  }
  return true;
}

// Compares exactly the fields TypeToString prints for each kind, so that equality and the
// canonical text (which defines the hash) always agree.
bool TypeEquals(const Type* a, const Type* b) {
  if (a == b) return true;
  if (a == nullptr || b == nullptr || a->kind != b->kind) return false;
  switch (a->kind) {
    case TypeKind::kScalar:
      return a->scalar == b->scalar;
    case TypeKind::kNDArray:
      return a->scalar == b->scalar && a->rank == b->rank && a->dims == b->dims;
    case TypeKind::kStr:
    case TypeKind::kOpaquePtr:
      return a->nullable == b->nullable;
    case TypeKind::kObject:
      return a->nullable == b->nullable && a->name == b->name;
    case TypeKind::kBytes:
    case TypeKind::kDataType:
    case TypeKind::kDevice:
    case TypeKind::kUnknown:
      return true;
    case TypeKind::kSDict:
      return a->keys == b->keys && ListEquals(a->elements, b->elements);
    case TypeKind::kNamed:
      return a->name == b->name && ListEquals(a->elements, b->elements);
    case TypeKind::kSList:
    case TypeKind::kSTuple:
    case TypeKind::kList:
    case TypeKind::kDict:
      return ListEquals(a->elements, b->elements);
  }
  return false;
}

void CheckScalarKind(ScalarKind k, const char* who) {
  if (static_cast<uint8_t>(k) > static_cast<uint8_t>(ScalarKind::kAny)) {
    throw ValueError(std::string(who) + ": invalid scalar kind " +
                     std::to_string(static_cast<int>(k)));
  }
}

}  // namespace

TypePtr Type::Scalar(ScalarKind k) {
  CheckScalarKind(k, "Type::Scalar");
  if (k == ScalarKind::kAny) {
    throw ValueError("Type::Scalar: `any` is only an ndarray element kind; use Simple(kUnknown)");
  }
  auto t = NewType(TypeKind::kScalar);
  t->scalar = k;
  return t;
}

TypePtr Type::NDArray(ScalarKind elt, int32_t rank, std::vector<int64_t> dims) {
  CheckScalarKind(elt, "Type::NDArray");
  if (rank < -1) throw ValueError("Type::NDArray: negative rank " + std::to_string(rank));
  if (rank == -1 && !dims.empty()) {
    throw ValueError("Type::NDArray: unknown rank but " + std::to_string(dims.size()) + " dims");
  }
  if (rank >= 0 && dims.size() != static_cast<size_t>(rank)) {
    throw ValueError("Type::NDArray: rank " + std::to_string(rank) + " but " +
                     std::to_string(dims.size()) + " dims");
  }
  for (int64_t d : dims) {
    if (d < -1) throw ValueError("Type::NDArray: invalid dim " + std::to_string(d));
  }
  auto t = NewType(TypeKind::kNDArray);
  t->scalar = elt;
  t->rank = rank;
  t->dims = std::move(dims);
  return t;
}

TypePtr Type::Simple(TypeKind k) {
  switch (k) {
    case TypeKind::kStr:
    case TypeKind::kBytes:
    case TypeKind::kOpaquePtr:
    case TypeKind::kDataType:
    case TypeKind::kDevice:
    case TypeKind::kUnknown:
      return NewType(k);
    default:
      throw ValueError("Type::Simple: kind " + std::to_string(static_cast<int>(k)) +
                       " is not a simple type");
  }
}

TypePtr Type::Object(std::string type_key, bool nullable) {
  auto t = NewType(TypeKind::kObject);
  t->name = std::move(type_key);
  t->nullable = nullable;
  return t;
}

TypePtr Type::Sequence(TypeKind k, std::vector<TypePtr> elements) {
  if (k != TypeKind::kSList && k != TypeKind::kSTuple) {
    throw ValueError("Type::Sequence: kind must be kSList or kSTuple");
  }
  // A null slot is a gap in either kind: IREE's V1 spec allows "empty slots" in lists too.
  auto t = NewType(k);
  t->elements = std::move(elements);
  return t;
}

TypePtr Type::SDict(std::vector<std::string> keys, std::vector<TypePtr> values) {
  if (keys.size() != values.size()) {
    throw ValueError("Type::SDict: " + std::to_string(keys.size()) + " keys but " +
                     std::to_string(values.size()) + " values");
  }
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (values[i] == nullptr) throw ValueError("Type::SDict: slot `" + keys[i] + "` is null");
    if (!seen.insert(keys[i]).second) {
      throw ValueError("Type::SDict: duplicate key `" + keys[i] + "`");
    }
  }
  auto t = NewType(TypeKind::kSDict);
  t->keys = std::move(keys);
  t->elements = std::move(values);
  return t;
}

TypePtr Type::List(TypePtr element) {
  if (element == nullptr) throw ValueError("Type::List: null element type");
  auto t = NewType(TypeKind::kList);
  t->elements.push_back(std::move(element));
  return t;
}

TypePtr Type::Dict(TypePtr key, TypePtr value) {
  if (key == nullptr || value == nullptr) throw ValueError("Type::Dict: null key or value type");
  auto t = NewType(TypeKind::kDict);
  t->elements.push_back(std::move(key));
  t->elements.push_back(std::move(value));
  return t;
}

TypePtr Type::Named(std::string keyword, TypePtr inner) {
  if (keyword.empty()) throw ValueError("Type::Named: empty keyword");
  if (inner == nullptr) throw ValueError("Type::Named: null type for `" + keyword + "`");
  if (inner->kind == TypeKind::kNamed) throw ValueError("Type::Named: nested named type");
  auto t = NewType(TypeKind::kNamed);
  t->name = std::move(keyword);
  t->elements.push_back(std::move(inner));
  return t;
}

std::string TypeToString(const Type& type) {
  std::string out;
  AppendType(out, &type);
  return out;
}

std::string DeclarationString(const std::string& function_name, const Signature& sig) {
  std::string out = function_name;
  out += '(';
  for (size_t i = 0; i < sig.args.size(); ++i) {
    if (i) out += ", ";
    AppendType(out, sig.args[i].get());
  }
  out += ") -> ";
  if (sig.results.empty()) {
    out += "None";
  } else if (sig.results.size() == 1) {
    AppendType(out, sig.results[0].get());
  } else {
    out += '(';
    for (size_t i = 0; i < sig.results.size(); ++i) {
      if (i) out += ", ";
      AppendType(out, sig.results[i].get());
    }
    out += ')';
  }
  return out;
}

static void AppendLeafOrders(std::string& out, const Signature& sig) {
  const auto append = [&out](const char* side, const std::vector<int32_t>& order) {
    if (order.empty()) return;
    out += side;
    for (size_t i = 0; i < order.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(order[i]);
    }
    out += ']';
  };
  append(" [arg leaves ", sig.arg_leaf_order);
  append(" [result leaves ", sig.result_leaf_order);
}

static void AppendOutputStorage(std::string& out, const Signature& sig) {
  const char* separator = " [";
  for (size_t i = 0; i < sig.output_storage.size(); ++i) {
    if (sig.output_storage[i] < 0) continue;
    out += separator;
    out += "arg " + std::to_string(i) + " stores result " + std::to_string(sig.output_storage[i]);
    separator = ", ";
  }
  if (separator[0] == ',') out += ']';
}

std::string CanonicalString(const Signature& sig) {
  std::string out = DeclarationString("", sig);
  if (sig.convention == CallConvention::kStatus) out += " [status]";
  AppendLeafOrders(out, sig);
  AppendOutputStorage(out, sig);
  return out;
}

std::string OutputStorageDefect(const Signature& sig) {
  const std::vector<int32_t>& storage = sig.output_storage;
  if (storage.empty()) return "";
  if (storage.size() != sig.args.size()) {
    return "output_storage has " + std::to_string(storage.size()) + " entries for " +
           std::to_string(sig.args.size()) + " arguments";
  }
  std::vector<int> stored_by(sig.results.size(), -1);
  bool any = false;
  for (size_t i = 0; i < storage.size(); ++i) {
    const int32_t r = storage[i];
    if (r == -1) continue;
    any = true;
    const std::string arg = "argument #" + std::to_string(i);
    if (r < 0 || static_cast<size_t>(r) >= sig.results.size()) {
      return arg + " is the output storage of result " + std::to_string(r) + ", but there are " +
             std::to_string(sig.results.size()) + " results";
    }
    if (stored_by[static_cast<size_t>(r)] >= 0) {
      return "result " + std::to_string(r) + " has two output storage arguments, #" +
             std::to_string(stored_by[static_cast<size_t>(r)]) + " and #" + std::to_string(i);
    }
    stored_by[static_cast<size_t>(r)] = static_cast<int>(i);
    const Type* type = sig.args[i].get();
    if (type != nullptr && type->kind == TypeKind::kNamed) {
      type = type->elements.empty() ? nullptr : type->elements[0].get();
    }
    const Type* result = sig.results[static_cast<size_t>(r)].get();
    if (type == nullptr || type->kind != TypeKind::kNDArray) {
      return arg + " `" + (type ? TypeToString(*type) : "null") +
             "` is output storage but not an ndarray";
    }
    if (!TypeEquals(type, result)) {
      return arg + " `" + TypeToString(*type) + "` is the output storage of result " +
             std::to_string(r) + " `" + (result ? TypeToString(*result) : "null") +
             "`: their types must be the same";
    }
  }
  if (!any) return "output_storage names no result (an empty list says that)";
  if (!sig.result_leaf_order.empty()) return "output storage together with a result leaf order";
  return "";
}

bool operator==(const Signature& a, const Signature& b) {
  return a.convention == b.convention && ListEquals(a.args, b.args) &&
         ListEquals(a.results, b.results) && a.arg_leaf_order == b.arg_leaf_order &&
         a.result_leaf_order == b.result_leaf_order && a.output_storage == b.output_storage;
}

size_t SignatureHash::operator()(const Signature& sig) const {
  return std::hash<std::string>()(CanonicalString(sig));
}

const char* ScalarKindName(ScalarKind k) {
  switch (k) {
    case ScalarKind::kF32:
      return "f32";
    case ScalarKind::kF16:
      return "f16";
    case ScalarKind::kF64:
      return "f64";
    case ScalarKind::kBF16:
      return "bf16";
    case ScalarKind::kI8:
      return "i8";
    case ScalarKind::kI16:
      return "i16";
    case ScalarKind::kI32:
      return "i32";
    case ScalarKind::kI64:
      return "i64";
    case ScalarKind::kU8:
      return "u8";
    case ScalarKind::kU16:
      return "u16";
    case ScalarKind::kU32:
      return "u32";
    case ScalarKind::kU64:
      return "u64";
    case ScalarKind::kI1:
      return "i1";
    case ScalarKind::kAny:
      return "any";
  }
  return "?";
}

}  // namespace ffijit
