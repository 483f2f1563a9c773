// RecordTable: an open-addressing hash table of EntryRecord pointers, found
// by the records' keys — the index of a PlainKeyspace.
//
// Why not std::unordered_set: a libstdc++ lookup walks bucket -> previous
// node -> node -> record, three dependent cache misses before the key is
// compared, and without a cached hash it re-hashes chain neighbours to find
// the bucket's end; a node and its share of the buckets also cost ~40 bytes
// a key. Here a key is one 8-byte slot — the record's address with 16 bits
// of the key's hash above it (user-space addresses fit in 48 bits) — found
// by linear probing, so a lookup is one slot line and one record, and a
// pipelined batch can prefetch both ahead (PrefetchSlot(), PrefetchRecord()).
// A key's home slot comes from the top bits of its hash times a 64-bit odd
// constant (Fibonacci hashing), not its low bits: the striped and sharded
// engines pick a stripe or shard by hash modulo their count, so the keys of
// one table often share their hash's low bits.
// The table doubles at 3/4 full (rehashing every key at once, as
// std::unordered_set does); erasing shifts the following cluster back
// instead of leaving tombstones.
//
// The table never owns records: whoever inserts one frees it after erasing.
// Not thread-safe: the owner serialises access. const members may run
// concurrently with each other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engines/keyspace/entry_record.h"
#include "engines/keyspace/prefetch_line.h"

namespace kvlab {

class RecordTable {
 public:
  // Where a key's record sits; valid until the next Insert() or Erase().
  using Position = size_t;
  static constexpr Position kAbsent = ~size_t{0};

  RecordTable() = default;
  ~RecordTable();
  RecordTable(const RecordTable&) = delete;
  RecordTable& operator=(const RecordTable&) = delete;

  static uint64_t HashOf(std::string_view key);

  Position Find(std::string_view key, uint64_t hash) const;
  Position Find(std::string_view key) const { return Find(key, HashOf(key)); }
  // Any place below capacity() may be read: nullptr when it holds no record.
  EntryRecord* RecordAt(Position position) const { return RecordOf(slots_[position]); }
  // REQUIRES: `record` has the key of the record at `position`.
  void ReplaceAt(Position position, EntryRecord* record);
  // REQUIRES: no record with this key is stored; `hash` is HashOf(its key).
  // Throws std::bad_alloc when the table cannot grow (nothing changes then).
  Position Insert(EntryRecord* record, uint64_t hash);
  // Removes the record from the table (it is not freed).
  void EraseAt(Position position);
  // Forgets every record (none is freed) and releases the slots.
  void Clear();

  size_t size() const { return size_; }
  size_t capacity() const { return slots_ == nullptr ? 0 : mask_ + 1; }
  // Bytes of the slot array.
  size_t SlotBytes() const { return capacity() * sizeof(uint64_t); }

  // Hints for a lookup of a key with hash `hash` soon: PrefetchSlot() starts
  // loading the slots where its search begins; PrefetchRecord(), issued later
  // when they are likely cached, reads them and starts loading the record
  // whose hash tag matches. A key that collided sits a few slots past its
  // home (about half the keys, near 3/4 full), so the hint looks that far
  // too, not only at the home slot. They change nothing.
  static constexpr size_t kHintedProbes = 4;
  void PrefetchSlot(uint64_t hash) const {
    if (slots_ == nullptr) return;
    const size_t home = HomeOf(hash);
    PrefetchLine(&slots_[home]);
    // The probe's last slot, when it lies on the next cache line.
    PrefetchLine(&slots_[(home + kHintedProbes - 1) & mask_]);
  }
  void PrefetchRecord(uint64_t hash) const {
    if (slots_ == nullptr) return;
    const uint64_t tag = TagOfHash(hash);
    const size_t home = HomeOf(hash);
    for (size_t probe = 0; probe < kHintedProbes; ++probe) {
      const uint64_t slot = slots_[(home + probe) & mask_];
      if (slot == 0) return;
      if (TagOfSlot(slot) == tag) {
        PrefetchLine(RecordOf(slot));
        return;
      }
    }
  }

  // Slots a lookup of `key` inspects (1 when it sits in its home slot);
  // for a key that is absent, the slots up to the first empty one.
  size_t ProbeLength(std::string_view key) const;

  // Calls visit(EntryRecord*) for every stored record, in slot order (the
  // table does not own them, so a const table still hands out mutable ones).
  template <typename Visit>
  void ForEach(Visit visit) const {
    if (slots_ == nullptr) return;
    for (size_t i = 0; i <= mask_; ++i) {
      if (slots_[i] != 0) visit(RecordOf(slots_[i]));
    }
  }

 private:
  static constexpr int kTagShift = 48;
  static constexpr uint64_t kAddressMask = (uint64_t{1} << kTagShift) - 1;
  static constexpr size_t kMinCapacity = 16;

  static uint64_t TagOfHash(uint64_t hash) { return hash >> kTagShift; }
  static uint64_t TagOfSlot(uint64_t slot) { return slot >> kTagShift; }
  static EntryRecord* RecordOf(uint64_t slot) {
    return reinterpret_cast<EntryRecord*>(slot & kAddressMask);
  }
  static uint64_t SlotFor(const EntryRecord* record, uint64_t hash);
  static size_t HomeIn(uint64_t hash, int shift) {
    return static_cast<size_t>((hash * 0x9E3779B97F4A7C15ull) >> shift);
  }
  size_t HomeOf(uint64_t hash) const { return HomeIn(hash, shift_); }
  void Grow();

  uint64_t* slots_ = nullptr;  // 0 = empty
  size_t mask_ = 0;            // capacity - 1 (capacity a power of two)
  int shift_ = 63;             // 64 - log2(capacity): HomeOf() keeps the top bits
  size_t size_ = 0;
};

}  // namespace kvlab
