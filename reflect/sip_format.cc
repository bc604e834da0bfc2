// The SIP structured-index-path signature: parser, builder, readable form, and Combine with raw.
#include <algorithm>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ffijit/error.h"
#include "ffijit/reflect/metadata.h"
#include "json_dom.h"
#include "tagged_lexer.h"

namespace ffijit {
namespace {

constexpr const char* kFormat = "sip";
constexpr int64_t kMaxRawIndex = 65535;
// Sequence slots (keys and the holes below them) one side of a Combine may make in all: a hole
// costs a slot without a leaf, so the raw signature's size does not bound them.
constexpr int64_t kMaxSequenceSlots = 65536;

std::string KeyToString(const SipKey& key) {
  if (const int64_t* i = std::get_if<int64_t>(&key)) return std::to_string(*i);
  return std::get<std::string>(key);
}

class SipReader {
 public:
  // Reads the single value (or nothing) inside an I or R span.
  SipNode ReadRoot(const TaggedToken& span) {
    seen_.clear();
    TaggedLexer lexer(span.sval, span.content_offset);
    const TaggedToken& first = lexer.Next();
    if (first.kind == TaggedToken::Kind::kError) ThrowLexError(lexer, kFormat);
    if (first.kind == TaggedToken::Kind::kEnd) return SipNode();
    SipNode root = ReadValue(first, 1);
    const TaggedToken& tail = lexer.Next();
    if (tail.kind == TaggedToken::Kind::kError) ThrowLexError(lexer, kFormat);
    if (tail.kind != TaggedToken::Kind::kEnd) {
      ThrowAt(kFormat, tail.offset,
              std::string("expected one value in the ") + span.tag + " span, got a second one");
    }
    return root;
  }

 private:
  SipNode ReadValue(const TaggedToken& tok, int depth) {
    if (depth > kMaxMetadataNesting) {
      ThrowAt(kFormat, tok.offset,
              "structures nested deeper than " + std::to_string(kMaxMetadataNesting));
    }
    SipNode node;
    if (tok.kind == TaggedToken::Kind::kInteger && tok.tag == '_') {
      if (tok.ival < 0) {
        ThrowAt(kFormat, tok.offset, "negative raw index " + std::to_string(tok.ival));
      }
      if (!seen_.insert(tok.ival).second) {
        ThrowAt(kFormat, tok.offset, "raw index " + std::to_string(tok.ival) + " appears twice");
      }
      node.kind = SipNode::Kind::kRaw;
      node.raw_index = tok.ival;
      return node;
    }
    if (tok.kind == TaggedToken::Kind::kSpan && (tok.tag == 'S' || tok.tag == 'D')) {
      node.kind = tok.tag == 'S' ? SipNode::Kind::kSequence : SipNode::Kind::kDict;
      ReadChildren(tok, depth, &node);
      return node;
    }
    ThrowAt(kFormat, tok.offset,
            std::string("expected a value (_<raw index>, S<sequence> or D<dict>), got '") +
                tok.tag + "'");
  }

  // S: (k<int> value)*; D: (K<span key> value)*.
  void ReadChildren(const TaggedToken& span, int depth, SipNode* node) {
    const bool sequence = span.tag == 'S';
    std::set<SipKey> seen;
    TaggedLexer lexer(span.sval, span.content_offset);
    for (;;) {
      const TaggedToken& key = lexer.Next();
      if (key.kind == TaggedToken::Kind::kEnd) return;
      if (key.kind == TaggedToken::Kind::kError) ThrowLexError(lexer, kFormat);
      SipKey parsed;
      if (sequence && key.kind == TaggedToken::Kind::kInteger && key.tag == 'k') {
        if (key.ival < 0) ThrowAt(kFormat, key.offset, "negative sequence key");
        parsed = key.ival;
      } else if (!sequence && key.kind == TaggedToken::Kind::kSpan && key.tag == 'K') {
        parsed = std::string(key.sval);
      } else {
        ThrowAt(kFormat, key.offset,
                sequence ? "expected a sequence key k<int>" : "expected a dict key K<len>!<key>");
      }
      if (!seen.insert(parsed).second) {
        ThrowAt(kFormat, key.offset, "duplicate key " + KeyToString(parsed));
      }
      const size_t key_offset = key.offset;
      const TaggedToken& value = lexer.Next();
      if (value.kind == TaggedToken::Kind::kError) ThrowLexError(lexer, kFormat);
      if (value.kind == TaggedToken::Kind::kEnd) {
        ThrowAt(kFormat, key_offset, "key " + KeyToString(parsed) + " has no value");
      }
      node->keys.push_back(std::move(parsed));
      node->children.push_back(ReadValue(value, depth + 1));
    }
  }

  std::unordered_set<int64_t> seen_;  // sets, so huge inputs cannot cost quadratic time
};

void WriteNode(const SipNode& node, TaggedBuilder* out) {
  switch (node.kind) {
    case SipNode::Kind::kNone:
      return;
    case SipNode::Kind::kRaw:
      out->Integer(node.raw_index, '_');
      return;
    case SipNode::Kind::kSequence:
    case SipNode::Kind::kDict: {
      TaggedBuilder inner;
      for (size_t i = 0; i < node.children.size() && i < node.keys.size(); ++i) {
        if (const int64_t* k = std::get_if<int64_t>(&node.keys[i])) {
          inner.Integer(*k, 'k');
        } else {
          inner.Span(std::get<std::string>(node.keys[i]), 'K');
        }
        WriteNode(node.children[i], &inner);
      }
      out->Span(inner.str(), node.kind == SipNode::Kind::kSequence ? 'S' : 'D');
      return;
    }
  }
}

void AppendReadable(const SipNode& node, const std::string& key, int indent, std::string* out) {
  if (node.kind == SipNode::Kind::kNone) return;
  const std::string pad(static_cast<size_t>(indent), ' ');
  if (node.kind == SipNode::Kind::kRaw) {
    *out += pad + key + "=raw(" + std::to_string(node.raw_index) + "),\n";
    return;
  }
  const bool sequence = node.kind == SipNode::Kind::kSequence;
  *out += pad + key + (sequence ? ":[\n" : ":{\n");
  for (size_t i = 0; i < node.children.size() && i < node.keys.size(); ++i) {
    AppendReadable(node.children[i], KeyToString(node.keys[i]), indent + 2, out);
  }
  *out += pad + (sequence ? "],\n" : "},\n");
}

// Collects the path of every leaf, then checks the raw indices are exactly 0..n-1.
void CollectPaths(const SipNode& node, SipPath* path, std::vector<SipPath>* by_index,
                  std::vector<bool>* seen) {
  if (node.kind == SipNode::Kind::kRaw) {
    // Paths are stored by raw index: bound it before allocating that many.
    if (node.raw_index < 0 || node.raw_index > kMaxRawIndex) {
      throw ValueError("sip: raw index " + std::to_string(node.raw_index) +
                       " is out of range (at most " + std::to_string(kMaxRawIndex) + ")");
    }
    const size_t i = static_cast<size_t>(node.raw_index);
    if (i >= by_index->size()) {
      by_index->resize(i + 1);
      seen->resize(i + 1, false);
    }
    if ((*seen)[i]) throw ValueError("sip: raw index " + std::to_string(i) + " appears twice");
    (*seen)[i] = true;
    (*by_index)[i] = *path;
    return;
  }
  for (size_t c = 0; c < node.children.size() && c < node.keys.size(); ++c) {
    path->push_back(node.keys[c]);
    CollectPaths(node.children[c], path, by_index, seen);
    path->pop_back();
  }
}

std::vector<SipPath> PathsOf(const SipNode& root, const char* side) {
  std::vector<SipPath> by_index;
  std::vector<bool> seen;
  SipPath path;
  CollectPaths(root, &path, &by_index, &seen);
  for (size_t i = 0; i < seen.size(); ++i) {
    if (!seen[i]) {
      throw ValueError(std::string("sip: ") + side + " use raw index " +
                       std::to_string(seen.size() - 1) + " but not raw index " + std::to_string(i));
    }
  }
  return by_index;
}

bool KeyLess(const SipKey& a, const SipKey& b) {
  return a < b;
}

void Insert(SipNode* node, const SipPath& path, size_t depth, int64_t raw_index, const char* side) {
  const std::string where = std::string("sip: ") + side + " raw index " + std::to_string(raw_index);
  if (depth == path.size()) {
    if (node->kind != SipNode::Kind::kNone) throw ValueError(where + ": its path is already taken");
    node->kind = SipNode::Kind::kRaw;
    node->raw_index = raw_index;
    return;
  }
  if (depth >= static_cast<size_t>(kMaxMetadataNesting)) {
    throw ValueError(where + ": path deeper than " + std::to_string(kMaxMetadataNesting));
  }
  const SipKey& key = path[depth];
  const SipNode::Kind want =
      std::holds_alternative<int64_t>(key) ? SipNode::Kind::kSequence : SipNode::Kind::kDict;
  if (want == SipNode::Kind::kSequence && std::get<int64_t>(key) < 0) {
    throw ValueError(where + ": negative sequence key");
  }
  if (node->kind == SipNode::Kind::kNone) {
    node->kind = want;
  } else if (node->kind != want) {
    throw ValueError(where + ": key " + KeyToString(key) +
                     (node->kind == SipNode::Kind::kRaw ? " below a raw leaf"
                                                        : " mixes integer and string keys"));
  }
  auto pos = std::lower_bound(node->keys.begin(), node->keys.end(), key, KeyLess);
  const size_t i = static_cast<size_t>(pos - node->keys.begin());
  if (pos == node->keys.end() || *pos != key) {
    node->keys.insert(pos, key);
    node->children.insert(node->children.begin() + static_cast<std::ptrdiff_t>(i), SipNode());
  }
  Insert(&node->children[i], path, depth + 1, raw_index, side);
}

SipNode BuildTree(const std::vector<SipPath>& paths, const char* side) {
  SipNode root;
  for (size_t i = 0; i < paths.size(); ++i) {
    Insert(&root, paths[i], 0, static_cast<int64_t>(i), side);
  }
  return root;
}

// Turns SIP subtrees into Types, recording the raw index of each leaf in the order it flattens
// (IREE maps a leaf to its raw value by index, so any order is valid).
class Combiner {
 public:
  Combiner(const std::vector<TypePtr>& raw, const char* side)
      : raw_(raw), side_(side), used_(raw.size(), false) {}

  TypePtr Convert(const SipNode& node) {
    switch (node.kind) {
      case SipNode::Kind::kRaw:
        return Leaf(node.raw_index);
      case SipNode::Kind::kSequence:
        return Type::Sequence(TypeKind::kSList, ConvertChildren(node));
      case SipNode::Kind::kDict: {
        std::vector<std::string> keys;
        std::vector<TypePtr> types;
        for (size_t i : DictOrder(node)) {
          keys.push_back(std::get<std::string>(node.keys[i]));
          types.push_back(Convert(node.children[i]));
        }
        return Type::SDict(std::move(keys), std::move(types));
      }
      case SipNode::Kind::kNone:
        break;
    }
    throw ValueError(std::string("sip: ") + side_ + " contain an empty node");
  }

  // A sequence's children in key order, whatever order the keys are written in; a key missing
  // below the largest is a gap (nullptr), as IREE fills a result list's holes with None.
  std::vector<TypePtr> ConvertChildren(const SipNode& node) {
    std::vector<std::pair<int64_t, size_t>> order;  // (key, child)
    for (size_t i = 0; i < node.children.size() && i < node.keys.size(); ++i) {
      const int64_t* k = std::get_if<int64_t>(&node.keys[i]);
      if (k == nullptr) {
        throw ValueError(std::string("sip: ") + side_ + ": a sequence with a string key");
      }
      order.emplace_back(*k, i);
    }
    std::sort(order.begin(), order.end());
    // Keys are distinct (the reader and the builder refuse repeats); the largest bounds the length.
    const int64_t length = order.empty() ? 0 : order.back().first + 1;
    if (length > kMaxSequenceSlots - slots_) {
      throw ValueError(std::string("sip: ") + side_ + ": sequence key " +
                       std::to_string(order.back().first) + " makes more than " +
                       std::to_string(kMaxSequenceSlots) + " sequence slots in all");
    }
    slots_ += length;
    std::vector<TypePtr> out(static_cast<size_t>(length));
    for (const auto& [key, child] : order) {
      out[static_cast<size_t>(key)] = Convert(node.children[child]);
    }
    return out;
  }

  // Dict slots ordered by their first raw index: the keys are not passed, so only the order of the
  // flattened values matters, and this order keeps it the raw order whenever it can be.
  static std::vector<size_t> DictOrder(const SipNode& node) {
    std::vector<std::pair<int64_t, size_t>> first_leaf;  // (first raw index, slot) sorts stably
    for (size_t i = 0; i < node.children.size(); ++i) {
      first_leaf.emplace_back(FirstLeaf(node.children[i]), i);
    }
    std::sort(first_leaf.begin(), first_leaf.end());
    std::vector<size_t> order;
    for (const auto& entry : first_leaf) order.push_back(entry.second);
    return order;
  }

  void CheckAllUsed() const {
    if (order_.size() != raw_.size()) {
      throw ValueError(std::string("sip: ") + side_ + " map " + std::to_string(order_.size()) +
                       " raw values but the raw signature has " + std::to_string(raw_.size()));
    }
  }

  // The raw index of each leaf in the order the leaves were converted (depth first, as the
  // executors flatten them); empty when that is the raw order.
  std::vector<int32_t> LeafOrder() const {
    for (size_t i = 0; i < order_.size(); ++i) {
      if (order_[i] != static_cast<int32_t>(i)) return order_;
    }
    return {};
  }

 private:
  static int64_t FirstLeaf(const SipNode& node) {
    if (node.kind == SipNode::Kind::kRaw) return node.raw_index;
    int64_t best = INT64_MAX;
    for (const SipNode& c : node.children) best = std::min(best, FirstLeaf(c));
    return best;
  }

  TypePtr Leaf(int64_t index) {
    if (index < 0 || static_cast<size_t>(index) >= raw_.size()) {
      throw ValueError(std::string("sip: ") + side_ + " refer to raw index " +
                       std::to_string(index) + " but the raw signature has " +
                       std::to_string(raw_.size()));
    }
    // The reader refuses a repeated index; a tree built in code is checked here.
    if (used_[static_cast<size_t>(index)]) {
      throw ValueError(std::string("sip: ") + side_ + " map raw index " + std::to_string(index) +
                       " twice");
    }
    used_[static_cast<size_t>(index)] = true;
    order_.push_back(static_cast<int32_t>(index));
    return raw_[static_cast<size_t>(index)];
  }

  const std::vector<TypePtr>& raw_;
  const char* side_;
  std::vector<bool> used_;      // by raw index
  std::vector<int32_t> order_;  // raw index of each leaf converted so far
  int64_t slots_ = 0;           // sequence slots made so far (kMaxSequenceSlots)
};

}  // namespace

SipSignature ParseSip(std::string_view text) {
  SipSignature sip;
  ReadInputAndResultSpans(text, kFormat, [&](int index, const TaggedToken& span) {
    SipReader reader;
    (index == 0 ? sip.inputs : sip.results) = reader.ReadRoot(span);
  });
  return sip;
}

std::string PrintSip(const SipSignature& sip) {
  TaggedBuilder in, out;
  WriteNode(sip.inputs, &in);
  WriteNode(sip.results, &out);
  return TaggedBuilder().Span(in.str(), 'I').Span(out.str(), 'R').str();
}

std::string ReadableSip(const SipNode& root) {
  std::string out;
  AppendReadable(root, "", 0, &out);
  return out;
}

std::vector<SipPath> SipSignature::InputPaths() const {
  return PathsOf(inputs, "inputs");
}
std::vector<SipPath> SipSignature::ResultPaths() const {
  return PathsOf(results, "results");
}

SipSignature SipSignature::FromIndexPaths(const std::vector<SipPath>& inputs,
                                          const std::vector<SipPath>& results) {
  SipSignature sip;
  sip.inputs = BuildTree(inputs, "inputs");
  sip.results = BuildTree(results, "results");
  return sip;
}

Signature Combine(const Signature& raw, const SipSignature& sip) {
  Signature sig;
  sig.convention = raw.convention;

  Combiner args(raw.args, "inputs");
  const SipNode& in = sip.inputs;
  if (in.kind == SipNode::Kind::kRaw) {
    sig.args.push_back(args.Convert(in));
  } else if (in.kind == SipNode::Kind::kSequence) {
    sig.args = args.ConvertChildren(in);
    for (size_t i = 0; i < sig.args.size(); ++i) {
      if (sig.args[i] == nullptr) {
        // IREE would read positional argument i and ignore it; a packed call has no slot for an
        // argument that reaches no native parameter.
        throw ValueError("sip: inputs: no key k" + std::to_string(i) +
                         " in the argument sequence (a positional argument that is never passed)");
      }
    }
  } else if (in.kind == SipNode::Kind::kDict) {
    for (size_t i : Combiner::DictOrder(in)) {
      sig.args.push_back(
          Type::Named(std::get<std::string>(in.keys[i]), args.Convert(in.children[i])));
    }
  }
  args.CheckAllUsed();
  sig.arg_leaf_order = args.LeafOrder();

  Combiner res(raw.results, "results");
  const SipNode& out = sip.results;
  if (out.kind == SipNode::Kind::kSequence) {
    // IREE returns a root result sequence as a list, whatever its length (S1! an empty one, one
    // key a list of one) and with None in its holes: one slist result, never several results.
    sig.results.push_back(Type::Sequence(TypeKind::kSList, res.ConvertChildren(out)));
  } else if (out.kind != SipNode::Kind::kNone) {
    sig.results.push_back(res.Convert(out));
  }
  res.CheckAllUsed();
  sig.result_leaf_order = res.LeafOrder();
  return sig;
}

}  // namespace ffijit
