#include "harness/workloads/zipf_distribution.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace kvlab::harness {
namespace {

// Pearson's chi-square of observed counts against P(k) = k^-theta / H(n, theta).
double ChiSquare(const std::vector<uint64_t>& observed, double theta, uint64_t samples) {
  const size_t n = observed.size() - 1;  // index 0 unused
  double normaliser = 0;
  for (size_t k = 1; k <= n; ++k) normaliser += std::pow(static_cast<double>(k), -theta);
  double chi_square = 0;
  for (size_t k = 1; k <= n; ++k) {
    const double expected = samples * std::pow(static_cast<double>(k), -theta) / normaliser;
    chi_square += (observed[k] - expected) * (observed[k] - expected) / expected;
  }
  return chi_square;
}

class ZipfTheoryTest : public ::testing::TestWithParam<double> {};

TEST_P(ZipfTheoryTest, FrequenciesMatchTheTheoreticalDistribution) {
  const double theta = GetParam();
  constexpr uint64_t kN = 10;
  constexpr uint64_t kSamples = 500000;
  ZipfDistribution zipf(kN, theta);
  std::mt19937_64 random(2024);
  std::vector<uint64_t> observed(kN + 1, 0);
  for (uint64_t i = 0; i < kSamples; ++i) {
    const uint64_t k = zipf(random);
    ASSERT_GE(k, 1u);
    ASSERT_LE(k, kN);
    ++observed[k];
  }
  // 9 degrees of freedom: P(chi2 > 27.88) = 0.001 for a correct sampler.
  EXPECT_LT(ChiSquare(observed, theta, kSamples), 27.88);
}

INSTANTIATE_TEST_SUITE_P(Thetas, ZipfTheoryTest, ::testing::Values(0.5, 0.99, 1.0, 1.5, 3.0));

TEST(ZipfDistributionTest, DetectsAWrongExponent) {
  // The same test must fail for a sampler of another exponent: the check has power.
  constexpr uint64_t kN = 10;
  constexpr uint64_t kSamples = 500000;
  ZipfDistribution zipf(kN, 0.8);
  std::mt19937_64 random(2024);
  std::vector<uint64_t> observed(kN + 1, 0);
  for (uint64_t i = 0; i < kSamples; ++i) ++observed[zipf(random)];
  EXPECT_GT(ChiSquare(observed, 0.99, kSamples), 27.88);
}

TEST(ZipfDistributionTest, LargeKeySpacesStayInRangeAndFavourRankOne) {
  constexpr uint64_t kN = 1'000'000'000;
  ZipfDistribution zipf(kN, 0.99);
  std::mt19937_64 random(1);
  uint64_t rank_one = 0;
  constexpr int kSamples = 200000;
  for (int i = 0; i < kSamples; ++i) {
    const uint64_t k = zipf(random);
    ASSERT_GE(k, 1u);
    ASSERT_LE(k, kN);
    rank_one += k == 1;
  }
  // P(1) = 1 / H(1e9, 0.99) ~= 1/21.2 ~= 0.047.
  double normaliser = 0;
  for (double k = 1; k <= 1e6; ++k) normaliser += std::pow(k, -0.99);
  // tail of the sum from 1e6 to 1e9 by the integral
  normaliser += (std::pow(1e9, 0.01) - std::pow(1e6, 0.01)) / 0.01;
  const double expected = kSamples / normaliser;
  EXPECT_NEAR(static_cast<double>(rank_one), expected, 5 * std::sqrt(expected));
}

TEST(ZipfDistributionTest, SingleKey) {
  ZipfDistribution zipf(1, 0.99);
  std::mt19937_64 random(3);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(zipf(random), 1u);
}

}  // namespace
}  // namespace kvlab::harness
