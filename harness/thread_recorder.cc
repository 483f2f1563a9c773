#include "harness/thread_recorder.h"

#include <utility>

namespace kvlab::harness {

void ThreadCounters::Merge(const ThreadCounters& other) {
  latency.Merge(other.latency);
  ops += other.ops;
  misses += other.misses;
  errors += other.errors;
  wrong_type += other.wrong_type;
}

void ThreadRecorder::RecordBatch(std::span<const Completion> completions) {
  int64_t increments = 0;
  {
    std::lock_guard lock(mutex_);
    for (const Completion& completion : completions) {
      current_.latency.Record(completion.latency_ns);
      switch (completion.verdict) {
        case ReplyVerdict::kOk:
          ++current_.ops;
          increments += completion.increment;
          break;
        case ReplyVerdict::kMiss:
          ++current_.ops;
          ++current_.misses;
          break;
        case ReplyVerdict::kWrongType:
          ++current_.wrong_type;
          ++current_.errors;
          break;
        case ReplyVerdict::kErrorReply:
          ++current_.errors;
          break;
      }
    }
  }
  if (increments != 0) incrby_sum_.fetch_add(increments, std::memory_order_relaxed);
}

ThreadCounters ThreadRecorder::Take() {
  ThreadCounters fresh;
  std::lock_guard lock(mutex_);
  std::swap(fresh, current_);
  return fresh;
}

void ThreadRecorder::Peek(LatencyHistogram* latency, uint64_t* ops) {
  std::lock_guard lock(mutex_);
  latency->Merge(current_.latency);
  *ops += current_.ops;
}

}  // namespace kvlab::harness
