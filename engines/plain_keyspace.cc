#include "engines/plain_keyspace.h"

#include "engines/keyspace_ops.h"

namespace kvlab {

// The EntryHandle for one key of a std::unordered_map: looks the key up once
// and remembers where it is.
class PlainKeyspace::Slot {
 public:
  Slot(Map& map, std::string_view key) : map_(map), key_(key), it_(map.find(key)) {}

  Entry* Find() { return it_ == map_.end() ? nullptr : &it_->second; }
  Entry& Create() {
    it_ = map_.try_emplace(std::string(key_)).first;
    return it_->second;
  }
  void Erase() {
    map_.erase(it_);
    it_ = map_.end();
  }

 private:
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
  return ReadKey(op, it == map_.end() ? nullptr : &it->second, now_ms);
}

int64_t PlainKeyspace::CountLive(int64_t now_ms) const {
  int64_t live = 0;
  for (const auto& [key, entry] : map_) live += IsExpired(entry, now_ms) ? 0 : 1;
  return live;
}

void PlainKeyspace::Clear() {
  int64_t bytes = 0;
  for (const auto& [key, entry] : map_) bytes += Footprint(key, entry);
  map_.clear();
  meter_.Add(-bytes);
}

}  // namespace kvlab
