// GroupBarrier: where the threads of a keyspace's partitions meet to run one
// atomic group that spans several of them (the sharded engine's shards, the
// owner engine's owners). Each partition's thread reaches the barrier once,
// in the global order its engine keeps; the last to arrive runs the group
// over every partition while the others wait, so no other operation touches
// those partitions meanwhile.
//
// RunKeylessOnEach: a keyless operation (DBSIZE, FLUSHALL, the key collection
// of KEYS/SCAN) over every partition, for a group that holds them all.
//
// Thread-safe as described: Reset() by the batch's builder before any
// participant reaches it, Reach() once by each participant.
#pragma once

#include <atomic>
#include <cstdint>

#include "engines/engine.h"
#include "engines/operation.h"

namespace kvlab {

struct GroupBarrier {
  std::atomic<uint32_t> arrived{0};
  std::atomic<uint32_t> finished{0};
  uint32_t participants = 0;

  void Reset(uint32_t participant_count) {
    participants = participant_count;
    arrived.store(0, std::memory_order_relaxed);
    finished.store(0, std::memory_order_relaxed);
  }

  // Runs `run` on the last participant to arrive; the others wait until it
  // has finished. acq_rel: the
  // last to arrive sees every participant's earlier writes to its partition,
  // the others see the group's writes through `finished`.
  template <typename Run>
  void Reach(Run&& run) {
    if (arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == participants) {
      run();
      finished.store(1, std::memory_order_release);
      finished.notify_all();
      return;
    }
    // In the kernel (a futex), not spinning: the participant that runs the
    // group may share this CPU.
    while (finished.load(std::memory_order_acquire) == 0) {
      finished.wait(0, std::memory_order_acquire);
    }
  }
};

// `partitions`: a range of pointers to partitions, each with a `keys` keyspace.
template <typename Partitions>
OpResult RunKeylessOnEach(const Operation& op, Partitions& partitions, int64_t now_ms) {
  int64_t live = 0;
  for (auto& partition : partitions) {
    if (op.code == OpCode::kDbSize) live += partition->keys.CountLive(now_ms);
    if (op.code == OpCode::kFlushAll) partition->keys.Clear();
    if (op.code == OpCode::kCollectKeys) partition->keys.Collect(*op.collect, now_ms);
  }
  return op.code == OpCode::kDbSize ? OpResult::Integer(live) : OpResult::Ok();
}

}  // namespace kvlab
