// ConcurrentEngine (`concurrent`): one tbb::concurrent_hash_map shared by all
// I/O threads, its keys compact EntryRecords (key and value in one
// allocation); each thread executes its commands inline, locking only the
// entry it touches (a const_accessor for reads, an accessor for writes).
// This is the role the seed gave Rust's DashMap.
//
// Thread-safe: Execute() and Info() may be called from any number of threads.
// Atomicity: each keyed operation is atomic (it holds its entry's lock).
// DBSIZE and FLUSHALL close the TableGate (see table_gate.h): they wait for
// in-flight keyed operations, run alone, and so see or produce one consistent
// moment of the whole keyspace. A batch as a whole is not atomic.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <string_view>

#include <oneapi/tbb/concurrent_hash_map.h>

#include "engines/inline_engine.h"
#include "engines/entry.h"
#include "engines/entry_record.h"
#include "engines/memory_meter.h"
#include "engines/table_gate.h"

namespace kvlab {

class ConcurrentEngine final : public InlineEngine {
 public:
  explicit ConcurrentEngine(const EngineConfig& config);

  EngineInfo Info() const override;
  bool OverMemoryLimit() const override { return meter_.OverLimit(); }

 private:
  // What an insert knows of the key it may create: its bytes, and the value
  // and expiry the operation brings (so the record is sized for them).
  struct NewEntry {
    std::string_view key;
    std::string_view value;
    int64_t expire_at_ms = 0;
  };
  // The map's key: it owns one EntryRecord holding the key, the value while
  // it fits there, and an expiry slot whose presence is fixed at insert.
  // Other threads compare a node's key bytes without the node's lock, so
  // the record is never replaced or its key part rewritten while the node
  // lives; values change in place (EntryRecord::Overwrite) or move to the
  // node's Spill.
  class RecordKey {
   public:
    explicit RecordKey(const NewEntry& entry)
        : record_(EntryRecord::Make(entry.key, entry.value, entry.expire_at_ms)) {}
    ~RecordKey() { EntryRecord::Free(record_); }
    RecordKey(const RecordKey&) = delete;
    RecordKey& operator=(const RecordKey&) = delete;
    std::string_view key() const { return record_->key(); }
    EntryRecord& record() const { return *record_; }

   private:
    EntryRecord* record_;
  };
  // The node's mapped value: the value and expiry when they no longer fit
  // the key's record (nullptr while they do). Touched only under the node's lock.
  struct Spill {
    Spill() = default;
    ~Spill() {
      if (record != nullptr) EntryRecord::Free(record);
    }
    Spill(const Spill&) = delete;
    Spill& operator=(const Spill&) = delete;
    EntryRecord* record = nullptr;
  };
  // TBB's HashCompare, transparent so string_view keys probe without allocating.
  struct KeyHashCompare {
    using is_transparent = void;
    static std::string_view KeyOf(std::string_view key) { return key; }
    static std::string_view KeyOf(const NewEntry& entry) { return entry.key; }
    static std::string_view KeyOf(const RecordKey& key) { return key.key(); }
    template <typename K>
    size_t hash(const K& key) const { return KeyHash{}(KeyOf(key)); }
    template <typename A, typename B>
    bool equal(const A& a, const B& b) const { return KeyOf(a) == KeyOf(b); }
  };
  // std::allocator, not TBB's default scalable allocator: the map's nodes
  // then come from malloc like every other engine's, so INFO's allocator-
  // level used_memory (mallinfo2) counts them. A pool of exact 32-byte node
  // slots (malloc takes 48) was tried and withdrawn: it saved 16 bytes a key
  // but cost 14-16% of P16 SET throughput in same-run A/B rounds against this
  // allocator (the map's lookup took a larger share of the CPU profile).
  using Map = tbb::concurrent_hash_map<RecordKey, Spill, KeyHashCompare,
                                       std::allocator<std::pair<const RecordKey, Spill>>>;
  class WriteSlot;
  // The entry a node holds, wherever its value lives now.
  static EntryView ViewOf(const Map::value_type& node);

  OpResult ExecuteKeyed(const Operation& op, int64_t now_ms) override;
  int64_t CountLiveKeys(int64_t now_ms) override;
  void ClearAll() override;

  MemoryMeter meter_;
  TableGate gate_;
  Map map_;
};

}  // namespace kvlab
