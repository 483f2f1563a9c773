// MemoryMeter: an engine-wide, approximate count of the bytes its entries
// use (see Footprint() in entry.h) and the optional limit writes must respect.
//
// Thread-safe: every map of an engine (each stripe, shard, or the one shared
// map) adds its deltas here with relaxed atomics. The figure is a gauge, not a
// synchronisation point: a write that races the limit may overshoot it by one
// entry per concurrent writer, as Redis's own check happens before the write.
#pragma once

#include <atomic>
#include <cstdint>

namespace kvlab {

class MemoryMeter {
 public:
  // limit_bytes == 0: unlimited.
  explicit MemoryMeter(uint64_t limit_bytes) : limit_bytes_(static_cast<int64_t>(limit_bytes)) {}
  MemoryMeter(const MemoryMeter&) = delete;
  MemoryMeter& operator=(const MemoryMeter&) = delete;

  // Most writes replace a value of the same size (delta 0); skipping those
  // keeps the shared counter's cache line from bouncing between threads.
  void Add(int64_t delta_bytes) {
    if (delta_bytes != 0) used_bytes_.fetch_add(delta_bytes, std::memory_order_relaxed);
  }
  int64_t UsedBytes() const { return used_bytes_.load(std::memory_order_relaxed); }
  // Redis's rule (maxmemory with noeviction): once used >= limit, every
  // command that may grow the dataset is refused, whatever its size.
  bool OverLimit() const {
    const int64_t limit = limit_bytes_.load(std::memory_order_relaxed);
    return limit > 0 && UsedBytes() >= limit;
  }
  // CONFIG SET maxmemory: the next write checks the new limit (0: none).
  void SetLimit(uint64_t limit_bytes) {
    limit_bytes_.store(static_cast<int64_t>(limit_bytes), std::memory_order_relaxed);
  }
  uint64_t Limit() const {
    return static_cast<uint64_t>(limit_bytes_.load(std::memory_order_relaxed));
  }

 private:
  std::atomic<int64_t> limit_bytes_;
  std::atomic<int64_t> used_bytes_{0};
};

}  // namespace kvlab
