#include "engines/keyspace/plain_keyspace.h"

#include "engines/calls/keyspace_ops.h"

namespace kvlab {

// The EntryHandle for one key of the set: looks the key up once and
// remembers where it is.
class PlainKeyspace::Slot {
 public:
  Slot(RecordTable& table, std::string_view key)
      : table_(table), key_(key), hash_(RecordTable::HashOf(key)), at_(table.Find(key, hash_)) {}

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
};

OpResult PlainKeyspace::Apply(const Operation& op, int64_t now_ms, GroupState* group) {
  Slot slot(table_, op.key);
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
}

}  // namespace kvlab
