#include "harness/measurement/thread_recorder.h"

#include <algorithm>
#include <utility>

namespace kvlab::harness {

void ThreadCounters::Merge(const ThreadCounters& other) {
  latency.Merge(other.latency);
  ops += other.ops;
  misses += other.misses;
  errors += other.errors;
  wrong_type += other.wrong_type;
  ops_total += other.ops_total;
  for (size_t i = 0; i < kClientPhaseCount; ++i) phase_ns[i] += other.phase_ns[i];
  phases_measured = phases_measured || other.phases_measured;
}

void ThreadRecorder::RecordBatch(std::span<const Completion> completions) {
  int64_t increments = 0;
  {
    MutexLock lock(mutex_);
    uint64_t ops = 0;
    for (const Completion& completion : completions) {
      switch (completion.verdict) {
        case ReplyVerdict::kOk:
          ++ops;
          current_.latency.Record(completion.latency_ns);
          increments += completion.increment;
          break;
        case ReplyVerdict::kMiss:
          ++ops;
          ++current_.misses;
          current_.latency.Record(completion.latency_ns);
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
    current_.ops += ops;
    answered_total_.store(answered_total_.load(std::memory_order_relaxed) + completions.size(),
                          std::memory_order_relaxed);
    ops_total_.store(ops_total_.load(std::memory_order_relaxed) + ops, std::memory_order_relaxed);
  }
  if (increments != 0) incrby_sum_.fetch_add(increments, std::memory_order_relaxed);
}

ThreadCounters ThreadRecorder::Take() {
  ThreadCounters fresh;
  MutexLock lock(mutex_);
  std::swap(fresh, current_);
  fresh.ops_total = ops_total_.load(std::memory_order_relaxed);
  fresh.phases_measured = phases_measured_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < kClientPhaseCount; ++i) {
    const uint64_t total = phase_ns_total_[i].load(std::memory_order_relaxed);
    fresh.phase_ns[i] = total - phase_ns_taken_[i];
    phase_ns_taken_[i] = total;
  }
  return fresh;
}

void ThreadRecorder::NoteSchedule(uint64_t next_intended_ns, bool issued) {
  if (issued) issued_total_.fetch_add(1, std::memory_order_relaxed);
  next_intended_ns_.store(next_intended_ns, std::memory_order_relaxed);
}

uint64_t ThreadRecorder::Backlog(uint64_t at_ns, double rate_per_s) const {
  const uint64_t next = next_intended_ns_.load(std::memory_order_relaxed);
  if (next == 0) return 0;
  const uint64_t answered = answered_total_.load(std::memory_order_relaxed);
  const uint64_t issued = issued_total_.load(std::memory_order_relaxed);
  uint64_t owed = issued - std::min(issued, answered);
  if (next <= at_ns) owed += 1 + static_cast<uint64_t>((at_ns - next) / 1e9 * rate_per_s);
  return owed;
}

void ThreadRecorder::Peek(LatencyHistogram* latency, uint64_t* ops) {
  MutexLock lock(mutex_);
  latency->Merge(current_.latency);
  *ops += current_.ops;
}

}  // namespace kvlab::harness
