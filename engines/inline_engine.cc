#include "engines/inline_engine.h"

#include "engines/clock.h"
#include "engines/engine_kind.h"
#include "engines/keyspace_ops.h"

namespace kvlab {

InlineEngine::InlineEngine(const EngineConfig& config) : traits_(TraitsOf(config)) {}

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
  for (size_t i = 0; i < count; ++i) {
    ahead.Before(i);
    const Operation& op = batch.ops[i];
    switch (op.code) {
      case OpCode::kDbSize:
        batch.results[i] = OpResult::Integer(CountLiveKeys(now_ms));
        break;
      case OpCode::kFlushAll:
        ClearAll();
        batch.results[i] = OpResult::Ok();
        break;
      default:
        batch.results[i] = ExecuteKeyed(op, now_ms);
    }
  }
  done();
}

}  // namespace kvlab
