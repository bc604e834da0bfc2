// The `iree.abi.declaration` format: IREE's printed signature of an exported function, e.g.
// `sync func @f(%input0: tensor<?x8xf32>, %n: index) -> (%output0: tensor<?x8xf32>)`, to a
// Signature and back. IREE writes it for people, not machines, and a frontend may replace it with
// free text, so this reader accepts only the grammar IREE's WrapEntryPoints pass emits and refuses
// everything else rather than guess.
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

constexpr const char* kFormat = "declaration";

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
// MLIR's suffix-id / bare-id continuation characters.
bool IsIdentChar(char c) {
  return IsIdentStart(c) || IsDigit(c) || c == '$' || c == '.' || c == '-';
}

// `index`, i<N>, si<N> or ui<N>: the types an MLIR integer attribute is printed with.
bool IsIntegerTypeWord(const std::string& word) {
  if (word == "index") return true;
  const size_t digits = word.rfind("si", 0) == 0 || word.rfind("ui", 0) == 0 ? 2
                        : word.rfind('i', 0) == 0                            ? 1
                                                                             : 0;
  return digits > 0 && word.size() > digits &&
         word.find_first_not_of("0123456789", digits) == std::string::npos;
}

class DeclarationReader {
 public:
  explicit DeclarationReader(std::string_view text) : text_(text) {}

  Signature Read(std::string* function_name) {
    SkipSpace();
    bool async = false;
    if (TakeWord("async")) {
      async = true;
    } else if (!TakeWord("sync")) {
      Fail(
          "expected `sync func @NAME(...) -> (...)` or `async func @NAME(...) -> (...)`: this "
          "is not an IREE signature declaration (a frontend may write free text there)");
    }
    SkipSpace();
    if (!TakeWord("func"))
      Fail("expected `func` after `" + std::string(async ? "async" : "sync") + "`");
    SkipSpace();
    Expect('@', "`@` and the function name");
    std::string name = ReadSymbolName();
    if (function_name != nullptr) *function_name = name;

    Signature sig;
    std::vector<Value> args;
    std::unordered_set<std::string> names;
    ReadList([&] {
      const size_t at = pos_;
      Value arg;
      arg.name = ReadValueName();
      if (!names.insert(arg.name).second) FailAt(at, "duplicate name `%" + arg.name + "`");
      SkipSpace();
      Expect(':', "`:` and the argument's type");
      ReadTypeWithAttributes(arg, /*argument=*/true);
      CheckStorageArgument(arg, args);
      args.push_back(std::move(arg));
    });
    SkipSpace();
    if (!TakeWord("->")) Fail("expected `->` and the parenthesised results");
    SkipSpace();
    if (Peek() != '(') Fail("expected `(`: the results are always parenthesised, `() -> ()`");
    names.clear();
    ReadList([&] {
      const size_t at = pos_;
      Value result;
      result.name = ReadValueName();
      if (!names.insert(result.name).second) FailAt(at, "duplicate name `%" + result.name + "`");
      SkipSpace();
      Expect(':', "`:` and the result's type");
      ReadTypeWithAttributes(result, /*argument=*/false);
      if (result.type == nullptr) {
        FailAt(result.type_at,
               "a `!hal.buffer` result: a buffer is only caller-provided output storage, an "
               "argument with `{iree.abi.output = N : index}`");
      }
      sig.results.push_back(std::move(result.type));
    });
    SkipSpace();
    if (pos_ != text_.size()) Fail("unexpected text after the results");
    BindArguments(args, sig);
    if (async) {
      // The coarse-fences model: the native takes a wait fence and a signal fence after the
      // declared arguments, as opaque handles.
      sig.args.push_back(Type::Simple(TypeKind::kOpaquePtr));
      sig.args.push_back(Type::Simple(TypeKind::kOpaquePtr));
      if (!sig.output_storage.empty()) sig.output_storage.resize(sig.args.size(), -1);
    }
    return sig;
  }

 private:
  // One declared argument or result.
  struct Value {
    std::string name;
    TypePtr type;  // nullptr for `!hal.buffer`, which is storage and carries no type
    size_t type_at = 0;
    int64_t output = -1;  // iree.abi.output's result index (arguments), or -1
    size_t output_at = 0;
  };

  [[noreturn]] void FailAt(size_t at, const std::string& what) { ThrowAt(kFormat, at, what); }
  [[noreturn]] void Fail(const std::string& what) { FailAt(pos_, what); }

  // What IREE's WrapEntryPoints accepts as an `iree.abi.output` argument: a `!hal.buffer`, or a
  // value it passes as a buffer view (a `!hal.buffer_view` or a tensor); and every result named
  // once.
  void CheckStorageArgument(const Value& arg, const std::vector<Value>& before) {
    if (arg.output < 0) {
      if (arg.type == nullptr) {
        FailAt(arg.type_at,
               "`!hal.buffer` without `{iree.abi.output = N : index}`: ffijit reads a buffer "
               "argument only as the caller-provided storage of result N");
      }
      return;
    }
    if (arg.type != nullptr && arg.type->kind != TypeKind::kNDArray) {
      FailAt(arg.output_at, "iree.abi.output on an argument of type `" + TypeToString(*arg.type) +
                                "`: output storage is a !hal.buffer, a !hal.buffer_view or a "
                                "tensor");
    }
    for (size_t i = 0; i < before.size(); ++i) {
      if (before[i].output == arg.output) {
        FailAt(arg.output_at, "iree.abi.output = " + std::to_string(arg.output) + ": result " +
                                  std::to_string(arg.output) +
                                  " already has its storage in argument #" + std::to_string(i));
      }
    }
  }

  // The arguments into `sig` once the results are known: each storage argument takes its
  // result's type (a buffer or a buffer view carries none of its own; a tensor must agree).
  void BindArguments(std::vector<Value>& args, Signature& sig) {
    for (size_t i = 0; i < args.size(); ++i) {
      Value& arg = args[i];
      if (arg.output >= 0) {
        const auto r = static_cast<size_t>(arg.output);
        if (r >= sig.results.size()) {
          FailAt(arg.output_at, "iree.abi.output = " + std::to_string(arg.output) +
                                    " names result " + std::to_string(arg.output) +
                                    ", but the function has " + std::to_string(sig.results.size()) +
                                    " results");
        }
        const TypePtr& result = sig.results[r];
        if (result->kind != TypeKind::kNDArray) {
          FailAt(arg.output_at, "iree.abi.output = " + std::to_string(arg.output) +
                                    " names result " + std::to_string(arg.output) + " of type `" +
                                    TypeToString(*result) + "`: output storage holds a tensor");
        }
        const bool typeless =
            arg.type == nullptr || (arg.type->scalar == ScalarKind::kAny && arg.type->rank < 0);
        if (!typeless && TypeToString(*arg.type) != TypeToString(*result)) {
          FailAt(arg.type_at, "the storage argument's type `" + TypeToString(*arg.type) +
                                  "` differs from result " + std::to_string(arg.output) + "'s `" +
                                  TypeToString(*result) +
                                  "`: the storage comes back as that result");
        }
        arg.type = result;
        if (sig.output_storage.empty()) sig.output_storage.assign(args.size(), -1);
        sig.output_storage[i] = static_cast<int32_t>(arg.output);
      }
      // IREE names an unnamed argument input<N>; only a name of its own makes a keyword.
      if (arg.name != "input" + std::to_string(i)) arg.type = Type::Named(arg.name, arg.type);
      sig.args.push_back(std::move(arg.type));
    }
  }

  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool AtEnd() const { return pos_ >= text_.size(); }

  void SkipSpace() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t' || Peek() == '\n' || Peek() == '\r')) {
      ++pos_;
    }
  }

  // Takes `word` when it is next and not followed by more identifier characters.
  bool TakeWord(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    const size_t end = pos_ + word.size();
    if (IsIdentChar(word.back()) && end < text_.size() && IsIdentChar(text_[end])) return false;
    pos_ = end;
    return true;
  }

  void Expect(char c, const std::string& what) {
    if (Peek() != c) Fail("expected " + what);
    ++pos_;
  }

  std::string Describe() const {
    if (AtEnd()) return "the end of the text";
    return "`" + Excerpt(text_.substr(pos_), 16) + "`";
  }

  // `(` item (`,` item)* `)` or `()`.
  template <typename F>
  void ReadList(F item) {
    SkipSpace();
    Expect('(', "`(`");
    SkipSpace();
    if (Peek() == ')') {
      ++pos_;
      return;
    }
    for (;;) {
      SkipSpace();
      item();
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == ')') {
        ++pos_;
        return;
      }
      Fail("expected `,` or `)`, got " + Describe());
    }
  }

  // A bare identifier, or a quoted string as MLIR prints symbol names that are not identifiers.
  std::string ReadSymbolName() {
    if (Peek() == '"') return ReadQuoted();
    const size_t start = pos_;
    if (!IsIdentStart(Peek())) Fail("expected the function name after `@`");
    while (!AtEnd() && IsIdentChar(Peek())) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  std::string ReadQuoted() {
    const size_t start = pos_;
    ++pos_;
    std::string out;
    while (!AtEnd() && Peek() != '"') {
      if (Peek() == '\\') {
        ++pos_;
        if (AtEnd()) break;
      }
      out += text_[pos_++];
    }
    if (AtEnd()) FailAt(start, "unterminated string");
    ++pos_;
    return out;
  }

  // `%name`: an MLIR value name, as IREE prints iree.abi.name or input<N>/output<N>.
  std::string ReadValueName() {
    if (Peek() != '%') Fail("expected `%name`, got " + Describe());
    ++pos_;
    const size_t start = pos_;
    while (!AtEnd() && IsIdentChar(Peek())) ++pos_;
    if (pos_ == start) Fail("expected a name after `%`");
    return std::string(text_.substr(start, pos_ - start));
  }

  // A TYPE and its optional `{attrs}` into `value`; an `iree.abi.encoding = TYPE` attribute
  // replaces the type, because the encoded type is the one that crosses the boundary.
  void ReadTypeWithAttributes(Value& value, bool argument) {
    SkipSpace();
    value.type_at = pos_;
    value.type = ReadType(/*buffer_allowed=*/true);
    SkipSpace();
    if (Peek() == '{') {
      TypePtr encoded = ReadAttributes(value, argument);
      if (encoded != nullptr) {
        if (value.type == nullptr) {
          FailAt(value.type_at,
                 "iree.abi.encoding on a `!hal.buffer`, which has no type to encode");
        }
        value.type = std::move(encoded);
      }
    }
  }

  // `N` or `N : index` (or another integer type): iree.abi.output's result index.
  int64_t ReadResultIndex() {
    const size_t at = pos_;
    int64_t index = 0;
    if (!IsDigit(Peek())) Fail("expected iree.abi.output's result index, got " + Describe());
    while (IsDigit(Peek())) {
      index = index * 10 + (Peek() - '0');
      if (index > INT32_MAX) FailAt(at, "iree.abi.output's result index is too large");
      ++pos_;
    }
    SkipSpace();
    if (Peek() == ':') {
      ++pos_;
      SkipSpace();
      const size_t type_at = pos_;
      const std::string word = ReadTypeWord();
      if (!IsIntegerTypeWord(word)) {
        FailAt(type_at, "iree.abi.output's result index has type `" + Excerpt(word, 40) +
                            "`: expected `index` or an integer type");
      }
      SkipSpace();
    }
    return index;
  }

  // `{name [= value], ...}`: values are skipped (balanced) except iree.abi.encoding's and, on
  // an argument, iree.abi.output's (into `value`).
  TypePtr ReadAttributes(Value& value, bool argument) {
    ++pos_;  // '{'
    TypePtr encoded;
    SkipSpace();
    if (Peek() == '}') {
      ++pos_;
      return encoded;
    }
    for (;;) {
      SkipSpace();
      const size_t at = pos_;
      std::string key;
      if (Peek() == '"') {
        key = ReadQuoted();
      } else {
        while (!AtEnd() && IsIdentChar(Peek())) ++pos_;
        key = std::string(text_.substr(at, pos_ - at));
        if (key.empty()) Fail("expected an attribute name, got " + Describe());
      }
      SkipSpace();
      const bool output = argument && key == "iree.abi.output";
      if (output && Peek() != '=') {
        FailAt(at,
               "iree.abi.output needs the index of the result it stores: "
               "`iree.abi.output = N : index`");
      }
      if (Peek() == '=') {
        ++pos_;
        SkipSpace();
        if (key == "iree.abi.encoding") {
          if (encoded != nullptr) FailAt(at, "iree.abi.encoding given twice");
          encoded = ReadType(/*buffer_allowed=*/false);
          SkipSpace();
        } else if (output) {
          if (value.output >= 0) FailAt(at, "iree.abi.output given twice");
          value.output_at = at;
          value.output = ReadResultIndex();
        } else {
          SkipAttributeValue();
        }
      }
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == '}') {
        ++pos_;
        return encoded;
      }
      Fail("expected `,` or `}` in the attributes, got " + Describe());
    }
  }

  // Skips one attribute value up to the `,` or `}` that ends it: brackets of all kinds balanced,
  // strings skipped whole, `->` (as in affine maps) not a closing `>`.
  void SkipAttributeValue() {
    const size_t start = pos_;
    std::vector<char> closers;
    while (!AtEnd()) {
      const char c = Peek();
      if (closers.empty() && (c == ',' || c == '}')) break;
      if (c == '"') {
        ReadQuoted();
        continue;
      }
      if (c == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '>') {
        pos_ += 2;
        continue;
      }
      if (c == '(' || c == '[' || c == '{' || c == '<') {
        if (closers.size() >= static_cast<size_t>(kMaxMetadataNesting)) {
          Fail("attribute value nested deeper than " + std::to_string(kMaxMetadataNesting));
        }
        closers.push_back(c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : '>');
      } else if (c == ')' || c == ']' || c == '}' || c == '>') {
        if (closers.empty() || closers.back() != c) Fail(std::string("unbalanced `") + c + "`");
        closers.pop_back();
      }
      ++pos_;
    }
    if (AtEnd()) FailAt(start, "unterminated attribute value");
    if (pos_ == start) Fail("expected an attribute value");
  }

  // An element or scalar type name: the run of identifier characters at pos_.
  std::string ReadTypeWord() {
    const size_t start = pos_;
    while (!AtEnd() && (IsIdentChar(Peek()) && Peek() != '$' && Peek() != '-')) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  // i<N>, si<N>, ui<N>, f16/bf16/f32/f64, index; anything else refused naming it.
  ScalarKind ScalarFromWord(const std::string& word, size_t at) {
    if (word == "index") return ScalarKind::kI64;
    if (word == "f16") return ScalarKind::kF16;
    if (word == "bf16") return ScalarKind::kBF16;
    if (word == "f32") return ScalarKind::kF32;
    if (word == "f64") return ScalarKind::kF64;
    bool is_unsigned = false;
    std::string digits;
    if (word.size() > 1 && word[0] == 'i') {
      digits = word.substr(1);
    } else if (word.size() > 2 && word[0] == 's' && word[1] == 'i') {
      digits = word.substr(2);
    } else if (word.size() > 2 && word[0] == 'u' && word[1] == 'i') {
      digits = word.substr(2);
      is_unsigned = true;
    }
    bool numeric = !digits.empty();
    for (char c : digits) numeric = numeric && IsDigit(c);
    if (numeric) {
      const std::string w = digits;
      if (!is_unsigned) {
        if (w == "1") return ScalarKind::kI1;
        if (w == "8") return ScalarKind::kI8;
        if (w == "16") return ScalarKind::kI16;
        if (w == "32") return ScalarKind::kI32;
        if (w == "64") return ScalarKind::kI64;
      } else {
        if (w == "8") return ScalarKind::kU8;
        if (w == "16") return ScalarKind::kU16;
        if (w == "32") return ScalarKind::kU32;
        if (w == "64") return ScalarKind::kU64;
      }
      FailAt(at, UnsupportedIntegerWidth(word, digits));
    }
    if (word.empty()) FailAt(at, "expected a type, got " + Describe());
    if (word == "complex") {
      FailAt(at, "complex element types have no ffijit dtype (no complex DLPack type is read)");
    }
    FailAt(at, "unsupported type `" + Excerpt(word, 40) + "`");
  }

  // nullptr for `!hal.buffer` when `buffer_allowed` (it is storage, not a typed value).
  TypePtr ReadType(bool buffer_allowed) {
    const size_t at = pos_;
    if (Peek() == '!') return ReadDialectType(buffer_allowed);
    const std::string word = ReadTypeWord();
    if (word == "tensor") return ReadTensor(at);
    if (word == "none") FailAt(at, "type `none` carries no value");
    return Type::Scalar(ScalarFromWord(word, at));
  }

  // tensor<DxDx...xELT>, tensor<ELT> (rank 0), tensor<*xELT> (unranked).
  TypePtr ReadTensor(size_t at) {
    if (Peek() != '<') FailAt(at, "expected `tensor<...>`");
    ++pos_;
    int32_t rank = 0;
    std::vector<int64_t> dims;
    if (Peek() == '*') {
      ++pos_;
      if (Peek() != 'x') Fail("expected `x` after `*` in an unranked tensor");
      ++pos_;
      rank = -1;
    } else {
      for (;;) {
        int64_t dim;
        const size_t dim_at = pos_;
        if (Peek() == '?') {
          ++pos_;
          dim = -1;
        } else if (IsDigit(Peek())) {
          dim = 0;
          while (IsDigit(Peek())) {
            const int d = Peek() - '0';
            if (dim > (INT64_MAX - d) / 10) FailAt(dim_at, "tensor dim too large");
            dim = dim * 10 + d;
            ++pos_;
          }
        } else {
          break;
        }
        if (Peek() != 'x') FailAt(dim_at, "expected `x` after a tensor dim");
        ++pos_;
        if (dims.size() >= 4096) FailAt(dim_at, "more than 4096 tensor dims");
        dims.push_back(dim);
        ++rank;
      }
    }
    const size_t elt_at = pos_;
    const std::string elt = ReadTypeWord();
    if (elt == "complex" && Peek() == '<') {
      FailAt(elt_at, "complex element types have no ffijit dtype (no complex DLPack type is read)");
    }
    const ScalarKind kind = ScalarFromWord(elt, elt_at);
    if (Peek() == ',') {
      Fail(
          "tensor encodings (`tensor<..., #encoding>`) are not read; IREE's boundary type "
          "carries none");
    }
    if (Peek() != '>') Fail("expected `>` closing the tensor type, got " + Describe());
    ++pos_;
    return Type::NDArray(kind, rank, std::move(dims));
  }

  // `!dialect.name`, possibly with `<...>` parameters.
  TypePtr ReadDialectType(bool buffer_allowed) {
    const size_t at = pos_;
    ++pos_;
    while (!AtEnd() && IsIdentChar(Peek()) && Peek() != '$' && Peek() != '-') ++pos_;
    const std::string name(text_.substr(at, pos_ - at));
    static constexpr const char* kMapped =
        "ffijit maps only !hal.buffer_view (an ndarray), !hal.fence (a ptr) and !hal.buffer with "
        "iree.abi.output (output storage)";
    if (Peek() == '<') {
      FailAt(at, "unsupported reference type `" + Excerpt(name, 40) + "<...>`: " + kMapped);
    }
    // A buffer view carries its shape and element type at run time: any rank, any element.
    if (name == "!hal.buffer_view") return Type::NDArray(ScalarKind::kAny, -1, {});
    if (name == "!hal.fence") return Type::Simple(TypeKind::kOpaquePtr);
    if (name == "!hal.buffer" && buffer_allowed) return nullptr;
    FailAt(at, "unsupported reference type `" + Excerpt(name, 40) + "`: " + kMapped);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

bool IsValueName(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!IsIdentChar(c)) return false;
  }
  return true;
}

void AppendElement(std::string& out, ScalarKind k) {
  switch (k) {
    case ScalarKind::kU8:
      out += "ui8";
      return;
    case ScalarKind::kU16:
      out += "ui16";
      return;
    case ScalarKind::kU32:
      out += "ui32";
      return;
    case ScalarKind::kU64:
      out += "ui64";
      return;
    default:
      out += ScalarKindName(k);
  }
}

void AppendType(std::string& out, const Type& t, const std::string& where) {
  switch (t.kind) {
    case TypeKind::kScalar:
      AppendElement(out, t.scalar);
      return;
    case TypeKind::kNDArray:
      if (t.scalar == ScalarKind::kAny && t.rank < 0) {
        out += "!hal.buffer_view";
        return;
      }
      if (t.scalar != ScalarKind::kAny) {
        out += "tensor<";
        if (t.rank < 0) out += "*x";
        for (int64_t d : t.dims) out += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
        AppendElement(out, t.scalar);
        out += '>';
        return;
      }
      break;
    case TypeKind::kOpaquePtr:
      if (!t.nullable) {
        out += "!hal.fence";
        return;
      }
      break;
    default:
      break;
  }
  throw ValueError(std::string(kFormat) + ": " + where + " `" + TypeToString(t) +
                   "` has no declaration form");
}

}  // namespace

Signature ParseDeclaration(std::string_view text, std::string* function_name) {
  return DeclarationReader(text).Read(function_name);
}

std::string PrintDeclaration(const Signature& sig, const std::string& function_name) {
  for (char c : function_name) {
    if (!IsIdentChar(c)) {
      throw ValueError(std::string(kFormat) + ": function name `" + Excerpt(function_name, 40) +
                       "` is not an identifier");
    }
  }
  if (function_name.empty() || !IsIdentStart(function_name[0])) {
    throw ValueError(std::string(kFormat) + ": function name `" + Excerpt(function_name, 40) +
                     "` is not an identifier");
  }
  if (!sig.arg_leaf_order.empty() || !sig.result_leaf_order.empty()) {
    throw ValueError(std::string(kFormat) + ": a declaration has no way to say that the " +
                     (sig.arg_leaf_order.empty() ? "result" : "argument") +
                     " leaves are out of native order");
  }
  const std::string defect = OutputStorageDefect(sig);
  if (!defect.empty()) throw ValueError(std::string(kFormat) + ": " + defect);
  // Two trailing non-nullable ptrs are the coarse-fences wait and signal fences: print `async`.
  size_t declared = sig.args.size();
  const auto is_fence = [&](size_t i) {
    const Type* t = sig.args[i].get();
    return t != nullptr && t->kind == TypeKind::kOpaquePtr && !t->nullable;
  };
  const bool async = declared >= 2 && is_fence(declared - 1) && is_fence(declared - 2);
  if (async) declared -= 2;
  std::string out = async ? "async func @" : "sync func @";
  out += function_name;
  out += '(';
  std::unordered_set<std::string> names;
  for (size_t i = 0; i < declared; ++i) {
    if (i) out += ", ";
    const std::string where = "argument " + std::to_string(i);
    const Type* t = sig.args[i].get();
    if (t == nullptr) throw ValueError(std::string(kFormat) + ": " + where + " has no type");
    std::string name = "input" + std::to_string(i);
    if (t->kind == TypeKind::kNamed) {
      name = t->name;
      if (!IsValueName(name)) {
        throw ValueError(std::string(kFormat) + ": " + where + ": keyword `" + Excerpt(name, 40) +
                         "` is not a value name");
      }
      t = t->elements.empty() ? nullptr : t->elements[0].get();
      if (t == nullptr) throw ValueError(std::string(kFormat) + ": " + where + " has no type");
    }
    if (t != sig.args[i].get() && name == "input" + std::to_string(i)) {
      throw ValueError(std::string(kFormat) + ": " + where + ": keyword `" + name +
                       "` is IREE's default name for that position and would read back "
                       "positional");
    }
    // An explicit name equal to another argument's default would read back as a duplicate.
    if (!names.insert(name).second) {
      throw ValueError(std::string(kFormat) + ": " + where + ": name `%" + name +
                       "` is used twice");
    }
    out += '%' + name + ": ";
    const int32_t stores = i < sig.output_storage.size() ? sig.output_storage[i] : -1;
    if (stores >= 0) {
      // IREE's own spelling: the buffer whose storage the result is written into.
      out += "!hal.buffer {iree.abi.output = " + std::to_string(stores) + " : index}";
    } else {
      AppendType(out, *t, where);
    }
  }
  out += ") -> (";
  for (size_t i = 0; i < sig.results.size(); ++i) {
    if (i) out += ", ";
    const std::string where = "result " + std::to_string(i);
    if (sig.results[i] == nullptr) {
      throw ValueError(std::string(kFormat) + ": " + where + " has no type");
    }
    out += "%output" + std::to_string(i) + ": ";
    AppendType(out, *sig.results[i], where);
  }
  out += ')';
  return out;
}

}  // namespace ffijit
