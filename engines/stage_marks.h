// EngineStageMarks: the two moments of a sampled batch that only the engine
// sees — when the thread that executes it picked it up, and when it had
// executed it — for the server's per-stage time of a request
// (server/stage_stats.h). The server points Batch::stage_marks at one for a
// sampled batch only; every other batch has nullptr and costs the engine one
// predictable branch.
//
// A batch split over several threads (a sharded fan-out, an owner batch
// with a remote share) keeps the earliest pick-up and the latest end, so
// that handed <= picked_up <= executed <= completed holds and the stages
// between them add up to the whole. `hopped` says whether any share ran on
// a thread other than its caller's: without a hop the server reports no
// queue or return stage (absent, not zero).
//
// Thread-safety: the caller writes spin_ns before Execute(); shares on any
// thread then note their times through the atomics; the engine's completion
// (acq_rel) publishes them to the caller.
#pragma once

#include <atomic>
#include <cstdint>

#include "base/stage_clock.h"

namespace kvlab {

struct EngineStageMarks {
  // Test-only known answer (--stage-spin execute=USEC): each share spins
  // this long after its operations, inside the execute stage.
  int64_t spin_ns = 0;
  std::atomic<int64_t> picked_up_ns{0};  // 0: not picked up yet
  std::atomic<int64_t> executed_ns{0};
  std::atomic<bool> hopped{false};

  void Clear() {
    picked_up_ns.store(0, std::memory_order_relaxed);
    executed_ns.store(0, std::memory_order_relaxed);
    hopped.store(false, std::memory_order_relaxed);
  }
};

// The executing thread starts a share of a sampled batch (`marks` non-null).
// `hop`: the share crossed to this thread from its caller's.
inline void NoteStagePickedUp(EngineStageMarks& marks, bool hop) {
  const int64_t now = StageClockNs();
  int64_t seen = marks.picked_up_ns.load(std::memory_order_relaxed);
  while ((seen == 0 || now < seen) &&
         !marks.picked_up_ns.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
  if (hop) marks.hopped.store(true, std::memory_order_relaxed);
}

// The executing thread finished its share (after the known-answer spin).
inline void NoteStageExecuted(EngineStageMarks& marks) {
  if (marks.spin_ns != 0) SpinStageClock(marks.spin_ns);
  const int64_t now = StageClockNs();
  int64_t seen = marks.executed_ns.load(std::memory_order_relaxed);
  while (now > seen &&
         !marks.executed_ns.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
}

}  // namespace kvlab
