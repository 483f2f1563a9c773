// StageHistogram: the distribution of one request stage's durations
// (server/stage_stats.h), in nanoseconds, with its exact count and sum.
//
// Log-linear buckets as HdrHistogram's: below 32 ns one bucket per
// nanosecond, above it 32 buckets per power of two, so a percentile is
// reported within 1/64 (1.6%) of the true value — well inside the 10% the
// known-answer tests allow — from 1.3 K buckets of 8 bytes. Durations past
// 2^42 ns (73 min) land in the last bucket.
//
// Thread-safe: Record() from any thread (relaxed atomic adds: a sampled
// request is rare, so the buckets are rarely contended); the readers see a
// consistent-enough snapshot for INFO. Reset() concurrent with Record() may
// keep a sample that raced it.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace kvlab {

class StageHistogram {
 public:
  void Record(int64_t ns);
  void Reset();

  uint64_t Count() const { return count_.load(std::memory_order_relaxed); }
  int64_t SumNs() const { return sum_ns_.load(std::memory_order_relaxed); }
  // The value at fraction `p` (0 < p <= 1) of the recorded durations, as the
  // midpoint of its bucket; 0 when nothing was recorded.
  int64_t PercentileNs(double p) const;

 private:
  static constexpr int kSubBits = 5;  // 32 buckets per power of two
  static constexpr int kMaxExponent = 42;
  static constexpr size_t kLinear = size_t{1} << kSubBits;
  static constexpr size_t kBuckets = kLinear + (kMaxExponent - kSubBits + 1) * kLinear;

  static size_t IndexOf(uint64_t ns);
  static int64_t MidpointOf(size_t index);

  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<int64_t> sum_ns_{0};
};

}  // namespace kvlab
