// The harness's LatencyHistogram::Record(): the cost every measured operation
// pays on the client side. Values follow a log-normal spread around 50 µs
// (from a few µs to tens of ms), so every bucket range is exercised.
#include <cmath>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "harness/measurement/latency_histogram.h"

namespace kvlab::micro {
namespace {

void BM_LatencyHistogramRecord(benchmark::State& state) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> latency(std::log(50000.0), 1.0);
  std::vector<uint64_t> values(4096);
  for (uint64_t& v : values) v = static_cast<uint64_t>(latency(rng));
  harness::LatencyHistogram histogram;
  size_t i = 0;
  for (auto _ : state) histogram.Record(values[i++ & 4095]);
  benchmark::DoNotOptimize(histogram.count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LatencyHistogramRecord);

}  // namespace
}  // namespace kvlab::micro
