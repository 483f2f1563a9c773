#include "engines/inline_engine.h"

#include "engines/atomic_group.h"
#include "engines/clock.h"
#include "engines/engine_kind.h"
#include "engines/keyspace_ops.h"

namespace kvlab {

InlineEngine::InlineEngine(const EngineConfig& config)
    : traits_(TraitsOf(config)), multikey_(config.multikey) {}

void InlineEngine::Execute(Batch& batch, Completion done) {
  // One clock reading per batch, like Redis's per-command time snapshot.
  const int64_t now_ms = UnixNowMs();
  const size_t count = batch.ops.size();
  // Lookups of a pipelined batch are cache misses one after another; hinted
  // a few operations ahead, their loads overlap.
  auto hint = [&](size_t i, PrefetchStage stage) {
    if (!IsKeyless(batch.ops[i].code)) Prefetch(batch.ops[i], stage);
  };
  BatchPrefetcher ahead(count, hint);
  size_t next_group = 0;
  size_t group_at = batch.groups.empty() ? count : batch.groups[0].first;
  for (size_t i = 0; i < count; ++i) {
    ahead.Before(i);
    if (i == group_at) {
      AtomicGroup& group = batch.groups[next_group++];
      group_at = next_group < batch.groups.size() ? batch.groups[next_group].first : count;
      if (MustRunAtomically(group, multikey_)) {
        // The hints the group's operations would have given one by one: a
        // pipeline of MSETs is lookups one after another like any other.
        for (size_t j = i + 1; j < i + group.count; ++j) ahead.Before(j);
        ExecuteGroup(batch, group, now_ms);
        i += group.count - 1;
        continue;
      }
      // Split: its operations run one by one, like any others.
    }
    const Operation& op = batch.ops[i];
    switch (op.code) {
      case OpCode::kDbSize:
        batch.results[i] = OpResult::Integer(CountLiveKeys(now_ms));
        break;
      case OpCode::kFlushAll:
        ClearAll();
        batch.results[i] = OpResult::Ok();
        break;
      case OpCode::kCollectKeys:
        CollectKeys(*op.collect, now_ms);
        batch.results[i] = OpResult::Ok();
        break;
      default:
        batch.results[i] = ExecuteKeyed(op, now_ms);
    }
  }
  done();
}

}  // namespace kvlab
