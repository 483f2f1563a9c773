#include "engines/inline_engine.h"

#include "engines/clock.h"
#include "engines/engine_kind.h"

namespace kvlab {

InlineEngine::InlineEngine(const EngineConfig& config) : traits_(TraitsOf(config)) {}

void InlineEngine::Execute(Batch& batch, Completion done) {
  // One clock reading per batch, like Redis's per-command time snapshot.
  const int64_t now_ms = UnixNowMs();
  for (size_t i = 0; i < batch.ops.size(); ++i) {
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
