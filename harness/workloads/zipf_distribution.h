// ZipfDistribution: draws ranks 1..n with P(k) proportional to 1 / k^theta,
// by rejection-inversion (W. Hörmann and G. Derflinger, "Rejection-inversion
// to generate variates from monotone discrete distributions", ACM TOMACS
// 1996; the same method as Apache Commons RNG's RejectionInversionZipfSampler).
// Set-up and each draw are O(1) whatever n, so a sweep over a million keys
// starts instantly, and any theta > 0 (including theta >= 1) works.
//
// Thread safety: const after construction; operator() may run on several
// threads at once, each with its own generator.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace kvlab::harness {

class ZipfDistribution {
 public:
  // REQUIRES: n >= 1, theta > 0.
  ZipfDistribution(uint64_t n, double theta);

  // Returns a rank in [1, n]; rank 1 is the most frequent.
  template <typename Generator>
  uint64_t operator()(Generator& generator) const {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (;;) {
      const double u = h_integral_n_ + uniform(generator) * (h_integral_x1_ - h_integral_n_);
      const double x = HIntegralInverse(u);
      double k = std::floor(x + 0.5);
      if (k < 1) k = 1;
      if (k > static_cast<double>(n_)) k = static_cast<double>(n_);
      if (k - x <= s_ || u >= HIntegral(k + 0.5) - H(k)) return static_cast<uint64_t>(k);
    }
  }

  uint64_t n() const { return n_; }
  double theta() const { return theta_; }

 private:
  double H(double x) const;
  double HIntegral(double x) const;
  double HIntegralInverse(double x) const;

  uint64_t n_;
  double theta_;
  double h_integral_x1_;
  double h_integral_n_;
  double s_;
};

}  // namespace kvlab::harness
