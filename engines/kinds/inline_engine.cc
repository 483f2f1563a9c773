#include "engines/kinds/inline_engine.h"

#include "engines/kinds/batch_in_order.h"
#include "engines/clock.h"
#include "engines/engine_kind.h"

namespace kvlab {

InlineEngine::InlineEngine(const EngineConfig& config)
    : traits_(TraitsOf(config)), multikey_(config.multikey) {}

// A sampled batch (stage_marks.h) costs every other batch one branch.
void InlineEngine::Execute(Batch& batch, Completion done) {
  if (batch.stage_marks != nullptr) [[unlikely]] {
    // Runs on the caller's thread: picked up where it was handed over (no hop).
    NoteStagePickedUp(*batch.stage_marks, /*hop=*/false);
    RunInOrder(batch);
    NoteStageExecuted(*batch.stage_marks);
  } else {
    RunInOrder(batch);
  }
  done();
}

void InlineEngine::RunInOrder(Batch& batch) {
  // One clock reading per batch, like Redis's per-command time snapshot.
  const int64_t now_ms = UnixNowMs();
  // The whole-keyspace hooks under the names batch_in_order.h uses.
  struct Hooks {
    InlineEngine& engine;
    void Prefetch(const Operation& op, PrefetchStage stage) { engine.Prefetch(op, stage); }
    OpResult Apply(const Operation& op, int64_t now) { return engine.ExecuteKeyed(op, now); }
    int64_t CountLive(int64_t now) { return engine.CountLiveKeys(now); }
    void Clear() { engine.ClearAll(); }
    void Collect(KeyCollector& collector, int64_t now) { engine.CollectKeys(collector, now); }
    int64_t ReclaimExpired(int64_t now, size_t places) {
      return engine.ReclaimExpired(now, places);
    }
  } hooks{*this};
  RunBatchInOrder(
      batch, multikey_, now_ms, hooks,
      [this](Batch& b, AtomicGroup& group, int64_t now) { ExecuteGroup(b, group, now); });
}

}  // namespace kvlab
