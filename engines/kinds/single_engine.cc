#include "engines/kinds/single_engine.h"

#include <string>

#include "engines/calls/atomic_group.h"

namespace kvlab {

SingleEngine::SingleEngine(const EngineConfig& config)
    : InlineEngine(config), meter_(config.max_memory_bytes), keys_(meter_, modifications_) {}

OpResult SingleEngine::ExecuteKeyed(const Operation& op, int64_t now_ms) {
  return keys_.Apply(op, now_ms);
}

void SingleEngine::ExecuteGroup(Batch& batch, AtomicGroup& group, int64_t now_ms) {
  RunGroupOps(
      batch, group, now_ms,
      [&](const Operation& op, GroupState& state) { return keys_.Apply(op, now_ms, &state); },
      [&](const Operation& op) {
        if (op.code == OpCode::kDbSize) return OpResult::Integer(keys_.CountLive(now_ms));
        if (op.code == OpCode::kFlushAll) keys_.Clear();
        if (op.code == OpCode::kCollectKeys) keys_.Collect(*op.collect, now_ms);
        return OpResult::Ok();
      });
}

int64_t SingleEngine::CountLiveKeys(int64_t now_ms) { return keys_.CountLive(now_ms); }

void SingleEngine::ClearAll() { keys_.Clear(); }

EngineInfo SingleEngine::Info() const {
  return {{"engine", "single"},
          {"keys", std::to_string(keys_.StoredKeys())},
          {"dataset_bytes", std::to_string(meter_.UsedBytes())}};
}

}  // namespace kvlab
