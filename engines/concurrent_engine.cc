#include "engines/concurrent_engine.h"

#include <mutex>
#include <shared_mutex>

#include "engines/keyspace_ops.h"

namespace kvlab {

// The EntryHandle over a tbb write accessor. Operations that may create the
// key (SET, GETSET, INCRBY, APPEND) insert it up front — TBB's only atomic
// find-or-insert — and the slot treats that fresh node as absent until
// Store() or Append() claims it; an unclaimed node (SET XX on a missing key,
// INCRBY on a non-integer) is erased before the accessor is released, so no
// other thread can ever observe it.
class ConcurrentEngine::WriteSlot {
 public:
  WriteSlot(Map& map, std::string_view key, bool may_create) : map_(map) {
    if (may_create) {
      present_ = !map_.insert(accessor_, key);
      placeholder_ = !present_;
    } else {
      present_ = map_.find(accessor_, key);
    }
  }
  ~WriteSlot() {
    if (placeholder_) map_.erase(accessor_);
  }
  WriteSlot(const WriteSlot&) = delete;
  WriteSlot& operator=(const WriteSlot&) = delete;

  std::optional<EntryView> Find() const {
    if (!present_) return std::nullopt;
    return EntryView{accessor_->second.value, accessor_->second.expire_at_ms};
  }
  void Store(std::string_view value, int64_t expire_at_ms) {
    Entry& entry = Claim();
    entry.value.assign(value);
    entry.expire_at_ms = expire_at_ms;
  }
  void Append(std::string_view tail) { Claim().value.append(tail); }
  void SetExpiry(int64_t expire_at_ms) { accessor_->second.expire_at_ms = expire_at_ms; }
  void Erase() {
    // Keep the node (and our lock on it) while the operation may still
    // Store() it again; the destructor erases it if it stays unclaimed.
    present_ = false;
    placeholder_ = true;
  }

 private:
  // The entry to write: the stored one, or the placeholder node made fresh.
  Entry& Claim() {
    if (!present_) {
      present_ = true;
      placeholder_ = false;
      accessor_->second = Entry{};
    }
    return accessor_->second;
  }

  Map& map_;
  Map::accessor accessor_;
  bool present_ = false;
  bool placeholder_ = false;
};

ConcurrentEngine::ConcurrentEngine(const EngineConfig& config) : meter_(config.max_memory_bytes) {}

OpResult ConcurrentEngine::ExecuteKeyed(const Operation& op, int64_t now_ms) {
  std::shared_lock open_gate(gate_);
  if (IsReadOnly(op.code)) {
    Map::const_accessor reader;
    if (!map_.find(reader, op.key)) return ReadKey(op, std::nullopt, now_ms);
    return ReadKey(op, EntryView{reader->second.value, reader->second.expire_at_ms}, now_ms);
  }
  WriteSlot slot(map_, op.key, MayGrowMemory(op.code));
  return ApplyToKey(op, slot, now_ms, meter_);
}

int64_t ConcurrentEngine::CountLiveKeys(int64_t now_ms) {
  std::unique_lock closed_gate(gate_);
  int64_t live = 0;
  for (const auto& [key, entry] : map_) live += IsExpired(entry, now_ms) ? 0 : 1;
  return live;
}

void ConcurrentEngine::ClearAll() {
  std::unique_lock closed_gate(gate_);
  int64_t bytes = 0;
  for (const auto& [key, entry] : map_) bytes += Footprint(key, entry.value);
  map_.clear();
  meter_.Add(-bytes);
}

EngineInfo ConcurrentEngine::Info() const {
  // size() is safe concurrently; it counts expired keys not yet reclaimed.
  return {{"engine", "concurrent"},
          {"keys", std::to_string(map_.size())},
          {"dataset_bytes", std::to_string(meter_.UsedBytes())}};
}

}  // namespace kvlab
