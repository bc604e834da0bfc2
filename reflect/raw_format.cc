// The raw mangled function signature (fv = 1): parser, mangler and IREE's readable form.
#include <string>
#include <utility>
#include <vector>

#include "ffijit/error.h"
#include "ffijit/reflect/metadata.h"
#include "json_dom.h"
#include "tagged_lexer.h"
#include "type_names.h"

namespace ffijit {
namespace {

constexpr const char* kFormat = "raw signature";
constexpr int kNumElementCodes = 12;  // t0 (float32) .. t11 (uint64), ScalarKind's first values

// IREE's names for the element codes, used by the readable form.
constexpr const char* kReadableScalarNames[kNumElementCodes] = {
    "float32", "float16", "float64", "bfloat16", "sint8",  "sint16",
    "sint32",  "sint64",  "uint8",   "uint16",   "uint32", "uint64"};

// One raw type as read from its span, before it becomes a Type (the readable form needs `code`).
struct RawType {
  char tag = 0;  // 'B', 'S', 'O', 'U'
  int code = 0;  // element code of B and S
  std::vector<int64_t> dims;
};

// Reads the `t` code and, for buffers, the `d` dims from a B or S span.
RawType ReadTyped(const TaggedToken& span) {
  RawType out;
  out.tag = span.tag;
  TaggedLexer lexer(span.sval, span.content_offset);
  bool seen_code = false;
  for (;;) {
    const TaggedToken& tok = lexer.Next();
    if (tok.kind == TaggedToken::Kind::kEnd) return out;
    if (tok.kind == TaggedToken::Kind::kError) ThrowLexError(lexer, kFormat);
    if (tok.kind == TaggedToken::Kind::kInteger && tok.tag == 't') {
      if (seen_code || !out.dims.empty()) {
        ThrowAt(kFormat, tok.offset, "the element code `t` must come once, before any dims");
      }
      if (tok.ival < 0 || tok.ival >= kNumElementCodes) {
        ThrowAt(kFormat, tok.offset,
                "element code t" + std::to_string(tok.ival) + " is not one of t0..t11");
      }
      seen_code = true;
      out.code = static_cast<int>(tok.ival);
    } else if (tok.kind == TaggedToken::Kind::kInteger && tok.tag == 'd' && span.tag == 'B') {
      if (tok.ival < -1) {
        ThrowAt(kFormat, tok.offset,
                "dim " + std::to_string(tok.ival) + " must be >= 0, or -1 for dynamic");
      }
      if (out.dims.size() >= 1024) ThrowAt(kFormat, tok.offset, "more than 1024 dims");
      out.dims.push_back(tok.ival);
    } else {
      ThrowAt(kFormat, tok.offset,
              std::string("unexpected token '") + tok.tag + "' in a " +
                  (span.tag == 'B' ? "buffer (expected t or d)" : "scalar (expected t)"));
    }
  }
}

// Reads the types of an I or R span.
std::vector<RawType> ReadTypeList(const TaggedToken& list) {
  std::vector<RawType> out;
  TaggedLexer lexer(list.sval, list.content_offset);
  for (;;) {
    const TaggedToken& tok = lexer.Next();
    if (tok.kind == TaggedToken::Kind::kEnd) return out;
    if (tok.kind == TaggedToken::Kind::kError) ThrowLexError(lexer, kFormat);
    const bool known = tok.kind == TaggedToken::Kind::kSpan &&
                       (tok.tag == 'B' || tok.tag == 'S' || tok.tag == 'O' || tok.tag == 'U');
    if (!known) {
      ThrowAt(kFormat, tok.offset,
              std::string("expected a B, S, O or U type span, got '") + tok.tag + "'");
    }
    if (tok.tag == 'B' || tok.tag == 'S') {
      out.push_back(ReadTyped(tok));
    } else {
      if (!tok.sval.empty()) {
        ThrowAt(kFormat, tok.content_offset,
                std::string("expected an empty ") + tok.tag + " span (" + tok.tag + "1!)");
      }
      RawType t;
      t.tag = tok.tag;
      out.push_back(std::move(t));
    }
  }
}

// Splits `I<span>R<span>` into the two type lists.
void ReadRaw(std::string_view text, std::vector<RawType>* inputs, std::vector<RawType>* results) {
  ReadInputAndResultSpans(text, kFormat, [&](int index, const TaggedToken& span) {
    *(index == 0 ? inputs : results) = ReadTypeList(span);
  });
}

TypePtr ToType(const RawType& t) {
  switch (t.tag) {
    case 'B':
      return Type::NDArray(static_cast<ScalarKind>(t.code), static_cast<int32_t>(t.dims.size()),
                           t.dims);
    case 'S':
      return Type::Scalar(static_cast<ScalarKind>(t.code));
    case 'O':
      return Type::Object();
    default:
      return Type::Simple(TypeKind::kUnknown);
  }
}

std::string ReadableType(const RawType& t) {
  switch (t.tag) {
    case 'B': {
      std::string out = std::string("Buffer<") + kReadableScalarNames[t.code] + "[";
      for (size_t i = 0; i < t.dims.size(); ++i) {
        if (i) out += 'x';
        out += t.dims[i] < 0 ? std::string("?") : std::to_string(t.dims[i]);
      }
      return out + "]>";
    }
    case 'S':
      return kReadableScalarNames[t.code];
    case 'O':
      return "RefObject<?>";
    default:
      return "Unrecognized";
  }
}

std::string ReadableList(const std::vector<RawType>& types) {
  std::string out = "(";
  for (size_t i = 0; i < types.size(); ++i) {
    if (i) out += ", ";
    out += ReadableType(types[i]);
  }
  return out + ")";
}

// The element code of a scalar kind; bool has none of its own and is written as sint8.
int ElementCode(ScalarKind k) {
  if (k == ScalarKind::kI1) return static_cast<int>(ScalarKind::kI8);
  const int code = static_cast<int>(k);
  return code < kNumElementCodes ? code : -1;
}

std::string MangleType(const Type* t, const char* role, size_t index) {
  TaggedBuilder b;
  if (t != nullptr) {
    switch (t->kind) {
      case TypeKind::kScalar:
        if (ElementCode(t->scalar) >= 0) {
          TaggedBuilder inner;
          if (ElementCode(t->scalar) != 0) inner.Integer(ElementCode(t->scalar), 't');
          return b.Span(inner.str(), 'S').str();
        }
        break;
      case TypeKind::kNDArray:
        if (ElementCode(t->scalar) >= 0 && t->rank >= 0) {
          TaggedBuilder inner;
          if (ElementCode(t->scalar) != 0) inner.Integer(ElementCode(t->scalar), 't');
          for (int64_t d : t->dims) inner.Integer(d < 0 ? -1 : d, 'd');
          return b.Span(inner.str(), 'B').str();
        }
        break;
      case TypeKind::kObject:
        if (t->name.empty() && !t->nullable) return b.Span("", 'O').str();
        break;
      case TypeKind::kUnknown:
        return b.Span("", 'U').str();
      default:
        break;
    }
  }
  throw ValueError(std::string(kFormat) + ": " + role + " #" + std::to_string(index) + " (`" +
                   (t ? TypeToString(*t) : std::string("null")) + "`) has no raw form");
}

// One side's raw types in native order. Only flat types have a raw form, so each is one leaf and
// `order` (the Signature's leaf order) says where it goes; with a structure the sizes differ and
// mangling in written order refuses the structure.
std::string MangleSide(const std::vector<TypePtr>& types, const std::vector<int32_t>& order,
                       const char* role) {
  std::vector<std::string> mangled(types.size());
  for (size_t i = 0; i < types.size(); ++i) mangled[i] = MangleType(types[i].get(), role, i);
  if (order.empty()) {
    std::string out;
    for (const std::string& m : mangled) out += m;
    return out;
  }
  std::vector<const std::string*> native(types.size(), nullptr);
  for (size_t k = 0; k < order.size() && order.size() == types.size(); ++k) {
    const int32_t at = order[k];
    if (at < 0 || static_cast<size_t>(at) >= types.size() ||
        native[static_cast<size_t>(at)] != nullptr) {
      break;
    }
    native[static_cast<size_t>(at)] = &mangled[k];
  }
  std::string out;
  for (const std::string* m : native) {
    if (m == nullptr) {
      throw ValueError(std::string(kFormat) + ": the " + role +
                       " leaf order is not a permutation of the " + role + "s");
    }
    out += *m;
  }
  return out;
}

}  // namespace

Signature ParseRaw(std::string_view text) {
  std::vector<RawType> inputs, results;
  ReadRaw(text, &inputs, &results);
  Signature sig;
  for (const RawType& t : inputs) sig.args.push_back(ToType(t));
  for (const RawType& t : results) sig.results.push_back(ToType(t));
  return sig;
}

std::string PrintRaw(const Signature& sig) {
  RefuseOutputStorage(sig, kFormat, "a raw signature");
  const std::string in = MangleSide(sig.args, sig.arg_leaf_order, "argument");
  const std::string out = MangleSide(sig.results, sig.result_leaf_order, "result");
  return TaggedBuilder().Span(in, 'I').Span(out, 'R').str();
}

std::string ReadableRaw(std::string_view raw) {
  std::vector<RawType> inputs, results;
  ReadRaw(raw, &inputs, &results);
  return ReadableList(inputs) + " -> " + ReadableList(results);
}

}  // namespace ffijit
