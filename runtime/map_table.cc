// The mechanics of TVM FFI's small and dense map tables (layout in map_table.h): sizing and
// building dense storage, inserting with relocation, lookup, walking in order, releasing, and the
// in-place erase and regrowth a Dict needs. Kept apart from map.cc, which builds maps from argument
// arrays and offers the C API and the Dict changes on top of these, so that the probing and
// relocation logic reads on its own.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <utility>
#include <vector>

#include "container_internal.h"
#include "ffijit/any.h"
#include "internal.h"
#include "map_table.h"
#include "object_internal.h"
#include "string_internal.h"

namespace ffijit::internal {
namespace {

using details::IsBytesForm;
using details::IsStrForm;

uint64_t HomeSlot(uint64_t hash, uint32_t fib_shift) {
  return (kFibonacciMultiplier * hash) >> fib_shift;
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

}  // namespace

void MapDeleter(void* self, int flags) {
  auto* map = static_cast<MapObject*>(self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) ReleaseEntries(map);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(map);
}

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

const KeyValue* EntryAt(const MapObject* map, uint64_t i) {
  if (map->slots & kSmallLayoutBit) return static_cast<const KeyValue*>(map->data) + i;
  const auto* dense = reinterpret_cast<const DenseMapObject*>(map);
  DenseView v = ViewOf(dense);
  uint64_t slot = dense->iter_head;
  for (uint64_t k = 0; k < i; ++k) slot = v.item(slot).next;
  return &v.item(slot).kv;
}

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

#if FFIJIT_TVM_FFI_HAS_LIST_DICT
// ---- In-place changes (Dict) ----

namespace {

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
    // Every Dict object has room for these (see map_table.h).
    auto* dense = reinterpret_cast<DenseMapObject*>(map);
    dense->fib_shift = fresh.fib_shift;
    dense->iter_head = fresh.iter_head;
    dense->iter_tail = fresh.iter_tail;
  }
}

}  // namespace

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

std::vector<KeyValue> EntriesInOrder(const MapObject* map) {
  std::vector<KeyValue> entries;
  entries.reserve(map->size);
  internal::MapForEach(&map->header, [&](const TVMFFIAny& key, const TVMFFIAny& value) {
    entries.push_back(KeyValue{key, value});
  });
  return entries;
}

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

}  // namespace ffijit::internal
