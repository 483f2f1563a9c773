// RunBatchInOrder: the walk of a batch on the calling thread, shared by the
// engines that run a batch inline (InlineEngine: single, striped,
// concurrent) and the owner engine's all-local path. It runs the batch in
// order, sends keyless operations (DBSIZE, FLUSHALL, key collection) to the
// whole-keyspace hooks, each AtomicGroup that must run atomically to
// run_group(batch, group, now_ms) (under MultiKey::kSplit a splittable group's operations run one
// by one like the rest), and every other operation to Apply(), hinting the
// lookups a few operations ahead (BatchPrefetcher).
//
// `keys` provides what PlainKeyspace does:
//   Prefetch(key, stage), or Prefetch(op, stage) where the hint wants the op
//   Apply(op, now_ms) -> OpResult   REQUIRES: !IsKeyless(op.code)
//   CountLive(now_ms) -> int64_t, Clear(), Collect(collector, now_ms)
//
// Not synchronised: whatever the calls on `keys` and run_group provide.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "engines/calls/atomic_group.h"
#include "engines/engine.h"
#include "engines/calls/keyspace_ops.h"
#include "engines/keyspace/prefetch_stage.h"

namespace kvlab {

// Always inlined, and `multikey` read only where a group needs it: the
// inline engines' hot path, which would otherwise pay a call and a frame
// per batch (instructions per GET, measured by `make regress`).
template <typename Keys, typename RunGroup>
[[gnu::always_inline]] inline void RunBatchInOrder(Batch& batch, const MultiKey& multikey,
                                                   int64_t now_ms, Keys& keys,
                                                   RunGroup&& run_group) {
  const size_t count = batch.ops.size();
  // Lookups of a pipelined batch are cache misses one after another; hinted
  // a few operations ahead, their loads overlap.
  auto hint = [&](size_t i, PrefetchStage stage) {
    const Operation& soon = batch.ops[i];
    if (IsKeyless(soon.code)) return;
    if constexpr (requires { keys.Prefetch(soon, stage); }) {
      keys.Prefetch(soon, stage);
    } else {
      keys.Prefetch(soon.key, stage);
    }
  };
  BatchPrefetcher ahead(count, hint);
  size_t next_group = 0;
  size_t group_at = batch.groups.empty() ? count : batch.groups[0].first;
  for (size_t i = 0; i < count; ++i) {
    ahead.Before(i);
    if (i == group_at) {
      AtomicGroup& group = batch.groups[next_group++];
      group_at = next_group < batch.groups.size() ? batch.groups[next_group].first : count;
      if (MustRunAtomically(group, multikey)) {
        // The hints the group's operations would have given one by one: a
        // pipeline of MSETs is lookups one after another like any other.
        for (size_t j = i + 1; j < i + group.count; ++j) ahead.Before(j);
        run_group(batch, group, now_ms);
        i += group.count - 1;
        continue;
      }
      // Split: its operations run one by one, like any others.
    }
    const Operation& op = batch.ops[i];
    switch (op.code) {
      case OpCode::kDbSize:
        batch.results[i] = OpResult::Integer(keys.CountLive(now_ms));
        break;
      case OpCode::kFlushAll:
        keys.Clear();
        batch.results[i] = OpResult::Ok();
        break;
      case OpCode::kCollectKeys:
        keys.Collect(*op.collect, now_ms);
        batch.results[i] = OpResult::Ok();
        break;
      case OpCode::kReclaimExpired:
        batch.results[i] = OpResult::Integer(
            keys.ReclaimExpired(now_ms, static_cast<size_t>(std::max<int64_t>(op.integer, 0))));
        break;
      default:
        batch.results[i] = keys.Apply(op, now_ms);
    }
  }
}

}  // namespace kvlab
