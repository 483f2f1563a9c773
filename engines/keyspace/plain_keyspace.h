// PlainKeyspace: one hash table of EntryRecords (key, value and optional
// expiry in one allocation, entry_record.h; the table, record_table.h), with
// the shared per-key semantics (keyspace_ops.h) applied to it. A key costs
// one record and its share of the table's 8-byte slots.
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

#include "engines/calls/atomic_group.h"
#include "engines/entry.h"
#include "engines/keyspace/entry_record.h"
#include "engines/memory_meter.h"
#include "engines/modification_feed.h"
#include "engines/operation.h"
#include "engines/keyspace/prefetch_stage.h"
#include "engines/keyspace/record_table.h"

namespace kvlab {

class PlainKeyspace {
 public:
  // `meter` and `feed` must outlive this keyspace; several keyspaces may
  // share them.
  PlainKeyspace(MemoryMeter& meter, const ModificationFeed& feed) : meter_(meter), feed_(feed) {}
  ~PlainKeyspace() { Clear(); }
  PlainKeyspace(const PlainKeyspace&) = delete;
  PlainKeyspace& operator=(const PlainKeyspace&) = delete;

  // Any keyed operation, with exclusive access; `group` is the running
  // AtomicGroup's state (guards and carries need it).
  // REQUIRES: !IsKeyless(op.code).
  OpResult Apply(const Operation& op, int64_t now_ms, GroupState* group = nullptr);
  // A read-only operation; safe alongside other const calls.
  // REQUIRES: IsReadOnly(op.code).
  OpResult Read(const Operation& op, int64_t now_ms) const;
  // Starts the memory loads a later lookup of `key` will need, so that the
  // lookups of a pipelined batch overlap their cache misses instead of
  // taking them one after another: kSlot first, then, a few operations
  // later, kRecord (prefetch_stage.h). Only a hint: it changes nothing. Same
  // rules as Read().
  void Prefetch(std::string_view key, PrefetchStage stage) const;

  // Keys whose deadline has not passed (DBSIZE's count; see engine notes).
  int64_t CountLive(int64_t now_ms) const;
  // Offers every key whose deadline has not passed to `collector`.
  void Collect(KeyCollector& collector, int64_t now_ms) const;
  // Removes every key and returns its bytes to the meter.
  void Clear();
  // Stored keys, including expired ones not yet reclaimed.
  size_t StoredKeys() const { return table_.size(); }
  // Stored keys that have a deadline, passed or not.
  size_t KeysWithDeadline() const { return keys_with_deadline_; }

  // The active expiry's step (OpCode::kReclaimExpired): looks at the next
  // `places` places of the table from where the last call stopped, and
  // reclaims each expired entry there as a write would (the meter and the
  // feed hear of it); again while more than a tenth of the entries with a
  // deadline it saw had expired, at most kReclaimExpiredRounds times. Looks
  // at nothing while no key has a deadline. Returns the entries reclaimed.
  int64_t ReclaimExpired(int64_t now_ms, size_t places);

 private:
  class Slot;

  RecordTable table_;
  // Kept by Slot and Clear(): a keyspace without deadlines costs the active
  // expiry nothing (Redis skips a database whose `expires` dict is empty).
  size_t keys_with_deadline_ = 0;
  size_t reclaim_cursor_ = 0;  // where ReclaimExpired() looks next
  MemoryMeter& meter_;
  const ModificationFeed& feed_;
};

}  // namespace kvlab
