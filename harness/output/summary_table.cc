#include "harness/output/summary_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kvlab::harness {
namespace {

// Two-sided 97.5% quantiles of Student's t for 1..30 degrees of freedom.
constexpr double kStudentT975[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                   2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                   2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                   2.060,  2.056, 2.052, 2.048, 2.045, 2.042};

// Beyond the table: the Cornish-Fisher expansion of t around the normal
// quantile (2.0423 at 30 degrees, matching the table; no jump to 1.96).
double StudentT975(size_t degrees) {
  const double z = 1.959963984540054;
  const double v = static_cast<double>(degrees);
  return z + (z * z * z + z) / (4 * v) +
         (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * v * v) +
         (3 * std::pow(z, 7) + 19 * std::pow(z, 5) + 17 * z * z * z - 15 * z) / (384 * v * v * v);
}

}  // namespace

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

double ConfidenceHalfWidth95(const std::vector<double>& values) {
  const size_t n = values.size();
  if (n < 2) return 0;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= n;
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  const double standard_error = std::sqrt(squares / (n - 1)) / std::sqrt(static_cast<double>(n));
  const size_t degrees = n - 1;
  const double t = degrees <= 30 ? kStudentT975[degrees - 1] : StudentT975(degrees);
  return t * standard_error;
}

PointSummary Summarize(const PointResult& point) {
  PointSummary summary;
  summary.threads = point.threads;
  summary.repetitions = static_cast<int>(point.repetitions.size());
  std::vector<double> ops;
  for (const RepetitionResult& r : point.repetitions) {
    ops.push_back(r.ops_per_s);
    summary.errors += r.errors;
    summary.client_bound |= r.client_bound;
    summary.behind |= r.behind;
  }
  summary.median_ops_per_s = Median(ops);
  summary.ci95_ops_per_s = ConfidenceHalfWidth95(ops);
  const LatencyHistogram merged = MergedLatency(point);
  if (merged.count() == 0) {
    // No histogram (redis-benchmark): the median of the repetitions' own figures.
    std::vector<double> p50, p99;
    for (const RepetitionResult& r : point.repetitions) {
      p50.push_back(r.p50_us);
      p99.push_back(r.p99_us);
    }
    summary.p50_us = Median(p50);
    summary.p99_us = Median(p99);
    return summary;
  }
  summary.p50_us = Micros(merged.ValueAtQuantile(0.50));
  summary.p99_us = Micros(merged.ValueAtQuantile(0.99));
  return summary;
}

std::string RenderSummaryTable(const LoadConfig& config, const std::vector<PointResult>& points) {
  std::string table =
      "| threads | client | transport | ops/s (median) | ± 95% CI | p50 µs | p99 µs | reps | "
      "errors "
      "| client-bound | behind |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const PointResult& point : points) {
    if (point.repetitions.empty()) continue;
    const PointSummary s = Summarize(point);
    char row[256];
    std::snprintf(row, sizeof(row),
                  "| %d | %s | %s | %.0f | %.0f | %.1f | %.1f | %d | %llu | %s | %s |\n", s.threads,
                  ClientKindName(point.client), TransportName(config.target.transport),
                  s.median_ops_per_s, s.ci95_ops_per_s, s.p50_us, s.p99_us, s.repetitions,
                  static_cast<unsigned long long>(s.errors), s.client_bound ? "YES" : "no",
                  s.behind ? "YES" : "no");
    table += row;
  }
  return table;
}

}  // namespace kvlab::harness
