#include "harness/measurement/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace kvlab::harness {
namespace {

// 2^kExactBits values are exact; each power of two above has 2^(kExactBits-1)
// buckets.
constexpr int kExactBits = 8;
constexpr uint64_t kExactLimit = uint64_t{1} << kExactBits;  // 256
constexpr uint64_t kSubBuckets = kExactLimit / 2;            // 128 per octave
// Largest tracked value: 2^40 ns (~18 minutes).
constexpr int kTopBits = 40;
constexpr int kMaxShift = kTopBits - kExactBits;
constexpr size_t kBucketCount = kMaxShift * kSubBuckets + kExactLimit;

}  // namespace

LatencyHistogram::LatencyHistogram() : counts_(kBucketCount, 0) {}

size_t LatencyHistogram::BucketIndex(uint64_t v) {
  if (v < kExactLimit) return static_cast<size_t>(v);
  const int shift = std::bit_width(v) - kExactBits;  // >= 1
  if (shift > kMaxShift) return kBucketCount - 1;
  const uint64_t mantissa = v >> shift;  // in [128, 256)
  return static_cast<size_t>(shift) * kSubBuckets + static_cast<size_t>(mantissa);
}

uint64_t LatencyHistogram::BucketLower(size_t index) {
  if (index < kExactLimit) return index;
  const size_t shift = index / kSubBuckets - 1;
  const uint64_t mantissa = index - shift * kSubBuckets;
  return mantissa << shift;
}

uint64_t LatencyHistogram::BucketUpper(size_t index) {
  if (index < kExactLimit) return index;
  const size_t shift = index / kSubBuckets - 1;
  return BucketLower(index) + (uint64_t{1} << shift) - 1;
}

void LatencyHistogram::Record(uint64_t nanoseconds) {
  ++counts_[BucketIndex(nanoseconds)];
  ++count_;
  sum_ns_ += nanoseconds;
  min_ns_ = std::min(min_ns_, nanoseconds);
  max_ns_ = std::max(max_ns_, nanoseconds);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ns_ += other.sum_ns_;
  min_ns_ = std::min(min_ns_, other.min_ns_);
  max_ns_ = std::max(max_ns_, other.max_ns_);
}

void LatencyHistogram::Clear() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  sum_ns_ = 0;
  min_ns_ = UINT64_MAX;
  max_ns_ = 0;
}

uint64_t LatencyHistogram::ValueAtQuantile(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const uint64_t rank =
      std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_))));
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const uint64_t middle = BucketLower(i) + (BucketUpper(i) - BucketLower(i)) / 2;
      return std::clamp(middle, min_ns_, max_ns_);
    }
  }
  return max_ns_;
}

std::vector<LatencyHistogram::Bucket> LatencyHistogram::NonEmptyBuckets() const {
  std::vector<Bucket> buckets;
  for (size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] != 0) buckets.push_back({BucketLower(i), BucketUpper(i), counts_[i]});
  }
  return buckets;
}

}  // namespace kvlab::harness
