#include "engines/kinds/concurrent_engine.h"

#include <malloc.h>

#include <algorithm>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "engines/calls/keyspace_ops.h"
#include "engines/keyspace/prefetch_line.h"

namespace kvlab {

// What the engine needs of TBB's protected internals, in one place: members
// named through this derived type can be read from a Map (pointers to them
// included) without a cast.
struct ConcurrentEngine::MapInternals : Map {
  // The size of a node: an in-node record starts that many bytes into its
  // node's chunk.
  static constexpr size_t kNodeBytes = sizeof(Map::node);
  static_assert(kNodeBytes % alignof(EntryRecord) == 0, "an in-node record must be aligned");

  // Where the bucket a lookup of a key with this hash locks first lies (the
  // key's own unless the table is mid-growth): TBB's get_bucket(), spelled
  // out with the same atomic loads of the map's own mask and segment table.
  // It reads no bucket: a FLUSHALL on another thread may free the segment
  // (the caller holds no gate), and a prefetch of freed memory is harmless
  // where a load would not be.
  static const void* BucketAddress(const Map& map, size_t hash) {
    const size_t index = hash & (map.*(&MapInternals::my_mask)).load(std::memory_order_acquire);
    const auto segment = segment_index_of(index);
    const bucket* buckets =
        (map.*(&MapInternals::my_table))[segment].load(std::memory_order_acquire);
    // Null while a FLUSHALL on another thread is releasing the segment.
    return buckets == nullptr ? nullptr : buckets + (index - segment_base(segment));
  }

  // Calls visit(const value_type&) for every node of buckets [first,
  // first + count), clipped to the table (a `first` past its end starts
  // again at 0), and returns where the next walk starts: 0 after the last
  // bucket. A node whose bucket TBB has not yet split off (growth rehashes
  // lazily) is met in its parent's chain. REQUIRES: no other thread uses
  // the map (the gate closed); the walk changes nothing.
  template <typename Visit>
  static size_t VisitBuckets(const Map& map, size_t first, size_t count, Visit&& visit) {
    const size_t buckets = (map.*(&MapInternals::my_mask)).load(std::memory_order_relaxed) + 1;
    if (first >= buckets) first = 0;
    const size_t end = std::min(buckets, first + count);
    for (size_t index = first; index < end; ++index) {
      // TBB's get_bucket(), as BucketAddress() spells it out.
      const auto segment = segment_index_of(index);
      const bucket* chain =
          (map.*(&MapInternals::my_table))[segment].load(std::memory_order_relaxed) +
          (index - segment_base(segment));
      for (node_base* n = chain->node_list.load(std::memory_order_relaxed); is_valid(n);
           n = n->next) {
        visit(static_cast<node*>(n)->value());
      }
    }
    return end == buckets ? 0 : end;
  }
};

void ConcurrentEngine::Prefetch(const Operation& op, PrefetchStage stage) {
  // Only the bucket: the node it leads to is known only by loading the
  // bucket, which needs the gate (see BucketAddress()).
  if (stage != PrefetchStage::kSlot) return;
  if (const void* bucket = MapInternals::BucketAddress(map_, KeyHashCompare{}.hash(op.key))) {
    PrefetchLine(bucket);
  }
}

ConcurrentEngine::RecordKey::RecordKey(const NewEntry& entry) {
  const TrailingRoom room = TakeTrailingRoom();
  const bool has_expiry = entry.expire_at_ms != 0;
  if (room.size >= EntryRecord::SizeFor(entry.key.size(), entry.value.size(), has_expiry)) {
    EntryRecord* record =
        EntryRecord::MakeAt(room.bytes, entry.key, entry.value, entry.expire_at_ms);
    tagged_record_ = reinterpret_cast<uintptr_t>(record) | kInNodeTag;
  } else {
    tagged_record_ =
        reinterpret_cast<uintptr_t>(EntryRecord::Make(entry.key, entry.value, entry.expire_at_ms));
  }
}

size_t ConcurrentEngine::RecordKey::MemoryBytes() const {
  const char* bytes = reinterpret_cast<const char*>(&record());
  if (InNode()) return TrailingRoomSize(bytes, MapInternals::kNodeBytes);
  return malloc_usable_size(const_cast<char*>(bytes));
}

// The EntryHandle over a tbb write accessor. Operations that may create the
// key (SET, GETSET, INCRBY, APPEND) insert it up front — TBB's only atomic
// find-or-insert — and the slot treats that fresh node as absent until
// Store() or Append() claims it; an unclaimed node (SET XX on a missing key,
// INCRBY on a non-integer) is erased before the accessor is released, so no
// other thread can ever observe it.
class ConcurrentEngine::WriteSlot {
 public:
  // A slot that holds `key`'s lock whether or not the key exists (an
  // AtomicGroup's): a missing key becomes a placeholder node.
  WriteSlot(Map& map, std::atomic<bool>& deadline_stored, std::string_view key)
      : map_(map), deadline_stored_(deadline_stored) {
    TrailingRoomRequest record_room(EntryRecord::SizeFor(key.size(), 0, false));
    present_ = !map_.insert(accessor_, NewEntry{key, {}, 0});
    placeholder_ = !present_;
  }
  WriteSlot(Map& map, std::atomic<bool>& deadline_stored, const Operation& op, bool may_create)
      : map_(map), deadline_stored_(deadline_stored) {
    if (may_create) {
      const int64_t deadline = op.code == OpCode::kSet ? op.set.expire_at_ms : 0;
      // Room for the key's record in the node, should the insert make one
      // (a container's value is its address).
      const size_t value_size =
          op.code == OpCode::kContainer ? sizeof(Container*) : op.value.size();
      TrailingRoomRequest record_room(
          EntryRecord::SizeFor(op.key.size(), value_size, deadline != 0));
      present_ = !map_.insert(accessor_, NewEntry{op.key, op.value, deadline});
      placeholder_ = !present_;
    } else {
      present_ = map_.find(accessor_, op.key);
    }
  }
  ~WriteSlot() {
    if (placeholder_) map_.erase(accessor_);
  }
  WriteSlot(const WriteSlot&) = delete;
  WriteSlot& operator=(const WriteSlot&) = delete;

  std::optional<EntryView> Find() const {
    if (!present_) return std::nullopt;
    return ViewOf(*accessor_);
  }
  void Store(std::string_view value, int64_t expire_at_ms, ValueForm form) {
    Claim();
    Put(value, expire_at_ms, form);
  }
  void Append(std::string_view tail) {
    // APPEND to a missing key is a SET (Redis's encoding from the bytes);
    // to a present one, an edit in place ("raw").
    const ValueForm form = present_ ? ValueForm::kEditedString : ValueForm::kString;
    Claim();
    EntryRecord*& spilled = accessor_->second.record;
    if (spilled != nullptr) {
      spilled = EntryRecord::Append(spilled, tail);
      return;
    }
    const EntryView current = ViewOf(*accessor_);
    std::string joined;
    joined.reserve(current.value.size() + tail.size());
    joined.append(current.value).append(tail);
    Put(joined, current.expire_at_ms, form);
  }
  void SetExpiry(int64_t expire_at_ms) {
    const EntryView current = ViewOf(*accessor_);
    Put(current.value, expire_at_ms, current.form);
  }
  void Erase() {
    // Keep the node (and our lock on it) while the operation may still
    // Store() it again; the destructor erases it if it stays unclaimed.
    present_ = false;
    placeholder_ = true;
  }

 private:
  // A placeholder (fresh or erased) becomes the key's entry, empty so far.
  void Claim() {
    if (present_) return;
    present_ = true;
    placeholder_ = false;
    accessor_->first.record().Overwrite({}, 0);
    Spill& spill = accessor_->second;
    if (spill.record != nullptr) {
      EntryRecord::Free(spill.record);
      spill.record = nullptr;
    }
  }
  // Writes the value where it fits: the key's record when it can hold it
  // (freeing any spill), else the spill.
  void Put(std::string_view value, int64_t expire_at_ms, ValueForm form = ValueForm::kString) {
    // Read first, written once: the flag's line stays shared between threads.
    if (expire_at_ms != 0 && !deadline_stored_.load(std::memory_order_relaxed)) {
      deadline_stored_.store(true, std::memory_order_relaxed);
    }
    const RecordKey& key = accessor_->first;
    EntryRecord*& spilled = accessor_->second.record;
    if (key.CanHold(value.size(), expire_at_ms != 0)) {
      key.record().Overwrite(value, expire_at_ms, form);
      if (spilled != nullptr) {
        EntryRecord::Free(spilled);
        spilled = nullptr;
      }
    } else if (spilled != nullptr) {
      spilled = EntryRecord::Store(spilled, value, expire_at_ms, form);
    } else {
      spilled = EntryRecord::Make({}, value, expire_at_ms, form);
    }
  }

  Map& map_;
  std::atomic<bool>& deadline_stored_;
  Map::accessor accessor_;
  bool present_ = false;
  bool placeholder_ = false;
};

EntryView ConcurrentEngine::ViewOf(const Map::value_type& node) {
  const EntryRecord& entry =
      node.second.record != nullptr ? *node.second.record : node.first.record();
  return ViewOfRecord(entry);
}

ConcurrentEngine::ConcurrentEngine(const EngineConfig& config)
    : InlineEngine(config), meter_(config.max_memory_bytes) {}

ConcurrentEngine::~ConcurrentEngine() {
  for (const auto& node : map_) ReleaseContainer(ViewOf(node).container);
}

OpResult ConcurrentEngine::ExecuteKeyed(const Operation& op, int64_t now_ms) {
  std::shared_lock open_gate(gate_);
  if (IsReadOnly(op)) {
    Map::const_accessor reader;
    if (!map_.find(reader, op.key)) return ReadKey(op, std::nullopt, now_ms);
    return ReadKey(op, ViewOf(*reader), now_ms);
  }
  WriteSlot slot(map_, deadline_stored_, op, MayGrowMemory(op) || op.code == OpCode::kContainer);
  return ApplyToKey(op, slot, now_ms, meter_, modifications_);
}

void ConcurrentEngine::ExecuteGroup(Batch& batch, AtomicGroup& group, int64_t now_ms) {
  const uint32_t end = group.first + group.count;
  auto run_keyless = [&](const Operation& op) {
    if (op.code == OpCode::kDbSize) return OpResult::Integer(CountLiveLocked(now_ms));
    if (op.code == OpCode::kFlushAll) ClearLocked();
    if (op.code == OpCode::kCollectKeys) CollectLocked(*op.collect, now_ms);
    return OpResult::Ok();
  };
  bool whole_keyspace = false;
  for (uint32_t i = group.first; i < end; ++i) whole_keyspace |= IsKeyless(batch.ops[i].code);
  if (whole_keyspace) {
    // Alone in the table: each keyed operation may take its own accessor.
    std::unique_lock closed_gate(gate_);
    RunGroupOps(
        batch, group, now_ms,
        [&](const Operation& op, GroupState& state) {
          WriteSlot slot(map_, deadline_stored_, op.key);
          return ApplyToKey(op, slot, now_ms, meter_, modifications_, &state);
        },
        run_keyless);
    return;
  }
  std::shared_lock open_gate(gate_);
  // Every distinct key once, in ascending byte order: the one global order.
  thread_local std::vector<std::string_view> keys;
  keys.clear();
  for (uint32_t i = group.first; i < end; ++i) keys.push_back(batch.ops[i].key);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::deque<WriteSlot> slots;
  for (std::string_view key : keys) slots.emplace_back(map_, deadline_stored_, key);
  RunGroupOps(
      batch, group, now_ms,
      [&](const Operation& op, GroupState& state) {
        const size_t at = std::lower_bound(keys.begin(), keys.end(), op.key) - keys.begin();
        return ApplyToKey(op, slots[at], now_ms, meter_, modifications_, &state);
      },
      run_keyless);
}

int64_t ConcurrentEngine::CountLiveLocked(int64_t now_ms) const {
  int64_t live = 0;
  for (const auto& node : map_) live += IsExpired(ViewOf(node), now_ms) ? 0 : 1;
  return live;
}

void ConcurrentEngine::ClearLocked() {
  int64_t bytes = 0;
  const bool reporting = modifications_.active();
  for (const auto& node : map_) {
    const EntryView entry = ViewOf(node);
    bytes += Footprint(node.first.key(), entry);
    if (reporting) modifications_.Report(node.first.key());
    ReleaseContainer(entry.container);
  }
  map_.clear();
  meter_.Add(-bytes);
}

void ConcurrentEngine::CollectLocked(KeyCollector& collector, int64_t now_ms) const {
  for (const auto& node : map_) {
    if (!IsExpired(ViewOf(node), now_ms)) collector.Offer(node.first.key());
  }
}

int64_t ConcurrentEngine::ReclaimExpired(int64_t now_ms, size_t places) {
  // A deadline stored after these loads is found by the next cycle.
  if (reclaim_idle_.load(std::memory_order_relaxed) &&
      !deadline_stored_.load(std::memory_order_relaxed)) {
    return 0;
  }
  std::unique_lock closed_gate(gate_);
  reclaim_idle_.store(false, std::memory_order_relaxed);
  thread_local std::vector<std::string> expired_keys;
  int64_t reclaimed = 0;
  for (int round = 0; round < kReclaimExpiredRounds; ++round) {
    size_t with_deadline = 0;
    expired_keys.clear();
    if (reclaim_cursor_ == 0) {
      // A pass starts. Writes are held out by the gate: each one that
      // stores a deadline from now on is seen in the flag at its end, even
      // in a bucket the walk has passed (TBB's growth only moves a node to
      // a later bucket, so one stored before is met).
      pass_saw_deadline_ = false;
      deadline_stored_.store(false, std::memory_order_relaxed);
    }
    reclaim_cursor_ =
        MapInternals::VisitBuckets(map_, reclaim_cursor_, places, [&](const Map::value_type& node) {
          const int64_t deadline = ViewOf(node).expire_at_ms;
          if (deadline == 0) return;
          ++with_deadline;
          if (IsExpired(deadline, now_ms)) expired_keys.emplace_back(node.first.key());
        });
    pass_saw_deadline_ |= with_deadline > 0;
    // Each one reclaimed as a write that meets it would (ApplyToKey()),
    // after the walk: erasing under a walk would cut its chain.
    Operation reclaim;
    reclaim.code = OpCode::kWatchedKey;
    for (const std::string& key : expired_keys) {
      reclaim.key = key;
      WriteSlot slot(map_, deadline_stored_, key);
      ApplyToKey(reclaim, slot, now_ms, meter_, modifications_);
    }
    reclaimed += static_cast<int64_t>(expired_keys.size());
    if (reclaim_cursor_ == 0 && !pass_saw_deadline_ &&
        !deadline_stored_.load(std::memory_order_relaxed)) {
      // A whole pass met no deadline and no write stored one meanwhile:
      // none is left until a write stores one.
      reclaim_idle_.store(true, std::memory_order_relaxed);
      break;
    }
    if (expired_keys.size() * 10 <= with_deadline) break;  // as PlainKeyspace
  }
  return reclaimed;
}

int64_t ConcurrentEngine::CountLiveKeys(int64_t now_ms) {
  std::unique_lock closed_gate(gate_);
  return CountLiveLocked(now_ms);
}

void ConcurrentEngine::ClearAll() {
  std::unique_lock closed_gate(gate_);
  ClearLocked();
}

void ConcurrentEngine::CollectKeys(KeyCollector& collector, int64_t now_ms) {
  std::unique_lock closed_gate(gate_);
  CollectLocked(collector, now_ms);
}

EngineInfo ConcurrentEngine::Info() const {
  // size() is safe concurrently; it counts expired keys not yet reclaimed.
  return {{"engine", "concurrent"},
          {"keys", std::to_string(map_.size())},
          {"dataset_bytes", std::to_string(meter_.UsedBytes())}};
}

}  // namespace kvlab
