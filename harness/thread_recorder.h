// ThreadRecorder: where one application thread counts its replies and
// latencies, and where the sweep runner collects them at each repetition
// boundary without stopping the thread (the thread keeps running; whatever
// completes after the swap belongs to the next repetition).
//
// Thread safety: Record*/AddIncrement are called by the owning thread only;
// Take/Peek/incrby_sum/live_ops by any other thread at the same time.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>

#include "harness/latency_histogram.h"
#include "harness/reply_check.h"

namespace kvlab::harness {

// What one thread did during one repetition.
struct ThreadCounters {
  LatencyHistogram latency;
  uint64_t ops = 0;         // replies of the expected kind (including GET misses)
  uint64_t misses = 0;      // GETs answered nil
  uint64_t errors = 0;      // error replies plus replies of the wrong type
  uint64_t wrong_type = 0;  // of which: the wrong type

  void Merge(const ThreadCounters& other);
};

// One reply, as the thread saw it.
struct Completion {
  uint64_t latency_ns;
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

  // The sum of INCRBY increments answered with an integer since construction
  // (warm-up included: it is what the server received).
  int64_t incrby_sum() const { return incrby_sum_.load(std::memory_order_relaxed); }

 private:
  std::mutex mutex_;
  ThreadCounters current_;  // GUARDED_BY(mutex_)
  std::atomic<int64_t> incrby_sum_{0};
};

}  // namespace kvlab::harness
