// StripedEngine (`striped`): what Rust's DashMap actually is. The keyspace is
// split into K stripes by hash(key) mod K; each stripe is a plain hash map
// behind its own shared mutex. Every I/O thread executes its commands
// inline: reads take the stripe's lock shared, writes take it exclusive.
//
// It separates "no channel hop" from "TBB's particular map" when compared
// with `concurrent` and `sharded`.
//
// Thread-safe: Execute() and Info() may be called from any number of threads.
// Atomicity: each keyed operation is atomic (it holds its one stripe lock);
// a container command holds its stripe for the whole command (shared when
// it only reads), so every other key of the stripe waits for an LRANGE.
// An AtomicGroup (MSET, MGET, DEL k1 k2, RENAME, MULTI/EXEC) locks every
// stripe its keys hash to, each once, in stripe order (shared when all its
// operations only read, else exclusive), then runs; a group with a keyless
// operation locks every stripe. DBSIZE locks every stripe shared, FLUSHALL
// every stripe exclusive, in stripe order too, so both see or produce one
// consistent moment of the whole keyspace. Every holder of several stripes
// takes them in ascending order, so this cannot deadlock. Under
// MultiKey::kSplit a group whose parts are independent runs op by op.
//
// Append-only log (write_log.h): a write appends its record while it holds
// its stripe exclusively (a group: every stripe it touches, in stripe
// order), so writes to one key append in the order they took effect and a
// reader (shared stripe lock) only sees writes already appended; writes to
// different keys commute, whichever order they append in.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "engines/kinds/inline_engine.h"
#include "engines/memory_meter.h"
#include "base/mutex.h"
#include "engines/keyspace/plain_keyspace.h"

namespace kvlab {

class StripedEngine final : public InlineEngine {
 public:
  explicit StripedEngine(const EngineConfig& config);

  EngineInfo Info() const override;
  bool OverMemoryLimit() const override { return meter_.OverLimit(); }
  uint64_t MemoryLimit() const override { return meter_.Limit(); }
  void SetMemoryLimit(uint64_t bytes) override { meter_.SetLimit(bytes); }

 private:
  // Cache-line aligned so that two stripes' locks never share a line.
  struct alignas(64) Stripe {
    Stripe(MemoryMeter& meter, const ModificationFeed& feed) : keys(meter, feed) {}
    SharedMutex lock;
    PlainKeyspace keys GUARDED_BY(lock);
  };

  Stripe& StripeFor(std::string_view key);
  size_t StripeIndex(std::string_view key) const;
  OpResult ExecuteKeyed(const Operation& op, int64_t now_ms) override;
  // These hold a run-time set of stripes, in ascending order, which the
  // thread-safety analysis cannot follow.
  void ExecuteGroup(Batch& batch, AtomicGroup& group,
                    int64_t now_ms) override NO_THREAD_SAFETY_ANALYSIS;
  int64_t CountLiveKeys(int64_t now_ms) override NO_THREAD_SAFETY_ANALYSIS;
  void ClearAll() override NO_THREAD_SAFETY_ANALYSIS;
  void CollectKeys(KeyCollector& collector, int64_t now_ms) override NO_THREAD_SAFETY_ANALYSIS;
  // One stripe at a time, each under its writer lock.
  int64_t ReclaimExpired(int64_t now_ms, size_t places) override;

  MemoryMeter meter_;  // declared before stripes_: they report to it until destroyed
  std::vector<std::unique_ptr<Stripe>> stripes_;
};

}  // namespace kvlab
