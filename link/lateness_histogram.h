// LatenessHistogram: how late the forwarder delivered packets relative to
// their due time (the emulated link's delay error), in 1 µs buckets up to
// 10 ms plus one overflow bucket, with exact mean and maximum.
//
// Not thread-safe: one forwarder thread records into it.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>

namespace kvlab::link {

class LatenessHistogram {
 public:
  static constexpr std::int64_t kBucketNanos = 1000;
  static constexpr std::size_t kBuckets = 10000;  // 0..10 ms; beyond lands in the last

  // A packet delivered `lateness` after its due time (never negative: the
  // forwarder does not deliver early; a negative value is recorded as 0).
  void Record(std::chrono::nanoseconds lateness) {
    const std::int64_t nanos = std::max<std::int64_t>(0, lateness.count());
    const auto bucket =
        std::min<std::size_t>(static_cast<std::size_t>(nanos / kBucketNanos), kBuckets - 1);
    ++buckets_[bucket];
    ++count_;
    sum_nanos_ += nanos;
    max_nanos_ = std::max(max_nanos_, nanos);
  }

  std::uint64_t Count() const { return count_; }
  double MeanMicros() const { return count_ == 0 ? 0.0 : sum_nanos_ / 1000.0 / count_; }
  double MaxMicros() const { return max_nanos_ / 1000.0; }

  // The upper edge (µs) of the bucket holding quantile q in [0,1]; 0 when empty.
  double QuantileMicros(double q) const {
    if (count_ == 0) return 0.0;
    const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(count_ - 1)) + 1;
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < kBuckets; ++i) {
      seen += buckets_[i];
      if (seen >= rank) return static_cast<double>((i + 1) * kBucketNanos) / 1000.0;
    }
    return MaxMicros();
  }

 private:
  std::array<std::uint64_t, kBuckets> buckets_{};
  std::uint64_t count_ = 0;
  double sum_nanos_ = 0;
  std::int64_t max_nanos_ = 0;
};

}  // namespace kvlab::link
