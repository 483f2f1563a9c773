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
// totals or Reset() them. Relaxed atomics for the totals (gauges, not
// synchronisation); the reset time is released and acquired so that an
// owner that sees it clips its span to it.
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
    if (last_ != 0) Add(busy_ns_, now - SpanStart());
    last_ = now;
  }
  // Owner thread: the span since WaitBegins() was waiting; `now` starts work.
  void WaitEnds(int64_t now) {
    if (last_ != 0) Add(wait_ns_, now - SpanStart());
    last_ = now;
  }
  // Owner thread: timing stopped (sampling switched off); the next mark
  // starts a new span instead of counting the gap.
  void Pause() { last_ = 0; }

  BusyWaitTotals Totals() const {
    return {busy_ns_.load(std::memory_order_relaxed), wait_ns_.load(std::memory_order_relaxed)};
  }
  // Any thread (CONFIG RESETSTAT) at `now`: zero the totals. The span in
  // progress is still added by its owner, from `now` on only: counted from
  // its start, a thread asleep since long before, or one that ran a whole
  // round of requests without waiting, would add time from before the reset
  // (busy plus waiting beyond the wall time since it). The zeros go first:
  // an owner that sees the new reset time adds after them; one that read
  // the old time an instant before may still add its whole span.
  void Reset(int64_t now) {
    busy_ns_.store(0, std::memory_order_relaxed);
    wait_ns_.store(0, std::memory_order_relaxed);
    reset_at_.store(now, std::memory_order_release);
  }

 private:
  // The current span's start, clipped to the last reset.
  int64_t SpanStart() const {
    const int64_t reset_at = reset_at_.load(std::memory_order_acquire);
    return reset_at > last_ ? reset_at : last_;
  }
  static void Add(std::atomic<int64_t>& total, int64_t ns) {
    total.fetch_add(ns, std::memory_order_relaxed);
  }

  std::atomic<int64_t> busy_ns_{0};
  std::atomic<int64_t> wait_ns_{0};
  std::atomic<int64_t> reset_at_{0};  // when Reset() last ran (0: never)
  int64_t last_ = 0;                  // owner thread only: when the current span began (0: none)
};

}  // namespace kvlab
