#include "harness/workloads/zipf_distribution.h"

#include <cmath>

namespace kvlab::harness {
namespace {

// log1p(x)/x, accurate near 0.
double Log1pOverX(double x) {
  if (std::abs(x) > 1e-8) return std::log1p(x) / x;
  return 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}

// expm1(x)/x, accurate near 0.
double Expm1OverX(double x) {
  if (std::abs(x) > 1e-8) return std::expm1(x) / x;
  return 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x));
}

}  // namespace

ZipfDistribution::ZipfDistribution(uint64_t n, double theta) : n_(n), theta_(theta) {
  h_integral_x1_ = HIntegral(1.5) - 1.0;
  h_integral_n_ = HIntegral(static_cast<double>(n_) + 0.5);
  s_ = 2.0 - HIntegralInverse(HIntegral(2.5) - H(2.0));
}

// h(x) = x^-theta, the unnormalised density.
double ZipfDistribution::H(double x) const { return std::exp(-theta_ * std::log(x)); }

// An antiderivative of h: (x^(1-theta) - 1) / (1 - theta), or log(x) at theta = 1.
double ZipfDistribution::HIntegral(double x) const {
  const double log_x = std::log(x);
  return Expm1OverX((1.0 - theta_) * log_x) * log_x;
}

double ZipfDistribution::HIntegralInverse(double x) const {
  double t = x * (1.0 - theta_);
  if (t < -1.0) t = -1.0;  // rounding can push t just past the domain edge
  return std::exp(Log1pOverX(t) * x);
}

}  // namespace kvlab::harness
