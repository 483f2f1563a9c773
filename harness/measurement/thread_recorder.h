// ThreadRecorder: where one application thread counts its replies and
// latencies, and where the sweep runner collects them at each window
// boundary without stopping the thread (the thread keeps running; whatever
// completes after the swap belongs to the next window).
//
// Thread safety: Record*/AddIncrement are called by the owning thread only;
// Take/Peek/incrby_sum/completed_ops by any other thread at the same time.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <span>

#include "base/mutex.h"
#include "harness/measurement/client_phases.h"
#include "harness/measurement/latency_histogram.h"
#include "harness/clients/reply_check.h"

namespace kvlab::harness {

// What one thread did during one window.
struct ThreadCounters {
  LatencyHistogram
      latency;              // of the ops below only: error replies are not latencies of the service
  uint64_t ops = 0;         // replies of the expected kind (including GET misses)
  uint64_t misses = 0;      // GETs answered nil
  uint64_t errors = 0;      // error replies plus replies of the wrong type
  uint64_t wrong_type = 0;  // of which: the wrong type
  // The thread's ops since construction, at the moment of the Take that
  // ended this window (the sum over threads bounds the window's slices).
  uint64_t ops_total = 0;
  // Its own time per phase (client_phases.h) charged in this window;
  // phases_measured: the thread's strategy measures them at all.
  PhaseNs phase_ns{};
  bool phases_measured = false;

  void Merge(const ThreadCounters& other);
};

// One reply, as the thread saw it.
struct Completion {
  uint64_t latency_ns;  // from the intended (open loop) or actual send time to the reply
  ReplyVerdict verdict;
  int64_t increment;  // INCRBY amount, applied only if verdict is kOk
};

class ThreadRecorder {
 public:
  ThreadRecorder() = default;
  ThreadRecorder(const ThreadRecorder&) = delete;
  ThreadRecorder& operator=(const ThreadRecorder&) = delete;

  void Record(const Completion& completion) { RecordBatch(std::span(&completion, 1)); }
  void RecordBatch(std::span<const Completion> completions);

  // Returns the counters gathered since the last Take and starts afresh.
  ThreadCounters Take();
  // Adds the current counters' latency and ops to *latency / *ops.
  void Peek(LatencyHistogram* latency, uint64_t* ops);

  // Ops (replies of the expected kind) since construction; lock-free, for
  // sampling throughput in slices.
  uint64_t completed_ops() const { return ops_total_.load(std::memory_order_relaxed); }

  // Open loop, called by the owning thread: it took a request from its
  // schedule (`issued`) or just built the schedule, and `next_intended_ns`
  // is the intended time of the next one.
  void NoteSchedule(uint64_t next_intended_ns, bool issued);
  // Open loop: requests due by `at_ns` and not answered yet — issued and
  // unanswered, plus those the schedule (at `rate_per_s`) owed since the next
  // intended time and the thread has not sent yet (exact for uniform
  // arrivals, the expected number for Poisson). 0 before NoteSchedule.
  uint64_t Backlog(uint64_t at_ns, double rate_per_s) const;

  // Called by the owning thread (its PhaseClock): `ns` more of its time
  // went to `phase`. Lock-free; Take() hands the window's share out.
  void AddPhaseNs(ClientPhase phase, uint64_t ns) {
    auto& total = phase_ns_total_[static_cast<size_t>(phase)];
    total.store(total.load(std::memory_order_relaxed) + ns, std::memory_order_relaxed);
    phases_measured_.store(true, std::memory_order_relaxed);
  }

  // The sum of INCRBY increments answered with an integer since construction
  // (warm-up included: it is what the server received).
  int64_t incrby_sum() const { return incrby_sum_.load(std::memory_order_relaxed); }

 private:
  Mutex mutex_;
  ThreadCounters current_ GUARDED_BY(mutex_);
  std::atomic<uint64_t> ops_total_{0};       // written under mutex_, read anywhere
  std::atomic<uint64_t> answered_total_{0};  // every verdict; written under mutex_
  std::atomic<uint64_t> issued_total_{0};
  std::atomic<uint64_t> next_intended_ns_{0};
  std::atomic<int64_t> incrby_sum_{0};
  // Phase time since construction (written by the owning thread only), and
  // what the last Take had handed out of it.
  std::array<std::atomic<uint64_t>, kClientPhaseCount> phase_ns_total_{};
  std::atomic<bool> phases_measured_{false};
  PhaseNs phase_ns_taken_ GUARDED_BY(mutex_){};
};

}  // namespace kvlab::harness
