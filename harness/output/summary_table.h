// The end-of-run summary: per point, the median ops/s over its repetitions
// with a 95% confidence interval (Student's t on the repetitions' ops/s),
// and p50/p99 of the repetitions' merged latency histogram — rendered as a markdown table shaped
// like the seeds' (threads x client -> ops/s ± error).
//
// Thread safety: pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "harness/sweep.h"

namespace kvlab::harness {

double Median(std::vector<double> values);
// Half-width of the 95% confidence interval of the mean; 0 for < 2 values.
double ConfidenceHalfWidth95(const std::vector<double>& values);

struct PointSummary {
  int threads = 0;
  int repetitions = 0;
  double median_ops_per_s = 0;
  double ci95_ops_per_s = 0;
  double p50_us = 0;  // of the merged histogram
  double p99_us = 0;
  uint64_t errors = 0;
  bool client_bound = false;  // in any repetition
  bool behind = false;        // open loop: in any repetition
};

PointSummary Summarize(const PointResult& point);

std::string RenderSummaryTable(const LoadConfig& config, const std::vector<PointResult>& points);

}  // namespace kvlab::harness
