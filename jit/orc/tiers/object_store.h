// The persistent object cache: compiled objects on disk, found again by a content key.
//
// Layout under the cache directory: `<host>/` where <host> hashes the LLVM version, triple, CPU and
// its features (code built for another host is never found), holding `<object hash>.o` files and
// one `<function key hash>.ref` per cached function naming the object and the symbol inside it.
// Every file is written to a temporary name and renamed, so a reader never sees half a file.
#ifndef FFIJIT_JIT_ORC_TIERS_OBJECT_STORE_H_
#define FFIJIT_JIT_ORC_TIERS_OBJECT_STORE_H_

#include <string>
#include <utility>
#include <vector>

namespace ffijit::orc {

// A 128-bit content hash as 32 hex digits; stable across processes.
std::string StableHash(const std::string& text);

class ObjectStore {
 public:
  ObjectStore(std::string directory, const std::string& host_key);

  struct Location {
    std::string object_name;
    std::string symbol;
  };
  enum class Lookup {
    kMissing,  // never stored: a plain miss
    kFound,    // *location says where
    kDamaged,  // a reference exists but cannot be read or parsed; *error says why
  };
  // Where the function with this key was stored, if anywhere.
  Lookup Find(const std::string& key, Location* location, std::string* error) const;
  // The object a found reference names; false with the reason in *error if it cannot be read.
  bool ReadObject(const std::string& object_name, std::string* bytes, std::string* error) const;
  // Stores one object and, for each (key, symbol), the reference to it. Failures (read-only
  // directory, full disk) are reported and leave the cache as it was.
  bool Save(const std::string& object, const std::vector<std::pair<std::string, std::string>>& keys,
            std::string* error);

 private:
  std::string directory_;  // including the host component
};

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_TIERS_OBJECT_STORE_H_
