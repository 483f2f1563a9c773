// LatencyHistogram: a log-linear (HDR-style) histogram of latencies in
// nanoseconds. Values below 256 ns are counted exactly; above, each power of
// two is split into 128 equal buckets, so a bucket is at most 1/128 of its
// lower bound wide and a reported value (the bucket's midpoint, clamped to
// the observed min/max) is within 0.4% of any value in it — well inside the
// 1% promised from 1 µs to 60 s. Values above ~18 minutes land in the top
// bucket (the exact maximum is still kept).
//
// Histograms merge by adding counts, so per-thread histograms combine into a
// point's, and points into a run's.
//
// Thread safety: not thread-safe; give each thread its own and Merge().
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvlab::harness {

class LatencyHistogram {
 public:
  // One bucket's bounds: it counts values v with lower_ns <= v <= upper_ns.
  struct Bucket {
    uint64_t lower_ns;
    uint64_t upper_ns;
    uint64_t count;
  };

  LatencyHistogram();

  void Record(uint64_t nanoseconds);
  void Merge(const LatencyHistogram& other);
  void Clear();

  uint64_t count() const { return count_; }
  uint64_t min_ns() const { return count_ == 0 ? 0 : min_ns_; }
  uint64_t max_ns() const { return max_ns_; }
  double mean_ns() const { return count_ == 0 ? 0.0 : static_cast<double>(sum_ns_) / count_; }

  // The value at quantile q by the nearest-rank definition: the smallest
  // recorded value v such that at least max(1, ceil(q * count)) values are
  // <= v, approximated by the middle of v's bucket clamped to [min_ns(),
  // max_ns()]. q outside [0, 1] is clamped to it (q = 0 gives the smallest
  // value's bucket, q = 1 the largest's). An empty histogram gives 0 for
  // every q (as min_ns(), max_ns() and mean_ns() do). This is kvlab's one
  // quantile rule: every percentile the harness reports comes from here.
  uint64_t ValueAtQuantile(double q) const;

  // The non-empty buckets in increasing order (for JSON output).
  std::vector<Bucket> NonEmptyBuckets() const;

 private:
  static size_t BucketIndex(uint64_t nanoseconds);
  static uint64_t BucketLower(size_t index);
  static uint64_t BucketUpper(size_t index);

  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t sum_ns_ = 0;
  uint64_t min_ns_ = UINT64_MAX;
  uint64_t max_ns_ = 0;
};

// Nanoseconds as microseconds, the unit every reported latency is in.
inline double Micros(uint64_t nanoseconds) { return static_cast<double>(nanoseconds) / 1000.0; }

}  // namespace kvlab::harness
