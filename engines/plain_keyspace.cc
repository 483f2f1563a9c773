#include "engines/plain_keyspace.h"

#include "engines/keyspace_ops.h"

namespace kvlab {

// The EntryHandle for one key of the set: looks the key up once and
// remembers where it is.
class PlainKeyspace::Slot {
 public:
  Slot(Map& map, std::string_view key) : map_(map), key_(key), it_(map.find(key)) {}

  std::optional<EntryView> Find() const {
    if (it_ == map_.end()) return std::nullopt;
    const EntryRecord& record = *it_->record;
    return EntryView{record.value(), record.expire_at_ms()};
  }
  void Store(std::string_view value, int64_t expire_at_ms) {
    if (it_ == map_.end()) {
      Insert(EntryRecord::Make(key_, value, expire_at_ms));
    } else {
      it_->record = EntryRecord::Store(it_->record, value, expire_at_ms);
    }
  }
  void Append(std::string_view tail) {
    if (it_ == map_.end()) {
      Insert(EntryRecord::Make(key_, tail, 0));
    } else {
      it_->record = EntryRecord::Append(it_->record, tail);
    }
  }
  void SetExpiry(int64_t expire_at_ms) {
    it_->record = EntryRecord::SetExpiry(it_->record, expire_at_ms);
  }
  void Erase() {
    EntryRecord* record = it_->record;
    map_.erase(it_);  // hashes the record's key: free it only afterwards
    EntryRecord::Free(record);
    it_ = map_.end();
  }

 private:
  void Insert(EntryRecord* record) {
    try {
      it_ = map_.insert(RecordRef{record}).first;
    } catch (...) {
      EntryRecord::Free(record);
      throw;
    }
  }

  Map& map_;
  std::string_view key_;
  Map::iterator it_;
};

OpResult PlainKeyspace::Apply(const Operation& op, int64_t now_ms) {
  Slot slot(map_, op.key);
  return ApplyToKey(op, slot, now_ms, meter_);
}

OpResult PlainKeyspace::Read(const Operation& op, int64_t now_ms) const {
  const auto it = map_.find(op.key);
  if (it == map_.end()) return ReadKey(op, std::nullopt, now_ms);
  return ReadKey(op, EntryView{it->record->value(), it->record->expire_at_ms()}, now_ms);
}

void PlainKeyspace::Prefetch(std::string_view key) const {
  const size_t buckets = map_.bucket_count();
  // libstdc++'s bucket of a hash (_Mod_range_hashing); were it another,
  // the hint would touch the wrong bucket and only be useless.
  const size_t bucket = RecordHash{}(key) % buckets;
  const auto first = map_.begin(bucket);
  if (first != map_.end(bucket)) __builtin_prefetch(first->record);
}

int64_t PlainKeyspace::CountLive(int64_t now_ms) const {
  int64_t live = 0;
  for (const RecordRef& ref : map_) live += IsExpired(ref.record->expire_at_ms(), now_ms) ? 0 : 1;
  return live;
}

void PlainKeyspace::Clear() {
  int64_t bytes = 0;
  for (const RecordRef& ref : map_) {
    bytes += Footprint(ref.record->key(), ref.record->value());
    EntryRecord::Free(ref.record);
  }
  map_.clear();  // frees the nodes without hashing or comparing: the records are not read
  meter_.Add(-bytes);
}

}  // namespace kvlab
