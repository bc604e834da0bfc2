// What map_key.cc, map_table.cc and map.cc share: the Map (and Dict) object layout, its slot
// addressing, and the key and table operations the C API and the Dict changes are built on. The
// layout facts below are the contract with header code, so they sit with the types that encode it.
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
// (DictSet/DictErase/DictClear in map.cc) and by header code (dict.h). Header code, when a full
// small dict grows, rewrites the object itself as a dense one (fib_shift and the iteration list at
// 56..79), so every Dict object is at least 80 bytes: ffijit gives small ones 4 inline slots.
// When ffijit outgrows a dict's storage it moves the entries to new storage (a malloc'ed small
// buffer or dense blocks, each with a data_deleter) and frees the old through the old
// data_deleter, whatever made it.
#ifndef FFIJIT_RUNTIME_MAP_TABLE_H_
#define FFIJIT_RUNTIME_MAP_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ffijit/c_api.h"

namespace ffijit::internal {

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

// ---- Dense layout: slot addressing ----

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

inline DenseView ViewOf(const DenseMapObject* map) {
  return DenseView{static_cast<Block*>(map->base.data), map->base.slots};
}

// ---- Key hashing and equality (map_key.cc) ----
//
// TVM FFI's AnyHash/AnyEqual, extended to borrowed views. One path for every map whoever made it:
// header code's AnyHash/AnyEqual and these must agree, or a key one side inserted is not found by
// the other. Either may throw (a key hook's error, as an ffijit::Error); every caller hashes and
// compares before it changes a map.

// Every string form hashes as its characters under the Str type index (every bytes form under
// Bytes), so a borrowed "abc" finds a SmallStr or Str key "abc"; an object whose type has an
// `__any_hash__` hook by what the hook says, under its type index; anything else by its bits.
uint64_t KeyHash(const TVMFFIAny& key);

// Strings (bytes) by content whatever their form; the same bits are equal; two objects of one
// type with an `__any_equal__` hook as the hook says; anything else is not equal.
bool KeyEqual(const TVMFFIAny& a, const TVMFFIAny& b);

// ---- Table operations (map_table.cc) ----

void MapDeleter(void* self, int flags);

// A dense map or dict of owned entries (keys distinct); the entries' references move into it.
TVMFFIObject* NewDenseMap(const std::vector<KeyValue>& entries, const std::vector<uint64_t>& hashes,
                          int32_t type_index);

// Where a key's entry lives: `index` in the small layout, the slot in the dense one, where `home`
// heads the list the slot is on.
struct Found {
  const KeyValue* entry = nullptr;
  uint64_t index = 0;
  uint64_t home = 0;
};

// Looks `key` up (may throw: a key hook); changes nothing.
Found FindEntry(const MapObject* map, const TVMFFIAny& key);

inline const KeyValue* Find(const MapObject* map, const TVMFFIAny& key) {
  return FindEntry(map, key).entry;
}

// The i-th entry in iteration (insertion) order; i < size.
const KeyValue* EntryAt(const MapObject* map, uint64_t i);

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
// Removes the item in `slot`, on the list headed by `home` (as the lookup found it: no key is
// hashed here), from a dense table, keeping every same-home list whole: the last item of the
// slot's list moves into the slot (the list order of the rest is unchanged). Returns the removed
// entry, whose references the caller now owns.
KeyValue DenseErase(DenseMapObject* map, uint64_t slot, uint64_t home);

// The entries in iteration order (bitwise: the references stay where they are).
std::vector<KeyValue> EntriesInOrder(const MapObject* map);

// Adds an entry whose key is absent; its references move into the map. On an exception (a key
// hook, std::bad_alloc) the map is unchanged and the references stay the caller's.
void InsertAbsent(MapObject* map, const KeyValue& kv);
#endif  // FFIJIT_TVM_FFI_HAS_LIST_DICT

}  // namespace ffijit::internal

#endif  // FFIJIT_RUNTIME_MAP_TABLE_H_
