// Map objects in TVM FFI's in-memory layout (the one code compiled from its C++ headers walks,
// looks up, inserts into and iterates inline), plus ffijit's C API over it.
//
// The facts come from the public header include/tvm/ffi/container/map.h and the key hashing/
// equality from include/tvm/ffi/any.h and base_details.h of apache/tvm-ffi (the same at e98b94e1
// and v0.1.13); the code is ffijit's own:
// - every map: header, then `void* data`@24, `uint64 size`@32, `uint64 slots`@40 (bit 63 set:
//   small layout), `void (*data_deleter)(void*)`@48;
// - small (at most 4 entries): `slots & ~bit63` key/value pairs (2 x TVMFFIAny) inline at +56,
//   `data` pointing there, searched linearly, kept in insertion order;
// - dense: `uint32 fib_shift`@56, iteration list head@64 and tail@72 (slot indices, ~0 = none);
//   `data` points at blocks of 16 slots, each block 16 metadata bytes then 16 items (key, value,
//   prev, next: 48 bytes), 784 bytes in all. A key's home slot is
//   (hash * 11400714819323198485) >> fib_shift. Metadata 0xFF is empty, 0xFE protected
//   (reserved during a relocation); otherwise bit 7 clear marks a list head (an item in its home
//   slot) and set a list tail, and the low 7 bits index a fixed table of probe distances to the
//   next item whose key has the same home (0: none). Every key with home h is on the list that
//   starts at slot h, so a lookup reads one chain. The iteration list links items in insertion
//   order.
// ffijit builds a Map once, from deduplicated entries, and never changes it afterwards; but
// header code may modify a map it owns alone in place, so every reader here (lookup, iteration,
// the deleter) follows the live fields rather than anything cached.
//
// A Dict (type 76, TVM FFI v0.1.13) has exactly this layout and is changed in place, by ffijit
// (DictSet/DictErase/DictClear below) and by header code (dict.h). Header code, when a full small
// dict grows, rewrites the object itself as a dense one (fib_shift and the iteration list at
// 56..79), so every Dict object is at least 80 bytes: ffijit gives small ones 4 inline slots.
// When ffijit outgrows a dict's storage it moves the entries to new storage (a malloc'ed small
// buffer or dense blocks, each with a data_deleter) and frees the old through the old
// data_deleter, whatever made it.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "container_internal.h"
#include "cxx_abi/shims.h"
#include "ffijit/any.h"
#include "ffijit/object.h"
#include "hashing.h"
#include "internal.h"
#include "object_internal.h"
#include "string_internal.h"

namespace ffijit {
namespace {

constexpr uint64_t kSmallLayoutBit = uint64_t{1} << 63;
constexpr uint64_t kSmallMaxEntries = 4;
constexpr int kBlockSlots = 16;
constexpr uint8_t kEmptyMeta = 0xFF;
constexpr uint8_t kProtectedMeta = 0xFE;
constexpr uint8_t kTailBit = 0x80;
constexpr uint64_t kNoSlot = ~uint64_t{0};
constexpr uint64_t kFibonacciMultiplier = 11400714819323198485ull;

struct MapObject {
  TVMFFIObject header;
  void* data;
  uint64_t size;
  uint64_t slots;
  void (*data_deleter)(void*);
};
static_assert(sizeof(MapObject) == 56, "small-map entries inline at +56");

struct KeyValue {
  TVMFFIAny key;
  TVMFFIAny value;
};

struct DenseMapObject {
  MapObject base;
  uint32_t fib_shift;
  uint64_t iter_head;
  uint64_t iter_tail;
};
static_assert(offsetof(DenseMapObject, fib_shift) == 56, "fib_shift at +56");
static_assert(offsetof(DenseMapObject, iter_head) == 64, "iteration head at +64");
static_assert(offsetof(DenseMapObject, iter_tail) == 72, "iteration tail at +72");

struct DenseItem {
  KeyValue kv;
  uint64_t prev;
  uint64_t next;
};

struct Block {
  uint8_t meta[kBlockSlots];
  DenseItem items[kBlockSlots];
};
static_assert(sizeof(Block) == 784, "a dense block is 16 metadata bytes and 16 items");

// Probe distances by jump index (the low 7 bits of a slot's metadata): 0..15, then the
// triangular numbers 21..2628, then a fast-growing tail. Values as in map.h.
constexpr uint64_t kProbeDistance[126] = {0,
                                          1,
                                          2,
                                          3,
                                          4,
                                          5,
                                          6,
                                          7,
                                          8,
                                          9,
                                          10,
                                          11,
                                          12,
                                          13,
                                          14,
                                          15,
                                          21,
                                          28,
                                          36,
                                          45,
                                          55,
                                          66,
                                          78,
                                          91,
                                          105,
                                          120,
                                          136,
                                          153,
                                          171,
                                          190,
                                          210,
                                          231,
                                          253,
                                          276,
                                          300,
                                          325,
                                          351,
                                          378,
                                          406,
                                          435,
                                          465,
                                          496,
                                          528,
                                          561,
                                          595,
                                          630,
                                          666,
                                          703,
                                          741,
                                          780,
                                          820,
                                          861,
                                          903,
                                          946,
                                          990,
                                          1035,
                                          1081,
                                          1128,
                                          1176,
                                          1225,
                                          1275,
                                          1326,
                                          1378,
                                          1431,
                                          1485,
                                          1540,
                                          1596,
                                          1653,
                                          1711,
                                          1770,
                                          1830,
                                          1891,
                                          1953,
                                          2016,
                                          2080,
                                          2145,
                                          2211,
                                          2278,
                                          2346,
                                          2415,
                                          2485,
                                          2556,
                                          2628,
                                          8515,
                                          19110,
                                          42778,
                                          96141,
                                          216153,
                                          486591,
                                          1092981,
                                          2458653,
                                          5532801,
                                          12442566,
                                          27993903,
                                          62983476,
                                          141717030,
                                          318844378,
                                          717352503,
                                          1614057336,
                                          3631522476,
                                          8170957530,
                                          18384510628,
                                          41364789378,
                                          93070452520,
                                          209408356380,
                                          471168559170,
                                          1060128894105,
                                          2385289465695,
                                          5366898840628,
                                          12075518705635,
                                          27169915244790,
                                          61132312065111,
                                          137547689707000,
                                          309482283181501,
                                          696335127828753,
                                          1566753995631385,
                                          3525196511162271,
                                          7931691992677701,
                                          17846306936293605,
                                          40154190677507445,
                                          90346928918121501,
                                          203280589587557251,
                                          457381325854679626,
                                          1029107982097042876,
                                          2315492959180353330,
                                          5209859154120846435};
constexpr int kJumpCount = 126;

// ---- Key hashing and equality (TVM FFI's AnyHash/AnyEqual, extended to borrowed views) ----
//
// One path for every map whoever made it: header code's AnyHash/AnyEqual and these must agree, or
// a key one side inserted is not found by the other. Either may throw (a key hook's error, as an
// ffijit::Error); every caller below hashes and compares before it changes a map.

using details::IsBytesForm;
using details::IsStrForm;

using internal::HashBytes;
using internal::HashCombine;

// The revision with structural keys (v0.1.13) is the one whose AnyHash/AnyEqual consult the
// hooks; at e98b94e1 header code hashes every object key by its address, and so does ffijit.
#if FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT
// The `__any_hash__` or `__any_equal__` entry of an object key's type, or NULL. Columns are never
// freed once made, so a found one is kept; its entries are read live, as header code reads them.
const TVMFFIAny* KeyHook(int32_t type_index, std::atomic<const TVMFFITypeAttrColumn*>* cache,
                         const char* name) {
  const TVMFFITypeAttrColumn* column = cache->load(std::memory_order_acquire);
  if (column == nullptr) {
    const TVMFFIByteArray key{name, std::strlen(name)};
    column = TVMFFIGetTypeAttrColumn(&key);
    if (column == nullptr) return nullptr;
    cache->store(column, std::memory_order_release);
  }
  const TVMFFIAny* entry = FFIJITTypeAttrColumnEntry(column, type_index);
  return entry != nullptr && entry->type_index != kTVMFFINone ? entry : nullptr;
}

std::atomic<const TVMFFITypeAttrColumn*> g_hash_column{nullptr};
std::atomic<const TVMFFITypeAttrColumn*> g_equal_column{nullptr};

[[noreturn]] void ThrowBadHook(const char* name, int32_t type_index, const std::string& what) {
  throw Error("TypeError", std::string("the `") + name + "` hook of type `" +
                               TypeIndexToKey(type_index) + "` " + what);
}

// Calls a hook entry: a function pointer taking `const Any&`s (a C++ function that reports
// failure by throwing tvm::ffi::Error) or an ffi.Function. Returns the result as a TVMFFIAny the
// caller must check (and own, for a Function).
template <typename Pointer, typename... Args>
TVMFFIAny CallHook(const TVMFFIAny& hook, const char* name, int32_t type_index,
                   const Args&... args) {
  TVMFFIAny result{};
  if (hook.type_index == kTVMFFIOpaquePtr) {
    auto fn = reinterpret_cast<Pointer>(hook.v_ptr);
    if (fn == nullptr) ThrowBadHook(name, type_index, "is a NULL function pointer");
    const auto value = internal::WithFfijitErrors([&] { return fn(&args...); });
    result.type_index = sizeof...(Args) == 1 ? kTVMFFIInt : kTVMFFIBool;
    result.v_int64 = static_cast<int64_t>(value);
    return result;
  }
  if (hook.type_index != kTVMFFIFunction) {
    ThrowBadHook(name, type_index,
                 "is a `" + TypeIndexToKey(hook.type_index) +
                     "`, neither a function pointer nor a Function");
  }
  TVMFFIAny call_args[] = {args...};
  if (TVMFFIFunctionCall(hook.v_obj, call_args, sizeof...(Args), &result) != 0) {
    throw Error::MoveFromRaised();
  }
  return result;
}

uint64_t HookHash(const TVMFFIAny& hook, const TVMFFIAny& key) {
  TVMFFIAny result =
      CallHook<int64_t (*)(const TVMFFIAny*)>(hook, "__any_hash__", key.type_index, key);
  if (result.type_index != kTVMFFIInt) {
    const std::string got = TypeIndexToKey(result.type_index);
    internal::ReleaseAny(&result);
    ThrowBadHook("__any_hash__", key.type_index, "returned a `" + got + "`, not an int");
  }
  return static_cast<uint64_t>(result.v_int64);
}

bool HookEqual(const TVMFFIAny& hook, const TVMFFIAny& a, const TVMFFIAny& b) {
  TVMFFIAny result = CallHook<bool (*)(const TVMFFIAny*, const TVMFFIAny*)>(hook, "__any_equal__",
                                                                            a.type_index, a, b);
  if (result.type_index != kTVMFFIBool) {
    const std::string got = TypeIndexToKey(result.type_index);
    internal::ReleaseAny(&result);
    ThrowBadHook("__any_equal__", a.type_index, "returned a `" + got + "`, not a bool");
  }
  return result.v_int64 != 0;
}
#endif  // FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT

// Every string form hashes as its characters under the Str type index (every bytes form under
// Bytes), so a borrowed "abc" finds a SmallStr or Str key "abc"; an object whose type has an
// `__any_hash__` hook by what the hook says, under its type index; anything else by its bits.
uint64_t KeyHash(const TVMFFIAny& key) {
  // The common short-string key, without the general string view (checked well-formed: <= 7).
  if ((key.type_index == kTVMFFISmallStr || key.type_index == kTVMFFISmallBytes) &&
      key.small_str_len <= 7) {
    return HashCombine(key.type_index == kTVMFFISmallStr ? kTVMFFIStr : kTVMFFIBytes,
                       internal::HashSmallBytes(key));
  }
  std::string_view chars;
  if (IsStrForm(key.type_index) && internal::ViewBytes(key, &chars)) {
    return HashCombine(kTVMFFIStr, HashBytes(chars));
  }
  if (IsBytesForm(key.type_index) && internal::ViewBytes(key, &chars)) {
    return HashCombine(kTVMFFIBytes, HashBytes(chars));
  }
#if FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT
  if (key.type_index >= kTVMFFIStaticObjectBegin) {
    if (const TVMFFIAny* hook = KeyHook(key.type_index, &g_hash_column, "__any_hash__")) {
      return HashCombine(static_cast<uint64_t>(key.type_index), HookHash(*hook, key));
    }
  }
#endif
  return HashCombine(static_cast<uint64_t>(static_cast<int64_t>(key.type_index)), key.v_uint64);
}

// Strings (bytes) by content whatever their form; the same bits are equal; two objects of one
// type with an `__any_equal__` hook as the hook says; anything else is not equal.
bool KeyEqual(const TVMFFIAny& a, const TVMFFIAny& b) {
  bool both_str = IsStrForm(a.type_index) && IsStrForm(b.type_index);
  bool both_bytes = IsBytesForm(a.type_index) && IsBytesForm(b.type_index);
  if (both_str || both_bytes) {
    std::string_view x, y;
    return internal::ViewBytes(a, &x) && internal::ViewBytes(b, &y) && x == y;
  }
  if (a.type_index != b.type_index) return false;
  if (a.v_uint64 == b.v_uint64) return true;
#if FFIJIT_TVM_FFI_HAS_STRUCTURAL_VISIT
  if (a.type_index >= kTVMFFIStaticObjectBegin) {
    if (const TVMFFIAny* hook = KeyHook(a.type_index, &g_equal_column, "__any_equal__")) {
      return HookEqual(*hook, a, b);
    }
  }
#endif
  return false;
}

// ---- Dense layout: slot addressing ----

uint64_t HomeSlot(uint64_t hash, uint32_t fib_shift) {
  return (kFibonacciMultiplier * hash) >> fib_shift;
}

struct DenseView {
  Block* blocks;
  uint64_t slots;
  uint8_t& meta(uint64_t i) const { return blocks[i / kBlockSlots].meta[i % kBlockSlots]; }
  DenseItem& item(uint64_t i) const { return blocks[i / kBlockSlots].items[i % kBlockSlots]; }
  bool IsEmpty(uint64_t i) const { return meta(i) == kEmptyMeta; }
  bool IsHead(uint64_t i) const { return (meta(i) & kTailBit) == 0; }
  // The next slot on i's same-home list, or kNoSlot.
  uint64_t Next(uint64_t i) const {
    uint8_t jump = meta(i) & 0x7F;
    return jump == 0 ? kNoSlot : (i + kProbeDistance[jump]) % slots;
  }
  // The first empty slot within probing reach of `from`, with its jump index; false if none.
  bool NextEmpty(uint64_t from, uint64_t* slot, uint8_t* jump) const {
    for (int j = 1; j < kJumpCount; ++j) {
      uint64_t candidate = (from + kProbeDistance[j]) % slots;
      if (IsEmpty(candidate)) {
        *slot = candidate;
        *jump = static_cast<uint8_t>(j);
        return true;
      }
    }
    return false;
  }
  void SetJump(uint64_t i, uint8_t jump) const {
    meta(i) = static_cast<uint8_t>((meta(i) & kTailBit) | jump);
  }
};

DenseView ViewOf(const DenseMapObject* map) {
  return DenseView{static_cast<Block*>(map->base.data), map->base.slots};
}

// Table size for `n` entries: the next power of two above n, doubled once more when that is
// less than twice n (load at most one half); fib_shift = 64 - log2(slots).
void DenseTableSize(uint64_t n, uint32_t* fib_shift, uint64_t* slots) {
  uint32_t shift = 64;
  uint64_t size = 1;
  for (uint64_t c = n; c != 0; c >>= 1) {
    --shift;
    size <<= 1;
  }
  if (size < n * 2) {
    --shift;
    size <<= 1;
  }
  *fib_shift = shift;
  *slots = size;
}

void FreeBlocks(void* data) {
  std::free(data);
}

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
// Frees the separately allocated small-layout buffer of a Dict that ffijit regrew.
void FreeSmallBuffer(void* data) {
  std::free(data);
}
#endif

// Appends slot `i` to the iteration list.
void IterPushBack(DenseMapObject* map, const DenseView& v, uint64_t i) {
  v.item(i).prev = map->iter_tail;
  v.item(i).next = kNoSlot;
  if (map->iter_tail != kNoSlot) v.item(map->iter_tail).next = i;
  if (map->iter_head == kNoSlot) map->iter_head = i;
  map->iter_tail = i;
}

// Moves the item of slot `from` to the empty slot `to`, keeping its iteration-list position.
void MoveItem(DenseMapObject* map, const DenseView& v, uint64_t from, uint64_t to) {
  DenseItem& src = v.item(from);
  DenseItem& dst = v.item(to);
  dst = src;
  if (dst.prev == kNoSlot) {
    map->iter_head = to;
  } else {
    v.item(dst.prev).next = to;
  }
  if (dst.next == kNoSlot) {
    map->iter_tail = to;
  } else {
    v.item(dst.next).prev = to;
  }
}

// What a relocating insertion changed (metadata bytes as they were, items moved), so that an
// insertion that runs out of room midway can put the table back as it was.
struct Journal {
  std::vector<std::pair<uint64_t, uint8_t>> metas;
  std::vector<std::pair<uint64_t, uint64_t>> moves;  // from, to
};

// Inserts a key known to be absent, whose hash is `hash` (ownership of key and value passes to
// the map). false when the table has no room within probing reach; the caller then rebuilds a
// bigger table. With a journal, a false return leaves the table exactly as it was; without one
// (a table being built, discarded on failure) it may be left half relocated. Throws only before
// it changes anything (a hook hashing the key it relocates; std::bad_alloc for the journal).
bool DenseInsertNew(DenseMapObject* map, uint64_t hash, const TVMFFIAny& key,
                    const TVMFFIAny& value, Journal* journal) {
  DenseView v = ViewOf(map);
  uint64_t home = HomeSlot(hash, map->fib_shift);
  uint64_t slot;
  if (v.IsEmpty(home)) {
    slot = home;
    v.meta(slot) = 0;  // a head with no next
  } else if (v.IsHead(home)) {
    uint64_t last = home;
    for (uint64_t next = v.Next(last); next != kNoSlot; next = v.Next(last)) last = next;
    uint8_t jump;
    if (!v.NextEmpty(last, &slot, &jump)) return false;
    v.meta(slot) = kTailBit;
    v.SetJump(last, jump);
  } else {
    // `home` holds a tail of another key's list: move that list from `home` on to empty slots,
    // then take `home` as the new list's head. Everything that can throw happens first.
    uint64_t other_home = HomeSlot(KeyHash(v.item(home).kv.key), map->fib_shift);
    if (journal != nullptr) {
      uint64_t length = 0;
      for (uint64_t i = home; i != kNoSlot; i = v.Next(i)) ++length;
      journal->metas.clear();
      journal->moves.clear();
      journal->metas.reserve(3 * length + 1);
      journal->moves.reserve(length);
    }
    auto set_meta = [&](uint64_t i, uint8_t meta) {
      if (journal != nullptr) journal->metas.emplace_back(i, v.meta(i));
      v.meta(i) = meta;
    };
    uint64_t writer = other_home;
    while (v.Next(writer) != home) writer = v.Next(writer);
    uint64_t reader = home;
    bool first = true;
    while (reader != kNoSlot) {
      uint64_t target;
      uint8_t jump;
      if (!v.NextEmpty(writer, &target, &jump)) {
        if (journal != nullptr) {  // undo, newest first: items back, then the metadata
          for (auto it = journal->moves.rbegin(); it != journal->moves.rend(); ++it) {
            MoveItem(map, v, it->second, it->first);
          }
          for (auto it = journal->metas.rbegin(); it != journal->metas.rend(); ++it) {
            v.meta(it->first) = it->second;
          }
        }
        return false;
      }
      uint64_t after = v.Next(reader);
      MoveItem(map, v, reader, target);
      if (journal != nullptr) journal->moves.emplace_back(reader, target);
      set_meta(target, kTailBit);
      set_meta(reader, first ? kProtectedMeta : kEmptyMeta);
      first = false;
      set_meta(writer, static_cast<uint8_t>((v.meta(writer) & kTailBit) | jump));
      writer = target;
      reader = after;
    }
    slot = home;
    v.meta(slot) = 0;
  }
  v.item(slot).kv = KeyValue{key, value};
  IterPushBack(map, v, slot);
  ++map->base.size;
  return true;
}

// Releases every live entry of either layout, then the storage if a data_deleter is set.
void ReleaseEntries(MapObject* map) {
  if (map->slots & kSmallLayoutBit) {
    auto* entries = static_cast<KeyValue*>(map->data);
    for (uint64_t i = 0; i < map->size; ++i) {
      internal::ReleaseAny(&entries[i].key);
      internal::ReleaseAny(&entries[i].value);
    }
  } else if (map->data != nullptr) {
    DenseView v = ViewOf(reinterpret_cast<DenseMapObject*>(map));
    for (uint64_t i = 0; i < v.slots; ++i) {
      if (v.meta(i) == kEmptyMeta || v.meta(i) == kProtectedMeta) continue;
      internal::ReleaseAny(&v.item(i).kv.key);
      internal::ReleaseAny(&v.item(i).kv.value);
    }
  }
  if (map->data_deleter != nullptr && map->data != nullptr) map->data_deleter(map->data);
  map->data = nullptr;
  map->size = 0;
}

void MapDeleter(void* self, int flags) {
  auto* map = static_cast<MapObject*>(self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) ReleaseEntries(map);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(map);
}

// Builds dense storage holding `entries` (owned, keys distinct, hashes[i] the hash of entry i;
// their references move in) into `table`'s data/slots/size/fib_shift/iteration fields, doubling
// the table while some key lands out of probing reach (pathological hashes). On an exception (a
// key hook, std::bad_alloc) the storage is freed and the entries still belong to the caller.
void BuildDenseTable(const std::vector<KeyValue>& entries, const std::vector<uint64_t>& hashes,
                     DenseMapObject* table) {
  uint32_t fib_shift;
  uint64_t slots;
  DenseTableSize(entries.size(), &fib_shift, &slots);
  for (;;) {
    uint64_t blocks = (slots + kBlockSlots - 1) / kBlockSlots;
    void* data = std::malloc(blocks * sizeof(Block));
    if (data == nullptr) throw std::bad_alloc();
    for (uint64_t b = 0; b < blocks; ++b) {
      std::memset(static_cast<Block*>(data)[b].meta, kEmptyMeta, kBlockSlots);
    }
    table->base.data = data;
    table->base.data_deleter = FreeBlocks;
    table->base.slots = slots;
    table->base.size = 0;
    table->fib_shift = fib_shift;
    table->iter_head = kNoSlot;
    table->iter_tail = kNoSlot;
    bool placed = true;
    try {
      for (size_t i = 0; i < entries.size() && placed; ++i) {
        placed = DenseInsertNew(table, hashes[i], entries[i].key, entries[i].value, nullptr);
      }
    } catch (...) {
      FreeBlocks(data);
      table->base.data = nullptr;
      throw;
    }
    if (placed) return;
    FreeBlocks(data);
    table->base.data = nullptr;
    slots *= 2;
    --fib_shift;
  }
}

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
// The hashes of `entries`' keys, in order (may throw: a key hook); a Dict's regrowth needs them.
std::vector<uint64_t> HashesOf(const std::vector<KeyValue>& entries) {
  std::vector<uint64_t> hashes;
  hashes.reserve(entries.size());
  for (const KeyValue& kv : entries) hashes.push_back(KeyHash(kv.key));
  return hashes;
}
#endif  // FFIJIT_TVM_FFI_HAS_LIST_DICT

// A dense map or dict of owned entries (keys distinct); the entries' references move into it.
TVMFFIObject* NewDenseMap(const std::vector<KeyValue>& entries, const std::vector<uint64_t>& hashes,
                          int32_t type_index) {
  auto* map = reinterpret_cast<DenseMapObject*>(
      internal::AllocObject(sizeof(DenseMapObject), type_index, MapDeleter));
  try {
    BuildDenseTable(entries, hashes, map);
  } catch (...) {
    std::free(map);
    throw;
  }
  return &map->base.header;
}

// A Map, or on revisions that have it a Dict (the same layout).
MapObject* MapOf(TVMFFIObjectHandle handle, const char* func) {
  auto* obj = static_cast<TVMFFIObject*>(handle);
  internal::RequireNonNull(obj, func, "map");
#if FFIJIT_TVM_FFI_HAS_LIST_DICT
  const bool is_map = IsInstance(obj->type_index, kTVMFFIMap) || obj->type_index == kTVMFFIDict;
#else
  const bool is_map = IsInstance(obj->type_index, kTVMFFIMap);
#endif
  if (!is_map) {
    throw Error("TypeError", std::string(func) + ": expected an ffi.Map but got `" +
                                 TypeIndexToKey(obj->type_index) + "`");
  }
  return reinterpret_cast<MapObject*>(obj);
}

// Where a key's entry lives: `index` in the small layout, the slot in the dense one, where `home`
// heads the list the slot is on.
struct Found {
  const KeyValue* entry = nullptr;
  uint64_t index = 0;
  uint64_t home = 0;
};

// Looks `key` up (may throw: a key hook); changes nothing.
Found FindEntry(const MapObject* map, const TVMFFIAny& key) {
  if (map->slots & kSmallLayoutBit) {
    const auto* entries = static_cast<const KeyValue*>(map->data);
    // A string (bytes) key is viewed once, not once per entry (a RawStr's view is a strlen), and
    // compared as KeyEqual compares it: with the entries of the same family, by content.
    std::string_view chars;
    const bool is_str = IsStrForm(key.type_index);
    if ((is_str || IsBytesForm(key.type_index)) && internal::ViewBytes(key, &chars)) {
      for (uint64_t i = 0; i < map->size; ++i) {
        const TVMFFIAny& other = entries[i].key;
        std::string_view other_chars;
        if ((is_str ? IsStrForm(other.type_index) : IsBytesForm(other.type_index)) &&
            internal::ViewBytes(other, &other_chars) && other_chars == chars) {
          return {&entries[i], i, 0};
        }
      }
      return {};
    }
    for (uint64_t i = 0; i < map->size; ++i) {
      if (KeyEqual(entries[i].key, key)) return {&entries[i], i, 0};
    }
    return {};
  }
  if (map->size == 0 || map->data == nullptr) return {};
  const auto* dense = reinterpret_cast<const DenseMapObject*>(map);
  DenseView v = ViewOf(dense);
  const uint64_t home = HomeSlot(KeyHash(key), dense->fib_shift);
  if (!v.IsHead(home)) return {};
  for (uint64_t slot = home; slot != kNoSlot; slot = v.Next(slot)) {
    if (KeyEqual(v.item(slot).kv.key, key)) return {&v.item(slot).kv, slot, home};
  }
  return {};
}

const KeyValue* Find(const MapObject* map, const TVMFFIAny& key) {
  return FindEntry(map, key).entry;
}

// The i-th entry in iteration (insertion) order; i < size.
const KeyValue* EntryAt(const MapObject* map, uint64_t i) {
  if (map->slots & kSmallLayoutBit) return static_cast<const KeyValue*>(map->data) + i;
  const auto* dense = reinterpret_cast<const DenseMapObject*>(map);
  DenseView v = ViewOf(dense);
  uint64_t slot = dense->iter_head;
  for (uint64_t k = 0; k < i; ++k) slot = v.item(slot).next;
  return &v.item(slot).kv;
}

// Owned copies of the entries, each key once: at its first position, with its last value.
struct Entries {
  std::vector<KeyValue> list;
  ~Entries() {
    for (KeyValue& kv : list) {
      internal::ReleaseAny(&kv.key);
      internal::ReleaseAny(&kv.value);
    }
  }
};

// Keys of one argument array, hashed once beforehand (a hook is called once per key) and compared
// as map keys (which may throw: std::unordered_map then leaves itself unchanged).
struct IndexHash {
  const uint64_t* hashes;
  size_t operator()(int64_t i) const noexcept { return static_cast<size_t>(hashes[i]); }
};
struct IndexEqual {
  const TVMFFIAny* keys;
  bool operator()(int64_t a, int64_t b) const { return KeyEqual(keys[a], keys[b]); }
};

TVMFFIObjectHandle* CheckedOut(TVMFFIObjectHandle* out, const char* func) {
  internal::RequireNonNull(out, func, "out");
  return out;
}

// Up to this many keys, BuildMap finds repeated keys by scanning instead of through a hash table.
constexpr int64_t kLinearDedupMaxKeys = 8;

// The largest entry count a map's storage can be sized for.
constexpr uint64_t kMaxMapEntries = (SIZE_MAX - sizeof(DenseMapObject)) / sizeof(KeyValue);

// A new Map or Dict from keys[i] -> values[i]; a repeated key keeps its first position and takes
// its last value. The count is checked, and storage proportional to it reserved, before either
// array is read: a count the arrays cannot have is refused rather than read past.
TVMFFIObject* BuildMap(const TVMFFIAny* keys, const TVMFFIAny* values, int64_t n,
                       int32_t type_index, const char* func) {
  if (n < 0) throw Error("ValueError", std::string(func) + ": negative size " + std::to_string(n));
  if (static_cast<uint64_t>(n) > kMaxMapEntries) {
    throw Error("ValueError", std::string(func) + ": size " + std::to_string(n) + " too large");
  }
  if (n > 0) {
    internal::RequireNonNull(keys, func, "keys");
    internal::RequireNonNull(values, func, "values");
  }
  // The bookkeeping, on the stack for a few keys: each key's hash, then each distinct key's first
  // position and the position of its last value.
  const size_t count = static_cast<size_t>(n);
  uint64_t inline_scratch[3 * kLinearDedupMaxKeys];
  std::vector<uint64_t> heap_scratch;
  uint64_t* key_hashes = inline_scratch;
  if (n > kLinearDedupMaxKeys) {
    heap_scratch.resize(3 * count);
    key_hashes = heap_scratch.data();
  }
  uint64_t* first_key = key_hashes + count;
  uint64_t* last_value = first_key + count;
  size_t distinct = 0;
  // Keys are hashed before they are copied: every key and value is checked first.
  for (int64_t i = 0; i < n; ++i) {
    details::RequireWellFormed(keys[i], func);
    details::RequireWellFormed(values[i], func);
  }
  // Position of each distinct key (compared by content, whatever its string form, or through
  // its type's hooks).
  for (size_t i = 0; i < count; ++i) key_hashes[i] = KeyHash(keys[i]);
  if (n <= kLinearDedupMaxKeys) {
    // Few keys (the common ffi.Map(k, v, ...) call): a scan of the distinct keys so far costs
    // less than the hash table's allocations.
    for (size_t i = 0; i < count; ++i) {
      size_t k = 0;
      while (k < distinct && !(key_hashes[first_key[k]] == key_hashes[i] &&
                               KeyEqual(keys[first_key[k]], keys[i]))) {
        ++k;
      }
      if (k == distinct) first_key[distinct++] = i;
      last_value[k] = i;
    }
  } else {
    std::unordered_map<int64_t, size_t, IndexHash, IndexEqual> position(
        count, IndexHash{key_hashes}, IndexEqual{keys});
    for (size_t i = 0; i < count; ++i) {
      auto [it, inserted] = position.emplace(static_cast<int64_t>(i), distinct);
      if (inserted) first_key[distinct++] = i;
      last_value[it->second] = i;
    }
  }
  if (distinct <= kSmallMaxEntries) {
    // Straight into the object: no staging vector. `size` counts the entries copied so far, so
    // the deleter releases exactly those if a copy throws.
    // A Dict keeps room for the most a small dict holds, which also makes the object big enough
    // for header code to rewrite it as a dense one in place.
    const uint64_t inline_slots = type_index == kTVMFFIMap ? distinct : kSmallMaxEntries;
    auto* map = reinterpret_cast<MapObject*>(internal::AllocObject(
        sizeof(MapObject) + inline_slots * sizeof(KeyValue), type_index, MapDeleter));
    ObjectPtr<> owner = ObjectPtr<>::Adopt(&map->header);
    auto* inline_entries = reinterpret_cast<KeyValue*>(map + 1);
    map->data = inline_entries;
    map->slots = inline_slots | kSmallLayoutBit;
    for (size_t k = 0; k < distinct; ++k) {
      KeyValue& kv = inline_entries[k];
      internal::CopyToOwned(keys[first_key[k]], &kv.key);
      try {
        internal::CopyToOwned(values[last_value[k]], &kv.value);
      } catch (...) {
        internal::ReleaseAny(&kv.key);
        throw;
      }
      map->size = k + 1;
    }
    return owner.release();
  }
  Entries entries;
  entries.list.reserve(distinct);
  for (size_t k = 0; k < distinct; ++k) {
    entries.list.push_back(KeyValue{});
    internal::CopyToOwned(keys[first_key[k]], &entries.list.back().key);
    internal::CopyToOwned(values[last_value[k]], &entries.list.back().value);
  }
  std::vector<uint64_t> hashes;
  hashes.reserve(distinct);
  for (size_t k = 0; k < distinct; ++k) hashes.push_back(key_hashes[first_key[k]]);
  TVMFFIObject* map = NewDenseMap(entries.list, hashes, type_index);
  entries.list.clear();  // the references moved into the map
  return map;
}

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
// ---- In-place changes (Dict) ----

// Unlinks slot `i` from the iteration list.
void IterUnlink(DenseMapObject* map, const DenseView& v, uint64_t i) {
  const uint64_t prev = v.item(i).prev;
  const uint64_t next = v.item(i).next;
  if (prev == kNoSlot) {
    map->iter_head = next;
  } else {
    v.item(prev).next = next;
  }
  if (next == kNoSlot) {
    map->iter_tail = prev;
  } else {
    v.item(next).prev = prev;
  }
}

// Removes the item in `slot`, on the list headed by `home` (as the lookup found it: no key is
// hashed here), from a dense table, keeping every same-home list whole: the last item of the
// slot's list moves into the slot (the list order of the rest is unchanged). Returns the removed
// entry, whose references the caller now owns.
KeyValue DenseErase(DenseMapObject* map, uint64_t slot, uint64_t home) {
  DenseView v = ViewOf(map);
  const KeyValue removed = v.item(slot).kv;
  --map->base.size;
  IterUnlink(map, v, slot);
  if (v.Next(slot) == kNoSlot) {
    if (!v.IsHead(slot)) {
      uint64_t prev = home;
      while (v.Next(prev) != slot) prev = v.Next(prev);
      v.SetJump(prev, 0);
    }
    v.meta(slot) = kEmptyMeta;
    return removed;
  }
  uint64_t before_last = slot;
  uint64_t last = v.Next(slot);
  while (v.Next(last) != kNoSlot) {
    before_last = last;
    last = v.Next(last);
  }
  MoveItem(map, v, last, slot);  // takes last's place in the iteration list too
  v.meta(last) = kEmptyMeta;
  v.SetJump(before_last, 0);
  return removed;
}

// The entries in iteration order (bitwise: the references stay where they are).
std::vector<KeyValue> EntriesInOrder(const MapObject* map) {
  std::vector<KeyValue> entries;
  entries.reserve(map->size);
  internal::MapForEach(&map->header, [&](const TVMFFIAny& key, const TVMFFIAny& value) {
    entries.push_back(KeyValue{key, value});
  });
  return entries;
}

// Moves `entries` (owned; keys distinct) into new storage for `map`, replacing the old storage,
// which holds the same references and is freed without releasing them. Small up to
// kSmallMaxEntries, dense beyond. On an exception (std::bad_alloc, a key hook) nothing has
// changed: the keys are hashed, and the new storage built, before the map is touched.
void Regrow(MapObject* map, const std::vector<KeyValue>& entries) {
  DenseMapObject fresh{};
  if (entries.size() <= kSmallMaxEntries) {
    void* buffer = std::malloc(kSmallMaxEntries * sizeof(KeyValue));
    if (buffer == nullptr) throw std::bad_alloc();
    if (!entries.empty()) std::memcpy(buffer, entries.data(), entries.size() * sizeof(KeyValue));
    fresh.base.data = buffer;
    fresh.base.data_deleter = FreeSmallBuffer;
    fresh.base.size = entries.size();
    fresh.base.slots = kSmallMaxEntries | kSmallLayoutBit;
  } else {
    BuildDenseTable(entries, HashesOf(entries), &fresh);
  }
  if (map->data_deleter != nullptr && map->data != nullptr) map->data_deleter(map->data);
  map->data = fresh.base.data;
  map->data_deleter = fresh.base.data_deleter;
  map->size = fresh.base.size;
  map->slots = fresh.base.slots;
  if (!(fresh.base.slots & kSmallLayoutBit)) {
    // Every Dict object has room for these (see the file comment).
    auto* dense = reinterpret_cast<DenseMapObject*>(map);
    dense->fib_shift = fresh.fib_shift;
    dense->iter_head = fresh.iter_head;
    dense->iter_tail = fresh.iter_tail;
  }
}

// Adds an entry whose key is absent; its references move into the map. On an exception (a key
// hook, std::bad_alloc) the map is unchanged and the references stay the caller's.
void InsertAbsent(MapObject* map, const KeyValue& kv) {
  if (map->slots & kSmallLayoutBit) {
    const uint64_t room = map->slots & ~kSmallLayoutBit;
    if (map->size < room) {
      static_cast<KeyValue*>(map->data)[map->size] = kv;
      ++map->size;
      return;
    }
  } else if (map->data != nullptr && map->slots != 0 &&
             static_cast<double>(map->size + 1) <= static_cast<double>(map->slots) * 0.99) {
    // Header code grows a dense table at this load (kMaxLoadFactor in map_base.h). A failed
    // insertion has undone its moves (the journal), so Regrow starts from an intact table.
    Journal journal;
    if (DenseInsertNew(reinterpret_cast<DenseMapObject*>(map), KeyHash(kv.key), kv.key, kv.value,
                       &journal)) {
      return;
    }
  }
  std::vector<KeyValue> entries = EntriesInOrder(map);
  entries.push_back(kv);
  Regrow(map, entries);
}
#endif  // FFIJIT_TVM_FFI_HAS_LIST_DICT

}  // namespace
}  // namespace ffijit

namespace ffijit::internal {

void MapForEach(const TVMFFIObject* handle,
                void (*visit)(void* ctx, const TVMFFIAny& key, const TVMFFIAny& value), void* ctx) {
  const auto* map = reinterpret_cast<const MapObject*>(handle);
  if (map->slots & kSmallLayoutBit) {
    const auto* entries = static_cast<const KeyValue*>(map->data);
    for (uint64_t i = 0; i < map->size; ++i) visit(ctx, entries[i].key, entries[i].value);
    return;
  }
  if (map->size == 0 || map->data == nullptr) return;
  const auto* dense = reinterpret_cast<const DenseMapObject*>(map);
  DenseView v = ViewOf(dense);
  for (uint64_t slot = dense->iter_head; slot != kNoSlot; slot = v.item(slot).next) {
    visit(ctx, v.item(slot).kv.key, v.item(slot).kv.value);
  }
}

bool AnyEqual(const TVMFFIAny& a, const TVMFFIAny& b) {
  return KeyEqual(a, b);
}

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
void DictSet(TVMFFIObject* dict, const TVMFFIAny& key, const TVMFFIAny& value) {
  auto* map = reinterpret_cast<MapObject*>(dict);
  details::RequireWellFormed(key, "ffi.Dict");
  details::RequireWellFormed(value, "ffi.Dict");
  const KeyValue* entry = Find(map, key);  // may throw (a key hook): nothing is copied yet
  TVMFFIAny owned_value{};
  CopyToOwned(value, &owned_value);
  if (entry != nullptr) {
    // Replaced in its position; the old value is released after the swap, as its deleter may
    // read this dict.
    TVMFFIAny old = entry->value;
    const_cast<KeyValue*>(entry)->value = owned_value;
    ReleaseAny(&old);
    return;
  }
  KeyValue kv{};
  kv.value = owned_value;
  try {
    CopyToOwned(key, &kv.key);
    InsertAbsent(map, kv);
  } catch (...) {
    ReleaseAny(&kv.key);
    ReleaseAny(&kv.value);
    throw;
  }
}

bool DictErase(TVMFFIObject* dict, const TVMFFIAny& key) {
  auto* map = reinterpret_cast<MapObject*>(dict);
  details::RequireWellFormed(key, "ffi.Dict");
  const Found at = FindEntry(map, key);  // may throw (a key hook): nothing has changed
  if (at.entry == nullptr) return false;
  KeyValue removed{};
  if (map->slots & kSmallLayoutBit) {
    auto* entries = static_cast<KeyValue*>(map->data);
    removed = entries[at.index];
    std::memmove(entries + at.index, entries + at.index + 1,
                 (map->size - at.index - 1) * sizeof(KeyValue));
    --map->size;
  } else {
    removed = DenseErase(reinterpret_cast<DenseMapObject*>(map), at.index, at.home);
  }
  ReleaseAny(&removed.key);
  ReleaseAny(&removed.value);
  return true;
}

void DictClear(TVMFFIObject* dict) {
  auto* map = reinterpret_cast<MapObject*>(dict);
  // Emptied first and released afterwards: a released value's deleter may read this dict.
  std::vector<KeyValue> entries = EntriesInOrder(map);
  if (map->slots & kSmallLayoutBit) {
    map->size = 0;
  } else if (map->data != nullptr) {
    auto* dense = reinterpret_cast<DenseMapObject*>(map);
    DenseView v = ViewOf(dense);
    for (uint64_t i = 0; i < v.slots; ++i) v.meta(i) = kEmptyMeta;
    map->size = 0;
    dense->iter_head = kNoSlot;
    dense->iter_tail = kNoSlot;
  }
  for (KeyValue& kv : entries) {
    ReleaseAny(&kv.key);
    ReleaseAny(&kv.value);
  }
}
#endif  // FFIJIT_TVM_FFI_HAS_LIST_DICT

}  // namespace ffijit::internal

using namespace ffijit;

extern "C" {

int FFIJITMapCreate(const TVMFFIAny* keys, const TVMFFIAny* values, int64_t n,
                    TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    *CheckedOut(out, "FFIJITMapCreate") = BuildMap(keys, values, n, kTVMFFIMap, "FFIJITMapCreate");
  });
}

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
int FFIJITDictCreate(const TVMFFIAny* keys, const TVMFFIAny* values, int64_t n,
                     TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    *CheckedOut(out, "FFIJITDictCreate") =
        BuildMap(keys, values, n, kTVMFFIDict, "FFIJITDictCreate");
  });
}
#endif

int FFIJITMapSize(TVMFFIObjectHandle map, int64_t* out) {
  return internal::GuardCBoundary([&] {
    MapObject* obj = MapOf(map, "FFIJITMapSize");
    internal::RequireNonNull(out, "FFIJITMapSize", "out");
    *out = static_cast<int64_t>(obj->size);
  });
}

int FFIJITMapGet(TVMFFIObjectHandle map, const TVMFFIAny* key, const TVMFFIAny** out_value) {
  return internal::GuardCBoundary([&] {
    MapObject* obj = MapOf(map, "FFIJITMapGet");
    internal::RequireNonNull(key, "FFIJITMapGet", "key");
    internal::RequireNonNull(out_value, "FFIJITMapGet", "out_value");
    details::RequireWellFormed(*key, "FFIJITMapGet");
    const KeyValue* entry = Find(obj, *key);
    *out_value = entry == nullptr ? nullptr : &entry->value;
  });
}

int FFIJITMapItemAt(TVMFFIObjectHandle map, int64_t i, const TVMFFIAny** key,
                    const TVMFFIAny** value) {
  return internal::GuardCBoundary([&] {
    MapObject* obj = MapOf(map, "FFIJITMapItemAt");
    internal::RequireNonNull(key, "FFIJITMapItemAt", "key");
    internal::RequireNonNull(value, "FFIJITMapItemAt", "value");
    if (i < 0 || static_cast<uint64_t>(i) >= obj->size) {
      throw Error("IndexError", "FFIJITMapItemAt: index " + std::to_string(i) +
                                    " out of range for a map of size " + std::to_string(obj->size));
    }
    const KeyValue* entry = EntryAt(obj, static_cast<uint64_t>(i));
    *key = &entry->key;
    *value = &entry->value;
  });
}

}  // extern "C"
