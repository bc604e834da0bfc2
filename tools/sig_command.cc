// `ffijit sig`: parse function metadata and print its canonical, JSON, raw, declaration and
// IREE-readable forms.
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "command.h"
#include "ffijit/error.h"
#include "ffijit/reflect/metadata.h"

namespace ffijit::tool {
namespace {

constexpr const char* kUsage =
    "usage: ffijit sig [--format json|raw|sip|declaration] [METADATA|-]\n\n"
    "Reads function metadata from METADATA, or from stdin when it is '-' or absent:\n"
    "  json  the iree.abi JSON object {\"a\": [...], \"r\": [...]}, or the reflection dict\n"
    "        {\"iree.abi\": \"<that object as text>\"}\n"
    "  raw   a raw signature I..R.. or the iree.reflection dict {\"f\": \"I..R..\"}\n"
    "  sip   the iree.reflection dict {\"f\": \"I..R..\", \"sip\": \"I..R..\"}; a bare SIP string\n"
    "        prints its structure only (it carries no types)\n"
    "Without --format the format is detected. Prints the canonical form, the JSON form, the raw\n"
    "form and IREE's readable forms.\n";

void PrintSipStructure(const SipSignature& sip, std::ostream& out) {
  out << "sip:       " << PrintSip(sip) << "\n";
  out << "sip inputs (IREE readable):\n" << ReadableSip(sip.inputs);
  out << "sip results (IREE readable):\n" << ReadableSip(sip.results);
}

void PrintSignature(const Signature& sig, MetadataFormat format, std::ostream& out,
                    const std::string& function_name = "f") {
  out << "format:    " << MetadataFormatName(format) << "\n";
  out << "canonical: " << CanonicalString(sig) << "\n";
  // Each form is printed whole or not at all: a printer that throws has written nothing.
  try {
    const std::string json = PrintJson(sig);
    out << "json:      " << json << "\n";
  } catch (const Error& e) {
    out << "json:      (none: " << e.message() << ")\n";
  }
  try {
    const std::string raw = PrintRaw(sig);
    out << "raw:       " << raw << "\n";
    out << "readable:  " << ReadableRaw(raw) << "\n";
  } catch (const Error& e) {
    out << "raw:       (none: " << e.message() << ")\n";
  }
  try {
    const std::string decl = PrintDeclaration(sig, function_name);
    out << "decl:      " << decl << "\n";
  } catch (const Error& e) {
    out << "decl:      (none: " << e.message() << ")\n";
  }
}

int BadMetadata(const Error& e, std::ostream& err) {
  err << "ffijit sig: " << e.kind() << ": " << e.message() << "\n";
  return kExitBadMetadata;
}

bool IsSip(const std::string& text) {
  try {
    ParseSip(text);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// A bare SIP string gives structure only: print that, or the parse error.
int PrintBareSip(const std::string& text, std::ostream& out, std::ostream& err) {
  try {
    const SipSignature sip = ParseSip(text);
    out << "format:    sip (structure only: a bare SIP string carries no types; pass the\n"
           "           iree.reflection dict {\"f\": <raw signature>, \"sip\": <SIP>} for them)\n";
    PrintSipStructure(sip, out);
    return kExitOk;
  } catch (const Error& e) {
    return BadMetadata(e, err);
  }
}

}  // namespace

int RunSig(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
           std::ostream& err) {
  MetadataFormat format = MetadataFormat::kAuto;
  std::optional<std::string> source;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      out << kUsage;
      return kExitOk;
    }
    if (a == "--format" || a.rfind("--format=", 0) == 0) {
      std::string name;
      if (a == "--format") {
        if (i + 1 == args.size()) {
          err << "ffijit sig: --format needs a value (json, raw, sip or declaration)\n" << kUsage;
          return kExitUsage;
        }
        name = args[++i];
      } else {
        name = a.substr(9);
      }
      const auto parsed = MetadataFormatFromName(name);
      if (!parsed) {
        err << "ffijit sig: unknown format '" << name
            << "' (expected auto, json, raw, sip or declaration)\n";
        return kExitUsage;
      }
      format = *parsed;
      continue;
    }
    if (a.size() > 1 && a[0] == '-' && a[1] == '-') {
      err << "ffijit sig: unknown option '" << a << "'\n" << kUsage;
      return kExitUsage;
    }
    if (source) {
      err << "ffijit sig: more than one METADATA argument\n" << kUsage;
      return kExitUsage;
    }
    source = a;
  }
  std::string text;
  if (!source || *source == "-") {
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else {
    text = *source;
  }

  // Bare text or a JSON dict, and in kAuto which format, by reflect's rules (ParseMetadata's own).
  const bool json = IsMetadataDict(text);
  if (!json && format != MetadataFormat::kJson) {
    const std::string bare = text.substr(0, text.find_last_not_of(" \t\r\n") + 1);
    if (format == MetadataFormat::kSip) return PrintBareSip(bare, out, err);
    if (format == MetadataFormat::kDeclaration ||
        (format == MetadataFormat::kAuto &&
         DetectMetadataFormat(bare) == MetadataFormat::kDeclaration)) {
      try {
        std::string name;
        const Signature sig = ParseDeclaration(bare, &name);
        PrintSignature(sig, MetadataFormat::kDeclaration, out, name);
        return kExitOk;
      } catch (const Error& e) {
        return BadMetadata(e, err);
      }
    }
    try {
      PrintSignature(ParseMetadata(bare, MetadataFormat::kRaw), MetadataFormat::kRaw, out);
      return kExitOk;
    } catch (const Error& raw_error) {
      // Detected input that is not a raw signature may be a bare SIP string.
      if (format == MetadataFormat::kAuto && IsSip(bare)) return PrintBareSip(bare, out, err);
      return BadMetadata(raw_error, err);
    }
  }
  try {
    const Signature sig = ParseMetadata(text, format);
    // ParseMetadata accepted the text, so it is valid JSON and its "sip" (if any) a valid SIP.
    const nlohmann::json j = json ? nlohmann::json::parse(text) : nlohmann::json();
    const MetadataFormat shown =
        format == MetadataFormat::kAuto ? DetectMetadataFormat(text) : format;
    std::string name = "f";
    if (shown == MetadataFormat::kDeclaration) {
      ParseDeclaration(j["iree.abi.declaration"].get<std::string>(), &name);
    }
    PrintSignature(sig, shown, out, name);
    if (shown == MetadataFormat::kSip)
      PrintSipStructure(ParseSip(j["sip"].get<std::string>()), out);
    return kExitOk;
  } catch (const Error& e) {
    return BadMetadata(e, err);
  }
}

}  // namespace ffijit::tool
