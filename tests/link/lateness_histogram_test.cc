// LatenessHistogram: the forwarder's delay-error statistics.
#include "link/lateness_histogram.h"

#include <gtest/gtest.h>

namespace kvlab::link {
namespace {

using std::chrono::microseconds;

TEST(LatenessHistogram, EmptyReportsZeros) {
  LatenessHistogram histogram;
  EXPECT_EQ(histogram.Count(), 0u);
  EXPECT_EQ(histogram.QuantileMicros(0.5), 0.0);
  EXPECT_EQ(histogram.MeanMicros(), 0.0);
}

TEST(LatenessHistogram, QuantilesMeanAndMax) {
  LatenessHistogram histogram;
  for (int i = 0; i < 99; ++i) histogram.Record(microseconds{2});  // bucket [2,3)
  histogram.Record(microseconds{40});
  EXPECT_EQ(histogram.Count(), 100u);
  EXPECT_EQ(histogram.QuantileMicros(0.5), 3.0);
  EXPECT_EQ(histogram.QuantileMicros(0.98), 3.0);
  EXPECT_EQ(histogram.QuantileMicros(1.0), 41.0);
  EXPECT_DOUBLE_EQ(histogram.MeanMicros(), (99 * 2 + 40) / 100.0);
  EXPECT_DOUBLE_EQ(histogram.MaxMicros(), 40.0);
}

TEST(LatenessHistogram, NegativeCountsAsOnTimeAndHugeAsOverflow) {
  LatenessHistogram histogram;
  histogram.Record(microseconds{-5});
  histogram.Record(std::chrono::seconds{3});
  EXPECT_EQ(histogram.QuantileMicros(0.0), 1.0);
  EXPECT_EQ(histogram.QuantileMicros(1.0), 10000.0);
  EXPECT_DOUBLE_EQ(histogram.MaxMicros(), 3e6);
}

}  // namespace
}  // namespace kvlab::link
