#include "harness/measurement/latency_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace kvlab::harness {
namespace {

constexpr uint64_t kMicrosecond = 1000;
constexpr uint64_t kSixtySeconds = 60'000'000'000;

// The nearest-rank percentile of sorted data: the smallest value with at
// least ceil(q * n) values at or below it.
uint64_t ExactQuantile(const std::vector<uint64_t>& sorted, double q) {
  const size_t rank = std::max<size_t>(1, static_cast<size_t>(std::ceil(q * sorted.size())));
  return sorted[rank - 1];
}

void ExpectWithinOnePercent(uint64_t actual, uint64_t expected) {
  EXPECT_LE(std::abs(static_cast<double>(actual) - static_cast<double>(expected)),
            0.01 * static_cast<double>(expected))
      << "actual " << actual << " expected " << expected;
}

TEST(LatencyHistogramTest, EmptyHistogramReportsZero) {
  LatencyHistogram histogram;
  EXPECT_EQ(histogram.count(), 0u);
  EXPECT_EQ(histogram.ValueAtQuantile(0.99), 0u);
  EXPECT_TRUE(histogram.NonEmptyBuckets().empty());
}

TEST(LatencyHistogramTest, SmallValuesAreExact) {
  LatencyHistogram histogram;
  for (uint64_t v = 0; v < 256; ++v) histogram.Record(v);
  for (uint64_t v = 1; v < 256; ++v) {
    EXPECT_EQ(histogram.ValueAtQuantile(static_cast<double>(v + 1) / 256.0), v);
  }
}

TEST(LatencyHistogramTest, EverySingleValueFromOneMicrosecondToSixtySecondsWithinOnePercent) {
  for (double v = kMicrosecond; v <= kSixtySeconds; v *= 1.0137) {
    LatencyHistogram histogram;
    // Two values keep min/max clamping from hiding the bucket's error.
    histogram.Record(1);
    histogram.Record(static_cast<uint64_t>(v) * 2);
    histogram.Record(static_cast<uint64_t>(v));
    ExpectWithinOnePercent(histogram.ValueAtQuantile(0.5), static_cast<uint64_t>(v));
  }
}

TEST(LatencyHistogramTest, PercentilesOfKnownDataMatchExactPercentiles) {
  std::mt19937_64 random(42);
  // Log-uniform over 1 us .. 60 s: every octave of the range is exercised.
  std::uniform_real_distribution<double> exponent(std::log(kMicrosecond), std::log(kSixtySeconds));
  std::vector<uint64_t> values;
  LatencyHistogram histogram;
  for (int i = 0; i < 200000; ++i) {
    const uint64_t v = static_cast<uint64_t>(std::exp(exponent(random)));
    values.push_back(v);
    histogram.Record(v);
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.0001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1.0}) {
    SCOPED_TRACE(q);
    ExpectWithinOnePercent(histogram.ValueAtQuantile(q), ExactQuantile(values, q));
  }
  EXPECT_EQ(histogram.min_ns(), values.front());
  EXPECT_EQ(histogram.max_ns(), values.back());
  EXPECT_EQ(histogram.count(), values.size());
}

TEST(LatencyHistogramTest, TightClusterPercentiles) {
  // 1000 values 10.000 .. 10.999 us: p50 must be ~10.5 us, not a bucket edge far away.
  std::vector<uint64_t> values;
  LatencyHistogram histogram;
  for (uint64_t v = 10000; v < 11000; ++v) {
    values.push_back(v);
    histogram.Record(v);
  }
  for (double q : {0.5, 0.9, 0.99})
    ExpectWithinOnePercent(histogram.ValueAtQuantile(q), ExactQuantile(values, q));
}

TEST(LatencyHistogramTest, MergeEqualsRecordingEverythingInOne) {
  std::mt19937_64 random(7);
  std::uniform_int_distribution<uint64_t> value(1, 5'000'000);
  LatencyHistogram all, first, second;
  for (int i = 0; i < 10000; ++i) {
    const uint64_t v = value(random);
    all.Record(v);
    (i % 3 == 0 ? first : second).Record(v);
  }
  first.Merge(second);
  EXPECT_EQ(first.count(), all.count());
  EXPECT_EQ(first.min_ns(), all.min_ns());
  EXPECT_EQ(first.max_ns(), all.max_ns());
  EXPECT_DOUBLE_EQ(first.mean_ns(), all.mean_ns());
  const auto merged = first.NonEmptyBuckets();
  const auto direct = all.NonEmptyBuckets();
  ASSERT_EQ(merged.size(), direct.size());
  for (size_t i = 0; i < merged.size(); ++i) {
    EXPECT_EQ(merged[i].lower_ns, direct[i].lower_ns);
    EXPECT_EQ(merged[i].count, direct[i].count);
  }
}

TEST(LatencyHistogramTest, BucketsContainTheirValuesAndAreNarrow) {
  for (uint64_t v : {0ull, 255ull, 256ull, 257ull, 1000ull, 123456789ull, 59'999'999'999ull}) {
    LatencyHistogram histogram;
    histogram.Record(v);
    const auto buckets = histogram.NonEmptyBuckets();
    ASSERT_EQ(buckets.size(), 1u);
    EXPECT_LE(buckets[0].lower_ns, v);
    EXPECT_GE(buckets[0].upper_ns, v);
    EXPECT_LE(buckets[0].upper_ns - buckets[0].lower_ns, std::max<uint64_t>(1, v / 128));
  }
}

TEST(LatencyHistogramTest, HugeValuesAreCountedAndMaxIsExact) {
  LatencyHistogram histogram;
  histogram.Record(uint64_t{1} << 50);
  EXPECT_EQ(histogram.count(), 1u);
  EXPECT_EQ(histogram.max_ns(), uint64_t{1} << 50);
  EXPECT_EQ(histogram.ValueAtQuantile(1.0), uint64_t{1} << 50);
}

TEST(LatencyHistogramTest, ClearForgetsEverything) {
  LatencyHistogram histogram;
  histogram.Record(5000);
  histogram.Clear();
  EXPECT_EQ(histogram.count(), 0u);
  EXPECT_EQ(histogram.max_ns(), 0u);
  EXPECT_TRUE(histogram.NonEmptyBuckets().empty());
}

}  // namespace
}  // namespace kvlab::harness
