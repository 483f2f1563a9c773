// InlineEngine: the common shape of the engines that execute a batch on the
// calling thread (single, striped, concurrent). It walks the batch in order,
// sends keyless operations (DBSIZE, FLUSHALL, key collection) to the
// whole-keyspace hooks, each AtomicGroup to ExecuteGroup() (or, under
// MultiKey::kSplit, a group that can be split op by op like the rest), and
// every other operation to ExecuteKeyed(), then calls `done` before
// Execute() returns.
//
// Thread-safety is whatever the subclass's hooks provide.
#pragma once

#include <cstdint>

#include "engines/engine.h"
#include "engines/keyspace/prefetch_stage.h"

namespace kvlab {

class InlineEngine : public Engine {
 public:
  // The traits engine_kind.h's table gives config.kind.
  explicit InlineEngine(const EngineConfig& config);

  EngineTraits Traits() const final { return traits_; }
  void Execute(Batch& batch, Completion done) final;

 protected:
  // One keyed operation. REQUIRES: !IsKeyless(op.code).
  virtual OpResult ExecuteKeyed(const Operation& op, int64_t now_ms) = 0;
  // One atomic group (atomic_group.h): holds every key it touches (the
  // whole keyspace if it has a keyless operation), then RunGroupOps().
  virtual void ExecuteGroup(Batch& batch, AtomicGroup& group, int64_t now_ms) = 0;
  // A hint that `op` runs soon (see PlainKeyspace::Prefetch()): Execute()
  // gives each stage a few operations ahead. REQUIRES: !IsKeyless(op.code).
  virtual void Prefetch(const Operation& op, PrefetchStage stage) {
    (void)op;
    (void)stage;
  }
  // DBSIZE: keys whose deadline has not passed, over the whole engine.
  virtual int64_t CountLiveKeys(int64_t now_ms) = 0;
  // FLUSHALL: removes every key of the whole engine.
  virtual void ClearAll() = 0;
  // KEYS/SCAN/RANDOMKEY: offers every live key of the whole engine.
  virtual void CollectKeys(KeyCollector& collector, int64_t now_ms) = 0;
  // The active expiry (OpCode::kReclaimExpired) over each of the engine's
  // tables: returns the entries reclaimed.
  virtual int64_t ReclaimExpired(int64_t now_ms, size_t places) = 0;

  MultiKey multikey() const { return multikey_; }

 private:
  // The batch in order on this thread (Execute() without its stage marks).
  [[gnu::always_inline]] inline void RunInOrder(Batch& batch);

  const EngineTraits traits_;
  const MultiKey multikey_;
};

}  // namespace kvlab
