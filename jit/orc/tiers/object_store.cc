// The persistent object cache: reads and atomically writes objects and function references.
#include "orc/tiers/object_store.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/file_bytes.h"
#include "llvm/Support/xxhash.h"

namespace ffijit::orc {
namespace {

// Writes to a name unique to this process and write, then renames over the target: readers in
// other processes see either the old file or the whole new one.
bool WriteFileAtomically(const std::string& path, const std::string& content, std::string* error) {
  static std::atomic<uint64_t> sequence{0};
  std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." +
                     std::to_string(sequence.fetch_add(1, std::memory_order_relaxed));
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      *error = "cannot write " + temp;
      std::error_code ignored;
      std::filesystem::remove(temp, ignored);
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    *error = "cannot rename " + temp + " to " + path + ": " + ec.message();
    std::filesystem::remove(temp, ec);
    return false;
  }
  return true;
}

}  // namespace

std::string StableHash(const std::string& text) {
  llvm::XXH128_hash_t hash = llvm::xxh3_128bits(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(hash.high64),
                static_cast<unsigned long long>(hash.low64));
  return hex;
}

ObjectStore::ObjectStore(std::string directory, const std::string& host_key)
    : directory_(std::move(directory) + "/" + StableHash(host_key)) {}

ObjectStore::Lookup ObjectStore::Find(const std::string& key, Location* location,
                                      std::string* error) const {
  std::string path = directory_ + "/" + StableHash(key) + ".ref";
  std::string text;
  if (!ReadFileBytes(path, &text)) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec) && !ec) return Lookup::kMissing;
    *error = "cannot read " + path;
    return Lookup::kDamaged;
  }
  // Two lines: the object's name and the symbol. Anything else is a damaged file.
  size_t newline = text.find('\n');
  if (newline == std::string::npos || text.empty() || text.back() != '\n') {
    *error = path + " is not a cache reference";
    return Lookup::kDamaged;
  }
  location->object_name = text.substr(0, newline);
  location->symbol = text.substr(newline + 1, text.size() - newline - 2);
  if (location->object_name.empty() || location->symbol.empty() ||
      location->object_name.find('/') != std::string::npos ||
      location->symbol.find('\n') != std::string::npos) {
    *error = path + " is not a cache reference";
    return Lookup::kDamaged;
  }
  return Lookup::kFound;
}

bool ObjectStore::ReadObject(const std::string& object_name, std::string* bytes,
                             std::string* error) const {
  std::string path = directory_ + "/" + object_name;
  if (ReadFileBytes(path, bytes)) return true;
  *error = "cannot read " + path;
  return false;
}

bool ObjectStore::Save(const std::string& object,
                       const std::vector<std::pair<std::string, std::string>>& keys,
                       std::string* error) {
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) {
    *error = "cannot create " + directory_ + ": " + ec.message();
    return false;
  }
  std::string object_name = StableHash(object) + ".o";
  if (!WriteFileAtomically(directory_ + "/" + object_name, object, error)) return false;
  // References go after the object they name, so a reader never follows a dangling one.
  for (const auto& [key, symbol] : keys) {
    if (!WriteFileAtomically(directory_ + "/" + StableHash(key) + ".ref",
                             object_name + "\n" + symbol + "\n", error)) {
      return false;
    }
  }
  return true;
}

}  // namespace ffijit::orc
