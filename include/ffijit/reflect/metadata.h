// Parsers and printers for IREE's function metadata formats: the `iree.abi` JSON, the raw mangled
// `fv`/`f` signature, the SIP structured-index-path signature and the `iree.abi.declaration`.
//
// Every parser throws ffijit::Error of kind "ValueError" with the message
// "<format>: at offset N: <what was expected>" on bad input, where <format> is "json",
// "raw signature", "sip" or "reflection dict", and N is a byte offset into the text that parser
// was given (for the strings inside a reflection dict, into that string). Nesting deeper than
// kMaxMetadataNesting is rejected. No input makes a parser crash, hang or read out of bounds.
// Functions that see no text (Combine, SipSignature's path functions, the printers) throw
// ValueError "<format>: <what>" naming the argument, result or raw index instead of an offset; a
// reflection dict's member errors end with `(in the reflection dict's "f")` (or "sip",
// "iree.abi", "iree.abi.declaration").
//
// The IREE formats describe packed-side types only; Signature::convention is a native-side
// property they do not carry: printers ignore it and parsers return kPlain.
#ifndef FFIJIT_REFLECT_METADATA_H_
#define FFIJIT_REFLECT_METADATA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ffijit/reflect/signature.h"

namespace ffijit {

// Deepest nesting of structures (JSON arrays/objects, spans in spans) any parser accepts.
inline constexpr int kMaxMetadataNesting = 32;

enum class MetadataFormat { kAuto, kJson, kRaw, kSip, kDeclaration };

// "auto", "json", "raw", "sip", "declaration".
FFIJIT_REFLECT_API const char* MetadataFormatName(MetadataFormat format);
// The format a name spells ("auto", "json", "raw", "sip", "declaration"; nothing else): the one
// place the CLI options and JIT module loaders read a format's name.
FFIJIT_REFLECT_API std::optional<MetadataFormat> MetadataFormatFromName(std::string_view name);

// kJson: the `iree.abi` JSON object. kRaw: a bare mangled "I..R.." string, or the
// `iree.reflection` dict as JSON, {"fv":"1","f":"I..R.."}. kSip: the `iree.reflection` dict as
// JSON with "sip" and "f" (the SIP gives the structure, "f" the types; both are needed).
// kJson also reads the reflection dict {"iree.abi": "<iree.abi JSON text>", ...} (other keys
// ignored, as IREE's runtime does). kDeclaration: an `iree.abi.declaration` text, bare or as
// {"iree.abi.declaration": "..."}.
// kAuto: a JSON object with "a"/"r" is `iree.abi`; otherwise a reflection dict, read by the first
// of its members "iree.abi", "sip" (with "f"), "f", "iree.abi.declaration" present; bare text
// starting with `sync func` or `async func` is a declaration, any other bare text raw.
FFIJIT_REFLECT_API Signature ParseMetadata(std::string_view text,
                                           MetadataFormat format = MetadataFormat::kAuto);
// The format kAuto reads `text` as (never kAuto); throws ValueError on JSON that is not an object
// or an object with none of the keys above.
FFIJIT_REFLECT_API MetadataFormat DetectMetadataFormat(std::string_view text);
// Whether the formats read `text` as a JSON dict (its first non-space character is `{`) rather
// than as bare text (a raw signature, a declaration, a SIP string).
FFIJIT_REFLECT_API bool IsMetadataDict(std::string_view text);

// ---- iree.abi JSON ----
// Type records: "i1" "i8".."i64" "u8".."u64" "f16" "bf16" "f32" "f64", "unknown", null (a gap,
// only as an slist or stuple slot), ["named", key, T] (top-level arguments only), ["ndarray",
// elt|null, rank|null, dim|null...] (exactly `rank` dims; null is dynamic, a null or "unknown" elt
// is any element), other i<N>/u<N> refused naming the width,
// ["slist", T...], ["stuple", T...], ["sdict", [key, T]...] (order kept as written),
// ["py_homogeneous_list", T]. torch-mlir's tags map onto the model: "pystr" -> str,
// ["py_uniform_list", T] -> list, ["pytuple", T...] -> stuple, ["py_uniform_dict", K, V] -> dict;
// the old ["sdict_kwargs", [key, T]...] (last top-level argument only) becomes named arguments.
// ffijit's own additions for types IREE has no record for: "str", "bytes", "ptr", "object",
// ["object", type_key], "DataType", "Device", ["nullable", T] (T a str, ptr or object).
FFIJIT_REFLECT_API Signature ParseJson(std::string_view text);
// Sorted keys, no spaces, "v":1, as the emitters write: {"a":[...],"r":[...],"v":1}. Throws
// ValueError for leaves out of native order (a Signature's leaf orders) and for output storage,
// which it cannot state.
FFIJIT_REFLECT_API std::string PrintJson(const Signature& sig);

// ---- iree.abi.declaration ----
// `(sync|async) func @NAME(%n: TYPE[ {attrs}], ...) -> (%n: TYPE[ {attrs}], ...)` as IREE's
// WrapEntryPoints prints it. TYPE: tensor<DxDx..xE> (D a number or ?; tensor<E> is rank 0,
// tensor<*xE> unknown rank) -> ndarray; E or a scalar type: i1 i8 i16 i32 i64 (si<N> alike), ui8
// .. ui64, f16 bf16 f32 f64, index (= i64); !hal.buffer_view -> ndarray<any>; !hal.fence -> ptr.
// Other integer widths, complex, other element and reference types are refused naming them.
// Attribute values are skipped except `iree.abi.encoding = TYPE`, which replaces the type (it is
// what crosses), and an argument's `iree.abi.output = N`: the argument (a !hal.buffer, which is
// read only so, a !hal.buffer_view or a tensor) is the output storage of result N, an ndarray of
// that result's type (Signature::output_storage); N beyond the results, named twice, or on
// another type is refused. An argument named anything but input<position> becomes a keyword
// argument; result names are dropped. `async` appends two ptr arguments, the wait and signal
// fences. Free text is refused. `function_name`, when given, receives NAME.
FFIJIT_REFLECT_API Signature ParseDeclaration(std::string_view text,
                                              std::string* function_name = nullptr);
// The declaration of `sig` as `function_name`: positional arguments print as %input<N>, keywords
// as their name, results as %output<N>; two trailing non-nullable ptr arguments print as `async`,
// other ptrs as !hal.fence; u<N> as ui<N>; output storage as `!hal.buffer {iree.abi.output = N :
// index}`. Throws ValueError naming the first argument or result with no declaration form
// (strings, objects, structures, ndarray<any,...> of known rank, ...), for leaves out of native
// order (a Signature's leaf orders) and for malformed output storage (OutputStorageDefect).
FFIJIT_REFLECT_API std::string PrintDeclaration(const Signature& sig,
                                                const std::string& function_name);

// ---- raw function signature (fv = 1) ----
// `I<len>!<types>R<len>!<types>`; a type is B (buffer: optional `t` element code 0-11, then one
// `d` per dim, -1 dynamic), S (scalar: optional `t`), O (reference object) or U (unrecognized,
// read as `unknown`). Element codes follow ScalarKind's order; a bool is written as sint8 (t4),
// so it reads back as i8.
FFIJIT_REFLECT_API Signature ParseRaw(std::string_view text);
// The mangler: the native's raw values, in native order (a Signature's leaf orders applied). Throws
// ValueError for output storage, which it cannot state, and naming the first argument or result
// with no raw form (strings, bytes, pointers, typed or nullable objects, DataType, Device,
// structures, named arguments, ndarrays of unknown rank or element).
FFIJIT_REFLECT_API std::string PrintRaw(const Signature& sig);
// IREE's FunctionSignatureToString form, e.g. "(sint32) -> (float64)",
// "(RefObject<?>, Buffer<float32[?x128x64]>) -> (Buffer<uint64[32x?x64]>)"; U prints as
// "Unrecognized".
FFIJIT_REFLECT_API std::string ReadableRaw(std::string_view raw);

// ---- SIP structured index paths (version 1) ----
// One step of an index path: a sequence position or a dict key.
using SipKey = std::variant<int64_t, std::string>;
using SipPath = std::vector<SipKey>;

// One node of a SIP tree: nothing (an empty I/R span), a raw argument/result index, a sequence
// (integer keys) or a dict (string keys). Children keep the order they were written in.
struct SipNode {
  enum class Kind : uint8_t { kNone, kRaw, kSequence, kDict };
  Kind kind = Kind::kNone;
  int64_t raw_index = -1;         // kRaw
  std::vector<SipKey> keys;       // kSequence / kDict, one per child
  std::vector<SipNode> children;  // kSequence / kDict
};

struct FFIJIT_REFLECT_API SipSignature {
  SipNode inputs;
  SipNode results;

  // Index path of every raw input (result), by raw index; the root itself has the empty path.
  // Throws ValueError when the raw indices are not exactly 0..n-1, each once.
  std::vector<SipPath> InputPaths() const;
  std::vector<SipPath> ResultPaths() const;
  // The builder: a tree from the index path of each raw input and result (paths[i] locates raw
  // index i), children sorted by key as IREE's mangler writes them. Throws ValueError on
  // conflicting paths (a key twice, integer and string keys under one node, a leaf with children).
  // Paths lead to leaves, so an empty sequence or dict (`S1!`, `D1!`) cannot be built this way.
  static SipSignature FromIndexPaths(const std::vector<SipPath>& inputs,
                                     const std::vector<SipPath>& results);
};

FFIJIT_REFLECT_API SipSignature ParseSip(std::string_view text);
FFIJIT_REFLECT_API std::string PrintSip(const SipSignature& sip);
// IREE's ToStringVisitor form of one side, e.g. ":[\n  0=raw(0),\n  1=raw(1),\n],\n".
FFIJIT_REFLECT_API std::string ReadableSip(const SipNode& root);

// The structured Signature from a raw signature (types, linear order) and a SIP (structure).
// Root inputs: a sequence gives positional arguments, a dict gives named arguments, a raw index
// one argument. Root results: a sequence gives several results, a dict one sdict result, a raw
// index one result. Nested sequences become slists, nested dicts sdicts whose slots are ordered
// by their first raw index. Each raw index must be used exactly once (else a ValueError); the
// leaves may map them in any order, as IREE maps by index: the Signature's arg_leaf_order /
// result_leaf_order then say which native parameter (result) each leaf is.
FFIJIT_REFLECT_API Signature Combine(const Signature& raw, const SipSignature& sip);

}  // namespace ffijit

#endif  // FFIJIT_REFLECT_METADATA_H_
