#include "engines/single_engine.h"

#include <string>

#include "engines/clock.h"
#include "engines/keyspace_ops.h"

namespace kvlab {

SingleEngine::SingleEngine(const EngineConfig& config)
    : meter_(config.max_memory_bytes), keys_(meter_) {}

EngineTraits SingleEngine::Traits() const {
  EngineTraits traits;
  traits.single_threaded = true;
  traits.batch_per_read = true;
  return traits;
}

void SingleEngine::Execute(Batch& batch, Completion done) {
  // One clock reading per batch, like Redis's per-command time snapshot.
  const int64_t now_ms = UnixNowMs();
  for (size_t i = 0; i < batch.ops.size(); ++i) {
    const Operation& op = batch.ops[i];
    switch (op.code) {
      case OpCode::kDbSize:
        batch.results[i] = OpResult::Integer(keys_.CountLive(now_ms));
        break;
      case OpCode::kFlushAll:
        keys_.Clear();
        batch.results[i] = OpResult::Ok();
        break;
      default:
        batch.results[i] = keys_.Apply(op, now_ms);
    }
  }
  done();
}

EngineInfo SingleEngine::Info() const {
  return {{"engine", "single"},
          {"keys", std::to_string(keys_.StoredKeys())},
          {"used_memory", std::to_string(meter_.UsedBytes())}};
}

}  // namespace kvlab
