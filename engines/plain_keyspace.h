// PlainKeyspace: one ordinary hash map of keys to Entries, with the shared
// per-key semantics (keyspace_ops.h) applied to it.
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
#include <unordered_map>

#include "engines/entry.h"
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

  // Keys whose deadline has not passed (DBSIZE's count; see engine notes).
  int64_t CountLive(int64_t now_ms) const;
  // Removes every key and returns its bytes to the meter.
  void Clear();
  // Stored keys, including expired ones not yet reclaimed.
  size_t StoredKeys() const { return map_.size(); }

 private:
  using Map = std::unordered_map<std::string, Entry, KeyHash, KeyEqual>;
  class Slot;

  Map map_;
  MemoryMeter& meter_;
};

}  // namespace kvlab
