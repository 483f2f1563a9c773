#include "server/stage_histogram.h"

#include <bit>
#include <cmath>

namespace kvlab {

size_t StageHistogram::IndexOf(uint64_t ns) {
  if (ns < kLinear) return static_cast<size_t>(ns);
  const int exponent = std::bit_width(ns) - 1;  // >= kSubBits
  if (exponent > kMaxExponent) return kBuckets - 1;
  const uint64_t sub = (ns >> (exponent - kSubBits)) & (kLinear - 1);
  return kLinear + static_cast<size_t>(exponent - kSubBits) * kLinear + static_cast<size_t>(sub);
}

int64_t StageHistogram::MidpointOf(size_t index) {
  if (index < kLinear) return static_cast<int64_t>(index);
  const size_t above = index - kLinear;
  const int shift = static_cast<int>(above / kLinear);  // exponent - kSubBits
  const uint64_t lower = (kLinear + above % kLinear) << shift;
  const uint64_t width = uint64_t{1} << shift;
  return static_cast<int64_t>(lower + width / 2);
}

void StageHistogram::Record(int64_t ns) {
  if (ns < 0) ns = 0;  // one clock for every thread: only a clock fault gets here
  buckets_[IndexOf(static_cast<uint64_t>(ns))].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(ns, std::memory_order_relaxed);
}

void StageHistogram::Reset() {
  for (auto& bucket : buckets_) bucket.store(0, std::memory_order_relaxed);
  count_.store(0, std::memory_order_relaxed);
  sum_ns_.store(0, std::memory_order_relaxed);
}

int64_t StageHistogram::PercentileNs(double p) const {
  uint64_t total = 0;
  for (const auto& bucket : buckets_) total += bucket.load(std::memory_order_relaxed);
  if (total == 0) return 0;
  // The rank of the value at p: the smallest with at least p of the values at or below it.
  const auto rank = static_cast<uint64_t>(std::ceil(p * static_cast<double>(total)));
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += buckets_[i].load(std::memory_order_relaxed);
    if (seen >= rank && seen > 0) return MidpointOf(i);
  }
  return MidpointOf(kBuckets - 1);
}

}  // namespace kvlab
