#include "engines/keyspace/record_table.h"

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "engines/entry.h"

namespace kvlab {

RecordTable::~RecordTable() { std::free(slots_); }

// KeyHash (entry.h), the hash the sharded and striped engines pick a shard
// or stripe by: one function for every keyspace.
uint64_t RecordTable::HashOf(std::string_view key) { return KeyHash{}(key); }

uint64_t RecordTable::SlotFor(const EntryRecord* record, uint64_t hash) {
  const uint64_t address = reinterpret_cast<uint64_t>(record);
  if ((address & ~kAddressMask) != 0) {
    // Linux gives user space addresses above 2^48 only to mmap calls that ask
    // for them; malloc does not.
    std::fprintf(stderr, "kvlab: record address %p does not fit 48 bits\n",
                 static_cast<const void*>(record));
    std::abort();
  }
  return (TagOfHash(hash) << kTagShift) | address;
}

RecordTable::Position RecordTable::Find(std::string_view key, uint64_t hash) const {
  if (slots_ == nullptr) return kAbsent;
  const uint64_t tag = TagOfHash(hash);
  for (size_t i = HomeOf(hash);; i = (i + 1) & mask_) {
    const uint64_t slot = slots_[i];
    if (slot == 0) return kAbsent;
    if (TagOfSlot(slot) == tag && RecordOf(slot)->key() == key) return i;
  }
}

void RecordTable::ReplaceAt(Position position, EntryRecord* record) {
  slots_[position] = (slots_[position] & ~kAddressMask) | SlotFor(record, 0);
}

RecordTable::Position RecordTable::Insert(EntryRecord* record, uint64_t hash) {
  if (slots_ == nullptr || (size_ + 1) * 4 > (mask_ + 1) * 3) Grow();
  size_t i = HomeOf(hash);
  while (slots_[i] != 0) i = (i + 1) & mask_;
  slots_[i] = SlotFor(record, hash);
  ++size_;
  return i;
}

void RecordTable::Grow() {
  const size_t capacity = slots_ == nullptr ? kMinCapacity : (mask_ + 1) * 2;
  auto* grown = static_cast<uint64_t*>(std::calloc(capacity, sizeof(uint64_t)));
  if (grown == nullptr) throw std::bad_alloc();
  const size_t grown_mask = capacity - 1;
  const int grown_shift = 64 - std::countr_zero(capacity);
  // The tag keeps only 16 bits of the hash: each key is hashed again.
  ForEach([&](const EntryRecord* record) {
    const uint64_t hash = HashOf(record->key());
    size_t i = HomeIn(hash, grown_shift);
    while (grown[i] != 0) i = (i + 1) & grown_mask;
    grown[i] = SlotFor(record, hash);
  });
  std::free(slots_);
  slots_ = grown;
  mask_ = grown_mask;
  shift_ = grown_shift;
}

void RecordTable::EraseAt(Position position) {
  // Backward-shift deletion: move each following record of the cluster into
  // the hole when its home slot does not lie between the hole and itself,
  // so that every remaining key stays reachable from its home without
  // tombstones.
  size_t hole = position;
  for (size_t i = (hole + 1) & mask_; slots_[i] != 0; i = (i + 1) & mask_) {
    const size_t home = HomeOf(HashOf(RecordOf(slots_[i])->key()));
    const bool home_in_between = ((i - home) & mask_) < ((i - hole) & mask_);
    if (home_in_between) continue;
    slots_[hole] = slots_[i];
    hole = i;
  }
  slots_[hole] = 0;
  --size_;
}

void RecordTable::Clear() {
  std::free(slots_);
  slots_ = nullptr;
  mask_ = 0;
  shift_ = 63;
  size_ = 0;
}

size_t RecordTable::ProbeLength(std::string_view key) const {
  if (slots_ == nullptr) return 0;
  const uint64_t hash = HashOf(key);
  size_t inspected = 1;
  for (size_t i = HomeOf(hash); slots_[i] != 0; i = (i + 1) & mask_, ++inspected) {
    if (RecordOf(slots_[i])->key() == key) return inspected;
  }
  return inspected;
}

}  // namespace kvlab
