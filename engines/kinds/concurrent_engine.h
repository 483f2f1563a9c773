// ConcurrentEngine (`concurrent`): one tbb::concurrent_hash_map shared by all
// I/O threads, its keys compact EntryRecords (key and value together, in the
// map node's own allocation); each thread executes its commands inline,
// locking only the entry it touches (a const_accessor for reads, an accessor
// for writes).
// This is the role the seed gave Rust's DashMap.
//
// Thread-safe: Execute() and Info() may be called from any number of threads.
// Atomicity: each keyed operation is atomic (it holds its entry's lock); a
// container command (a hash, list, set or sorted set) holds its entry's
// accessor for the whole command, a const_accessor when it only reads.
// An AtomicGroup (MSET, MGET, DEL k1 k2, RENAME, MULTI/EXEC) takes a write
// accessor on every distinct key it touches, in ascending key-byte order,
// before any of its operations runs; a missing key is inserted as a
// placeholder so that its lock can be held too (and erased, unseen, if the
// group leaves it absent). Single-key operations hold one accessor at a
// time and every multi-key holder takes them in the same order, so this
// cannot deadlock. DBSIZE, FLUSHALL, key collection, and a group holding
// one of them, close the TableGate (see table_gate.h): they wait for
// in-flight keyed operations, run alone, and so see or produce one
// consistent moment of the whole keyspace. Under MultiKey::kSplit a group
// whose parts are independent runs op by op.
//
// Append-only log (write_log.h): a write appends its record while it still
// holds its key's accessor (a group: every accessor, taken in key order), so
// two writes to one key append in the order they took effect, and a reader,
// which needs the accessor too, can only see a write already in the log.
// Writes to different keys may append in either order: they commute, so the
// replay reaches the same state. The log's buffer mutex is the one point
// every writing thread shares.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <string_view>

#include <oneapi/tbb/concurrent_hash_map.h>

#include "engines/kinds/inline_engine.h"
#include "engines/entry.h"
#include "engines/keyspace/entry_record.h"
#include "engines/memory_meter.h"
#include "engines/threads/table_gate.h"
#include "engines/keyspace/trailing_room_allocator.h"

namespace kvlab {

class ConcurrentEngine final : public InlineEngine {
 public:
  explicit ConcurrentEngine(const EngineConfig& config);
  ~ConcurrentEngine() override;  // deletes the containers entries still hold

  EngineInfo Info() const override;
  bool OverMemoryLimit() const override { return meter_.OverLimit(); }
  uint64_t MemoryLimit() const override { return meter_.Limit(); }
  void SetMemoryLimit(uint64_t bytes) override { meter_.SetLimit(bytes); }

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
  // The record is built in its node's own malloc chunk, right after the node
  // (see Map below), so a key costs one chunk, not a node chunk plus a
  // record chunk, and a lookup finds the key bytes beside the node.
  // Other threads compare a node's key bytes without the node's lock, so
  // the record is never replaced or its key part rewritten while the node
  // lives; values change in place (EntryRecord::Overwrite) or move to the
  // node's Spill.
  class RecordKey {
   public:
    // Builds the record in the trailing room the allocator granted this
    // node; a node allocated outside a TrailingRoomRequest (or with too
    // little room) gets a record of its own, freed with the key.
    explicit RecordKey(const NewEntry& entry);
    ~RecordKey() {
      if (!InNode()) EntryRecord::Free(&record());
    }
    RecordKey(const RecordKey&) = delete;
    RecordKey& operator=(const RecordKey&) = delete;
    std::string_view key() const { return record().key(); }
    EntryRecord& record() const {
      return *reinterpret_cast<EntryRecord*>(tagged_record_ & ~kInNodeTag);
    }
    // Whether the record can take a value of `value_size` bytes (and an
    // expiry, if `with_expiry`) in place (EntryRecord::CanHold()).
    bool CanHold(size_t value_size, bool with_expiry) const {
      return record().CanHoldWithin(value_size, with_expiry, [this] { return MemoryBytes(); });
    }

   private:
    // The record's address, its low bit set when the record lives in the
    // node's trailing room (records are at least 4-byte aligned).
    static constexpr uintptr_t kInNodeTag = 1;
    bool InNode() const { return (tagged_record_ & kInNodeTag) != 0; }
    // The bytes the record may fill: its node's trailing room, or its own chunk.
    size_t MemoryBytes() const;
    uintptr_t tagged_record_;
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
    size_t hash(const K& key) const {
      return KeyHash{}(KeyOf(key));
    }
    template <typename A, typename B>
    bool equal(const A& a, const B& b) const {
      return KeyOf(a) == KeyOf(b);
    }
  };
  // Not TBB's default scalable allocator: the map's memory comes from malloc
  // like every other engine's, so INFO's allocator-level used_memory
  // (mallinfo2) counts it. TrailingRoomAllocator gives each node (32 bytes:
  // next pointer, lock, RecordKey, Spill) trailing room for its key's
  // EntryRecord, which WriteSlot requests before it inserts; a node TBB
  // allocates and then discards (another thread inserted the key first)
  // takes its record with it in one free(). Bucket arrays come from
  // std::allocator. (A separate pool of exact 32-byte node slots
  // was tried before and withdrawn: it saved 16 bytes a key but cost 14-16%
  // of P16 SET throughput in same-run A/B rounds.)
  using Map = tbb::concurrent_hash_map<RecordKey, Spill, KeyHashCompare,
                                       TrailingRoomAllocator<std::pair<const RecordKey, Spill>>>;
  // TBB's protected internals the engine reads: its node size (where an
  // in-node record starts) and its bucket table (for lookup hints).
  struct MapInternals;
  class WriteSlot;
  // The entry a node holds, wherever its value lives now.
  static EntryView ViewOf(const Map::value_type& node);

  OpResult ExecuteKeyed(const Operation& op, int64_t now_ms) override;
  void ExecuteGroup(Batch& batch, AtomicGroup& group, int64_t now_ms) override;
  // The whole-table work, with the gate already closed.
  int64_t CountLiveLocked(int64_t now_ms) const;
  void ClearLocked();
  void CollectLocked(KeyCollector& collector, int64_t now_ms) const;
  // Prefetches the key's TBB bucket (its lock and chain head share a line).
  void Prefetch(const Operation& op, PrefetchStage stage) override;
  int64_t CountLiveKeys(int64_t now_ms) override;
  void ClearAll() override;
  void CollectKeys(KeyCollector& collector, int64_t now_ms) override;
  // With the gate closed: walks `places` buckets at a time from where the
  // last call stopped (as PlainKeyspace::ReclaimExpired() walks places).
  int64_t ReclaimExpired(int64_t now_ms, size_t places) override;

  MemoryMeter meter_;
  TableGate gate_;
  Map map_;
  // So that an engine without deadlines closes no gate for the active
  // expiry: set by every write that stores a deadline (read first, so the
  // line stays shared), cleared as ReclaimExpired() starts a pass over the
  // table; `reclaim_idle_` is set when a whole pass met no deadline and no
  // write stored one meanwhile. ReclaimExpired() does nothing while idle and
  // no deadline was stored.
  std::atomic<bool> deadline_stored_{false};
  std::atomic<bool> reclaim_idle_{true};
  // Touched only with the gate closed.
  size_t reclaim_cursor_ = 0;
  bool pass_saw_deadline_ = false;
};

}  // namespace kvlab
