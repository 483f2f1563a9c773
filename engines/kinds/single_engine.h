// SingleEngine (`single`): the Redis model. One plain hash map, touched only
// by the one thread that runs every connection; each batch executes inline
// and `done` runs before Execute() returns. Atomicity: every batch, and so
// every multi-key command and MULTI/EXEC, runs alone on the one thread. A
// container (hash, list, set, sorted set) needs no lock: only that thread
// ever touches it.
//
// Not thread-safe by design: Traits().single_threaded tells the server to
// drive it from exactly one thread. Info() must be called on that thread too.
//
// Append-only log (write_log.h): one thread runs every command, so records
// are appended in command order, each as its command (or group) finishes.
#pragma once

#include "engines/kinds/inline_engine.h"
#include "engines/memory_meter.h"
#include "engines/keyspace/plain_keyspace.h"

namespace kvlab {

class SingleEngine final : public InlineEngine {
 public:
  explicit SingleEngine(const EngineConfig& config);

  EngineInfo Info() const override;
  bool OverMemoryLimit() const override { return meter_.OverLimit(); }
  uint64_t MemoryLimit() const override { return meter_.Limit(); }
  void SetMemoryLimit(uint64_t bytes) override { meter_.SetLimit(bytes); }

 private:
  OpResult ExecuteKeyed(const Operation& op, int64_t now_ms) override;
  // Nothing to hold: the one thread runs the group's operations in a row.
  void ExecuteGroup(Batch& batch, AtomicGroup& group, int64_t now_ms) override;
  void Prefetch(const Operation& op, PrefetchStage stage) override {
    keys_.Prefetch(op.key, stage);
  }
  int64_t CountLiveKeys(int64_t now_ms) override;
  void ClearAll() override;
  void CollectKeys(KeyCollector& collector, int64_t now_ms) override {
    keys_.Collect(collector, now_ms);
  }
  int64_t ReclaimExpired(int64_t now_ms, size_t places) override {
    return keys_.ReclaimExpired(now_ms, places);
  }

  MemoryMeter meter_;  // declared before keys_: the keyspace reports to it until destroyed
  PlainKeyspace keys_;
};

}  // namespace kvlab
