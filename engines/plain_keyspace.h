// PlainKeyspace: one ordinary hash set of EntryRecords (key, value and
// optional expiry in one allocation, entry_record.h), with the shared
// per-key semantics (keyspace_ops.h) applied to it. A key costs one set node
// (a pointer to its record), one record and its share of the buckets.
//
// The building block of the `single` engine (one keyspace), of each shard of
// `sharded` (one keyspace per shard thread) and of each stripe of `striped`.
//
// Not thread-safe: the owner serialises access (one thread, or a lock). Read()
// and CountLive() do not modify the map, so concurrent calls to them under a
// shared lock are safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

#include "engines/entry.h"
#include "engines/entry_record.h"
#include "engines/memory_meter.h"
#include "engines/operation.h"

namespace kvlab {

class PlainKeyspace {
 public:
  // `meter` must outlive this keyspace; several keyspaces may share it.
  explicit PlainKeyspace(MemoryMeter& meter) : meter_(meter) {}
  ~PlainKeyspace() { Clear(); }
  PlainKeyspace(const PlainKeyspace&) = delete;
  PlainKeyspace& operator=(const PlainKeyspace&) = delete;

  // Any keyed operation, with exclusive access. REQUIRES: !IsKeyless(op.code).
  OpResult Apply(const Operation& op, int64_t now_ms);
  // A read-only operation; safe alongside other const calls.
  // REQUIRES: IsReadOnly(op.code).
  OpResult Read(const Operation& op, int64_t now_ms) const;
  // Starts the memory loads a later lookup of `key` will need (the bucket,
  // its chain's first node, that node's record), so that lookups of a
  // pipelined batch overlap their cache misses instead of taking them one
  // after another. Only a hint: it changes nothing. Same rules as Read().
  void Prefetch(std::string_view key) const;

  // Keys whose deadline has not passed (DBSIZE's count; see engine notes).
  int64_t CountLive(int64_t now_ms) const;
  // Removes every key and returns its bytes to the meter.
  void Clear();
  // Stored keys, including expired ones not yet reclaimed.
  size_t StoredKeys() const { return map_.size(); }

 private:
  // A set element: the record, found by its key. `record` is mutable
  // because a value that outgrows its allocation moves to a new record;
  // the key, which the hash and equality read, never changes.
  struct RecordRef {
    mutable EntryRecord* record;
  };
  struct RecordHash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const noexcept { return KeyHash{}(key); }
    size_t operator()(const RecordRef& ref) const noexcept { return KeyHash{}(ref.record->key()); }
  };
  struct RecordEqual {
    using is_transparent = void;
    static std::string_view KeyOf(std::string_view key) { return key; }
    static std::string_view KeyOf(const RecordRef& ref) { return ref.record->key(); }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const noexcept { return KeyOf(a) == KeyOf(b); }
  };
  using Map = std::unordered_set<RecordRef, RecordHash, RecordEqual>;
  class Slot;

  Map map_;
  MemoryMeter& meter_;
};

}  // namespace kvlab
