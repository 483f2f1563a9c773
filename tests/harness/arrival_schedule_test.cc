// The open-loop arrival schedules: Poisson gaps pass a Kolmogorov-Smirnov
// test against the exponential distribution of the offered rate, uniform
// gaps are exact (no drift at any rate), and each seed starts at its own
// random phase within the first gap.
#include "harness/measurement/arrival_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

namespace kvlab::harness {
namespace {

constexpr uint64_t kStart = 1'000'000'000'000;  // 1000 s into the steady clock

std::vector<double> GapsNs(ArrivalKind kind, double rate, uint64_t seed, int count) {
  ArrivalSchedule schedule(kind, rate, seed, kStart);
  std::vector<double> gaps;
  uint64_t previous = schedule.next_ns();
  for (int i = 0; i < count; ++i) {
    schedule.Advance();
    gaps.push_back(static_cast<double>(schedule.next_ns() - previous));
    previous = schedule.next_ns();
  }
  return gaps;
}

// The Kolmogorov-Smirnov statistic D of `samples` against Exp(mean).
double KolmogorovSmirnovExponential(std::vector<double> samples, double mean) {
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  double d = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const double cdf = 1 - std::exp(-samples[i] / mean);
    d = std::max({d, (i + 1) / n - cdf, cdf - i / n});
  }
  return d;
}

TEST(ArrivalScheduleTest, PoissonGapsAreExponential) {
  constexpr int kGaps = 20000;
  constexpr double kRate = 50000;  // 20 µs mean gap: well above the 1 ns rounding of times
  const double mean_ns = 1e9 / kRate;
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    const std::vector<double> gaps = GapsNs(ArrivalKind::kPoisson, kRate, seed, kGaps);
    // Critical value at alpha = 0.01: 1.63 / sqrt(n).
    const double d = KolmogorovSmirnovExponential(gaps, mean_ns);
    std::printf("Poisson seed %llu: KS D = %.5f (critical %.5f at alpha 0.01, n = %d)\n",
                static_cast<unsigned long long>(seed), d, 1.63 / std::sqrt(kGaps), kGaps);
    EXPECT_LT(d, 1.63 / std::sqrt(kGaps));
    double sum = 0;
    for (double gap : gaps) sum += gap;
    // The mean of n exponentials has standard deviation mean / sqrt(n) (0.7%).
    EXPECT_NEAR(sum / kGaps, mean_ns, 4 * mean_ns / std::sqrt(kGaps));
  }
}

TEST(ArrivalScheduleTest, KolmogorovSmirnovRejectsUniformGaps) {
  // The check above can fail: evenly spaced arrivals are not exponential.
  const std::vector<double> gaps = GapsNs(ArrivalKind::kUniform, 50000, 1, 20000);
  EXPECT_GT(KolmogorovSmirnovExponential(gaps, 1e9 / 50000), 1.63 / std::sqrt(20000.0));
}

TEST(ArrivalScheduleTest, UniformScheduleHasNoDrift) {
  // 3 ops/s: a gap of 333,333,333.3 ns, which integer nanoseconds would round.
  ArrivalSchedule schedule(ArrivalKind::kUniform, 3, 7, kStart);
  const uint64_t first = schedule.next_ns();
  for (int i = 0; i < 3000; ++i) schedule.Advance();
  EXPECT_NEAR(static_cast<double>(schedule.next_ns() - first), 1e12, 2);
}

TEST(ArrivalScheduleTest, EachSeedStartsAtItsOwnPhaseWithinTheFirstGap) {
  constexpr double kRate = 1000;  // 1 ms gap
  std::set<uint64_t> firsts;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const uint64_t first = ArrivalSchedule(ArrivalKind::kUniform, kRate, seed, kStart).next_ns();
    EXPECT_GE(first, kStart);
    EXPECT_LT(first, kStart + 1'000'000);
    firsts.insert(first);
  }
  EXPECT_EQ(firsts.size(), 50u);  // no two threads in lock-step
}

TEST(ArrivalScheduleTest, ParsesItsNames) {
  ArrivalKind kind = ArrivalKind::kUniform;
  ASSERT_TRUE(ParseArrivalKind("poisson", &kind).ok());
  EXPECT_EQ(kind, ArrivalKind::kPoisson);
  EXPECT_STREQ(ArrivalKindName(kind), "poisson");
  EXPECT_FALSE(ParseArrivalKind("gaussian", &kind).ok());
}

}  // namespace
}  // namespace kvlab::harness
