// BusyWaitMeter: how long one thread has been busy versus waiting for work
// (Valkey's main-thread and I/O-thread active time): CPU% cannot tell a
// thread that polls from one that works, nor one that sleeps in epoll_wait
// from one that is descheduled; the time between a thread's waits can.
//
// The thread that owns it times its own waits (an I/O loop's epoll_wait, a
// shard thread's channel receive) with StageClockNs() and adds the spans;
// it does so only while stage sampling is on (server/stage_stats.h), so the
// figures cover the time sampling was on.
//
// Thread-safety: one writer (the owning thread); any thread may read the
// totals. Relaxed atomics: the totals are gauges, not synchronisation.
#pragma once

#include <atomic>
#include <cstdint>

namespace kvlab {

struct BusyWaitTotals {
  int64_t busy_ns = 0;
  int64_t wait_ns = 0;
};

class BusyWaitMeter {
 public:
  // Owner thread: the span since the last mark was work; `now` starts a wait.
  void WaitBegins(int64_t now) {
    if (last_ != 0) Add(busy_ns_, now - last_);
    last_ = now;
  }
  // Owner thread: the span since WaitBegins() was waiting; `now` starts work.
  void WaitEnds(int64_t now) {
    if (last_ != 0) Add(wait_ns_, now - last_);
    last_ = now;
  }
  // Owner thread: timing stopped (sampling switched off); the next mark
  // starts a new span instead of counting the gap.
  void Pause() { last_ = 0; }

  BusyWaitTotals Totals() const {
    return {busy_ns_.load(std::memory_order_relaxed), wait_ns_.load(std::memory_order_relaxed)};
  }
  // Any thread (CONFIG RESETSTAT): zero the totals; a span in progress is
  // still added by its owner.
  void Reset() {
    busy_ns_.store(0, std::memory_order_relaxed);
    wait_ns_.store(0, std::memory_order_relaxed);
  }

 private:
  static void Add(std::atomic<int64_t>& total, int64_t ns) {
    total.fetch_add(ns, std::memory_order_relaxed);
  }

  std::atomic<int64_t> busy_ns_{0};
  std::atomic<int64_t> wait_ns_{0};
  int64_t last_ = 0;  // owner thread only: when the current span began (0: none)
};

}  // namespace kvlab
