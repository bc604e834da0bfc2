// ParseMetadata: format detection and the `iree.reflection` dict ({"f", "fv", "sip", "iree.abi",
// "iree.abi.declaration", ...}).
#include <string>

#include "ffijit/error.h"
#include "ffijit/reflect/metadata.h"
#include "json_dom.h"

namespace ffijit {
namespace {

constexpr const char* kDictFormat = "reflection dict";

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view TrimTrailing(std::string_view text) {
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
  return text;
}

// IREE's declarations open with the function kind; a raw signature opens with `I`.
bool LooksLikeDeclaration(std::string_view text) {
  size_t p = 0;
  while (p < text.size() && IsSpace(text[p])) ++p;
  text.remove_prefix(p);
  for (std::string_view kind : {"sync", "async"}) {
    if (text.substr(0, kind.size()) == kind && text.size() > kind.size() &&
        IsSpace(text[kind.size()])) {
      return true;
    }
  }
  return false;
}

// A string member of the reflection dict, or nullptr when absent.
const JsonValue* Member(const JsonValue& dict, const char* key) {
  for (size_t i = 0; i < dict.keys.size(); ++i) {
    if (dict.keys[i] == key) return &dict.items[i];
  }
  return nullptr;
}

const std::string* StringMember(const JsonValue& dict, const char* key) {
  const JsonValue* v = Member(dict, key);
  if (v == nullptr) return nullptr;
  if (v->kind != JsonValue::Kind::kString) {
    ThrowAt(kDictFormat, v->offset,
            std::string("expected \"") + key + "\" to be a string, got " + v->KindName());
  }
  return &v->string;
}

// "fv" and "abiv" are written as "1" by the MLIR attribute printer and as 1 by hand.
void CheckVersion(const JsonValue& dict, const char* key) {
  const JsonValue* v = Member(dict, key);
  if (v == nullptr) return;
  const bool one = (v->kind == JsonValue::Kind::kString && v->string == "1") ||
                   (v->kind == JsonValue::Kind::kInt && v->integer == 1);
  if (!one)
    ThrowAt(kDictFormat, v->offset,
            std::string("unsupported version: expected \"") + key + "\": \"1\"");
}

// Parses a string taken from the dict, saying which member it came from on error.
template <typename F>
auto FromMember(const char* key, F parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const Error& e) {
    throw Error(e.kind(), e.message() + " (in the reflection dict's \"" + key + "\")");
  }
}

Signature ParseDict(const JsonValue& dict, MetadataFormat format) {
  if (format == MetadataFormat::kJson) {
    const std::string* abi = StringMember(dict, "iree.abi");
    if (abi == nullptr) ThrowAt(kDictFormat, dict.offset, "missing \"iree.abi\"");
    return FromMember("iree.abi", [&] { return ParseJson(*abi); });
  }
  if (format == MetadataFormat::kDeclaration) {
    const std::string* decl = StringMember(dict, "iree.abi.declaration");
    if (decl == nullptr) ThrowAt(kDictFormat, dict.offset, "missing \"iree.abi.declaration\"");
    return FromMember("iree.abi.declaration", [&] { return ParseDeclaration(*decl); });
  }
  CheckVersion(dict, "fv");
  CheckVersion(dict, "abiv");
  const std::string* f = StringMember(dict, "f");
  const std::string* sip = StringMember(dict, "sip");
  if (format == MetadataFormat::kSip) {
    if (sip == nullptr) ThrowAt(kDictFormat, dict.offset, "missing \"sip\"");
    if (f == nullptr) {
      ThrowAt(kDictFormat, dict.offset,
              "missing \"f\": the SIP gives only the structure, the raw signature \"f\" the types");
    }
    Signature raw = FromMember("f", [&] { return ParseRaw(*f); });
    SipSignature structure = FromMember("sip", [&] { return ParseSip(*sip); });
    return FromMember("sip", [&] { return Combine(raw, structure); });
  }
  if (f == nullptr) ThrowAt(kDictFormat, dict.offset, "missing \"f\" (the raw signature)");
  return FromMember("f", [&] { return ParseRaw(*f); });
}

}  // namespace

const char* MetadataFormatName(MetadataFormat format) {
  switch (format) {
    case MetadataFormat::kAuto:
      return "auto";
    case MetadataFormat::kJson:
      return "json";
    case MetadataFormat::kRaw:
      return "raw";
    case MetadataFormat::kSip:
      return "sip";
    case MetadataFormat::kDeclaration:
      return "declaration";
  }
  return "?";
}

std::optional<MetadataFormat> MetadataFormatFromName(std::string_view name) {
  for (MetadataFormat format : {MetadataFormat::kAuto, MetadataFormat::kJson, MetadataFormat::kRaw,
                                MetadataFormat::kSip, MetadataFormat::kDeclaration}) {
    if (name == MetadataFormatName(format)) return format;
  }
  return std::nullopt;
}

bool IsMetadataDict(std::string_view text) {
  for (char c : text) {
    if (!IsSpace(c)) return c == '{';
  }
  return false;
}

MetadataFormat DetectMetadataFormat(std::string_view text) {
  text = TrimTrailing(text);
  if (!IsMetadataDict(text)) {
    return LooksLikeDeclaration(text) ? MetadataFormat::kDeclaration : MetadataFormat::kRaw;
  }
  const JsonValue dict = ParseJsonDom(text, "json", kMaxMetadataNesting + 2);
  if (dict.kind != JsonValue::Kind::kObject) {
    ThrowAt(kDictFormat, dict.offset, "expected a JSON object");
  }
  if (Member(dict, "a") != nullptr || Member(dict, "r") != nullptr) return MetadataFormat::kJson;
  if (Member(dict, "iree.abi") != nullptr) return MetadataFormat::kJson;
  if (Member(dict, "sip") != nullptr) return MetadataFormat::kSip;
  if (Member(dict, "f") != nullptr) return MetadataFormat::kRaw;
  if (Member(dict, "iree.abi.declaration") != nullptr) return MetadataFormat::kDeclaration;
  ThrowAt("json", dict.offset,
          "expected an iree.abi object (keys \"a\", \"r\") or an iree.reflection dict (keys "
          "\"iree.abi\", \"f\", \"sip\", \"iree.abi.declaration\")");
}

Signature ParseMetadata(std::string_view text, MetadataFormat format) {
  text = TrimTrailing(text);
  if (format == MetadataFormat::kAuto) format = DetectMetadataFormat(text);
  if (format == MetadataFormat::kDeclaration && !IsMetadataDict(text)) {
    return ParseDeclaration(text);
  }
  if (format == MetadataFormat::kJson) {
    // The iree.abi object itself, or the reflection dict that carries it as a string.
    if (IsMetadataDict(text)) {
      const JsonValue dict = ParseJsonDom(text, "json", kMaxMetadataNesting + 2);
      if (dict.kind == JsonValue::Kind::kObject && Member(dict, "a") == nullptr &&
          Member(dict, "r") == nullptr && Member(dict, "iree.abi") != nullptr) {
        return ParseDict(dict, format);
      }
    }
    return ParseJson(text);
  }
  if (!IsMetadataDict(text)) {
    if (format == MetadataFormat::kSip) {
      // Reject before parsing so the message says what is missing, then surface SIP syntax errors.
      ParseSip(text);
      throw ValueError(
          "sip: at offset 0: a bare SIP string has structure but no types; pass the "
          "iree.reflection dict {\"f\": <raw signature>, \"sip\": <SIP>}");
    }
    return ParseRaw(text);
  }
  const JsonValue dict = ParseJsonDom(text, kDictFormat, kMaxMetadataNesting + 2);
  if (dict.kind != JsonValue::Kind::kObject) {
    ThrowAt(kDictFormat, dict.offset, "expected a JSON object");
  }
  return ParseDict(dict, format);
}

}  // namespace ffijit
