// StageHistogram: exact counts and sums, percentiles within a bucket's
// half-width (1/64 of the value), and Reset().
#include "server/stage_histogram.h"

#include <gtest/gtest.h>

namespace kvlab {
namespace {

TEST(StageHistogram, PercentilesOfKnownValuesWithinABucket) {
  StageHistogram h;
  for (int64_t ns = 1; ns <= 1000; ++ns) h.Record(ns * 1000);  // 1 µs .. 1 ms
  EXPECT_EQ(h.Count(), 1000u);
  EXPECT_EQ(h.SumNs(), 1000 * 1001 / 2 * 1000);
  for (double p : {0.5, 0.99, 0.999}) {
    const double want = p * 1000 * 1000;
    EXPECT_NEAR(static_cast<double>(h.PercentileNs(p)), want, want / 64 + 1000) << p;
  }
}

TEST(StageHistogram, SmallValuesAreExactAndHugeOnesClamp) {
  StageHistogram h;
  h.Record(7);
  EXPECT_EQ(h.PercentileNs(0.5), 7);
  h.Reset();
  EXPECT_EQ(h.Count(), 0u);
  EXPECT_EQ(h.PercentileNs(0.5), 0);
  h.Record(int64_t{1} << 60);
  EXPECT_GT(h.PercentileNs(0.5), int64_t{1} << 42);
  h.Record(-5);  // counted as 0, never a negative bucket
  EXPECT_EQ(h.PercentileNs(0.5), 0);
}

}  // namespace
}  // namespace kvlab
