#include "engines/keyspace/plain_keyspace.h"

#include "engines/calls/keyspace_ops.h"

namespace kvlab {

// The EntryHandle for one key of the set: looks the key up once and
// remembers where it is.
class PlainKeyspace::Slot {
 public:
  Slot(RecordTable& table, std::string_view key, size_t& keys_with_deadline)
      : table_(table),
        key_(key),
        hash_(RecordTable::HashOf(key)),
        at_(table.Find(key, hash_)),
        keys_with_deadline_(keys_with_deadline) {}

  // ApplyToKey() says how the operation changed the number of keys with a
  // deadline, from the entries it read anyway: reading the old record's
  // deadline again in Store() cost every SET about 34 instructions, and
  // adding a delta after every operation about 15 on every GET (`make
  // regress`).
  void DeadlinesChanged(int64_t delta) { keys_with_deadline_ += delta; }

  std::optional<EntryView> Find() const {
    if (at_ == RecordTable::kAbsent) return std::nullopt;
    return ViewOfRecord(*table_.RecordAt(at_));
  }
  void Store(std::string_view value, int64_t expire_at_ms, ValueForm form) {
    if (at_ == RecordTable::kAbsent) {
      Insert(EntryRecord::Make(key_, value, expire_at_ms, form));
    } else {
      table_.ReplaceAt(at_, EntryRecord::Store(table_.RecordAt(at_), value, expire_at_ms, form));
    }
  }
  void Append(std::string_view tail) {
    if (at_ == RecordTable::kAbsent) {
      Insert(EntryRecord::Make(key_, tail, 0));
    } else {
      table_.ReplaceAt(at_, EntryRecord::Append(table_.RecordAt(at_), tail));
    }
  }
  void SetExpiry(int64_t expire_at_ms) {
    table_.ReplaceAt(at_, EntryRecord::SetExpiry(table_.RecordAt(at_), expire_at_ms));
  }
  void Erase() {
    EntryRecord* record = table_.RecordAt(at_);
    table_.EraseAt(at_);  // hashes the keys it shifts, not this one: free it either way
    EntryRecord::Free(record);
    at_ = RecordTable::kAbsent;
  }

 private:
  void Insert(EntryRecord* record) {
    try {
      at_ = table_.Insert(record, hash_);
    } catch (...) {
      EntryRecord::Free(record);
      throw;
    }
  }

  RecordTable& table_;
  std::string_view key_;
  const uint64_t hash_;
  RecordTable::Position at_;
  size_t& keys_with_deadline_;
};

OpResult PlainKeyspace::Apply(const Operation& op, int64_t now_ms, GroupState* group) {
  Slot slot(table_, op.key, keys_with_deadline_);
  return ApplyToKey(op, slot, now_ms, meter_, feed_, group);
}

OpResult PlainKeyspace::Read(const Operation& op, int64_t now_ms) const {
  const RecordTable::Position at = table_.Find(op.key);
  if (at == RecordTable::kAbsent) return ReadKey(op, std::nullopt, now_ms);
  return ReadKey(op, ViewOfRecord(*table_.RecordAt(at)), now_ms);
}

void PlainKeyspace::Prefetch(std::string_view key, PrefetchStage stage) const {
  const uint64_t hash = RecordTable::HashOf(key);
  if (stage == PrefetchStage::kSlot) {
    table_.PrefetchSlot(hash);
  } else {
    table_.PrefetchRecord(hash);
  }
}

int64_t PlainKeyspace::CountLive(int64_t now_ms) const {
  int64_t live = 0;
  table_.ForEach([&](const EntryRecord* record) {
    live += IsExpired(record->expire_at_ms(), now_ms) ? 0 : 1;
  });
  return live;
}

void PlainKeyspace::Collect(KeyCollector& collector, int64_t now_ms) const {
  table_.ForEach([&](const EntryRecord* record) {
    if (!IsExpired(record->expire_at_ms(), now_ms)) collector.Offer(record->key());
  });
}

void PlainKeyspace::Clear() {
  int64_t bytes = 0;
  const bool reporting = feed_.active();
  table_.ForEach([&](EntryRecord* record) {
    const EntryView entry = ViewOfRecord(*record);
    bytes += Footprint(record->key(), entry);
    if (reporting) feed_.Report(record->key());
    ReleaseContainer(entry.container);
    EntryRecord::Free(record);
  });
  table_.Clear();  // forgets the freed records without reading them
  meter_.Add(-bytes);
  keys_with_deadline_ = 0;
  reclaim_cursor_ = 0;
}

int64_t PlainKeyspace::ReclaimExpired(int64_t now_ms, size_t places) {
  int64_t reclaimed = 0;
  for (int round = 0; round < kReclaimExpiredRounds && keys_with_deadline_ > 0; ++round) {
    const size_t capacity = table_.capacity();
    size_t with_deadline = 0;
    size_t expired = 0;
    for (size_t looked = 0; looked < places; ++looked) {
      if (reclaim_cursor_ >= capacity) reclaim_cursor_ = 0;
      EntryRecord* record = table_.RecordAt(reclaim_cursor_);
      if (record == nullptr || record->expire_at_ms() == 0) {
        ++reclaim_cursor_;
        continue;
      }
      ++with_deadline;
      const int64_t deadline = record->expire_at_ms();
      if (!IsExpired(deadline, now_ms)) {
        ++reclaim_cursor_;
        continue;
      }
      // What ApplyToKey() does with an expired entry a write finds.
      ++expired;
      const EntryView entry = ViewOfRecord(*record);
      meter_.Add(-Footprint(record->key(), entry));
      feed_.ReportExpired(record->key(), deadline);
      ReleaseContainer(entry.container);
      // Backward-shift deletion moves the next record of the cluster (if
      // any) into this place: the cursor stays to look at it.
      table_.EraseAt(reclaim_cursor_);
      EntryRecord::Free(record);
      --keys_with_deadline_;
    }
    reclaimed += static_cast<int64_t>(expired);
    // Redis's ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE: 10%.
    if (expired * 10 <= with_deadline) break;
  }
  return reclaimed;
}

}  // namespace kvlab
